//@ expect: E1102
xp param N = 4;
sp N;
{ }
