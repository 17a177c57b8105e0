// Equal widths reinterpret bits; `reinterpret` is the same.
u32 bits = 0x3F800000;
sp f; u16 h;
{
    f = bitcast(sp, bits);
    h = reinterpret(u16, (hp)1.0);
}
