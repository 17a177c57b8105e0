//@ expect: E1117
add(xp a, xp b) -> xp { return a + b; }
xp r;
{
    r = add(1);
}
