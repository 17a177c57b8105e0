//@ expect: E1009
{ }
{ }
