"""Checks every row's partial sums (grid.sum) and totals (last.sum, the eastern column)
against the same sums computed here in fp32 order, and the first row read on its own
(first.sum)."""
import struct
import sys

n, rows = int(sys.argv[1]), int(sys.argv[2])
val_path, sum_path, last_path, first_path = sys.argv[3:7]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def floats(path, count):
    return struct.unpack(f"<{count}f", open(path, "rb").read())


vals = floats(val_path, n * rows)
sums = floats(sum_path, n * rows)
last = floats(last_path, rows)
first = floats(first_path, n)
for r in range(rows):
    acc = 0.0
    for k in range(n):
        v = vals[r * n + k]
        acc = f32(acc + v) if k else v
        if sums[r * n + k] != acc:
            sys.exit(f"FAIL: row {r}, tile {k + 1}: sum {sums[r * n + k]}, expected {acc}")
    if last[r] != acc:
        sys.exit(f"FAIL: row {r}: last.sum {last[r]}, expected the row total {acc}")
if list(first) != list(sums[:n]):
    sys.exit(f"FAIL: first.sum {first} is not the first row of grid.sum {sums[:n]}")
print(f"SUCCESS: {rows} rows of {n} partial sums, totals {', '.join(str(t) for t in last)}")
