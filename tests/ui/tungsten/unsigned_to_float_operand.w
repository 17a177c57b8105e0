//@ expect: E1104
u16 u = 7;
hp h = 1.0;
hp r;
{
    r = u + h;
}
