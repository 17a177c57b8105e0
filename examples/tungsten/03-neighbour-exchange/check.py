"""Recomputes what every tile of the grid should have received from each side.

Inside the grid a tile receives its neighbour's values; on an edge the moat sends the
tile's own values back (a mirror boundary)."""
import struct
import sys

nx, ny, k = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])


def grid(path):
    data = open(path, "rb").read()
    vals = struct.unpack(f"<{nx * ny * k}f", data)
    at = lambda x, y: ((y - 1) * nx + (x - 1)) * k
    return {
        (x, y): list(vals[at(x, y):at(x, y) + k])
        for y in range(1, ny + 1)
        for x in range(1, nx + 1)
    }


v = grid("v.bin")


bad = 0
for side, (dx, dy) in {"from_w": (-1, 0), "from_e": (1, 0), "from_n": (0, -1), "from_s": (0, 1)}.items():
    got = grid(f"{side}.bin")
    for (x, y), vals in got.items():
        nb = (x + dx, y + dy)
        want = v[nb] if nb in v else v[(x, y)]
        if vals != want:
            bad += 1
            print(f"FAIL: tile ({x}, {y}) {side}: got {vals}, expected {want}")
if bad:
    sys.exit(f"FAIL: {bad} of {4 * nx * ny} received vectors differ")
edge = 2 * nx + 2 * ny
print(f"SUCCESS: {nx}x{ny} tiles, 4 x {k} values each ({edge} of the vectors mirrored by the moat)")
