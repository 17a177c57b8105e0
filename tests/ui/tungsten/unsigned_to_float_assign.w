//@ expect: E1104
u32 u = 7;
sp f;
{
    f = u;
}
