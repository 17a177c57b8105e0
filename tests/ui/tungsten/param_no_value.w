//@ expect: E1109
xp param N;
{ }
