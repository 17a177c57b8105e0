//@ expect: E1112
//@ sockets: a=1 b=2 c=3 d=4 e=5 f=6 g=7
socket a, b, c, d, e, f, g;
{ }
