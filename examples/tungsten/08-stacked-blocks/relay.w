// Tutorial 8 (the relay of tutorial 1, unchanged but for this line): a running sum along a row.
//
// Every tile of the row holds one value in `val` (written by miset before the run). The
// westernmost tile sends its value east; every other tile receives the partial sum from
// the west, adds its own value, keeps the result in `sum` and sends it on. After the run
// `sum` on tile k holds val[0] + ... + val[k].
xp param N = 4;                 // tiles in the row (Paint overrides it)
socket a;                       // receives on colour a, sends on its pair (colorpair)
xp col_id[1] address(0x7C46);   // the column ID register: this tile's Paint x

sp val[1];                      // input, one per tile
sp sum[1];                      // output, one per tile

{
  xp x = col_id[0];             // 1 .. N: column 0 is the moat
  sp acc = val[0];
  if (x > 1) {
    sp in;
    in <- a[];                  // blocks until the west neighbour's wavelet arrives
    acc = acc + in;
  }
  sum[0] = acc;
  if (x < N) {
    a[] <- acc;                 // one 32-bit wavelet to the east neighbour
  }
}
