// A program that compiles: declarations, loops, functions, sockets.
//@ sockets: tx=3 rx=4
socket tx;
socket rx;
xp param N = 4;
sp data[n=N];
union hdr { u32 u; xp w[2]; };

scale(sp x, sp k) -> sp { return x * k; }

{
    i in [0, N) data[i] = scale((sp)i, 0.5);
    union hdr h;
    h.w[0] = 4;
    h.w[1] = 0;
    tx[] <- h.u;
    i in [0, N) tx[] <- data[i];
    flip tx[];
    xp got <- rx[];
    if (got > 3) data[0] = 1.0; else data[0] = -1.0;
}
