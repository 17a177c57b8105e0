//@ expect: E1114
//@ sockets: a=3
socket a;
xp x[8];
{
    x[0] = a[].index;
}
