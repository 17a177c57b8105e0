//@ expect: E1004
{
    xp a = 1;
