//@ expect: E1103
xp a[4];
{
    a[4] = 1;
}
