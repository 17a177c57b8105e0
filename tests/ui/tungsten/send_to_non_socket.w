//@ expect: E1110
xp a[4];
{
    a[] <- 3;
}
