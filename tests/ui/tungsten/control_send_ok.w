// A control wavelet: advance, every command CE-filtered.
//@ sockets: tx=3
socket tx;
u32 ADV = 0x09409249;
{
    tx[] <- control(ADV);
}
