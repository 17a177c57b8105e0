// Sends K values east on `out` and receives K values back on `back`: the east end of the
// row turns them around (the moat's colour swap).
socket out;
socket back;
xp param K = 4;
xp got[K];
{
  parallel {
    i in [0, K) out[] <- (xp)(100 + i);
    i in [0, K) got[i] <- back[];
  }
}
