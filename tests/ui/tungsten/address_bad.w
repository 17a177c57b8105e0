//@ expect: E1119
xp a[4] address(0x7000);
{ }
