//@ expect: E1108
xp n = 4;
sp a[n];
{ }
