//@ sockets: tx=3
// A send loop with a run-time bound is one transfer (its length set at run time), so
// `flip` can mark its last wavelet.
socket tx;
xp a[4];
xp n = 4;
{
    i in [0, n) tx[] <- a[i];
    flip tx[];
}
