"""Recomputes both kernels in fp32 (every operation rounded to fp32, as the tile does)."""
import struct
import sys

n, l = int(sys.argv[1]), int(sys.argv[2])
A, C0, C1, C2, C3 = 2.5, 1.0, -0.5, 0.25, 2.0


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def load(path):
    return struct.unpack(f"<{n * l}f", open(path, "rb").read())


x, y0, y, p = load("x.bin"), load("y.bin"), load("y_out.bin"), load("p.bin")
for k in range(n * l):
    want_y = f32(f32(A * x[k]) + y0[k])
    t = f32(f32(x[k] * C3) + C2)
    t = f32(f32(t * x[k]) + C1)
    want_p = f32(f32(t * x[k]) + C0)
    tile, e = divmod(k, l)
    if y[k] != want_y:
        sys.exit(f"FAIL: tile {tile} y[{e}] = {y[k]}, expected {want_y}")
    if p[k] != want_p:
        sys.exit(f"FAIL: tile {tile} p[{e}] = {p[k]}, expected {want_p}")
print(f"SUCCESS: {n} tiles x {l} elements of y = A*x + y and p = cubic(x)")
