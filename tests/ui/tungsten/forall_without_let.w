//@ expect: E1101
sp a[4];
{
    ∀i a[i] = 0.0;
}
