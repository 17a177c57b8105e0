// Seed 003's worked conversion values, computed at run time and folded at compile time,
// on two tiles: the west tile (Paint x = 0) sends an xp 3 twice; the east tile reads it
// once converted and once reinterpreted.
socket s;
xp col_id[1] address(0x7C46);

xp r_xp[6];    // (xp)2.7, (xp)2.5, (xp)40000.0, (xp)-2.5, (xp)-1e9, round(2.7, 1)
xp r_fold[3];  // the first three, folded from literals
hp r_hp[2];    // (hp)(xp)s[], (hp)s[]
xp r_cmp[1];   // u16 1 > xp -1
u32 r_u32[2];  // 0xFFFFFFFF + 2; u16 1 + s16 -2 widened to u32
sp r_sp[1];    // hp 1.0 + sp 0.0001

{
  if (col_id[0] == 0) {
    xp three = 3;
    s[] <- three;
    s[] <- three;
  } else {
    sp f = 2.7;
    r_xp[0] = (xp)f;
    f = 2.5;
    r_xp[1] = (xp)f;
    f = 40000.0;
    r_xp[2] = (xp)f;
    f = -2.5;
    r_xp[3] = (xp)f;
    f = -1e9;
    r_xp[4] = (xp)f;
    f = 2.7;
    r_xp[5] = (xp)round(f, 1);
    r_fold[0] = (xp)2.7;
    r_fold[1] = (xp)2.5;
    r_fold[2] = (xp)40000.0;
    r_hp[0] = (hp)(xp)s[];
    r_hp[1] = (hp)s[];
    u16 u = 1;
    xp m = -1;
    r_cmp[0] = u > m ? 1 : 0;
    u32 r = 0xFFFFFFFF + 2;
    r_u32[0] = r;
    s16 k = -2;
    r_u32[1] = u + k;
    hp h = 1.0;
    sp e = 0.0001;
    r_sp[0] = h + e;
  }
}
