"""Checks the order the collector received the blocks in: in each round the sender
nearest to the collector first, the farthest last; round 2 adds 1000 to every value."""
import struct
import sys

n, k = int(sys.argv[1]), int(sys.argv[2])
data = struct.unpack(f"<{n * k}f", open("data.bin", "rb").read())
got = struct.unpack(f"<{2 * n * k}f", open("got.bin", "rb").read())
blocks = [list(data[x * k:(x + 1) * k]) for x in range(n)]
want = []
for extra in (0.0, 1000.0):
    for x in reversed(range(n)):
        want += [v + extra for v in blocks[x]]
for i, (g, w) in enumerate(zip(got, want)):
    if g != w:
        rnd, rest = divmod(i, n * k)
        sys.exit(f"FAIL: wavelet {i} (round {rnd + 1}, block {rest // k}): got {g}, expected {w}")
order = " ".join(str(x) for x in reversed(range(n)))
print(f"SUCCESS: {2 * n * k} values, each round in sender order {order}")
