"""Checks what the gather tile filed: every tile's value at its own slot, and every
sender exactly once in the arrival order."""
import struct
import sys

nx, ny, gx, gy = (int(a) for a in sys.argv[1:5])
n = nx * ny
val = struct.unpack(f"<{n}f", open("val.bin", "rb").read())
# miget reads the symbol on every tile; keep the gather tile's copy.
gather = gy * nx + gx
got_all = struct.unpack(f"<{n * n}f", open("got.bin", "rb").read())
order_all = struct.unpack(f"<{n * n}h", open("order.bin", "rb").read())
got = got_all[gather * n:(gather + 1) * n]
order = order_all[gather * n:(gather + 1) * n][: n - 1]
for k in range(n):
    if got[k] != val[k]:
        sys.exit(f"FAIL: tile ({k % nx}, {k // nx}): gathered {got[k]}, it holds {val[k]}")
senders = sorted(k for k in range(n) if k != gather)
if sorted(order) != senders:
    sys.exit(f"FAIL: arrival order {list(order)} is not every sender once")
arrivals = " ".join(f"({k % nx},{k // nx})" for k in order)
print(f"SUCCESS: {n - 1} messages gathered at ({gx}, {gy}); arrival order {arrivals}")
