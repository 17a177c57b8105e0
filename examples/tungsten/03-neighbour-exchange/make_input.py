"""Writes K sp values per tile of an NX x NY grid, rows outermost ("y x _word").

Tile (x, y) (grid coordinates from 1) holds 100*y + 10*x + k/4 for k = 0..K-1, so every
value says where it came from."""
import struct
import sys

nx, ny, k, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with open(path, "wb") as f:
    for y in range(1, ny + 1):
        for x in range(1, nx + 1):
            for j in range(k):
                f.write(struct.pack("<f", 100 * y + 10 * x + j / 4))
