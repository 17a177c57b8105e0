"""Writes the router and switch tables of tutorial 4's row for colour C: N senders and a
collector, N+1 tiles in one row.

Router word (one per tile and colour, order "y x r"): bits 0-4 the ports position 0
receives from, bits 5-9 the ports it sends to (bit 0 north, 1 south, 2 east, 3 west,
4 the core), bit 10/11 colour swap, bit 12 message passing, bit 15 teardown.
Switch words (four per tile and colour, order "y x r n"): n = 0 the status (bit 15 the
colour has a switch, bits 0-1 the position at reset, bit 2 ring mode, bits 3-4 the pop
mode); n = 1..3 positions 1..3 (bits 0-4 the input that replaces position 0's, bits 5-9
the outputs, bit 10 "the outputs replace position 0's")."""
import struct
import sys

NORTH, SOUTH, EAST, WEST, CORE = 1, 2, 4, 8, 16
COLOURS = 24


def router_word(rx, tx):
    return rx | tx << 5


def main():
    n, c, router_path, switch_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    width = n + 1
    router = [[0] * COLOURS for _ in range(width)]
    switch = [[[0] * 4 for _ in range(COLOURS)] for _ in range(width)]
    for x in range(n):
        router[x][c] = router_word(CORE, EAST)          # position 0: the core sends east
        if x > 0:                                       # position 1: pass on from the west
            switch[x][c] = [1 << 15, WEST | (1 << 10) | EAST << 5, 0, 0]
    router[n][c] = router_word(WEST, CORE)              # the collector receives
    with open(router_path, "wb") as f:
        for x in range(width):                          # one row: y x r
            f.write(struct.pack(f"<{COLOURS}H", *router[x]))
    with open(switch_path, "wb") as f:
        for x in range(width):                          # y x r n
            for r in range(COLOURS):
                f.write(struct.pack("<4H", *switch[x][r]))


main()
