//@ expect: E1112
// Only the missing binding is reported: `v` is still declared, and its later use is fine.
socket a;
xp out[1];
{
    xp v <- a[];
    out[0] = v + 1;
}
