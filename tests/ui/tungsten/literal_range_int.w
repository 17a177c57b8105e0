//@ expect: E1124
// A typed literal must fit its type's bits: 70000 needs 17.
xp x;
{
    x = 70000:xp;
}
