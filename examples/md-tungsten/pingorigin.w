// The ping origin (seed 002's pingorigin.w, our reading): the barrier master on the
// corner moat tile (0, 0). Per barrier it sends a probe into the comb (colour 12),
// which passes a core PE only once that PE has arrived, and waits for it to come back
// (colour 13): every PE has arrived. It counts the barrier in frame[0] and sends the
// release, a value and `(rst*)`, which every PE receives and which re-arms every PE's
// switch on its way; then it takes the release back.
socket pout;                         // colour 12: into the comb
socket pin;                          // colour 13: the way back
xp param B = 3;                      // barriers
u32 RST = 0x09809249;                // (rst*, nop* ...)
xp frame[1];

{
  b in [0, B) {
    pout[] <- 1;                     // the probe
    pin[];                           // back: every core PE has arrived
    frame[0] = frame[0] + 1;
    pout[] <- 2;                     // the release ...
    pout[] <- control(RST);          // ... and the reset of every switch it passes
    pin[];                           // the release back
  }
}
