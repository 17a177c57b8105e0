// An override replaces the default; params size arrays.
//@ params: N=8
xp param N = 4;
sp a[n=N];
{
    a[7] = 1.0;
}
