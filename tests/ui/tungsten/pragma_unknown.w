// Unknown pragmas warn and are ignored.
//@ expect: E1008
#pragma fp.mode round_down
{ }
