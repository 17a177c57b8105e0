//@ expect: E1103
sp f = 1.0;
{
    f = f & 3;
}
