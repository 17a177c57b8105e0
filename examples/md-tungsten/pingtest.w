// The barrier test on the ping network (issue 17): every core PE works for a while (a
// spin whose length differs per PE and barrier), stamps its arrival, takes part in the
// barrier as seed 002's mdlj.w does (one `(adv*)` control wavelet, then two receives:
// the probe on the comb, the release on its broadcast), and stamps its departure.
// `mdlj-tables check-ping` checks that no PE left a barrier before the last one arrived.
// The comb's switches are in the router tables (mdlj-tables relay); pingorigin.w runs
// the barrier from tile (0, 0).
import "params.w";
socket ping;                         // colour 12, the comb
socket release;                      // colour 14, the release
struct paramstruct params;
xp param B = 3;                      // barriers
u32 ADV = 0x09409249;                // (adv*, nop* ...)
u16 tsc[3] address(0x7b30);          // the timestamp counter
u16 stamp[B * 6];                    // per barrier: arrival, departure (3 words each)
xp spin[1];

{
  b in [0, B) {
    xp d = ((params.ix * 7 + params.iy * 13 + params.iz * 5 + b * 3) % 11) * 16;
    i in [0, d) spin[0] = spin[0] + 1;
    i in [0, 3) stamp[6 * b + i] = tsc[i];
    ping[] <- control(ADV);          // arrive: this PE's switch lets the probe pass
    ping[];                          // the probe
    release[];                       // the release: everyone has arrived
    i in [0, 3) stamp[6 * b + 3 + i] = tsc[i];
  }
}
