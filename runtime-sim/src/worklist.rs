//! [`WorkSet`]: the set of routers or PEs that have work next cycle, as a two-level bitset
//! so that visiting it costs time in proportion to its members (plus one word per 4096
//! entities), and always in ascending order (deterministic runs).

/// A set of entity indices.
#[derive(Clone, Debug, Default)]
pub(crate) struct WorkSet {
    words: Vec<u64>,
    summary: Vec<u64>,
    len: usize,
}

impl WorkSet {
    /// An empty set for indices below `n`.
    pub fn new(n: usize) -> WorkSet {
        let nw = n.div_ceil(64);
        WorkSet {
            words: vec![0; nw],
            summary: vec![0; nw.div_ceil(64)],
            len: 0,
        }
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
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
        let (wi, bit) = (i / 64, 1u64 << (i % 64));
        if let Some(w) = self.words.get_mut(wi)
            && *w & bit == 0
        {
            *w |= bit;
            self.len += 1;
            if let Some(s) = self.summary.get_mut(wi / 64) {
                *s |= 1 << (wi % 64);
            }
        }
    }

    /// Moves every member, in ascending order, into `out` (cleared first), emptying the set.
    pub fn drain_into(&mut self, out: &mut Vec<u32>) {
        out.clear();
        if self.len == 0 {
            return;
        }
        for (si, s) in self.summary.iter_mut().enumerate() {
            let mut sm = *s;
            *s = 0;
            while sm != 0 {
                let wi = si * 64 + sm.trailing_zeros() as usize;
                sm &= sm - 1;
                if let Some(w) = self.words.get_mut(wi) {
                    let mut bits = *w;
                    *w = 0;
                    while bits != 0 {
                        out.push((wi * 64 + bits.trailing_zeros() as usize) as u32);
                        bits &= bits - 1;
                    }
                }
            }
        }
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::WorkSet;

    #[test]
    fn drains_in_order() {
        let mut s = WorkSet::new(10_000);
        for i in [9999, 5, 64, 4095, 4096, 0, 5] {
            s.insert(i);
        }
        assert_eq!(s.len, 6);
        assert!(s.contains(4096) && !s.contains(4097));
        let mut out = Vec::new();
        s.drain_into(&mut out);
        assert_eq!(out, vec![0, 5, 64, 4095, 4096, 9999]);
        assert!(s.is_empty());
        s.drain_into(&mut out);
        assert!(out.is_empty());
    }
}
