"""Writes one sp value per tile of an NX x NY grid, rows outermost: tile (x, y) holds
y + x/8 + 0.5."""
import struct
import sys

nx, ny, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open(path, "wb") as f:
    for y in range(ny):
        for x in range(nx):
            f.write(struct.pack("<f", y + x / 8 + 0.5))
