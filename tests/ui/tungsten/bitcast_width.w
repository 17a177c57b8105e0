//@ expect: E1105
xp a = 1;
sp f;
{
    f = bitcast(sp, a);
}
