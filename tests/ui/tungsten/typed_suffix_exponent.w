//@ expect: E1107
hp h;
{
    h = 2.5e-3:hp;
}
