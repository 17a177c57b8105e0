// Round 1: send K values, then flip (the local switch passes the west's values on).
// The farthest tile resets every switch with a control wavelet; round 2 hands the colour
// on with an "advance" control wavelet instead of flip.
xp param K = 2;
socket out;
xp col[1] address(0x7C46);
xp v[K];
{
  i in [0, K) v[i] = col[0] * 10 + i;
  i in [0, K) out[] <- v[i];
  flip out[];
  if (col[0] == 0) {
    out[] <- control(0x09809249);
  }
  i in [0, K) v[i] = v[i] + 100;
  i in [0, K) out[] <- v[i];
  out[] <- control(0x09409249);
}
