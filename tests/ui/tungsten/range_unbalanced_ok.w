// `[a, b)` and `[a, b]` ranges parse; `∞` ends an unbounded one.
xp s[8];
{
    i in [0, 4) s[i] = i;
    i in [4, 7] s[i] = 2 * i;
    let j in [0, 8);
    ∀j s[j] = s[j] + 1;
    xp k = 0;
    i in [0, ∞) { k = k + 1; if (k > 3) return; }
}
