//@ expect: E1119
{
    xp a[1] address(0x7C46);
}
