//@ expect: E1106
sp f;
{
    f = bitcast(sp, 0x100000000:u64);
}
