//@ expect: E1114
//@ sockets: a=3
socket a;
xp x[8];
xp n;
{
    i in [0, 4) { x[a[].index] <- a[].data; n = n + 1; }
}
