// The core tiles that do not touch the moat's sides, until mdlj.w exists: they keep
// their params and report their logical cell, with moatcheck.w's memory layout.
import "params.w";
struct paramstruct params;
xp got[3];
{
  got[2] = params.ix + 100 * params.iy;
}
