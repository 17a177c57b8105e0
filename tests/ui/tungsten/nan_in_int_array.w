//@ expect: E1121
xp a[2] = {1, NAN};
{ }
