// Tutorial 4: tiles that take turns on one colour.
//
// Every sender's router starts in switch position 0 (its core sends east) and has a
// position 1 (pass on what comes from the west). A tile sends its block and then hands the
// colour on: in round 1 with `flip` (the last wavelet carries the local-switch-flip bit),
// in round 2 with a control wavelet whose command 0 is "advance". Between the rounds the
// farthest tile sends a "reset" control wavelet, which puts every switch it passes back
// into position 0.
xp param K = 4;                      // values per tile and round
socket out;
xp col_id[1] address(0x7C46);

u32 RESET = 0x09809249;              // command 0: switch reset; all commands CE-filtered
u32 ADVANCE = 0x09409249;            // command 0: switch advance; all commands CE-filtered

sp data[K];                          // input (miset)
sp again[K];                         // what round 2 sends

{
  i in [0, K) again[i] = data[i] + 1000.0;

  i in [0, K) out[] <- data[i];      // round 1: one DSD send of K wavelets ...
  flip out[];                        // ... whose last one flips this tile's switch

  if (col_id[0] == 0) {
    out[] <- control(RESET);         // re-arm every switch on the way to the collector
  }

  i in [0, K) out[] <- again[i];     // round 2
  out[] <- control(ADVANCE);         // hand on with a control wavelet this time
}
