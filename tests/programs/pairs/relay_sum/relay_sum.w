// Tungsten half of the relay_sum pair (layout.csl is the CSL half): a running sum relayed
// east along a row. The tile in Paint column x (1..N) owns 1.5 * x, adds what arrives
// from the west, keeps the partial sum and passes it on.
xp param N = 5;
socket a;                       // receives on colour a (from the west), sends on its pair
xp col_id[1] address(0x7C46);   // the column ID register: Paint x of this tile
sp sum[1];

{
  xp x = col_id[0];
  sp acc = 1.5 * (sp)x;
  if (x > 1) {
    sp v;
    v <- a[];
    acc = acc + v;
  }
  sum[0] = acc;
  if (x < N) {
    a[] <- acc;
  }
}
