//@ expect: E1002
// Exponent markers are lower case.
sp f;
{
    f = 2.5E-3;
}
