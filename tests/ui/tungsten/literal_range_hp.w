//@ expect: E1124
// 65520 rounds to infinity in hp.
hp h;
{
    h = 65520.0:hp;
}
