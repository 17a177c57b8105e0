//@ expect: E1103
// An array parameter takes an array of the same element type and length.
sp v[4];
sp w[8];
xp k[4];
sp f;
total(sp x[4]) -> sp { return x[0] + x[3]; }
{
    f = total(v);
    f = total(w);
    f = total(k);
    f = total(f);
    f = total(v[1]);
    f = total(1.0);
}
