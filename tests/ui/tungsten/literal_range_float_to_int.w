//@ expect: E1124
// A float literal with an integer suffix must round into the type's range.
u16 u;
{
    u = 70000.0:u16;
}
