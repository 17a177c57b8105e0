// Typed literals at the edges of their types compile: a hex pattern that fills xp's 16
// bits, the largest u32 and hp values, and s16's minimum as `-` applied to 32768.
xp a;
u32 b;
hp c;
s16 d;
sp e;
{
    a = 0xDEAD:xp;
    b = 0xFFFFFFFF:u32;
    c = 65504.0:hp;
    d = -32768:s16;
    e = 0x1.8p3;
}
