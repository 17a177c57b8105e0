//! [`WorkSet`]: the set of routers or PEs that have work in a cycle, as a bitset visited
//! in ascending order (deterministic runs). The simulator keeps two per kind of entity
//! (this cycle's and the next cycle's) and swaps them, so nothing is allocated per cycle.
//!
//! In a threaded step each chunk of PEs sets bits in its own words (bit 0 = its first PE,
//! [`set_bit`]), merged afterwards with [`WorkSet::or_shifted`]: chunks need no locks,
//! and the result does not depend on how the rectangle was split.

/// A set of entity indices.
#[derive(Clone, Debug, Default)]
pub(crate) struct WorkSet {
    words: Vec<u64>,
    len: usize,
}

impl WorkSet {
    /// An empty set for indices below `n`.
    pub fn new(n: usize) -> WorkSet {
        WorkSet {
            words: vec![0; n.div_ceil(64)],
            len: 0,
        }
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of members.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether `i` is a member.
    pub fn contains(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    /// Adds `i` (ignored if out of range).
    #[inline]
    pub fn insert(&mut self, i: usize) {
        let bit = 1u64 << (i % 64);
        if let Some(w) = self.words.get_mut(i / 64)
            && *w & bit == 0
        {
            *w |= bit;
            self.len += 1;
        }
    }

    /// The words, for chunks that set or clear bits directly; call
    /// [`WorkSet::recount`] or [`WorkSet::add_len`] afterwards.
    #[inline]
    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// The words.
    #[inline]
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Recounts the members after chunks wrote [`WorkSet::words_mut`] directly.
    pub fn recount(&mut self) {
        self.len = self.words.iter().map(|w| w.count_ones() as usize).sum();
    }

    /// Adds the members of `local`, a bitset whose bit 0 is entity `lo`.
    pub fn or_shifted(&mut self, lo: usize, local: &[u64]) {
        let (w0, s) = (lo / 64, lo % 64);
        for (j, &v) in local.iter().enumerate() {
            if v == 0 {
                continue;
            }
            let parts = [
                (w0 + j, v << s),
                (w0 + j + 1, if s == 0 { 0 } else { v >> (64 - s) }),
            ];
            for (wi, bits) in parts {
                if let Some(w) = self.words.get_mut(wi) {
                    self.len += (bits & !*w).count_ones() as usize;
                    *w |= bits;
                }
            }
        }
    }

    /// Copies the members `lo..lo + n` into `out` (bit 0 = entity `lo`; at least
    /// `n.div_ceil(64)` words, the rest left as they are), the inverse of
    /// [`WorkSet::or_shifted`].
    pub fn copy_range(&self, lo: usize, n: usize, out: &mut [u64]) {
        let (w0, s) = (lo / 64, lo % 64);
        let word = |i: usize| self.words.get(i).copied().unwrap_or(0);
        for (j, o) in out.iter_mut().enumerate().take(n.div_ceil(64)) {
            let mut v = if s == 0 {
                word(w0 + j)
            } else {
                word(w0 + j) >> s | word(w0 + j + 1) << (64 - s)
            };
            let left = n - 64 * j;
            if left < 64 {
                v &= !(!0u64 << left);
            }
            *o = v;
        }
    }

    /// Removes the members outside `lo..hi` (a rank of a distributed run keeps only its
    /// own strip of the fabric: `crate::dist`).
    pub fn retain_range(&mut self, lo: usize, hi: usize) {
        if self.len == 0 {
            return;
        }
        for (wi, w) in self.words.iter_mut().enumerate() {
            let base = wi * 64;
            if base + 64 <= lo || base >= hi {
                *w = 0;
                continue;
            }
            if base < lo {
                *w &= !0u64 << (lo - base);
            }
            if base + 64 > hi {
                *w &= !(!0u64 << (hi - base));
            }
        }
        self.recount();
    }

    /// Empties the set, whatever its count says (after chunks wrote
    /// [`WorkSet::words_mut`] directly).
    pub fn clear_words(&mut self) {
        self.words.fill(0);
        self.len = 0;
    }

    /// Empties the set.
    pub fn clear(&mut self) {
        if self.len > 0 {
            self.words.fill(0);
            self.len = 0;
        }
    }
}

/// Sets the bit of entity `i` in a chunk's words `words`, whose bit 0 is entity `base`
/// (ignored outside them).
#[inline]
pub(crate) fn set_bit(words: &mut [u64], base: usize, i: usize) {
    let k = i.wrapping_sub(base);
    if let Some(w) = words.get_mut(k / 64) {
        *w |= 1u64 << (k % 64);
    }
}

#[cfg(test)]
mod tests {
    use super::{WorkSet, set_bit};

    #[test]
    fn holds_members() {
        let mut s = WorkSet::new(10_000);
        for i in [9999, 5, 64, 4095, 4096, 0, 5] {
            s.insert(i);
        }
        assert_eq!(s.len, 6);
        assert!(s.contains(4096) && !s.contains(4097));
        let out: Vec<usize> = (0..10_000).filter(|&i| s.contains(i)).collect();
        assert_eq!(out, vec![0, 5, 64, 4095, 4096, 9999]);
    }

    #[test]
    fn chunk_words_merge_at_any_offset() {
        let mut s = WorkSet::new(300);
        s.or_shifted(70, &[0b101, 1 << 63]);
        s.or_shifted(0, &[1]);
        let got: Vec<usize> = (0..300).filter(|&i| s.contains(i)).collect();
        assert_eq!(got, vec![0, 70, 72, 197]);
        assert_eq!(s.len(), 4);
        let mut w = [0u64; 2];
        set_bit(&mut w, 128, 129);
        set_bit(&mut w, 128, 129);
        set_bit(&mut w, 128, 5);
        set_bit(&mut w, 128, 128 + 64 + 3);
        assert_eq!(w, [2, 8]);
    }

    #[test]
    fn copies_a_range_at_any_offset() {
        let mut s = WorkSet::new(300);
        for i in [0, 69, 70, 72, 133, 197, 198, 299] {
            s.insert(i);
        }
        let mut out = [!0u64; 3];
        s.copy_range(70, 128, &mut out);
        assert_eq!(out, [0b101 | 1 << 63, 1 << 63, !0]);
        let mut back = WorkSet::new(300);
        back.or_shifted(70, &out[..2]);
        let got: Vec<usize> = (0..300).filter(|&i| back.contains(i)).collect();
        assert_eq!(got, vec![70, 72, 133, 197]);
        let mut all = [0u64; 5];
        s.copy_range(0, 300, &mut all);
        assert_eq!(all[..2], [1, 1 << 5 | 1 << 6 | 1 << 8]);
        assert_eq!(all[4], 1 << 43, "bit 299 kept");
    }

    #[test]
    fn timers_split_and_come_back() {
        use super::Timers;
        let mut t = Timers::default();
        // Near wake-ups (wheel) and far ones (heap), for PEs on both sides of 100.
        for (wake, p) in [
            (12, 5),
            (12, 150),
            (15, 99),
            (20, 100),
            (500, 7),
            (400, 120),
        ] {
            t.add(10, wake, p);
        }
        assert_eq!(t.next_due(11), (12, 2));
        let mut hi = t.split_off(100, 200);
        assert_eq!(t.next_due(11), (12, 1));
        assert_eq!(hi.next_due(11), (12, 1));
        assert_eq!(t.due_count(16), 0);
        // Visiting the cycles with entries (as the clock does) moves the next one on.
        let mut got = Vec::new();
        hi.due(12, |p| got.push(p));
        assert_eq!(hi.next_due(13), (20, 1));
        hi.due(20, |p| got.push(p));
        assert_eq!(hi.next_due(21), (400, 1), "the heap's first");
        assert_eq!(got, vec![150, 100]);
        t.add(20, 30, 100);
        t.absorb(hi);
        let mut all = Vec::new();
        for now in 12..=500 {
            t.due(now, |p| all.push((now, p)));
        }
        assert_eq!(
            all,
            vec![(12, 5), (15, 99), (30, 100), (400, 120), (500, 7)]
        );
        assert_eq!(t.next_due(501), (u64::MAX, 0));
    }

    #[test]
    fn keeps_a_range() {
        let mut s = WorkSet::new(300);
        for i in [0, 63, 64, 100, 130, 199, 200, 299] {
            s.insert(i);
        }
        s.retain_range(63, 200);
        let got: Vec<usize> = (0..300).filter(|&i| s.contains(i)).collect();
        assert_eq!(got, vec![63, 64, 100, 130, 199]);
        assert_eq!(s.len(), 5);
    }
}

/// Cycles the wheel of [`Timers`] covers; later wake-ups wait in a heap.
const WHEEL: u64 = 64;

/// Wake-up cycles of sleeping PEs (`sim`): a wheel of [`WHEEL`] buckets for wake-ups
/// less than [`WHEEL`] cycles ahead, a heap for later ones. Entries can be stale (the PE
/// was woken early and slept again, or not): the caller checks each against the PE.
#[derive(Clone, Debug, Default)]
pub(crate) struct Timers {
    wheel: Vec<Vec<u32>>,
    far: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u32)>>,
}

impl Timers {
    /// Wakes PE `p` at cycle `wake` (set in cycle `now`, `wake > now`).
    pub fn add(&mut self, now: u64, wake: u64, p: u32) {
        if self.wheel.is_empty() {
            self.wheel = vec![Vec::new(); WHEEL as usize];
        }
        let bucket = if wake > now && wake - now < WHEEL {
            self.wheel.get_mut((wake % WHEEL) as usize)
        } else {
            None
        };
        match bucket {
            Some(b) => b.push(p),
            None => self.far.push(std::cmp::Reverse((wake, p))),
        }
    }

    /// How many wake-ups the wheel holds for cycle `now` (stale ones included, later
    /// ones in the heap not): a cheap estimate of the PEs that wake then.
    pub fn due_at(&self, now: u64) -> usize {
        self.wheel.get((now % WHEEL) as usize).map_or(0, Vec::len)
    }

    /// Non-zero exactly when [`Timers::due`] at cycle `now` would call its function: the
    /// wheel's entries for `now`, plus one if the heap holds any.
    pub fn due_count(&self, now: u64) -> usize {
        let far = self
            .far
            .peek()
            .is_some_and(|std::cmp::Reverse((w, _))| *w <= now);
        self.due_at(now) + usize::from(far)
    }

    /// The first cycle from `from` on at which [`Timers::due`] would call its function
    /// (`u64::MAX`: never), and [`Timers::due_count`] then. Every cycle before `from`
    /// with entries must have been visited.
    pub fn next_due(&self, from: u64) -> (u64, usize) {
        let far = self
            .far
            .peek()
            .map_or(u64::MAX, |std::cmp::Reverse((w, _))| (*w).max(from));
        let near = (from..from.saturating_add(WHEEL))
            .find(|&c| self.due_at(c) > 0)
            .unwrap_or(u64::MAX);
        let at = near.min(far);
        if at == u64::MAX {
            return (at, 0);
        }
        (at, self.due_count(at))
    }

    /// Moves the entries of the PEs in `lo..hi` to a new set of timers (each keeps its
    /// wake-up cycle: a wheel entry stays in the bucket of the same index).
    pub fn split_off(&mut self, lo: u32, hi: u32) -> Timers {
        let mut out = Timers::default();
        let inside = |p: u32| (lo..hi).contains(&p);
        if !self.wheel.is_empty() {
            out.wheel = vec![Vec::new(); WHEEL as usize];
            for (b, o) in self.wheel.iter_mut().zip(out.wheel.iter_mut()) {
                o.extend(b.iter().copied().filter(|&p| inside(p)));
                b.retain(|&p| !inside(p));
            }
        }
        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.far)
            .into_iter()
            .partition(|std::cmp::Reverse((_, p))| inside(*p));
        self.far = rest.into();
        out.far = mine.into();
        out
    }

    /// Takes back the entries of `other` (the inverse of [`Timers::split_off`]).
    pub fn absorb(&mut self, other: Timers) {
        if !other.wheel.is_empty() {
            if self.wheel.is_empty() {
                self.wheel = vec![Vec::new(); WHEEL as usize];
            }
            for (b, o) in self.wheel.iter_mut().zip(other.wheel) {
                b.extend(o);
            }
        }
        self.far.extend(other.far);
    }

    /// Calls `f` on every PE due at cycle `now` (and on stale entries of earlier cycles).
    /// The clock must visit every cycle while a valid entry is pending.
    pub fn due(&mut self, now: u64, mut f: impl FnMut(u32)) {
        if let Some(b) = self.wheel.get_mut((now % WHEEL) as usize) {
            for p in b.drain(..) {
                f(p);
            }
        }
        while let Some(&std::cmp::Reverse((w, p))) = self.far.peek() {
            if w > now {
                break;
            }
            self.far.pop();
            f(p);
        }
    }
}
