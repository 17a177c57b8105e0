//@ expect: E1118
xp param N = 4;
{
    N = 5;
}
