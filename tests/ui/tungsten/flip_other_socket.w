//@ expect: E1113
//@ sockets: tx=3 ty=4
socket tx;
socket ty;
{
    tx[] <- 1;
    flip ty[];
}
