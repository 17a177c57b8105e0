//@ expect: E1124
// An exponent literal is sp; 1e39 is beyond its range.
sp f;
{
    f = 1e39;
}
