//! Paged PE memory ([`Mem`]): the 48 KB of a PE's SRAM, allocated a page at a time on the
//! first write to that page.
//!
//! Until a page is written its bytes are the class's initial data (shared by every PE of
//! the class, one copy per class) and zero past its end, exactly what an eagerly
//! allocated, initialised memory would hold; so pages are invisible to the simulated
//! program, to host transfers, dumps and traces. A PE that only ever writes its stack and
//! a few variables costs a few pages instead of 48 KB, which is what lets a whole wafer
//! (750 × 994 fabric) fit on one workstation.
//!
//! Touched pages live in one per-PE pool (`pool`, [`PAGE_BYTES`] per page, in the order
//! they were first written); `map` gives each page's slot. Accesses within one page take a
//! fast path; an access straddling two pages is done byte by byte.
//!
//! [`Mem::contiguous`] (behind `Pe::memory`) assembles the whole memory as one slice for
//! callers that want it; the copy is cached until the next write, so it costs 48 KB per
//! PE only where it is asked for. Bulk readers use [`Mem::read_into`] instead.

use csl_arch::fabric::PE_MEMORY_BYTES;
use csl_arch::isa::Width;
use std::sync::{Arc, OnceLock};

/// Bytes per page.
pub const PAGE_BYTES: usize = 512;
/// Bytes of a PE's memory.
const MEM_BYTES: usize = PE_MEMORY_BYTES as usize;
/// Pages of a PE's memory.
const NPAGES: usize = MEM_BYTES / PAGE_BYTES;
const _: () = assert!(NPAGES * PAGE_BYTES == MEM_BYTES && NPAGES < 255);

/// One PE's memory (module docs).
///
/// `repr(C)`: the written pages' pointer and the initial data's first, next to the end of
/// the PE record's hot cache lines (`Pe`), then the page table.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Mem {
    /// The written pages.
    pool: Vec<u8>,
    /// Contents of pages never written: the class's initial data, zero past its end.
    init: Arc<[u8]>,
    /// Per page: 0 if never written, else its slot in `pool` plus one.
    map: [u8; NPAGES],
    /// The whole memory as one slice, built on demand and dropped by every write.
    snapshot: OnceLock<Box<[u8]>>,
}

impl Mem {
    /// A memory holding `init` from address 0 (cut to the memory size) and zero above.
    pub fn new(init: Arc<[u8]>) -> Mem {
        Mem {
            init,
            map: [0; NPAGES],
            pool: Vec::new(),
            snapshot: OnceLock::new(),
        }
    }

    /// Bytes of memory (`PE_MEMORY_BYTES`).
    #[inline]
    pub fn len(&self) -> usize {
        MEM_BYTES
    }

    /// Always `false` (a PE's memory has a fixed, non-zero size).
    #[inline]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Bytes allocated for written pages.
    pub fn allocated_bytes(&self) -> usize {
        self.pool.len()
    }

    /// The pages written so far, in address order: their numbers and their bytes
    /// ([`PAGE_BYTES`] each, one after the other). The other pages hold the initial data.
    pub fn written_pages(&self) -> (Vec<u8>, Vec<u8>) {
        let mut pages = Vec::new();
        let mut bytes = Vec::with_capacity(self.pool.len());
        for (p, &slot) in self.map.iter().enumerate() {
            let at = usize::from(slot).wrapping_sub(1) * PAGE_BYTES;
            if slot != 0
                && let Some(b) = self.pool.get(at..at + PAGE_BYTES)
            {
                // `NPAGES < 255`: the page number fits.
                pages.push(p as u8);
                bytes.extend_from_slice(b);
            }
        }
        (pages, bytes)
    }

    /// Writes pages as [`Mem::written_pages`] returned them (pages past the end and
    /// missing bytes are ignored).
    pub fn write_pages(&mut self, pages: &[u8], bytes: &[u8]) {
        for (k, &p) in pages.iter().enumerate() {
            if let Some(b) = bytes.get(k * PAGE_BYTES..(k + 1) * PAGE_BYTES) {
                self.write_from(usize::from(p) * PAGE_BYTES, b);
            }
        }
    }

    /// `n` bytes at `a` as a slice, when they lie in one page whose bytes are stored
    /// (written, or entirely inside the initial data).
    #[inline(always)]
    fn span(&self, a: usize, n: usize) -> Option<&[u8]> {
        let off = a % PAGE_BYTES;
        if off + n > PAGE_BYTES {
            return None;
        }
        let slot = *self.map.get(a / PAGE_BYTES)?;
        if slot != 0 {
            let at = (usize::from(slot) - 1) * PAGE_BYTES + off;
            self.pool.get(at..at + n)
        } else {
            self.init.get(a..a + n)
        }
    }

    /// The byte at `a` (`None` past the end of memory).
    #[inline]
    pub fn byte(&self, a: usize) -> Option<u8> {
        if a >= MEM_BYTES {
            return None;
        }
        Some(
            self.span(a, 1)
                .map_or(0, |s| s.first().copied().unwrap_or(0)),
        )
    }

    /// The little-endian value of width `w` at `a` (`None` if it passes the end).
    #[inline(always)]
    pub fn read(&self, a: u32, w: Width) -> Option<u32> {
        let a = a as usize;
        match w {
            Width::W8 => self.byte(a).map(u32::from),
            Width::W16 => {
                let c = self.bytes::<2>(a)?;
                Some(u32::from(u16::from_le_bytes(c)))
            }
            Width::W32 => self.bytes::<4>(a).map(u32::from_le_bytes),
        }
    }

    /// `N` bytes at `a` (`None` if they pass the end): a fixed-size copy when they lie in
    /// one stored page.
    #[inline(always)]
    pub fn array<const N: usize>(&self, a: usize) -> Option<[u8; N]> {
        if let Some(c) = self.span(a, N).and_then(|s| s.first_chunk::<N>()) {
            return Some(*c);
        }
        let mut out = [0u8; N];
        self.read_into(a, &mut out).then_some(out)
    }

    /// `N` bytes at `a` (`None` if they pass the end).
    #[inline(always)]
    fn bytes<const N: usize>(&self, a: usize) -> Option<[u8; N]> {
        if let Some(c) = self.span(a, N).and_then(|s| s.first_chunk::<N>()) {
            return Some(*c);
        }
        if a.checked_add(N)? > MEM_BYTES {
            return None;
        }
        let mut out = [0u8; N];
        for (i, b) in out.iter_mut().enumerate() {
            *b = self.byte(a + i).unwrap_or(0);
        }
        Some(out)
    }

    /// Stores the low `w` bytes of `v` at `a`, little-endian; `false` (nothing written) if
    /// they pass the end.
    #[inline]
    pub fn write(&mut self, a: u32, w: Width, v: u32) -> bool {
        let [b0, b1, b2, b3] = v.to_le_bytes();
        match w {
            Width::W8 => self.put(a as usize, [b0]),
            Width::W16 => self.put(a as usize, [b0, b1]),
            Width::W32 => self.put(a as usize, [b0, b1, b2, b3]),
        }
    }

    /// [`Mem::write_from`] of `N` bytes, with a fast path for a store inside one page
    /// already written (no snapshot to drop).
    #[inline(always)]
    fn put<const N: usize>(&mut self, a: usize, b: [u8; N]) -> bool {
        let off = a % PAGE_BYTES;
        if off + N <= PAGE_BYTES
            && self.snapshot.get().is_none()
            && let Some(&slot) = self.map.get(a / PAGE_BYTES)
            && slot != 0
        {
            let at = (usize::from(slot) - 1) * PAGE_BYTES + off;
            if let Some(d) = self.pool.get_mut(at..at + N) {
                d.copy_from_slice(&b);
                return true;
            }
        }
        self.write_from(a, &b)
    }

    /// The stored page `p`, allocated (from its initial contents) if it was never written.
    #[inline]
    fn page_mut(&mut self, p: usize) -> Option<&mut [u8]> {
        let slot = *self.map.get(p)?;
        let slot = if slot != 0 {
            usize::from(slot) - 1
        } else {
            self.alloc(p)
        };
        let at = slot * PAGE_BYTES;
        self.pool.get_mut(at..at + PAGE_BYTES)
    }

    /// Gives page `p` a slot holding its initial contents; returns the slot.
    #[cold]
    #[inline(never)]
    fn alloc(&mut self, p: usize) -> usize {
        let slot = self.pool.len() / PAGE_BYTES;
        let start = p * PAGE_BYTES;
        let end = (start + PAGE_BYTES).min(self.init.len());
        self.pool
            .extend_from_slice(self.init.get(start..end).unwrap_or(&[]));
        self.pool.resize((slot + 1) * PAGE_BYTES, 0);
        if let Some(m) = self.map.get_mut(p) {
            // `NPAGES < 255`, so the slot number fits.
            *m = (slot + 1) as u8;
        }
        slot
    }

    /// Copies `src` to address `a`; `false` (nothing written) if it passes the end.
    #[inline]
    pub fn write_from(&mut self, a: usize, src: &[u8]) -> bool {
        if a.checked_add(src.len()).is_none_or(|e| e > MEM_BYTES) {
            return false;
        }
        if self.snapshot.get().is_some() {
            self.snapshot = OnceLock::new();
        }
        let mut done = 0;
        while done < src.len() {
            let at = a + done;
            let off = at % PAGE_BYTES;
            let n = (PAGE_BYTES - off).min(src.len() - done);
            if let (Some(page), Some(s)) = (self.page_mut(at / PAGE_BYTES), src.get(done..done + n))
                && let Some(d) = page.get_mut(off..off + n)
            {
                d.copy_from_slice(s);
            }
            done += n;
        }
        true
    }

    /// Fills `out` with the bytes from address `a`; `false` (nothing read) if they pass
    /// the end.
    pub fn read_into(&self, a: usize, out: &mut [u8]) -> bool {
        if a.checked_add(out.len()).is_none_or(|e| e > MEM_BYTES) {
            return false;
        }
        let mut done = 0;
        while done < out.len() {
            let at = a + done;
            let off = at % PAGE_BYTES;
            let n = (PAGE_BYTES - off).min(out.len() - done);
            let Some(d) = out.get_mut(done..done + n) else {
                break;
            };
            match self.map.get(at / PAGE_BYTES).copied().unwrap_or(0) {
                0 => {
                    // Initial data up to its end, zero after.
                    let have = self.init.len().saturating_sub(at).min(n);
                    let (head, tail) = d.split_at_mut(have);
                    if let Some(s) = self.init.get(at..at + have) {
                        head.copy_from_slice(s);
                    }
                    tail.fill(0);
                }
                slot => {
                    let from = (usize::from(slot) - 1) * PAGE_BYTES + off;
                    if let Some(s) = self.pool.get(from..from + n) {
                        d.copy_from_slice(s);
                    }
                }
            }
            done += n;
        }
        true
    }

    /// The `n` bytes from address `a` (`None` if they pass the end).
    pub fn read_vec(&self, a: usize, n: usize) -> Option<Vec<u8>> {
        let mut v = vec![0u8; n];
        self.read_into(a, &mut v).then_some(v)
    }

    /// Copies `n` bytes from `s` to `d` (the ranges may overlap); `false` (nothing
    /// copied) if either passes the end.
    pub fn copy_within(&mut self, s: usize, d: usize, n: usize) -> bool {
        match self.read_vec(s, n) {
            Some(bytes) if d.checked_add(n).is_some_and(|e| e <= MEM_BYTES) => {
                self.write_from(d, &bytes)
            }
            _ => false,
        }
    }

    /// The whole memory as one slice (assembled on the first call after a write).
    pub fn contiguous(&self) -> &[u8] {
        self.snapshot.get_or_init(|| {
            let mut v = vec![0u8; MEM_BYTES];
            self.read_into(0, &mut v);
            v.into_boxed_slice()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{MEM_BYTES, Mem, PAGE_BYTES};
    use csl_arch::isa::Width;
    use std::sync::Arc;

    /// A plain byte array doing the same writes: the reference the paged memory must match.
    fn reference(init: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; MEM_BYTES];
        v[..init.len()].copy_from_slice(init);
        v
    }

    #[test]
    fn pages_are_invisible() {
        let init: Vec<u8> = (0..1300u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut m = Mem::new(Arc::from(init.clone()));
        let mut r = reference(&init);
        // Untouched memory reads as the initial data, then zeros.
        assert_eq!(m.contiguous(), r.as_slice());
        assert_eq!(
            m.read(1298, Width::W32),
            Some(u32::from_le_bytes([r[1298], r[1299], 0, 0]))
        );
        // Writes within a page, across a page boundary, and at the very end.
        let writes: [(u32, Width, u32); 6] = [
            (4, Width::W32, 0xdead_beef),
            (PAGE_BYTES as u32 - 2, Width::W32, 0x0102_0304),
            (1299, Width::W16, 0xabcd),
            (MEM_BYTES as u32 - 4, Width::W32, 7),
            (3 * PAGE_BYTES as u32 + 1, Width::W8, 0x55),
            (2 * PAGE_BYTES as u32 - 1, Width::W16, 0x9988),
        ];
        for (a, w, v) in writes {
            assert!(m.write(a, w, v));
            let n = w.bytes() as usize;
            r[a as usize..a as usize + n].copy_from_slice(&v.to_le_bytes()[..n]);
        }
        assert_eq!(m.contiguous(), r.as_slice());
        for a in [0u32, 3, 4, 510, 511, 1023, 1298, MEM_BYTES as u32 - 4] {
            let want = u32::from_le_bytes(r[a as usize..a as usize + 4].try_into().unwrap());
            assert_eq!(m.read(a, Width::W32), Some(want), "at {a}");
        }
        assert!(m.copy_within(0, 2000, 1500));
        r.copy_within(0..1500, 2000);
        assert_eq!(m.read_vec(0, MEM_BYTES).as_deref(), Some(r.as_slice()));
        // Out of bounds: nothing read or written.
        assert_eq!(m.read(MEM_BYTES as u32 - 2, Width::W32), None);
        assert!(!m.write(MEM_BYTES as u32 - 1, Width::W16, 1));
        assert_eq!(m.byte(MEM_BYTES), None);
        assert_eq!(m.contiguous(), r.as_slice());
        // Only written pages cost memory.
        assert!(m.allocated_bytes() <= 10 * PAGE_BYTES);
    }

    #[test]
    fn written_pages_carry_a_memory_to_a_copy() {
        // A copy with the same initial data that receives the written pages reads the same
        // bytes everywhere, and allocates only those pages.
        let init: Vec<u8> = (0..700u32).map(|i| (i * 7) as u8).collect();
        let mut a = Mem::new(Arc::from(init.clone()));
        a.write(10, Width::W32, 0xDEAD_BEEF);
        a.write_from(3 * PAGE_BYTES - 2, &[1, 2, 3, 4]);
        a.write(MEM_BYTES as u32 - 2, Width::W16, 0x1234);
        let (pages, bytes) = a.written_pages();
        assert_eq!(pages, vec![0, 2, 3, (MEM_BYTES / PAGE_BYTES - 1) as u8]);
        assert_eq!(bytes.len(), 4 * PAGE_BYTES);
        let mut b = Mem::new(Arc::from(init));
        b.write_pages(&pages, &bytes);
        assert_eq!(b.contiguous(), a.contiguous());
        assert_eq!(b.allocated_bytes(), 4 * PAGE_BYTES);
    }
}
