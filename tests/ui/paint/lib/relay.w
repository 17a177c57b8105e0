// One relay of a row: receive the running sum from the west (unless first),
// add this tile's column, send it east (unless last), keep it in `sum`.
socket a;
xp param N = 4;
xp col[1] address(0x7C46);
xp sum[1];
{
  xp s = col[0];
  if (col[0] > 1) {
    xp v <- a[];
    s = s + v;
  }
  sum[0] = s;
  if (col[0] < N) {
    a[] <- s;
  }
}
