// mdlj.w: seed 002's per-PE molecular-dynamics program in Tungsten (issue 17), the
// second form of the MD flagship (examples/md/md.csl is the first). One cell per PE;
// the algorithm, memory order and arithmetic follow md.csl (examples/md/DESIGN.md) so
// that both forms give the same energies on the same inputs:
//
//   count relay (getcount) -> halo exchange of 4-word records along x+, x-, z- (whole
//   x-lines), y+, y- -> half-shell pair list with the minimum image -> U = 0.1 r^-12,
//   F = 1.2 r^-14 (ri - rj), 1/r from the 0x5f37 bit trick and three Newton steps ->
//   reverse relay of the partial forces (z+, then x, then y; `<+-`-style sums) ->
//   velocity Verlet (outer/inner split) -> migration one axis at a time -> per-frame
//   energy and timestamp records.
//
// After each energy record every PE takes part in a barrier on the ping network
// (pingorigin.w on the corner tile runs it), as the seed's program does.
//
// Every transfer is one shift of the switch-machine relay (README.md, "The relay's
// switch machine"): an asynchronous receive of the upstream block (its length known in
// advance from the count relay) in `parallel` with the send of this PE's block and the
// two trailers that march the switches. The router and switch tables come from
// `mdlj-tables ... atoms` by miset; the sockets are bound to the PE's own lane and z
// colours by mdlj.paint (mdlj-classes.paint, written by mdlj-tables).
//
// Inputs (miset): core.params (paramstruct), core.fparams (fparamstruct), core.pos
// (pos[NMAX][4]: x, y, z, signed id), core.vel (vel[NLOC][3]). Outputs (miget): epot,
// ekin (per frame), tstamp (3 words per frame), diag (overflow flags, atoms owned),
// xchg (the last halo exchange's counts and region starts), prof (cycles per phase).
// WSE-3 only: eight sockets.
import "params.w";
socket sxm;                          // x- relay: blocks move to lower x (fills the xp halo)
socket sxp;                          // x+ relay: to higher x (fills the xm halo)
socket sym;                          // y- relay (fills yp)
socket syp;                          // y+ relay (fills ym)
socket szm;                          // z- relay (colour 8 or 9, mdlj-classes.paint)
socket szp;                          // z+ relay (9 along a tour; 16 or 17 in a 1 x n block)
socket ping;                         // the barrier's comb (colour 12)
socket release;                      // its release (colour 14)
xp param NLOC = 20;                  // owned atoms a PE can hold (seed: NLOCMAX)
xp param NMAX = 32;                  // position records (own + halo)
xp param NFRAMES = 11;               // energy records
xp param NBUF = 560;                 // sp values of a relayed block (an x-line: 7 NLOC 4)
xp param NPAIR = 128;                // pairs within the cutoff a force pass can hold

struct paramstruct params;
struct fparamstruct fparams;
// The memory map (hand-laid, seed style): one arena holds the records, the forces and
// the relay's buffers, so every transfer names its source and destination by an offset
// into `mem` (in sp elements: POS, FF, BOUT, BIN, MIGP, MIGM below) and is one DSD op
// whose base address is set at run time.
sp mem[7 * NMAX + 4 * NBUF];
sp pos[NMAX][4] address(&mem + 0);
sp ff[NMAX][3] address(&pos + 8 * NMAX);
sp bout[NBUF] address(&ff + 6 * NMAX);                   // a block this PE sends
sp bin[NBUF] address(&bout + 2 * NBUF);                  // the block it receives
sp migp[NBUF] address(&bin + 2 * NBUF);                  // migration: atoms leaving to +
sp migm[NBUF] address(&migp + 2 * NBUF);                 // ... and to -
sp vel[NLOC][3];
sp epot[NFRAMES];
sp ekin[NFRAMES];
u16 tstamp[3 * NFRAMES];
u16 tsc[3] address(0x7b30);          // the timestamp counter
xp row_id[1] address(0x7C45);        // this PE's fabric row (y)
xp col_id[1] address(0x7C46);        // ... and column (x)
// diag: 0 overflow flags (1 owned > NLOC, 2 records > NMAX, 4 block > NBUF, 8 pairs >
// NPAIR), 1 atoms owned at the end, 2 most records held, 3 force passes, 4 and 5 the
// PE's fabric x and y from the coordinate registers (the host checks the floorplan).
xp diag[6];
// The pair list of a force pass (md.csl's, stored per pair as its DSD kernels use it):
// the minimum-image differences, r^2 and the two records of every pair within the
// cutoff, in the order the half shell finds them; the vector kernels below turn
// pdx/pdy/pdz into the force components in place.
sp pdx[NPAIR];
sp pdy[NPAIR];
sp pdz[NPAIR];
sp pr2[NPAIR];
sp prinv[NPAIR];                     // 1/r: the bit-trick seed, then three Newton steps
sp pt[NPAIR];                        // a Newton step's factor, then U and df
sp pq[NPAIR];                        // r^-2
sp p6[NPAIR];                        // r^-6, then r^-12
xp pa[NPAIR];
xp pb[NPAIR];
xp npair = 0;
// xchg: the last exchange's halo counts (xm, xp, ym, yp, z lines: 3 cells each) and
// its nine region starts (own | xm | x0 | xp | z lines | ym | y0 | yp | end), the
// words md.csl's diag reports, for the host's exchange oracle.
xp xchg[24];
// prof: cycles in each phase summed over the timesteps after frame 0 (low 32 bits of
// the counter): exchange, pair list and forces, reduction, integration, migration,
// barrier.
u32 prof[6];
u32 lap0 = 0;

u32 XY1 = 0x2B409249;                // (adv*, adv*, rst*): first trailer, four positions
u32 XY2 = 0x09409249;                // (adv*): second trailer
u32 Z1 = 0x0D409249;                 // (adv*, rst*): first trailer, three positions
u32 END = 0x09809249;                // (rst*): a 1 x n block's end PEs
u32 xc1 = 0;
u32 yc1 = 0;
xp zend_pe = 0;                      // an end PE of a 1 x n block's z line


// Counts and region starts of the halo, 3 cells per region: 0 xm (from x+), 1 xp (from
// x-), 2 ym (from y+), 3 yp (from y-), 4 the z+1..z+3 x-lines (from z-).
xp cnt[15];
xp ptr[15];
xp nlocal = 0;
xp top = 0;
xp x0 = 0;
xp y0 = 0;
xp xline = 0;
xp xend = 0;
xp zend = 0;
xp yline = 0;
xp yend = 0;
sp eval = 0.0;

// Offsets into `mem` (sp elements).
xp POS = 0;
xp FF = 4 * NMAX;
xp BOUT = 7 * NMAX;
xp BIN = 7 * NMAX + NBUF;
xp MIGP = 7 * NMAX + 2 * NBUF;
xp MIGM = 7 * NMAX + 3 * NBUF;

// One shift along relay `dir` (0 x+, 1 x-, 2 y+, 3 y-, 4 z-, 5 z+): sends
// mem[so, so + nout) and adds the nin words it receives onto mem[ro, ro + nin) (`<+-`:
// the force reduction adds onto its partial sums; a plain receive zeroes the
// destination first, `take`).
shift(xp dir, xp so, xp nsend, xp ro, xp nrecv) {
  xp nout = nsend;
  xp nin = nrecv;
  if (nout > NBUF || nin > NBUF) {
    diag[0] = diag[0] | 4;
    nout = min(nout, NBUF);
    nin = min(nin, NBUF);
  }
  if (dir == 0) {
    parallel {
      i in [0, nin) mem[i + ro] <+- sxp[];
      { i in [0, nout) sxp[] <- mem[i + so]; sxp[] <- control(xc1); sxp[] <- control(XY2); }
    }
  } else if (dir == 1) {
    parallel {
      i in [0, nin) mem[i + ro] <+- sxm[];
      { i in [0, nout) sxm[] <- mem[i + so]; sxm[] <- control(xc1); sxm[] <- control(XY2); }
    }
  } else if (dir == 2) {
    parallel {
      i in [0, nin) mem[i + ro] <+- syp[];
      { i in [0, nout) syp[] <- mem[i + so]; syp[] <- control(yc1); syp[] <- control(XY2); }
    }
  } else if (dir == 3) {
    parallel {
      i in [0, nin) mem[i + ro] <+- sym[];
      { i in [0, nout) sym[] <- mem[i + so]; sym[] <- control(yc1); sym[] <- control(XY2); }
    }
  } else if (dir == 4) {
    // z: along a block's tour and in the middle of a 1 x n block a PE receives and sends
    // on one colour; a 1 x n block's two end PEs send on the partner colour (a
    // colorpair, mdlj-classes.paint) and end a burst with (rst*) alone (README.md).
    if (zend_pe != 0) {
      parallel {
        i in [0, nin) mem[i + ro] <+- szm[];
        { i in [0, nout) szm[] <- mem[i + so]; szm[] <- control(END); }
      }
    } else {
      parallel {
        i in [0, nin) mem[i + ro] <+- szm[];
        { i in [0, nout) szm[] <- mem[i + so]; szm[] <- control(Z1); szm[] <- control(XY2); }
      }
    }
  } else {
    if (zend_pe != 0) {
      parallel {
        i in [0, nin) mem[i + ro] <+- szp[];
        { i in [0, nout) szp[] <- mem[i + so]; szp[] <- control(END); }
      }
    } else {
      parallel {
        i in [0, nin) mem[i + ro] <+- szp[];
        { i in [0, nout) szp[] <- mem[i + so]; szp[] <- control(Z1); szp[] <- control(XY2); }
      }
    }
  }
}

// A plain receive: zeroes mem[ro, ro + n) (the shift adds onto it).
take(xp ro, xp n) {
  i in [0, n) mem[i + ro] = 0.0;
}

// The barrier (seed 002's protocol on the ping network, README.md): arrive with one
// (adv*) on the comb, which lets the origin's probe pass this PE, then take the probe
// and the release the origin sends once every PE's probe came home.
barrier() {
  ping[] <- control(XY2);
  ping[];
  release[];
}

// getcount: relays a one-word count three cells along `dir` and records the counts of
// the three upstream cells as region `reg`.
count_relay(xp dir, xp reg, xp n) {
  bout[0] = (sp)n;
  k in [0, 3) {
    bin[0] = 0.0;
    shift(dir, BOUT, 1, BIN, 1);
    cnt[3 * reg + k] = (xp)bin[0];
    bout[0] = bin[0];
  }
}

// Relays the n records pos[from, from + n) three cells along `dir`: each shift
// receives the upstream cell's records (their count from the count relay) straight
// into pos at `top`, appending them as region `reg`, and the next shift sends them on.
pos_relay(xp dir, xp reg, xp from, xp n) {
  xp so = POS + 4 * from;
  xp nout = 4 * n;
  k in [0, 3) {
    xp m = cnt[3 * reg + k];
    ptr[3 * reg + k] = top;
    xp ro = BIN;
    if (top + m > NMAX) {
      diag[0] = diag[0] | 2;
    } else {
      ro = POS + 4 * top;
    }
    take(ro, 4 * m);
    shift(dir, so, nout, ro, 4 * m);
    if (ro == BIN) {
      // No room: pass the block on from the staging buffer.
      i in [0, 4 * m) bout[i] = bin[i];
      so = BOUT;
    } else {
      so = ro;
      top = top + m;
    }
    nout = 4 * m;
  }
}

// Appends a copy of the owned records; returns where it starts.
copy_own() -> xp {
  xp at = top;
  if (top + nlocal > NMAX) {
    diag[0] = diag[0] | 2;
  } else {
    xp o = 4 * top;
    i in [0, 4 * nlocal) mem[i + o] = mem[i];
    top = top + nlocal;
  }
  return at;
}

// The halo exchange, in md.csl's memory order:
// own | xm | x0 | xp | z+1..z+3 x-lines | ym | y0 | yp.
exchange() {
  count_relay(0, 0, nlocal);
  count_relay(1, 1, nlocal);
  count_relay(2, 2, nlocal);
  count_relay(3, 3, nlocal);
  xp xl = nlocal;
  k in [0, 6) xl = xl + cnt[k];
  count_relay(4, 4, xl);
  top = nlocal;
  xline = top;
  pos_relay(0, 0, 0, nlocal);
  x0 = copy_own();
  pos_relay(1, 1, 0, nlocal);
  xend = top;
  pos_relay(4, 4, xline, xend - xline);
  zend = top;
  yline = top;
  pos_relay(2, 2, 0, nlocal);
  y0 = copy_own();
  pos_relay(3, 3, 0, nlocal);
  yend = top;
  diag[2] = max(diag[2], top);
  k in [0, 15) xchg[k] = cnt[k];
  xchg[15] = xline;
  xchg[16] = x0;
  xchg[17] = ptr[3];
  xchg[18] = xend;
  xchg[19] = zend;
  xchg[20] = ptr[6];
  xchg[21] = y0;
  xchg[22] = ptr[9];
  xchg[23] = yend;
}

// The timestamp counter's low 32 bits.
now32() -> u32 {
  u32 lo = tsc[0];
  u32 hi = tsc[1];
  return lo | (hi << 16);
}

// Adds the cycles since the last lap to phase k and starts a new lap.
lap(xp k) {
  u32 t = now32();
  prof[k] = prof[k] + (t - lap0);
  lap0 = t;
}

// Rounds to the nearest integer (|v| < 2^22) with the 2^23 magic.
rnd(sp v) -> sp {
  sp m = v < 0.0 ? -8388608.0 : 8388608.0;
  return (v + m) - m;
}

// One candidate pair (i, j): the minimum-image difference; inside the cutoff it joins
// the pair list with the seed of its 1/r (the 0x5f37 bit trick on the high 16 bits).
union fw { sp f; u16 w[2]; };
try_pair(xp i, xp j, sp rc2) {
  sp dx = pos[i][0] - pos[j][0];
  sp dy = pos[i][1] - pos[j][1];
  sp dz = pos[i][2] - pos[j][2];
  dx = dx - fparams.box[0] * rnd(dx * fparams.boxinv[0]);
  dy = dy - fparams.box[1] * rnd(dy * fparams.boxinv[1]);
  dz = dz - fparams.box[2] * rnd(dz * fparams.boxinv[2]);
  sp d2 = dx * dx + dy * dy + dz * dz;
  if (d2 < rc2) {
    if (npair < NPAIR) {
      pdx[npair] = dx;
      pdy[npair] = dy;
      pdz[npair] = dz;
      pr2[npair] = d2;
      union fw u;
      u.f = d2;
      u.w[1] = 0x5f37 - (u.w[1] >> 1);
      u.w[0] = 0;
      prinv[npair] = u.f;
      pa[npair] = i;
      pb[npair] = j;
      npair = npair + 1;
    } else {
      diag[0] = diag[0] | 8;
    }
  }
}

// The pair kernels: every step one `∀` statement over the pair list (one DSD op each:
// fmuls, fsubs, and the energy sum an fadds reduction), the same fp32 operations in
// the same order as the scalar y = y (1.5 - ((0.5 x) y) y) three times; r2 = y y;
// r6 = (r2 r2) r2; r12 = r6 r6; U = 0.1 r12 summed in pair order; df = (1.2 r12) r2;
// F = df (dx, dy, dz). The scatter of the forces onto both atoms of each pair stays a
// scalar loop (two run-time record indices per pair), in pair order.
pair_forces() {
  let j in [0, npair);
  ∀j pr2[j] = pr2[j] * 0.5;            // 0.5 x, the same product in every step
  n in [0, 3) {
    ∀j pt[j] = pr2[j] * prinv[j];
    ∀j pt[j] = pt[j] * prinv[j];
    ∀j pt[j] = 1.5 - pt[j];
    ∀j prinv[j] = prinv[j] * pt[j];
  }
  ∀j pq[j] = prinv[j] * prinv[j];
  ∀j p6[j] = pq[j] * pq[j];
  ∀j p6[j] = p6[j] * pq[j];
  ∀j p6[j] = p6[j] * p6[j];
  ∀j pt[j] = p6[j] * 0.1;
  ∀j eval <+- pt[j];
  ∀j pt[j] = p6[j] * 1.2;
  ∀j pt[j] = pt[j] * pq[j];
  ∀j pdx[j] = pt[j] * pdx[j];
  ∀j pdy[j] = pt[j] * pdy[j];
  ∀j pdz[j] = pt[j] * pdz[j];
  p in [0, npair) {
    xp i = pa[p];
    xp k = pb[p];
    ff[i][0] = ff[i][0] + pdx[p];
    ff[i][1] = ff[i][1] + pdy[p];
    ff[i][2] = ff[i][2] + pdz[p];
    ff[k][0] = ff[k][0] - pdx[p];
    ff[k][1] = ff[k][1] - pdy[p];
    ff[k][2] = ff[k][2] - pdz[p];
  }
}

// Sends the partial forces of region `reg` back along `dir` to their owners: each
// shift adds the arriving sums onto this PE's partials for the same cell (`<+-` into
// ff) and the next shift sends them on; the third brings the sums for this PE's own dn
// records, added onto ff[dest, dest + dn).
reduce(xp dir, xp reg, xp dest, xp dn) {
  xp so = FF + 3 * ptr[3 * reg + 2];
  xp nout = 3 * cnt[3 * reg + 2];
  k in [0, 2) {
    xp c = 1 - k;
    xp ro = FF + 3 * ptr[3 * reg + c];
    xp m = 3 * cnt[3 * reg + c];
    shift(dir, so, nout, ro, m);
    so = ro;
    nout = m;
  }
  shift(dir, so, nout, FF + 3 * dest, 3 * dn);
}

// Forces on the owned atoms and this PE's share of the potential energy.
force_pass() {
  lap0 = now32();
  exchange();
  lap(0);
  i in [0, 3 * top) mem[i + FF] = 0.0;
  eval = 0.0;
  npair = 0;
  if ((diag[0] & 2) == 0) {
    sp rc2 = fparams.rcut * fparams.rcut;
    // The half shell: the y-line against the x+ halo and the z+ x-lines; the own copy
    // in the y-line against its later atoms and the y+ halo.
    i in [yline, yend) { j in [ptr[3], zend) try_pair(i, j, rc2); }
    i in [y0, y0 + nlocal) { j in [i + 1, yend) try_pair(i, j, rc2); }
    pair_forces();
  }
  lap(1);
  // z first: the z+ x-lines hold x-halo atoms of the z neighbours.
  reduce(5, 4, xline, xend - xline);
  reduce(1, 0, x0, nlocal);
  reduce(0, 1, x0, nlocal);
  reduce(3, 2, y0, nlocal);
  reduce(2, 3, y0, nlocal);
  a in [0, nlocal) { k in [0, 3) ff[a][k] = ff[a][k] + ff[x0 + a][k]; }
  a in [0, nlocal) { k in [0, 3) ff[a][k] = ff[a][k] + ff[y0 + a][k]; }
  diag[3] = diag[3] + 1;
  lap(2);
}

// Kick (v += F/m dtv) and, when `drift`, drift (x += v dt).
integrate(sp dtv, xp drift) {
  sp dt = fparams.dt;
  a in [0, nlocal) {
    sp s = (pos[a][3] < 0.0 ? fparams.invmass[0] : fparams.invmass[1]) * dtv;
    k in [0, 3) {
      vel[a][k] = vel[a][k] + ff[a][k] * s;
      if (drift != 0) {
        pos[a][k] = pos[a][k] + vel[a][k] * dt;
      }
    }
  }
}

kinetic() -> sp {
  sp ke = 0.0;
  a in [0, nlocal) {
    sp m = 1.0 / (pos[a][3] < 0.0 ? fparams.invmass[0] : fparams.invmass[1]);
    sp vx = vel[a][0];
    sp vy = vel[a][1];
    sp vz = vel[a][2];
    ke = ke + 0.5 * m * (vx * vx + vy * vy + vz * vz);
  }
  return ke;
}

// Migration record of atom a (4 position words, 3 velocity, 3 force) at word w of
// the outgoing records: + (plus != 0) or -.
pack(xp a, xp plus, xp w) {
  k in [0, 4) {
    if (plus != 0) { migp[w + k] = pos[a][k]; } else { migm[w + k] = pos[a][k]; }
  }
  k in [0, 3) {
    if (plus != 0) { migp[w + 4 + k] = vel[a][k]; } else { migm[w + 4 + k] = vel[a][k]; }
  }
  k in [0, 3) {
    if (plus != 0) { migp[w + 7 + k] = ff[a][k]; } else { migm[w + 7 + k] = ff[a][k]; }
  }
}

// Appends the n migration records in bin to the owned atoms.
take_arrivals(xp n) {
  r in [0, n) {
    if (nlocal < NLOC) {
      k in [0, 4) pos[nlocal][k] = bin[10 * r + k];
      k in [0, 3) vel[nlocal][k] = bin[10 * r + 4 + k];
      k in [0, 3) ff[nlocal][k] = bin[10 * r + 7 + k];
      nlocal = nlocal + 1;
    } else {
      diag[0] = diag[0] | 1;
    }
  }
}

// One migration step along relay `dir`: the count of the n records at mem[from], then
// the records; returns how many arrived (in bin).
mig_shift(xp dir, xp n, xp from) -> xp {
  bout[0] = (sp)n;
  bin[0] = 0.0;
  shift(dir, BOUT, 1, BIN, 1);
  xp got = (xp)bin[0];
  take(BIN, 10 * got);
  shift(dir, from, 10 * n, BIN, 10 * got);
  return got;
}

// Moves the atoms that left the cell along axis ax to the neighbouring cell: a count
// shift and a record shift along relay `plus`, then the same along `minus`. Arrivals
// from - are appended first, as md.csl does.
migrate(xp ax, xp plus, xp minus) {
  xp np = 0;
  xp nm = 0;
  xp keep = 0;
  a in [0, nlocal) {
    sp d = pos[a][ax] - fparams.center[ax];
    d = d - fparams.box[ax] * rnd(d * fparams.boxinv[ax]);
    if (d >= fparams.cell[ax][1]) {
      pack(a, 1, 10 * np);
      np = np + 1;
    } else if (d < fparams.cell[ax][0]) {
      pack(a, 0, 10 * nm);
      nm = nm + 1;
    } else {
      if (keep != a) {
        k in [0, 4) pos[keep][k] = pos[a][k];
        k in [0, 3) vel[keep][k] = vel[a][k];
        k in [0, 3) ff[keep][k] = ff[a][k];
      }
      keep = keep + 1;
    }
  }
  nlocal = keep;
  xp ip = mig_shift(plus, np, MIGP);
  take_arrivals(ip);
  xp im = mig_shift(minus, nm, MIGM);
  take_arrivals(im);
}

record(xp frame) {
  if (frame < NFRAMES) {
    epot[frame] = eval;
    ekin[frame] = kinetic();
    i in [0, 3) tstamp[3 * frame + i] = tsc[i];
  }
}

{
  nlocal = params.nlocal;
  if (nlocal > NLOC) {
    diag[0] = diag[0] | 1;
    nlocal = NLOC;
  }
  xc1 = params.nzx == 1 ? Z1 : XY1;
  yc1 = params.nzy == 1 ? Z1 : XY1;
  xp nz = params.nzx * params.nzy;
  xp q = params.nzy == 1 ? params.izx : params.izy;
  if (params.nzx == 1 || params.nzy == 1) {
    zend_pe = (q == 0 || q == nz - 1) ? 1 : 0;
  }
  xp niter = (xp)fparams.niter;
  xp ninner = (xp)fparams.ninner;
  sp dt = fparams.dt;
  force_pass();
  record(0);
  barrier();
  k in [0, 6) prof[k] = 0;
  xp frame = 1;
  xp isample = 0;
  iter in [0, niter) {
    inner in [0, ninner] {
      if (inner > 0) {
        force_pass();
      }
      sp dtv = (inner == 0 || inner == ninner) ? 0.5 * dt : dt;
      lap0 = now32();
      integrate(dtv, inner < ninner ? 1 : 0);
      lap(3);
      if (inner < ninner) {
        migrate(0, 0, 1);
        migrate(1, 2, 3);
        migrate(2, 5, 4);
        lap(4);
      }
    }
    isample = isample + 1;
    if (isample == params.nsample) {
      isample = 0;
      record(frame);
      frame = frame + 1;
      lap0 = now32();
      barrier();
      lap(5);
    }
  }
  diag[1] = nlocal;
  diag[4] = col_id[0];
  diag[5] = row_id[0];
}
