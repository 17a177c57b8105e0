"""Writes x and y for N tiles of L sp values each. The values (eighths between -1 and 1,
small integers) keep every intermediate result of the kernels exact in fp32."""
import struct
import sys

n, l = int(sys.argv[1]), int(sys.argv[2])
with open("x.bin", "wb") as fx, open("y.bin", "wb") as fy:
    for t in range(n):
        for k in range(l):
            fx.write(struct.pack("<f", ((k + 3 * t) % 16) / 8 - 1))
            fy.write(struct.pack("<f", float((k * 7 + t) % 11 - 5)))
