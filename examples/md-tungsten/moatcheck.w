// Sends one value out of the core through a moat tile and receives it back on the
// partner colour: the moat's turnaround (router table from mdlj-tables) at work.
// Also keeps the tile's params and coordinates, so the host can check the fold.
import "params.w";
socket out;
socket back;
struct paramstruct params;
xp row_id[1] address(0x7C45);
xp col_id[1] address(0x7C46);
xp got[3];
{
  xp v = col_id[0] + 100 * row_id[0];
  out[] <- v;
  got[0] <- back[];
  got[1] = col_id[0];
  got[2] = params.ix + 100 * params.iy;
}
