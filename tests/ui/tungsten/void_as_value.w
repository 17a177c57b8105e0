//@ expect: E1117
f(xp a) { }
xp r;
{
    r = f(1);
}
