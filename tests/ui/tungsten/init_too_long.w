//@ expect: E1122
xp a[2] = {1, 2, 3};
{ }
