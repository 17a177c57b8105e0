// Registers by word address, and an array laid out after another.
xp col_id[1] address(0x7C46);
xp row_id[1] address(0x7C45);
sp base[8];
sp next[8] address(&base + 16);
xp me;
{
    me = col_id[0] + row_id[0];
    next[0] = 1.0;
}
