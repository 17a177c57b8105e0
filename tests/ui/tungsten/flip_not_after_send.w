//@ expect: E1113
//@ sockets: tx=3
socket tx;
xp a;
{
    tx[] <- 1;
    a = 2;
    flip tx[];
}
