"""Writes ROWS x N sp values (row r, column k: 0.5 * (r + 1) + 0.25 * k) as 16-bit
little-endian words, low word first, rows outermost (miset's order "y x _word")."""
import struct
import sys

n, rows, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open(path, "wb") as f:
    for r in range(rows):
        for k in range(n):
            f.write(struct.pack("<f", 0.5 * (r + 1) + 0.25 * k))
