// `forever dispatch` runs its arm for every wavelet.
//@ sockets: s=3
socket s;
sp acc;
{
    forever dispatch(s) {
        wavelet(sp v) { acc = acc + v; }
    }
}
