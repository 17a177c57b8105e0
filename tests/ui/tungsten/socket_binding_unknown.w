//@ expect: E1112
//@ sockets: tx=3 rx=4
socket tx;
{ }
