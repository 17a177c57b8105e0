//@ expect: E1104
half(u16 u) -> hp { return u; }
{ }
