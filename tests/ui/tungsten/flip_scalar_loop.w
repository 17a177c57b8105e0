//@ expect: E1113
//@ sockets: tx=3
socket tx;
xp a[4];
xp n = 4;
{
    i in [0, n) tx[] <- a[i] + 1;
    flip tx[];
}
