//! Bounded FIFOs of wavelets: router input buffers, CE input queues and output queues.
//!
//! A slot freed by a pop in cycle `t` becomes usable in cycle `t + 1` (whoever is
//! processed first in a cycle sees the same room), which keeps results independent of the
//! order in which routers and PEs are visited.

/// Largest buffer or queue depth the simulator models.
pub const MAX_RING: usize = 8;
const MASK: usize = MAX_RING - 1;

/// Sideband bits of a wavelet.
pub mod wflags {
    /// A control wavelet.
    pub const CTRL: u8 = 1;
    /// The last wavelet of a `fabout` op with `advance_switch`: the sending router
    /// advances the colour's switch after forwarding it.
    pub const ADVANCE: u8 = 2;
}

/// One wavelet in a buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Wavelet {
    /// The 32-bit payload.
    pub data: u32,
    /// [`wflags`] bits.
    pub flags: u8,
    /// First cycle in which the wavelet may leave the buffer it is in.
    pub ready: u64,
}

impl Wavelet {
    /// Whether it is a control wavelet.
    #[inline]
    pub fn is_ctrl(&self) -> bool {
        self.flags & wflags::CTRL != 0
    }
}

/// A FIFO of at most [`MAX_RING`] wavelets; the usable capacity is given by the caller.
/// (`repr(C)`: the counters first, next to the first slots, so that a room check and a
/// look at the front wavelet usually touch one cache line.)
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
#[repr(C)]
pub(crate) struct Ring {
    /// Cycle of the last pop and the number of pops in that cycle.
    pop_cycle: u64,
    head: u8,
    len: u8,
    pops: u8,
    /// Most wavelets held at once.
    pub high_water: u8,
    buf: [Wavelet; MAX_RING],
}

impl Default for Ring {
    fn default() -> Self {
        Ring {
            buf: [Wavelet::default(); MAX_RING],
            head: 0,
            len: 0,
            pop_cycle: u64::MAX,
            pops: 0,
            high_water: 0,
        }
    }
}

impl Ring {
    /// Wavelets held.
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether it holds nothing.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether a wavelet can be pushed in cycle `now` with capacity `cap`.
    #[inline]
    pub fn has_room(&self, cap: usize, now: u64) -> bool {
        let freed_now = if self.pop_cycle == now { self.pops } else { 0 };
        usize::from(self.len + freed_now) < cap.min(MAX_RING)
    }

    /// The oldest wavelet.
    #[inline]
    pub fn front(&self) -> Option<&Wavelet> {
        if self.len == 0 {
            None
        } else {
            Some(&self.buf[usize::from(self.head) & MASK])
        }
    }

    /// The `i`-th oldest wavelet.
    #[inline]
    pub fn nth(&self, i: usize) -> Option<&Wavelet> {
        if i < usize::from(self.len) {
            Some(&self.buf[(usize::from(self.head) + i) & MASK])
        } else {
            None
        }
    }

    /// Appends a wavelet; returns `false` (and drops it) if [`MAX_RING`] are held.
    #[inline]
    pub fn push(&mut self, w: Wavelet) -> bool {
        if usize::from(self.len) >= MAX_RING {
            return false;
        }
        self.buf[(usize::from(self.head) + usize::from(self.len)) & MASK] = w;
        self.len += 1;
        self.high_water = self.high_water.max(self.len);
        true
    }

    /// Removes the oldest wavelet in cycle `now`.
    #[inline]
    pub fn pop(&mut self, now: u64) -> Option<Wavelet> {
        if self.len == 0 {
            return None;
        }
        let w = self.buf[usize::from(self.head) & MASK];
        self.head = ((usize::from(self.head) + 1) & MASK) as u8;
        self.len -= 1;
        if self.pop_cycle == now {
            self.pops += 1;
        } else {
            self.pop_cycle = now;
            self.pops = 1;
        }
        Some(w)
    }
}
