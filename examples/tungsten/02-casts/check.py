"""Checks each conversion against the value the Tungsten cast reference gives for it."""
import struct
import sys


def words(name, fmt):
    return struct.unpack(fmt, open(f"{name}.bin", "rb").read())


expected = [
    ("(xp)2.7 at run time", words("r_xp", "<6h")[0], 3),
    ("(xp)2.5 (ties to even)", words("r_xp", "<6h")[1], 2),
    ("(xp)40000.0 (saturates)", words("r_xp", "<6h")[2], 32767),
    ("(xp)-2.5 (ties to even)", words("r_xp", "<6h")[3], -2),
    ("(xp)-1e9 (saturates)", words("r_xp", "<6h")[4], -32768),
    ("(xp)round(2.7, 1) (truncates)", words("r_xp", "<6h")[5], 2),
    ("(xp)2.7 folded", words("r_fold", "<3h")[0], 3),
    ("(xp)2.5 folded", words("r_fold", "<3h")[1], 2),
    ("(xp)40000.0 folded", words("r_fold", "<3h")[2], 32767),
    ("(hp)(xp)s[] of an xp 3 (converts)", words("r_hp", "<2e")[0], 3.0),
    ("(hp)s[] of an xp 3: bit pattern", words("r_hp", "<2H")[1], 0x0003),
    ("u16 1 > xp -1 (no promotion)", words("r_cmp", "<h")[0], 0),
    ("u32 r = 0xFFFFFFFF + 2", words("r_u32", "<2I")[0], 1),
    ("u16 1 + s16 -2 is u16", words("r_u32", "<2I")[1], 0xFFFF),
    (
        "hp 1.0 + sp 0.0001 is sp",
        words("r_sp", "<f")[0],
        struct.unpack("<f", struct.pack("<f", 1.0 + struct.unpack("<f", struct.pack("<f", 0.0001))[0]))[0],
    ),
]
bad = [(what, got, want) for what, got, want in expected if got != want]
for what, got, want in expected:
    print(f"{'ok  ' if got == want else 'FAIL'} {what}: {got}")
if bad:
    sys.exit(f"FAIL: {len(bad)} conversions differ")
print(f"SUCCESS: {len(expected)} conversions")
