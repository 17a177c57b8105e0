"""Writes N sp values (1.25, 2.5, ...) as 16-bit little-endian words, low word first."""
import struct
import sys

n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "wb") as f:
    for k in range(n):
        f.write(struct.pack("<f", 1.25 * (k + 1)))
