// Arrays passed by reference: a global, a row of a 2-D array, a local array, and a
// parameter passed on. No diagnostics.
sp v[4];
sp m[2][4];
sp f;
total(sp x[4]) -> sp { return x[0] + x[1] + x[2] + x[3]; }
twice(sp x[4]) -> sp { return 2.0 * total(x); }
{
    sp loc[4];
    loc[0] = 1.0;
    f = total(v) + total(m[1]) + twice(loc);
}
