//@ expect: E1116
ping(xp n) -> xp { return pong(n); }
pong(xp n) -> xp { return ping(n); }
{ }
