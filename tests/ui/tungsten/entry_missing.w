//@ expect: E1009
xp a = 1;
