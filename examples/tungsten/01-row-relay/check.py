"""Checks the row's partial sums against the same sums computed here in fp32 order."""
import struct
import sys

n, val_path, sum_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


vals = struct.unpack(f"<{n}f", open(val_path, "rb").read())
sums = struct.unpack(f"<{n}f", open(sum_path, "rb").read())
acc = 0.0
for k in range(n):
    acc = f32(acc + vals[k]) if k else vals[k]
    if sums[k] != acc:
        sys.exit(f"FAIL: tile {k + 1}: sum {sums[k]}, expected {acc}")
print(f"SUCCESS: {n} partial sums, total {sums[-1]}")
