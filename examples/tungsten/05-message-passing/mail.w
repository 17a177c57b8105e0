// Tutorial 5: message passing by address (WSE-3). Every tile of the grid mails its value
// to the gather tile (GX, GY); the fabric routes each message by the destination written
// in its header, X first, then Y. The gather tile files every message by its sender.
xp param NX = 4;                // grid size (Paint overrides both)
xp param NY = 3;
xp param GX = 1;                // the gather tile
xp param GY = 1;
xp param LEN = 2;               // data wavelets per message

socket mail;                    // a message-passing colour (mp() in Paint)
xp row_id[1] address(0x7C45);   // this tile's row (Paint y; row 0 is the north edge)
xp col_id[1] address(0x7C46);   // this tile's column (Paint x)

union word {
  u32 u;                        // the 32-bit view, for the socket
  xp w[2];                      // w[0] bits 15:0, w[1] bits 31:16
  sp f;                         // the same bits as a float
};

sp val[1];                      // input (miset): this tile's value
sp got[NX * NY];                // gather tile: the value of tile (x, y) at y*NX + x
xp order[NX * NY];              // gather tile: senders (y*NX + x) in arrival order

{
  xp me_x = col_id[0];
  xp me_y = row_id[0];
  if (me_x == GX && me_y == GY) {
    got[me_y * NX + me_x] = val[0];
    // Our router consumes the header at the destination: only the payload arrives.
    i in [0, NX * NY - 1) {
      union word from;
      union word v;
      from.u <- mail[];
      v.u <- mail[];
      xp k = from.w[1] * NX + from.w[0];
      got[k] = v.f;
      order[i] = k;
    }
  } else {
    // Header: column 31:20, row 19:8, north 7, south 6, length 4:0.
    union word hdr;
    xp dir = 0;
    if (GY < me_y) dir = 0x80;  // the destination row is north of ours
    if (GY > me_y) dir = 0x40;  // ... or south
    hdr.w[1] = (GX << 4) | (GY >> 8);
    hdr.w[0] = ((GY & 0xFF) << 8) | dir | LEN;
    union word from;
    from.w[0] = me_x;
    from.w[1] = me_y;
    union word v;
    v.f = val[0];
    mail[] <- hdr.u;            // every wavelet of a message is a full 32-bit one
    mail[] <- from.u;
    mail[] <- v.u;
  }
}
