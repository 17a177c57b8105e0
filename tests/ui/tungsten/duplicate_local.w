//@ expect: E1102
{
    xp a = 1;
    xp a = 2;
}
