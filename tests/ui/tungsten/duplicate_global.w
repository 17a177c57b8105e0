//@ expect: E1102
xp a;
sp a;
{ }
