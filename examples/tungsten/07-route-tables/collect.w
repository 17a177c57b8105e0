// Tutorial 4: the collector at the east end of the row keeps every data wavelet in the
// order it arrives. The control wavelets are filtered out before they reach its core.
xp param M = 32;                     // wavelets to expect: 2 rounds x N tiles x K values
socket inp;
sp got[M];                           // output (miget)

{
  i in [0, M) got[i] <- inp[];
}
