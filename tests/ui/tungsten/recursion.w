//@ expect: E1116
fact(xp n) -> xp {
    if (n < 2) return 1;
    return n * fact(n - 1);
}
{ }
