//@ expect: E1123
u32 w;
{
    w = control(3);
}
