// The suggested fix compiles.
u16 u = 7;
sp f;
{
    f = (sp)(s32)u;
}
