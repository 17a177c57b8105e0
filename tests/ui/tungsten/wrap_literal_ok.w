// An untyped literal folds exactly, then wraps in its context: r stores 1.
u32 r;
{
    r = 0xFFFFFFFF + 2;
}
