// The one loop form that may use the index half.
//@ sockets: a=3
socket a;
xp x[n=8];
{
    i in [0, 4) x[a[].index] <- a[].data;
}
