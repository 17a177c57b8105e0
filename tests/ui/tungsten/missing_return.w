//@ expect: E1117
f(xp a) -> xp {
    if (a > 0) return 1;
}
{ }
