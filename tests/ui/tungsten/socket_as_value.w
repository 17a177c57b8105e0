//@ expect: E1110
//@ sockets: rx=3
socket rx;
xp a;
{
    a = rx + 1;
}
