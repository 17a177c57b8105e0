// round(x, m): 0 nearest even, 1 toward zero, 2 down, 3 up.
sp f = 2.5; sp a; sp b; sp c; sp d;
{
    a = round(f, 0); b = round(f, 1); c = round(f, 2); d = round(f, 3);
}
