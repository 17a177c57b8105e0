//@ expect: E1118
//@ sockets: rx=3
socket rx;
xp a;
{
    (a + 1) <- rx[];
}
