//@ expect: E1003
xp a = 1
xp b = 2;
{ }
