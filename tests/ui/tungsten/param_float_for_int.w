//@ expect: E1109
//@ params: N=2.5
xp param N = 4;
{ }
