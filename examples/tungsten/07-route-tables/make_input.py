"""Writes K sp values per sender (tile x holds 10*x + k for k = 0..K-1)."""
import struct
import sys

n, k, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open(path, "wb") as f:
    for x in range(n):
        for j in range(k):
            f.write(struct.pack("<f", 10 * x + j))
