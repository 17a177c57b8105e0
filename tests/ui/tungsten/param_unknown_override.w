//@ expect: E1109
//@ params: M=3
xp param N = 4;
{ }
