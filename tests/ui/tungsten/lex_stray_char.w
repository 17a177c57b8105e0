//@ expect: E1001
xp a = 1 $ 2;
{ }
