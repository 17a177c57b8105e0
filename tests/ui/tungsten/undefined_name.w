//@ expect: E1101
xp total;
{
    totl = 3;
}
