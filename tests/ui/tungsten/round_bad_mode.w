//@ expect: E1103
sp f = 2.5;
{
    f = round(f, 7);
}
