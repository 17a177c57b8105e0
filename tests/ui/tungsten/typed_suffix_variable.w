//@ expect: E1107
xp a = 1;
sp f;
{
    f = a:sp;
}
