//@ expect: E1120
//@ sockets: s=3
socket s;
{
    forever dispatch(s) {
        wavelet(xp v) { }
        control() { }
    }
}
