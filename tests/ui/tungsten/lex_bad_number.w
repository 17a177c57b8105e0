//@ expect: E1002
xp a = 12abc;
{ }
