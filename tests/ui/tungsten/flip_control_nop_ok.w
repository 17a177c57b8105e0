//@ sockets: tx=3
// A control wavelet whose command 0 is a NOP (here with the CE filter; command 1 a
// switch reset) can carry the flip bit.
socket tx;
{
    tx[] <- control(0x05000000);
    flip tx[];
}
