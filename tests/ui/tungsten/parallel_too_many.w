//@ expect: E1115
//@ sockets: a=1 b=2 c=3
socket a, b, c;
{
    parallel {
        a[] <- 1; a[] <- 2; a[] <- 3;
        b[] <- 1; b[] <- 2; b[] <- 3;
        c[] <- 1; c[] <- 2; c[] <- 3;
    }
}
