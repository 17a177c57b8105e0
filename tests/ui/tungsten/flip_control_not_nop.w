//@ expect: E1113
//@ sockets: tx=3
// The flip bit cannot ride on a control wavelet whose command 0 is a switch advance.
socket tx;
{
    tx[] <- control(0x09409249);
    flip tx[];
}
