// The per-PE parameter blobs that `miset` writes (seed 002's params.w, in our words).
// paramstruct: 13 words, the layout `mdlj-tables` writes into params.bin.
struct paramstruct {
  xp nx; xp ny; xp nzx; xp nzy;      // cells along x and y; z folded nzx x nzy
  xp ix; xp iy; xp iz;               // this PE's logical cell
  xp izx; xp izy;                    // its place in the z block (lane-corrected)
  xp hix; xp hiy;                    // its lanes (0 low, 1 high)
  xp nlocal;                         // atoms it owns at start
  xp nsample;                        // outer iterations between samples
};
// fparamstruct: fp32 physics parameters (not written yet by mdlj-tables).
struct fparamstruct {
  sp dt; sp rcut; sp rscale; sp rhoscale;
  sp niter; sp ninner;
  sp invmass[2];
  sp box[3]; sp boxinv[3];
  sp cell[3][2];                     // cell bounds relative to the cell centre
  sp center[3];                      // cell centre in box coordinates
};
