//@ expect: E1106
u64 big;
{ }
