// The count relay: seed 002's getcount() over the switch-machine relay (issue 17).
// Every core PE relays a two-word block (its cell's atom count, its cell id) three
// cells along x+, x-, y+ and y-, then the length of its x-line (counts and ids summed
// over x-3..x+3) three cells along z- and three along z+, and records what arrives; the host checks it
// with `mdlj-tables check-relay` against the CSL flagship's exchange oracle.
// Then, with those counts, the same machines carry variable-length bursts (each cell's
// block of its count's length, three shifts along x+, x-, y+ and y-) and the force
// reduction's accumulating reverse relay (<+-, along x- and y-); `mdlj-tables
// check-burst` checks them word for word and against the host's sums.
//
// One shift: the PE posts an asynchronous receive of one block, then sends its block
// and the two control wavelets that march the switch machine (README.md, "The relay's
// switch machine"): x/y (adv*, adv*, rst*) then (adv*), z and lanes of fold 1
// (adv*, rst*) then (adv*); the two end PEs of a 1 x n block's z line send on one
// colour and receive on the other, and end a burst with (rst*) alone. The router
// tables (mdlj-tables relay) decide when each send leaves and what each receive hears.
// The x and y sockets are bound to the PE's own lane colours by relay.paint.
// WSE-3 only: eight sockets (a WSE-2 PE has six output queues).
import "params.w";
socket sxm;                          // x- relay: blocks move to lower x (fills the xp halo)
socket sxp;                          // x+ relay: to higher x (fills the xm halo)
socket sym;                          // y- relay (fills yp)
socket syp;                          // y+ relay (fills ym)
socket sz8;                          // z- relay (z lines of z+1..z+3): colour 8 ...
socket sz9;                          // ... and, in a 1 x n block, colour 9; z+ on a tour
socket sz16;                         // z+ in a 1 x n block (x-lines of z-1..z-3): 16 ...
socket sz17;                         // ... and 17
struct paramstruct params;

u32 XY1 = 0x2B409249;                // (adv*, adv*, rst*, nop* ...)
u32 XY2 = 0x09409249;                // (adv*, nop* ...)
u32 Z1 = 0x0D409249;                 // (adv*, rst*, nop* ...)
u32 Z2 = 0x09409249;                 // (adv*, nop* ...)
u32 END = 0x09809249;                // (rst*, nop* ...)

xp outb[2];                          // the block this PE sends in a shift
xp inb[2];                           // the block it receives
// got: xm, xp, ym, yp, z lines: 3 cells x (count, id); then the region starts
// own, xm, x0, xp, z lines, ym, y0, yp, end (the CSL flagship's diag order); then the
// z+ relay's x-lines of z-1..z-3 (count, id).
xp got[45];
u16 tsc[3] address(0x7b30);          // the timestamp counter (three 16-bit words)
u16 stamp[21];                       // at the start and after x+, x-, y+, y-, z-, z+
// Variable-length bursts: word j of cell c's block is 16 id(c) + j, one block per cell
// of the counts' length (at most 13 words).
xp bout[13];                         // the burst this PE sends
xp bin[13];                          // the burst it receives
xp burst[156];                       // x+, x-, y+, y- x shift 1..3 x 13 words, as received
sp p1[13];                           // the reverse relay's partial sums for cell 1, 2, 3
sp p2[13];                           // upstream (x-1.. or y-1..), as the force reduction
sp p3[13];                           // holds them for the halo atoms
sp fx[13];                           // own sums after the reverse x relay ...
sp fy[13];                           // ... and after the reverse y relay
u16 bstamp[24];                      // start, bursts x+ x- y+ y-, reverse x, reverse y, z-
xp zout[91];                         // this PE's x-line: xm cells 1..3, own, xp cells 1..3
xp zin[91];                          // the x-line it receives
xp zrec[273];                        // the x-lines of z+1..z+3 (91 words each), as received

{
  xp id = params.ix + params.nx * (params.iy + params.ny * params.iz);
  u32 xc1 = params.nzx == 1 ? Z1 : XY1;
  u32 yc1 = params.nzy == 1 ? Z1 : XY1;
  i in [0, 3) stamp[i] = tsc[i];

  // x+ : the xm halo, got[0..6)
  outb[0] = params.nlocal; outb[1] = id;
  k in [0, 3) {
    parallel {
      i in [0, 2) inb[i] <- sxp[];
      {
        i in [0, 2) sxp[] <- outb[i];
        sxp[] <- control(xc1);
        sxp[] <- control(XY2);
      }
    }
    got[2 * k] = inb[0]; got[2 * k + 1] = inb[1];
    outb[0] = inb[0]; outb[1] = inb[1];
  }
  i in [0, 3) stamp[3 + i] = tsc[i];
  // x- : the xp halo, got[6..12)
  outb[0] = params.nlocal; outb[1] = id;
  k in [0, 3) {
    parallel {
      i in [0, 2) inb[i] <- sxm[];
      {
        i in [0, 2) sxm[] <- outb[i];
        sxm[] <- control(xc1);
        sxm[] <- control(XY2);
      }
    }
    got[6 + 2 * k] = inb[0]; got[7 + 2 * k] = inb[1];
    outb[0] = inb[0]; outb[1] = inb[1];
  }
  i in [0, 3) stamp[6 + i] = tsc[i];
  // y+ : the ym halo, got[12..18)
  outb[0] = params.nlocal; outb[1] = id;
  k in [0, 3) {
    parallel {
      i in [0, 2) inb[i] <- syp[];
      {
        i in [0, 2) syp[] <- outb[i];
        syp[] <- control(yc1);
        syp[] <- control(XY2);
      }
    }
    got[12 + 2 * k] = inb[0]; got[13 + 2 * k] = inb[1];
    outb[0] = inb[0]; outb[1] = inb[1];
  }
  i in [0, 3) stamp[9 + i] = tsc[i];
  // y- : the yp halo, got[18..24)
  outb[0] = params.nlocal; outb[1] = id;
  k in [0, 3) {
    parallel {
      i in [0, 2) inb[i] <- sym[];
      {
        i in [0, 2) sym[] <- outb[i];
        sym[] <- control(yc1);
        sym[] <- control(XY2);
      }
    }
    got[18 + 2 * k] = inb[0]; got[19 + 2 * k] = inb[1];
    outb[0] = inb[0]; outb[1] = inb[1];
  }
  i in [0, 3) stamp[12 + i] = tsc[i];
  // The x-line (own + xm + xp), counts and ids.
  outb[0] = params.nlocal; outb[1] = id;
  k in [0, 3) {
    outb[0] = outb[0] + got[2 * k] + got[6 + 2 * k];
    outb[1] = outb[1] + got[2 * k + 1] + got[7 + 2 * k];
  }
  xp linec = outb[0];
  xp linei = outb[1];
  // z- : the z lines, got[24..30). Along a block's tour every PE sends and receives
  // on 8. In a 1 x n block (offset q along it, n = nz): the even offsets send and
  // receive on 9, the odd ones on 8, offset 0 receives on 9 and sends on 8, offset n-1
  // receives on 8 and sends on 9.
  xp nz = params.nzx * params.nzy;
  xp q = params.nzy == 1 ? params.izx : params.izy;
  xp zcase = 0;                      // 0: 8/8, 1: 9/9, 2: receive 9 send 8, 3: receive 8 send 9
  if (params.nzx == 1 || params.nzy == 1) {
    zcase = q == 0 ? 2 : (q == nz - 1 ? 3 : (q % 2 == 0 ? 1 : 0));
  }
  k in [0, 3) {
    if (zcase == 0) {
      parallel {
        i in [0, 2) inb[i] <- sz8[];
        {
          i in [0, 2) sz8[] <- outb[i];
          sz8[] <- control(Z1);
          sz8[] <- control(Z2);
        }
      }
    } else if (zcase == 1) {
      parallel {
        i in [0, 2) inb[i] <- sz9[];
        {
          i in [0, 2) sz9[] <- outb[i];
          sz9[] <- control(Z1);
          sz9[] <- control(Z2);
        }
      }
    } else if (zcase == 2) {
      parallel {
        i in [0, 2) inb[i] <- sz9[];
        {
          i in [0, 2) sz8[] <- outb[i];
          sz8[] <- control(END);
        }
      }
    } else {
      parallel {
        i in [0, 2) inb[i] <- sz8[];
        {
          i in [0, 2) sz9[] <- outb[i];
          sz9[] <- control(END);
        }
      }
    }
    got[24 + 2 * k] = inb[0]; got[25 + 2 * k] = inb[1];
    outb[0] = inb[0]; outb[1] = inb[1];
  }
  i in [0, 3) stamp[15 + i] = tsc[i];
  // z+ : the x-lines of z-1..z-3, got[39..45). Along a tour on 9; in a 1 x n block the
  // even offsets on 16, the odd ones on 17, offset 0 receives on 17 and sends on 16,
  // offset n-1 receives on 16 and sends on 17.
  outb[0] = linec; outb[1] = linei;
  if (params.nzx == 1 || params.nzy == 1) {
    zcase = q == 0 ? 2 : (q == nz - 1 ? 3 : (q % 2 == 0 ? 0 : 1));
  } else {
    zcase = 4;
  }
  k in [0, 3) {
    if (zcase == 4) {
      parallel {
        i in [0, 2) inb[i] <- sz9[];
        {
          i in [0, 2) sz9[] <- outb[i];
          sz9[] <- control(Z1);
          sz9[] <- control(Z2);
        }
      }
    } else if (zcase == 0) {
      parallel {
        i in [0, 2) inb[i] <- sz16[];
        {
          i in [0, 2) sz16[] <- outb[i];
          sz16[] <- control(Z1);
          sz16[] <- control(Z2);
        }
      }
    } else if (zcase == 1) {
      parallel {
        i in [0, 2) inb[i] <- sz17[];
        {
          i in [0, 2) sz17[] <- outb[i];
          sz17[] <- control(Z1);
          sz17[] <- control(Z2);
        }
      }
    } else if (zcase == 2) {
      parallel {
        i in [0, 2) inb[i] <- sz17[];
        {
          i in [0, 2) sz16[] <- outb[i];
          sz16[] <- control(END);
        }
      }
    } else {
      parallel {
        i in [0, 2) inb[i] <- sz16[];
        {
          i in [0, 2) sz17[] <- outb[i];
          sz17[] <- control(END);
        }
      }
    }
    got[39 + 2 * k] = inb[0]; got[40 + 2 * k] = inb[1];
    outb[0] = inb[0]; outb[1] = inb[1];
  }
  i in [0, 3) stamp[18 + i] = tsc[i];
  // Region starts, as the flagship's diag: own | xm | x0 | xp | z lines | ym | y0 | yp.
  xp own = params.nlocal;
  xp p = own;
  got[30] = p;
  p = p + got[0] + got[2] + got[4];
  got[31] = p;
  p = p + own;
  got[32] = p;
  p = p + got[6] + got[8] + got[10];
  got[33] = p;
  p = p + got[24] + got[26] + got[28];
  got[34] = p;
  got[35] = p;
  p = p + got[12] + got[14] + got[16];
  got[36] = p;
  p = p + own;
  got[37] = p;
  p = p + got[18] + got[20] + got[22];
  got[38] = p;
  // ---- Variable-length bursts (issue 17): each transfer is one DSD op whose length is
  // set at run time, the receive asynchronous inside `parallel` as in the count relay.
  xp nout = own;
  xp c1 = 0; xp c2 = 0; xp c3 = 0;
  i in [0, 3) bstamp[i] = tsc[i];
  // x+: shift k brings the block of cell k+1 upstream, got[0 + 2 k] words.
  i in [0, own) bout[i] = 16 * id + i;
  nout = own;
  k in [0, 3) {
    xp nin = got[0 + 2 * k];
    parallel {
      i in [0, nin) bin[i] <- sxp[];
      {
        i in [0, nout) sxp[] <- bout[i];
        sxp[] <- control(xc1);
        sxp[] <- control(XY2);
      }
    }
    i in [0, nin) burst[0 + 13 * k + i] = bin[i];
    i in [0, nin) bout[i] = bin[i];
    nout = nin;
  }
  i in [0, 3) bstamp[3 + i] = tsc[i];
  // x-: shift k brings the block of cell k+1 upstream, got[6 + 2 k] words.
  i in [0, own) bout[i] = 16 * id + i;
  nout = own;
  k in [0, 3) {
    xp nin = got[6 + 2 * k];
    parallel {
      i in [0, nin) bin[i] <- sxm[];
      {
        i in [0, nout) sxm[] <- bout[i];
        sxm[] <- control(xc1);
        sxm[] <- control(XY2);
      }
    }
    i in [0, nin) burst[39 + 13 * k + i] = bin[i];
    i in [0, nin) bout[i] = bin[i];
    nout = nin;
  }
  i in [0, 3) bstamp[6 + i] = tsc[i];
  // y+: shift k brings the block of cell k+1 upstream, got[12 + 2 k] words.
  i in [0, own) bout[i] = 16 * id + i;
  nout = own;
  k in [0, 3) {
    xp nin = got[12 + 2 * k];
    parallel {
      i in [0, nin) bin[i] <- syp[];
      {
        i in [0, nout) syp[] <- bout[i];
        syp[] <- control(yc1);
        syp[] <- control(XY2);
      }
    }
    i in [0, nin) burst[78 + 13 * k + i] = bin[i];
    i in [0, nin) bout[i] = bin[i];
    nout = nin;
  }
  i in [0, 3) bstamp[9 + i] = tsc[i];
  // y-: shift k brings the block of cell k+1 upstream, got[18 + 2 k] words.
  i in [0, own) bout[i] = 16 * id + i;
  nout = own;
  k in [0, 3) {
    xp nin = got[18 + 2 * k];
    parallel {
      i in [0, nin) bin[i] <- sym[];
      {
        i in [0, nout) sym[] <- bout[i];
        sym[] <- control(yc1);
        sym[] <- control(XY2);
      }
    }
    i in [0, nin) burst[117 + 13 * k + i] = bin[i];
    i in [0, nin) bout[i] = bin[i];
    nout = nin;
  }
  i in [0, 3) bstamp[12 + i] = tsc[i];
  // Reverse x (the x- relay returns the xm halo's sums): the partial sums for cell d upstream are (id + 1) + j/2 + 1024 d; each
  // shift sends the farthest cell's sums one cell back, where they are added (<+-) to
  // that PE's own sums for the same cell; the third shift ends in fx.
  i in [0, 13) {
    p1[i] = (sp)(id + 1) + 0.5 * (sp)i + 1024.0;
    p2[i] = (sp)(id + 1) + 0.5 * (sp)i + 2048.0;
    p3[i] = (sp)(id + 1) + 0.5 * (sp)i + 3072.0;
    fx[i] = 0.25 * (sp)id;
  }
  c1 = got[0]; c2 = got[0 + 2]; c3 = got[0 + 4];
  parallel {
    i in [0, c2) p2[i] <+- sxm[];
    { i in [0, c3) sxm[] <- p3[i]; sxm[] <- control(xc1); sxm[] <- control(XY2); }
  }
  parallel {
    i in [0, c1) p1[i] <+- sxm[];
    { i in [0, c2) sxm[] <- p2[i]; sxm[] <- control(xc1); sxm[] <- control(XY2); }
  }
  parallel {
    i in [0, own) fx[i] <+- sxm[];
    { i in [0, c1) sxm[] <- p1[i]; sxm[] <- control(xc1); sxm[] <- control(XY2); }
  }
  i in [0, 3) bstamp[15 + i] = tsc[i];
  // Reverse y (the y- relay returns the ym halo's sums): the partial sums for cell d upstream are (id + 1) + j/2 + 1024 d; each
  // shift sends the farthest cell's sums one cell back, where they are added (<+-) to
  // that PE's own sums for the same cell; the third shift ends in fy.
  i in [0, 13) {
    p1[i] = (sp)(id + 1) + 0.5 * (sp)i + 1024.0;
    p2[i] = (sp)(id + 1) + 0.5 * (sp)i + 2048.0;
    p3[i] = (sp)(id + 1) + 0.5 * (sp)i + 3072.0;
    fy[i] = 0.25 * (sp)id;
  }
  c1 = got[12]; c2 = got[12 + 2]; c3 = got[12 + 4];
  parallel {
    i in [0, c2) p2[i] <+- sym[];
    { i in [0, c3) sym[] <- p3[i]; sym[] <- control(yc1); sym[] <- control(XY2); }
  }
  parallel {
    i in [0, c1) p1[i] <+- sym[];
    { i in [0, c2) sym[] <- p2[i]; sym[] <- control(yc1); sym[] <- control(XY2); }
  }
  parallel {
    i in [0, own) fy[i] <+- sym[];
    { i in [0, c1) sym[] <- p1[i]; sym[] <- control(yc1); sym[] <- control(XY2); }
  }
  i in [0, 3) bstamp[18 + i] = tsc[i];
  // z- bursts of whole x-lines (got[24 + 2 k] words for z+k+1), on the count relay's
  // colours: the block is the x-line in the flagship's order (x-1, x-2, x-3, own, x+1,
  // x+2, x+3), assembled from the x bursts.
  xp zl = 0;
  k in [0, 3) { i in [0, got[2 * k]) zout[zl + i] = burst[13 * k + i]; zl = zl + got[2 * k]; }
  i in [0, own) zout[zl + i] = 16 * id + i;
  zl = zl + own;
  k in [0, 3) { i in [0, got[6 + 2 * k]) zout[zl + i] = burst[39 + 13 * k + i]; zl = zl + got[6 + 2 * k]; }
  zcase = 0;
  if (params.nzx == 1 || params.nzy == 1) {
    zcase = q == 0 ? 2 : (q == nz - 1 ? 3 : (q % 2 == 0 ? 1 : 0));
  }
  k in [0, 3) {
    xp nin = got[24 + 2 * k];
    if (zcase == 0) {
      parallel {
        i in [0, nin) zin[i] <- sz8[];
        { i in [0, zl) sz8[] <- zout[i]; sz8[] <- control(Z1); sz8[] <- control(Z2); }
      }
    } else if (zcase == 1) {
      parallel {
        i in [0, nin) zin[i] <- sz9[];
        { i in [0, zl) sz9[] <- zout[i]; sz9[] <- control(Z1); sz9[] <- control(Z2); }
      }
    } else if (zcase == 2) {
      parallel {
        i in [0, nin) zin[i] <- sz9[];
        { i in [0, zl) sz8[] <- zout[i]; sz8[] <- control(END); }
      }
    } else {
      parallel {
        i in [0, nin) zin[i] <- sz8[];
        { i in [0, zl) sz9[] <- zout[i]; sz9[] <- control(END); }
      }
    }
    i in [0, nin) zrec[91 * k + i] = zin[i];
    i in [0, nin) zout[i] = zin[i];
    zl = nin;
  }
  i in [0, 3) bstamp[21 + i] = tsc[i];
}
