//@ expect: E1104
u16 u = 7;
sp f;
{
    f = (sp)u;
}
