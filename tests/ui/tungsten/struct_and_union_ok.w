// Structs have C layout in 16-bit words; unions overlay their members.
struct pt { xp x; sp y; xp z; };
union word { u32 u; xp w[2]; };
struct pt p;
union word w;
xp lo;
{
    p.x = 1; p.y = 2.5; p.z = 3;
    w.u = 0x00020001;
    lo = w.w[0];
}
