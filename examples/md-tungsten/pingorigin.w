// The ping origin (seed 002's pingorigin.w, our reading): the barrier master on the
// corner moat tile (0, 0). Per barrier it sends a probe and its trailer (rst*, adv*)
// down the comb's spine (colour 12). A copy enters every core column and passes each PE
// only once that PE has arrived; the columns come back one after the other along the
// south moat row and home on colour 13. When all W have come back, every PE has
// arrived: the origin counts the barrier in frame[0] and sends the release (colour 14).
socket pout;                         // colour 12: the probe, into the spine
socket pin;                          // colour 13: the way back
socket prel;                         // colour 14: the release
xp param B = 3;                      // barriers
xp param W = 32;                     // core columns (one probe comes back per column)
u32 TRAILER = 0x0B809249;            // (rst*, adv*, nop* ...)
xp frame[1];
xp backs[W];                         // the probes as they come back

{
  b in [0, B) {
    pout[] <- 1;                     // the probe ...
    pout[] <- control(TRAILER);      // ... re-arms every PE's switch behind it
    i in [0, W) backs[i] <- pin[];   // one back per column: every core PE has arrived
    frame[0] = frame[0] + 1;
    prel[] <- 2;                     // the release
  }
}
