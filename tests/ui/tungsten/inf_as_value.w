//@ expect: E1121
xp a;
{
    a = ∞;
}
