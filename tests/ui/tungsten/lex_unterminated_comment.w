//@ expect: E1005
{ }
/* this comment never ends
