//@ expect: E1101
union word { u32 u; xp w[2]; };
union word v;
{
    v.x = 1;
}
