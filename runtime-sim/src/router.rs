//! The router of one PE: per-colour routes, switch positions, filters, colour swap,
//! teardown, and the input buffers; `step` moves wavelets for one cycle.
//!
//! # Model (SIMULATOR.md has the reasoning)
//!
//! * Every configured colour has one input buffer per port (N, S, E, W, RAMP). A link
//!   buffer holds [`SimParams::router_buffer_depth`](crate::SimParams) wavelets, counting
//!   the ones in flight towards it; the RAMP buffer is the CE's output queue (its depth is
//!   the queue's, checked by the sender).
//! * Each cycle a colour forwards at most one wavelet: the oldest ready one of the first
//!   input port (order N, S, E, W, RAMP) that is in the current position's `rx`. It is
//!   copied to every `tx` direction of the current position and only moves when every
//!   destination has room (back-pressure). Each output link (RAMP included) carries at
//!   most one wavelet per cycle; colours claim links in round-robin order, starting after
//!   the colour that moved first in the previous busy cycle.
//! * A wavelet reaches the next router `hop` cycles after it leaves (and the CE input
//!   queue `ramp` cycles after it leaves for the RAMP).
//! * A colour configured for message passing (WSE-3) has no fixed route: the first wavelet
//!   on an input port is a header ([`csl_arch::fabric::message`]) that picks the output
//!   (X first, then Y, then the RAMP, where the header is consumed); the path stays held
//!   for that input until the message ends, and other inputs wanting the same output wait.
//!   A neighbour on the path without message passing on the colour is a routing fault.

use crate::class::Class;
use crate::error::{PeLoc, RoutingError, SimError};
use crate::pe::Pe;
use crate::ring::{Ring, Wavelet, wflags};
use crate::trace::Tracer;
use crate::worklist::set_bit;
use csl_arch::fabric::message::Header;
use csl_arch::fabric::{Direction, NUM_COLORS, TEARDOWN_TASK_ID, control, mmio};
use csl_arch::image::{ColorConfig, FilterKind, PopMode};

/// Marks a colour without state in [`Router::slot`].
pub(crate) const NO_SLOT: u8 = u8::MAX;
/// Port index of the RAMP.
pub(crate) const RAMP: usize = 4;
/// Port bit of the RAMP.
pub(crate) const RAMP_BIT: u8 = 1 << RAMP;
/// Port bits of the four links.
const LINKS: u8 = 0b1111;
const NCOLORS: usize = NUM_COLORS as usize;

/// Bit mask of a set of directions (bit = [`Direction::index`]).
pub(crate) fn dir_mask(ds: &[Direction]) -> u8 {
    ds.iter().fold(0, |m, d| m | (1 << d.index()))
}

/// A port mask converted between [`Direction::index`] order (NORTH, SOUTH, EAST, WEST,
/// RAMP) and the configuration registers' order (WEST, EAST, SOUTH, NORTH, RAMP); the
/// mapping is its own inverse.
pub(crate) fn hw_mask(m: u8) -> u8 {
    (0..5).fold(0, |acc, i| {
        let j = [3, 2, 1, 0, 4][i];
        acc | (((m >> i) & 1) << j)
    })
}

/// The direction of port index `i`.
pub(crate) fn dir_of(i: usize) -> Direction {
    Direction::ALL.get(i).copied().unwrap_or(Direction::Ramp)
}

/// The port a wavelet sent towards `d` arrives on at the neighbour.
#[inline]
fn opposite(d: usize) -> usize {
    usize::from(Direction::opposite_index(d as u8))
}

/// Names of the directions in a mask, for traces and reports.
pub(crate) fn mask_names(m: u8) -> String {
    let names: Vec<&str> = (0..5)
        .filter(|i| m >> i & 1 == 1)
        .map(|i| dir_of(i).name())
        .collect();
    if names.is_empty() {
        "nowhere".into()
    } else {
        names.join("+")
    }
}

/// One switch position: input and output port masks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Route {
    pub rx: u8,
    pub tx: u8,
}

/// How switch position 1, 2 or 3 differs from the position before it: it is invalid, or
/// it replaces one side (`rx` or `tx` port mask) and inherits the other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct PosSpec {
    pub valid: bool,
    pub rx: Option<u8>,
    pub tx: Option<u8>,
    /// Of an invalid position set through the `mmio::SWITCH_CONFIG` word: its four bits
    /// as stored (an invalid port code and the side bit), which the word reads back.
    /// Programs clear and set the port bits alone and keep the side bit (the SDK's
    /// allreduce turns `pos1 = .{ .rx = RAMP }` off and on again that way).
    pub raw: Option<u8>,
}

/// A colour filter and its counters (fabric.md §4.2).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
pub(crate) struct Filter {
    kind: FilterKind,
    count_data: bool,
    count_control: bool,
    limit2: Option<u16>,
    max_counter: u16,
    filter_control: bool,
    min_idx: u16,
    max_idx: u16,
    counter: u16,
    limit1: u16,
    switched: bool,
    off: bool,
}

impl Filter {
    fn new(f: &csl_arch::image::FilterConfig) -> Filter {
        let off = f.kind == FilterKind::SparseCounter && (f.limit2.is_none() || f.limit1 == 0);
        Filter {
            kind: f.kind,
            count_data: f.count_data,
            count_control: f.count_control,
            limit2: f.limit2,
            max_counter: f.max_counter,
            filter_control: f.filter_control,
            min_idx: f.min_idx,
            max_idx: f.max_idx,
            counter: f.init_counter,
            limit1: f.limit1,
            switched: false,
            off,
        }
    }

    /// Whether a wavelet reaches the CE, and the filter state after it passed the router
    /// (pure: the caller commits the state only if the wavelet moves).
    pub(crate) fn decide(self, data: u32, ctrl: bool) -> (bool, Filter) {
        match self.kind {
            FilterKind::Range => {
                let idx = (data >> 16) as u16;
                (ctrl || (self.min_idx..=self.max_idx).contains(&idx), self)
            }
            FilterKind::Counter | FilterKind::SparseCounter => {
                if self.off {
                    return (true, self);
                }
                let mut f = self;
                let counted = if ctrl { f.count_control } else { f.count_data };
                // The wavelet is judged by the count before it; counting then moves the
                // counter on, from `limit1` back to 0 (so it cycles through `limit1 + 1`
                // values).
                let pass = if f.filter_control {
                    ctrl && f.counter == f.max_counter
                } else {
                    f.counter <= f.max_counter
                };
                if counted {
                    if f.counter == f.limit1 {
                        f.counter = 0;
                        if f.kind == FilterKind::SparseCounter {
                            match (f.switched, f.limit2) {
                                (false, Some(l2)) => {
                                    f.limit1 = l2;
                                    f.switched = true;
                                }
                                _ => f.off = true,
                            }
                        }
                    } else {
                        f.counter = f.counter.wrapping_add(1);
                    }
                }
                (pass, f)
            }
        }
    }
}

/// Marks "no port" in [`MpState`].
const NO_PORT: u8 = u8::MAX;

/// The paths of a message-passing colour at one router.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
pub(crate) struct MpState {
    /// Per input port: the output port its current message holds ([`NO_PORT`]: none, the
    /// next wavelet is a header).
    out: [u8; 5],
    /// Per input port: payload wavelets still to come when the message ends by count
    /// (`None`: it ends with its first control wavelet).
    left: [Option<u8>; 5],
    /// Per output port: the input port whose message holds it ([`NO_PORT`]: free).
    owner: [u8; 5],
}

impl MpState {
    fn new() -> MpState {
        MpState {
            out: [NO_PORT; 5],
            left: [None; 5],
            owner: [NO_PORT; 5],
        }
    }

    /// Frees the path of input `port`.
    fn release(&mut self, port: usize) {
        if let Some(o) = self.out.get(port).copied()
            && let Some(ow) = self.owner.get_mut(usize::from(o))
        {
            *ow = NO_PORT;
        }
        if let Some(o) = self.out.get_mut(port) {
            *o = NO_PORT;
        }
    }
}

/// The state of one colour at one router.
///
/// `repr(C)`, in this order: everything the planner reads of a colour it looks at (its
/// own, or a neighbour's when it checks for room) fills the first cache line, so a look
/// costs that line and the one holding the port's ring counters. (With the compiler's
/// order the rings came first and these fields spread over the last two lines.)
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct ColorState {
    /// Whether the image configures this colour here (otherwise the state exists only to
    /// hold the CE's output on it, e.g. for a streaming `memcpy_d2h`).
    pub configured: bool,
    pub teardown: bool,
    /// Union of `rx` over the valid positions.
    pub rx_any: u8,
    pub cur: u8,
    /// Bit per port: the buffer is not empty.
    pub nonempty: u8,
    pub ring_mode: bool,
    pub pop_mode: PopMode,
    pub swap_x: bool,
    pub swap_y: bool,
    /// A streaming `memcpy_d2h` takes this colour's RAMP input to the host.
    pub capture: bool,
    /// Switch positions 0..=3 (`None` = invalid).
    pub routes: [Option<Route>; 4],
    /// Message-passing paths, if the colour routes messages.
    pub mp: Option<MpState>,
    pub filter: Option<Filter>,
    /// Input buffers per port.
    pub rings: [Ring; 5],
    /// What positions 1..=3 override (`routes[1..]` is derived from it and `routes[0]`);
    /// read only when a switch changes position.
    pub specs: [PosSpec; 3],
}

// The planner's fields share the first cache line (see `ColorState`).
const _: () = assert!(std::mem::offset_of!(ColorState, rings) <= 64);

impl ColorState {
    /// Whether the input buffer of `port` can take a wavelet arriving at `now` (buffers
    /// hold `depth` wavelets).
    fn has_room(&self, port: usize, depth: usize, now: u64) -> bool {
        self.rings.get(port).is_some_and(|r| r.has_room(depth, now))
    }

    fn unconfigured() -> ColorState {
        ColorState {
            configured: false,
            routes: [Some(Route::default()), None, None, None],
            specs: [PosSpec::default(); 3],
            rx_any: 0,
            cur: 0,
            ring_mode: false,
            pop_mode: PopMode::NoPop,
            filter: None,
            teardown: false,
            swap_x: false,
            swap_y: false,
            capture: false,
            rings: Default::default(),
            nonempty: 0,
            mp: None,
        }
    }

    fn from_config(cfg: &ColorConfig) -> ColorState {
        let pos0 = Route {
            rx: dir_mask(&cfg.rx),
            tx: dir_mask(&cfg.tx),
        };
        let mut s = ColorState::unconfigured();
        s.configured = true;
        s.routes[0] = Some(pos0);
        if let Some(sw) = &cfg.switches {
            for (spec, p) in s.specs.iter_mut().zip(&sw.positions) {
                *spec = PosSpec {
                    valid: p.is_valid(),
                    rx: p.rx.map(|d| 1 << d.index()),
                    tx: p.tx.as_deref().map(dir_mask),
                    raw: None,
                };
            }
            s.cur = sw.current.min(3);
            s.ring_mode = sw.ring_mode;
            s.pop_mode = sw.pop_mode;
        }
        s.rebuild();
        s.filter = cfg.filter.as_ref().map(Filter::new);
        s.teardown = cfg.teardown;
        s.swap_x = cfg.color_swap_x;
        s.swap_y = cfg.color_swap_y;
        if cfg.message_passing {
            s.mp = Some(MpState::new());
            s.rx_any = LINKS | RAMP_BIT;
        }
        s
    }

    /// Derives positions 1..=3 from position 0 and their overrides, the union of the
    /// inputs, and moves an invalid current position to 0. Positions compose: a side a
    /// position leaves out is the one in force at the position before it (so `pos1 = tx`,
    /// `pos2 = rx` changes both sides in two steps).
    pub(crate) fn rebuild(&mut self) {
        let mut prev = self.routes[0].unwrap_or_default();
        for (i, spec) in self.specs.iter().enumerate() {
            let r = spec.valid.then(|| Route {
                rx: spec.rx.unwrap_or(prev.rx),
                tx: spec.tx.unwrap_or(prev.tx),
            });
            if let Some(slot) = self.routes.get_mut(i + 1) {
                *slot = r;
            }
            if let Some(r) = r {
                prev = r;
            }
        }
        if self
            .routes
            .get(usize::from(self.cur))
            .is_none_or(Option::is_none)
        {
            self.cur = 0;
        }
        self.rx_any = self.routes.iter().flatten().fold(0, |m, r| m | r.rx);
        if self.mp.is_some() {
            self.rx_any = LINKS | RAMP_BIT;
        }
    }

    /// The `mmio::COLOR_CONFIG` word: bits 4:0 the tx ports and bits 9:5 the rx ports of
    /// position 0 (port order WEST, EAST, SOUTH, NORTH, RAMP), bits 13:12 the pop mode,
    /// bit 14 teardown in progress.
    pub(crate) fn color_config_word(&self) -> u32 {
        let r = self.routes[0].unwrap_or_default();
        let pop = match self.pop_mode {
            PopMode::NoPop => 0,
            PopMode::AlwaysPop => 1,
            PopMode::PopOnAdvance => 2,
            PopMode::PopOnAdvanceNop => 3,
        };
        u32::from(hw_mask(r.tx))
            | (u32::from(hw_mask(r.rx)) << 5)
            | (pop << 12)
            | (u32::from(self.teardown) << 14)
    }

    /// A store to the `mmio::COLOR_CONFIG` word (the caller applies bit 14, teardown).
    pub(crate) fn set_color_config_word(&mut self, v: u32) {
        self.configured = true;
        self.routes[0] = Some(Route {
            tx: hw_mask((v & 0x1f) as u8),
            rx: hw_mask(((v >> 5) & 0x1f) as u8),
        });
        self.pop_mode = match (v >> 12) & 3 {
            0 => PopMode::NoPop,
            1 => PopMode::AlwaysPop,
            2 => PopMode::PopOnAdvance,
            _ => PopMode::PopOnAdvanceNop,
        };
        self.rebuild();
    }

    /// The `mmio::SWITCH_CONFIG` word: for position p in 1..=3, bits 2:0 at 4(p-1) the
    /// port (WEST 0, EAST 1, SOUTH 2, NORTH 3, RAMP 4, 5 = invalid) and the next bit the
    /// side it replaces (1 = input); bit 12 ring mode; bits 14:13 the current position. A
    /// position that changes several tx ports reads as the first of them; an invalid
    /// position stored through this word reads back as stored (side bit included).
    pub(crate) fn switch_config_word(&self) -> u32 {
        let mut v = 0u32;
        for (i, spec) in self.specs.iter().enumerate() {
            let (port, input) = match (spec.valid, spec.rx, spec.tx, spec.raw) {
                (true, Some(m), _, _) => (hw_mask(m).trailing_zeros(), true),
                (true, None, Some(m), _) => (hw_mask(m).trailing_zeros(), false),
                (false, _, _, Some(f)) => (u32::from(f & 7), f & 8 != 0),
                _ => (u32::from(mmio::SWITCH_POS_INVALID), false),
            };
            v |= (port.min(7) | (u32::from(input) << 3)) << (4 * i);
        }
        v | (u32::from(self.ring_mode) << 12) | (u32::from(self.cur & 3) << 13)
    }

    /// A store to the `mmio::SWITCH_CONFIG` word (it also moves the switch).
    pub(crate) fn set_switch_config_word(&mut self, v: u32) {
        self.configured = true;
        for (i, spec) in self.specs.iter_mut().enumerate() {
            let f = (v >> (4 * i)) & 0xf;
            let port = (f & 7) as u8;
            let bit = hw_mask(1u8 << port.min(7));
            *spec = if port > 4 {
                PosSpec {
                    raw: Some(f as u8),
                    ..PosSpec::default()
                }
            } else if f & 8 != 0 {
                PosSpec {
                    valid: true,
                    rx: Some(bit),
                    tx: None,
                    raw: None,
                }
            } else {
                PosSpec {
                    valid: true,
                    rx: None,
                    tx: Some(bit),
                    raw: None,
                }
            };
        }
        self.ring_mode = v >> 12 & 1 == 1;
        self.cur = ((v >> 13) & 3) as u8;
        self.rebuild();
    }

    /// The current position's route.
    #[inline]
    pub fn route(&self) -> Route {
        self.routes
            .get(usize::from(self.cur))
            .copied()
            .flatten()
            .unwrap_or_default()
    }

    /// The position `SWITCH_ADV` moves to from position `cur`.
    pub fn advanced(&self, cur: u8) -> u8 {
        let next = usize::from(cur) + 1;
        if self.routes.get(next).is_some_and(Option::is_some) {
            next as u8
        } else if self.ring_mode {
            0
        } else {
            cur
        }
    }

    /// Message passing: whether the front wavelet of `port`, at PE index `p` of a
    /// rectangle `width` wide, waits for an output held by another input's message.
    pub(crate) fn mp_path_held(&self, port: usize, p: usize, width: u32) -> bool {
        let Some(mp) = &self.mp else {
            return false;
        };
        let out = match mp.out.get(port) {
            Some(&o) if o != NO_PORT => usize::from(o),
            _ => match self.rings.get(port).and_then(Ring::front) {
                Some(w) => mp_direction(p, width, Header::decode(w.data)),
                None => return false,
            },
        };
        mp.owner
            .get(out)
            .is_some_and(|&o| o != NO_PORT && usize::from(o) != port)
    }

    /// Whether wavelets arriving on `port` are swapped to the paired colour.
    fn swaps(&self, port: usize) -> bool {
        match port {
            0 | 1 => self.swap_y,
            2 | 3 => self.swap_x,
            _ => self.swap_x && self.swap_y,
        }
    }
}

/// The router of one PE.
///
/// `repr(C)`, 64-byte aligned: what a plan reads first (the colour states' pointer, the
/// busy mask, the round-robin colour, the colour slots) fills the first cache line, the
/// per-port counters the second (before, a `Router` spanned two or three lines at any
/// offset).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
#[repr(C, align(64))]
pub struct Router {
    pub(crate) colors: Vec<ColorState>,
    /// Bit per colour: some input buffer holds a wavelet.
    pub(crate) busy: u32,
    /// Bit per colour: in teardown mode.
    pub(crate) teardown_pending: u32,
    /// Colour that has round-robin priority next.
    pub(crate) rr: u8,
    /// Whether any colour swaps (otherwise arrivals keep their colour).
    any_swap: bool,
    /// Colour id to index in `colors`, or [`NO_SLOT`].
    pub(crate) slot: [u8; NCOLORS],
    /// Wavelets forwarded per output port (RAMP = delivered to the CE).
    pub(crate) sent: [u64; 5],
}

impl Router {
    /// A router with the given colour configurations (at most one per colour).
    pub(crate) fn new(configs: &[&ColorConfig]) -> Router {
        let mut r = Router {
            slot: [NO_SLOT; NCOLORS],
            colors: Vec::new(),
            busy: 0,
            rr: 0,
            any_swap: false,
            sent: [0; 5],
            teardown_pending: 0,
        };
        for cfg in configs {
            if let Some(s) = r.slot.get_mut(usize::from(cfg.color)) {
                *s = r.colors.len() as u8;
                let st = ColorState::from_config(cfg);
                r.any_swap |= st.swap_x || st.swap_y;
                if st.teardown {
                    r.teardown_pending |= 1 << cfg.color;
                }
                r.colors.push(st);
            }
        }
        r
    }

    /// The state of colour `c`, if any.
    #[inline]
    pub(crate) fn color(&self, c: u8) -> Option<&ColorState> {
        let s = *self.slot.get(usize::from(c))?;
        self.colors.get(usize::from(s))
    }

    /// The state of colour `c`, writable.
    #[inline]
    pub(crate) fn color_mut(&mut self, c: u8) -> Option<&mut ColorState> {
        let s = *self.slot.get(usize::from(c))?;
        self.colors.get_mut(usize::from(s))
    }

    /// The state of colour `c`, created unconfigured if needed (`None` if `c` is not a
    /// colour).
    pub(crate) fn ensure_color(&mut self, c: u8) -> Option<&mut ColorState> {
        let s = *self.slot.get(usize::from(c))?;
        if s == NO_SLOT {
            self.slot[usize::from(c)] = self.colors.len() as u8;
            self.colors.push(ColorState::unconfigured());
        }
        self.color_mut(c)
    }

    /// Appends `w` to colour `c`'s buffer of `port` (the colour's state must exist).
    #[inline]
    pub(crate) fn push(&mut self, c: u8, port: usize, w: Wavelet) {
        if let Some(cs) = self.color_mut(c)
            && let Some(ring) = cs.rings.get_mut(port)
            && ring.push(w)
        {
            cs.nonempty |= 1 << port;
            self.busy |= 1 << c;
        }
    }

    /// Removes the oldest wavelet of colour `c`'s buffer of `port`.
    #[inline]
    pub(crate) fn pop(&mut self, c: u8, port: usize, now: u64) -> Option<Wavelet> {
        let cs = self.color_mut(c)?;
        let ring = cs.rings.get_mut(port)?;
        let w = ring.pop(now);
        if ring.is_empty() {
            cs.nonempty &= !(1 << port);
            if cs.nonempty == 0 {
                self.busy &= !(1 << c);
            }
        }
        w
    }

    /// The colours that handle a wavelet tagged `tag` arriving on `port` (colour swap,
    /// fabric.md §4.3): `tag` unless it swaps on that axis, and `tag ^ 1` if that colour
    /// swaps on it.
    #[inline]
    fn handlers(&self, tag: u8, port: usize) -> ([u8; 2], usize) {
        if !self.any_swap {
            return ([tag, 0], 1);
        }
        let swaps = |c: u8| self.color(c).is_some_and(|cs| cs.swaps(port));
        let mut out = [0u8; 2];
        let mut n = 0;
        if !swaps(tag) {
            out[0] = tag;
            n = 1;
        }
        let pair = tag ^ 1;
        if usize::from(pair) < NCOLORS && swaps(pair) {
            out[n] = pair;
            n += 1;
        }
        (out, n)
    }

    /// The switch position of colour `c` (`None` if the colour is not configured here).
    pub fn switch_position(&self, c: u8) -> Option<u8> {
        self.color(c).filter(|s| s.configured).map(|s| s.cur)
    }

    /// Whether colour `c` is in teardown mode here.
    pub fn in_teardown(&self, c: u8) -> bool {
        c < NUM_COLORS && self.teardown_pending >> c & 1 == 1
    }

    /// Wavelets forwarded towards `d` so far (`Ramp`: delivered to this PE's CE).
    pub fn wavelets_sent(&self, d: Direction) -> u64 {
        self.sent.get(usize::from(d.index())).copied().unwrap_or(0)
    }

    /// Wavelets of colour `c` waiting in the input buffer of port `d`.
    pub fn buffered(&self, c: u8, d: Direction) -> usize {
        self.color(c)
            .and_then(|cs| cs.rings.get(usize::from(d.index())))
            .map_or(0, Ring::len)
    }
}

/// What a router did in one cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Nothing moved and nothing will move until another part of the fabric acts.
    Sleep,
    /// Nothing moved, but a wavelet becomes ready later (or lost link arbitration).
    Later,
    /// Something moved.
    Moved,
}

/// The rectangle's shape and the fabric's timing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geometry {
    pub width: u32,
    pub height: u32,
    /// Cycles a wavelet takes to become forwardable at the next router.
    pub hop: u64,
    /// Cycles across the RAMP.
    pub ramp: u64,
    /// Depth of a link buffer.
    pub depth: usize,
}

impl Geometry {
    /// The PE next to `p` towards port `d`, if inside the rectangle.
    #[inline]
    pub(crate) fn neighbour(&self, p: usize, d: usize) -> Option<usize> {
        // No division for north and south; a 32-bit one for east and west (this runs
        // for every wavelet hop).
        let w = self.width as usize;
        let col = || (p as u32).checked_rem(self.width).map(|x| x as usize);
        match d {
            0 if p >= w => Some(p - w),
            1 if p + w < w * self.height as usize => Some(p + w),
            2 if col().is_some_and(|x| x + 1 < w) => Some(p + 1),
            3 if col().is_some_and(|x| x > 0) => Some(p - 1),
            _ => None,
        }
    }
}

/// The routers and PEs `lo..lo + routers.len()` of one part of the rectangle, as a
/// persistent batch of cycles holds them (`sim_batch.rs`).
pub(crate) type PartView<'a> = (usize, &'a [Router], &'a [Pe]);

/// What planning reads of the fabric (nothing is written while routers plan): the
/// routers and PEs from `lo` on (the whole rectangle with `lo == 0`, or the part being
/// planned), and any other parts (`others`, for neighbours outside it).
pub(crate) struct PlanEnv<'a> {
    pub lo: usize,
    pub routers: &'a [Router],
    pub pes: &'a [Pe],
    pub others: &'a [PartView<'a>],
    pub geo: Geometry,
}

impl<'a> PlanEnv<'a> {
    /// Router `p`.
    #[inline(always)]
    fn router(&self, p: usize) -> Option<&'a Router> {
        match self.routers.get(p.wrapping_sub(self.lo)) {
            Some(r) => Some(r),
            None => self.far(p).map(|(r, _)| r),
        }
    }

    /// PE `p`.
    #[inline(always)]
    fn pe(&self, p: usize) -> Option<&'a Pe> {
        match self.pes.get(p.wrapping_sub(self.lo)) {
            Some(pe) => Some(pe),
            None => self.far(p).map(|(_, pe)| pe),
        }
    }

    /// Router and PE `p` of another part.
    #[cold]
    #[inline(never)]
    fn far(&self, p: usize) -> Option<(&'a Router, &'a Pe)> {
        self.others.iter().find_map(|&(lo, routers, pes)| {
            let k = p.checked_sub(lo)?;
            Some((routers.get(k)?, pes.get(k)?))
        })
    }

    fn loc(&self, p: usize) -> PeLoc {
        self.pe(p).map_or_else(PeLoc::unknown, Pe::loc)
    }

    fn error(&self, p: usize, color: u8, cycle: u64, kind: RoutingError) -> SimError {
        SimError::Routing {
            pe: self.loc(p),
            color,
            cycle,
            kind,
        }
    }
}

/// What a message-passing move changes and reports.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct MpMove {
    /// The colour's paths after the move.
    state: MpState,
    /// The wavelet was a header.
    header: bool,
    /// A header consumed at its destination (nothing is delivered).
    consumed: bool,
    /// The message ended (its path was released).
    ends: bool,
    /// The output port taken.
    out: u8,
}

/// One wavelet that one colour of one router moves in one cycle, as planned from the
/// state at the start of the router phase, with every change it makes.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Move {
    /// The sending router.
    pub p: u32,
    /// The colour.
    c: u8,
    /// The input port it leaves.
    port: u8,
    /// The route's output ports (RAMP included even when the filter rejects it), for
    /// traces.
    tx: u8,
    /// Link ports (bits 0..=3) copies go out on.
    links: u8,
    /// Delivered to the router's own CE.
    deliver: bool,
    /// The colour enters teardown.
    teardown: bool,
    /// The wavelet's payload as it leaves the buffer.
    data: u32,
    /// Its [`wflags`] bits.
    flags: u8,
    /// The payload of the copies sent on links (a popped control command, or as is).
    fwd: u32,
    /// The colour's filter after the move, if the move changed it (`None`: unchanged).
    filter: Option<Filter>,
    /// The colour's switch position after the move.
    cur: u8,
    /// Message passing: links carry the colour as is (no colour swap).
    mp: Option<MpMove>,
}

impl Move {
    /// Whether the wavelet is a control wavelet.
    fn is_ctrl(&self) -> bool {
        self.flags & wflags::CTRL != 0
    }
}

/// The plan of one router for one cycle (its moves are listed separately, in order).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RouterPlan {
    /// The router.
    pub p: u32,
    /// Whether it stays on the worklist.
    pub outcome: Outcome,
    /// The round-robin colour after the cycle, if something moved.
    rr: Option<u8>,
}

enum Plan {
    Moved(u8),
    Later,
    Blocked,
}

/// Plans the moves of router `p` for cycle `now` (appended to `moves`, in the order the
/// colours were visited) and, unless it sleeps, appends its plan to `plans` (pushed here
/// rather than returned: a returned plan cost a store-forwarding stall per router). On a
/// routing error the moves planned before it stay in `moves`.
///
/// Inlined into the caller up to the busy check: a router on the worklist with every
/// buffer empty (the cycle after a move, or woken by a freed slot downstream) costs a
/// load and a branch, not the prologue of [`plan_busy`].
#[inline(always)]
pub(crate) fn plan(
    p: usize,
    env: &PlanEnv<'_>,
    now: u64,
    moves: &mut Vec<Move>,
    plans: &mut Vec<RouterPlan>,
) -> Result<(), SimError> {
    match env.router(p) {
        Some(r) if r.busy != 0 => plan_busy(p, r, env, now, moves, plans),
        _ => Ok(()),
    }
}

/// [`plan`] for a router with some input buffer holding a wavelet.
#[inline(never)]
fn plan_busy(
    p: usize,
    r: &Router,
    env: &PlanEnv<'_>,
    now: u64,
    moves: &mut Vec<Move>,
    plans: &mut Vec<RouterPlan>,
) -> Result<(), SimError> {
    let busy = r.busy;
    let rr = u32::from(r.rr);
    let high = busy & (!0u32 << rr);
    let low = busy & !(!0u32 << rr);
    let mut used = 0u8;
    let mut first: Option<u8> = None;
    let mut later = false;
    for mut m in [high, low] {
        while m != 0 {
            let c = m.trailing_zeros() as u8;
            m &= m - 1;
            match plan_color(p, r, c, env, now, used, moves)? {
                Plan::Moved(tx) => {
                    used |= tx;
                    first.get_or_insert(c);
                }
                Plan::Later => later = true,
                Plan::Blocked => {}
            }
        }
    }
    let (outcome, rr) = match first {
        Some(c) => (Outcome::Moved, Some(((usize::from(c) + 1) % NCOLORS) as u8)),
        None if later => (Outcome::Later, None),
        None => return Ok(()),
    };
    plans.push(RouterPlan {
        p: p as u32,
        outcome,
        rr,
    });
    Ok(())
}

/// Plans the move of colour `c` at router `p` (`r`); `used` are the output ports already
/// taken this cycle.
#[inline(never)]
fn plan_color(
    p: usize,
    r: &Router,
    c: u8,
    env: &PlanEnv<'_>,
    now: u64,
    used: u8,
    moves: &mut Vec<Move>,
) -> Result<Plan, SimError> {
    let Some(cs) = r.color(c) else {
        return Ok(Plan::Blocked);
    };
    if cs.teardown || !cs.configured {
        return Ok(Plan::Blocked);
    }
    if let Some(mp) = cs.mp {
        return plan_mp(p, cs, c, mp, env, now, used, moves);
    }
    let route = cs.route();
    let mut ports = cs.nonempty & route.rx;
    if cs.capture {
        ports &= !RAMP_BIT;
    }
    let mut cand = None;
    let mut later = false;
    while ports != 0 {
        let port = ports.trailing_zeros() as usize;
        ports &= ports - 1;
        if let Some(w) = cs.rings.get(port).and_then(Ring::front) {
            if w.ready <= now {
                cand = Some((port, *w));
                break;
            }
            later = true;
        }
    }
    let Some((port, w)) = cand else {
        return Ok(if later { Plan::Later } else { Plan::Blocked });
    };
    let tx = route.tx;
    if tx & used != 0 {
        return Ok(Plan::Later);
    }
    let ctrl = w.is_ctrl();
    // Delivery to the CE: the head command's CE filter, then the colour's filter.
    let mut deliver = false;
    let mut new_filter = None;
    if tx & RAMP_BIT != 0 {
        let ce_ok = !ctrl || control::command(w.data, 0) & control::CE_FILTER == 0;
        if ce_ok {
            match cs.filter {
                Some(f) => {
                    let (pass, nf) = f.decide(w.data, ctrl);
                    deliver = pass;
                    new_filter = Some(nf);
                }
                None => deliver = true,
            }
        }
        if deliver {
            match env.pe(p).map(|pe| pe.ce_room(c, now)) {
                Some(Some(true)) => {}
                Some(Some(false)) => return Ok(Plan::Blocked),
                _ => return Err(env.error(p, c, now, RoutingError::NoInputQueue)),
            }
        }
    }
    // Room at every neighbour (the room a buffer has does not change during the router
    // phase: a slot freed in this cycle is usable from the next, and only this router
    // feeds it).
    let mut links = tx & LINKS;
    while links != 0 {
        let d = links.trailing_zeros() as usize;
        links &= links - 1;
        let Some(q) = env.geo.neighbour(p, d) else {
            return Err(env.error(p, c, now, RoutingError::OffEdge { dir: dir_of(d) }));
        };
        let qport = opposite(d);
        let Some(rq) = env.router(q) else {
            return Ok(Plan::Blocked);
        };
        let (hs, nh) = rq.handlers(c, qport);
        if nh == 0 {
            return Err(env.error(
                q,
                c,
                now,
                RoutingError::Unrouted {
                    from: dir_of(qport),
                },
            ));
        }
        for &h in hs.iter().take(nh) {
            let Some(hcs) = rq.color(h).filter(|s| s.configured) else {
                return Err(env.error(
                    q,
                    h,
                    now,
                    RoutingError::Unrouted {
                        from: dir_of(qport),
                    },
                ));
            };
            if hcs.rx_any & (1 << qport) == 0 {
                return Err(env.error(
                    q,
                    h,
                    now,
                    RoutingError::NotAccepted {
                        from: dir_of(qport),
                    },
                ));
            }
            if !hcs.has_room(qport, env.geo.depth, now) {
                return Ok(Plan::Blocked);
            }
        }
    }
    // The wavelet moves: its control command, then the sideband advance.
    let mut fwd = w.data;
    let mut teardown = false;
    let mut cur = cs.cur;
    if ctrl {
        let op = control::command(w.data, 0) & 3;
        let changed = match op {
            control::SWITCH_ADV => {
                let next = cs.advanced(cur);
                let changed = next != cur;
                cur = next;
                changed
            }
            control::SWITCH_RST => {
                let changed = cur != 0;
                cur = 0;
                changed
            }
            control::TEARDOWN => {
                teardown = true;
                false
            }
            _ => false,
        };
        let pop = match cs.pop_mode {
            PopMode::NoPop => false,
            PopMode::AlwaysPop => true,
            PopMode::PopOnAdvance => changed,
            PopMode::PopOnAdvanceNop => changed || op == control::NOP,
        };
        if pop {
            fwd = control::pop(w.data);
        }
    }
    if w.flags & wflags::ADVANCE != 0 {
        cur = cs.advanced(cur);
    }
    moves.push(Move {
        p: p as u32,
        c,
        port: port as u8,
        tx,
        links: tx & LINKS,
        deliver,
        teardown,
        data: w.data,
        flags: w.flags,
        fwd,
        filter: new_filter,
        cur,
        mp: None,
    });
    Ok(Plan::Moved(tx))
}

/// The output port a header at PE `p` takes towards `h`: X first, then Y, then the RAMP.
fn mp_direction(p: usize, width: u32, h: Header) -> usize {
    let w = width.max(1) as usize;
    let (x, y) = ((p % w) as u32, (p / w) as u32);
    let d = if h.col > x {
        Direction::East
    } else if h.col < x {
        Direction::West
    } else if h.row > y {
        Direction::South
    } else if h.row < y {
        Direction::North
    } else {
        Direction::Ramp
    };
    usize::from(d.index())
}

/// [`plan_color`] for a message-passing colour: the first input port (N, S, E, W, RAMP)
/// whose front wavelet is ready and whose output is free (or held by its own message) and
/// has room moves one wavelet.
#[allow(clippy::too_many_arguments)]
fn plan_mp(
    p: usize,
    cs: &ColorState,
    c: u8,
    mut mp: MpState,
    env: &PlanEnv<'_>,
    now: u64,
    used: u8,
    moves: &mut Vec<Move>,
) -> Result<Plan, SimError> {
    let mut ports = cs.nonempty;
    let mut later = false;
    let mut chosen = None;
    let (width, height) = (env.geo.width, env.geo.height);
    while ports != 0 {
        let port = ports.trailing_zeros() as usize;
        ports &= ports - 1;
        let Some(w) = cs.rings.get(port).and_then(Ring::front).copied() else {
            continue;
        };
        if w.ready > now {
            later = true;
            continue;
        }
        let held = mp.out.get(port).copied().unwrap_or(NO_PORT);
        let (out, header) = if held != NO_PORT {
            (usize::from(held), None)
        } else {
            if w.is_ctrl() {
                return Err(env.error(
                    p,
                    c,
                    now,
                    RoutingError::MessageWithoutHeader { from: dir_of(port) },
                ));
            }
            let h = Header::decode(w.data);
            if h.col >= width || h.row >= height {
                return Err(env.error(
                    p,
                    c,
                    now,
                    RoutingError::MessageDestination {
                        col: h.col,
                        row: h.row,
                    },
                ));
            }
            (mp_direction(p, width, h), Some(h))
        };
        let owner = mp.owner.get(out).copied().unwrap_or(NO_PORT);
        if owner != NO_PORT && usize::from(owner) != port {
            continue;
        }
        let consumed = out == RAMP && header.is_some();
        if !consumed && used & (1 << out) != 0 {
            later = true;
            continue;
        }
        if out == RAMP {
            if !consumed {
                match env.pe(p).map(|pe| pe.ce_room(c, now)) {
                    Some(Some(true)) => {}
                    Some(Some(false)) => continue,
                    _ => return Err(env.error(p, c, now, RoutingError::NoInputQueue)),
                }
            }
        } else {
            let Some(q) = env.geo.neighbour(p, out) else {
                return Err(env.error(p, c, now, RoutingError::OffEdge { dir: dir_of(out) }));
            };
            let qport = opposite(out);
            let Some(qcs) = env
                .router(q)
                .and_then(|r| r.color(c))
                .filter(|s| s.configured && s.mp.is_some())
            else {
                return Err(env.error(
                    q,
                    c,
                    now,
                    RoutingError::MessagePassingOff {
                        from: dir_of(qport),
                    },
                ));
            };
            if !qcs.has_room(qport, env.geo.depth, now) {
                continue;
            }
        }
        chosen = Some((port, out, w, header));
        break;
    }
    let Some((port, out, w, header)) = chosen else {
        return Ok(if later { Plan::Later } else { Plan::Blocked });
    };
    // Path bookkeeping: a header claims the output, the end of a message frees it.
    let ends = match header {
        Some(h) => {
            if let Some(o) = mp.out.get_mut(port) {
                *o = out as u8;
            }
            if let Some(o) = mp.owner.get_mut(out) {
                *o = port as u8;
            }
            if let Some(l) = mp.left.get_mut(port) {
                *l = (!h.ctrl_term).then_some(h.len);
            }
            !h.ctrl_term && h.len == 0
        }
        None => match mp.left.get_mut(port) {
            Some(Some(n)) => {
                *n = n.saturating_sub(1);
                *n == 0
            }
            _ => w.is_ctrl(),
        },
    };
    if ends {
        mp.release(port);
    }
    let consumed = out == RAMP && header.is_some();
    moves.push(Move {
        p: p as u32,
        c,
        port: port as u8,
        tx: 1 << out,
        links: if out == RAMP { 0 } else { 1 << out },
        deliver: out == RAMP && !consumed,
        teardown: false,
        data: w.data,
        flags: w.flags,
        fwd: w.data,
        filter: None,
        cur: cs.cur,
        mp: Some(MpMove {
            state: mp,
            header: header.is_some(),
            consumed,
            ends,
            out: out as u8,
        }),
    });
    Ok(Plan::Moved(if consumed { 0 } else { 1 << out }))
}

/// What committing a chunk of routers needs.
pub(crate) struct CommitEnv<'a> {
    pub geo: Geometry,
    pub classes: &'a [Class],
    pub trace: Option<&'a Tracer>,
    /// Some PE records a timeline (`--perfetto`).
    pub record: bool,
}

/// What committing a chunk of routers did.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CommitOut {
    /// Wavelet moves across router outputs.
    pub hops: u64,
}

/// A chunk of the fabric that one thread steps: routers and PEs `lo..lo + len`, and the
/// bits it sets in the worklists (bit 0 = PE `lo`, see [`set_bit`]).
pub(crate) struct Chunk<'a> {
    pub lo: usize,
    pub routers: &'a mut [Router],
    pub pes: &'a mut [Pe],
    /// Routers to visit next cycle.
    pub router_next: &'a mut [u64],
    /// CEs to visit this cycle (after the routers).
    pub ce_next: &'a mut [u64],
}

/// Commits the plans of the routers of `chunk` and the wavelets its routers receive:
/// `plans` and `moves` are every router's, in ascending router order. Own moves first
/// (pops, switch, filter, teardown and message-path state, delivery to the CE, counters,
/// traces), then the copies arriving from neighbours, then the wake-ups of the routers
/// whose buffers this cycle's moves freed. Nothing here depends on another chunk's
/// commit, so chunks may run in any order or in parallel.
pub(crate) fn commit(
    chunk: Chunk<'_>,
    plans: &[&[RouterPlan]],
    moves: &[&[Move]],
    env: &CommitEnv<'_>,
    now: u64,
) -> CommitOut {
    let Chunk {
        lo,
        routers,
        pes,
        router_next,
        ce_next,
    } = chunk;
    let hi = lo + routers.len();
    let mut out = CommitOut::default();
    let geo = env.geo;
    for rp in between(plans, |x| x.p, lo, hi) {
        let p = rp.p as usize;
        if rp.outcome != Outcome::Sleep {
            set_bit(router_next, lo, p);
        }
        if let (Some(rr), Some(r)) = (rp.rr, routers.get_mut(p - lo)) {
            r.rr = rr;
        }
    }
    for m in between(moves, |x| x.p, lo, hi) {
        let p = m.p as usize;
        let (Some(r), Some(pe)) = (routers.get_mut(p - lo), pes.get_mut(p - lo)) else {
            continue;
        };
        if commit_own(m, r, pe, env, now, &mut out.hops) {
            set_bit(ce_next, lo, p);
        }
    }
    // Copies from neighbours and freed upstream slots: senders within one row of the chunk.
    let w = geo.width as usize;
    for m in between(moves, |x| x.p, lo.saturating_sub(w), hi.saturating_add(w)) {
        let p = m.p as usize;
        let mut links = m.links;
        while links != 0 {
            let d = links.trailing_zeros() as usize;
            links &= links - 1;
            let Some(q) = geo.neighbour(p, d).filter(|q| (lo..hi).contains(q)) else {
                continue;
            };
            let Some(rq) = routers.get_mut(q - lo) else {
                continue;
            };
            let qport = opposite(d);
            let wavelet = Wavelet {
                data: m.fwd,
                flags: m.flags & wflags::CTRL,
                ready: now + geo.hop,
            };
            if m.mp.is_some() {
                rq.push(m.c, qport, wavelet);
            } else {
                let (hs, nh) = rq.handlers(m.c, qport);
                for &h in hs.iter().take(nh) {
                    rq.push(h, qport, wavelet);
                }
            }
            set_bit(router_next, lo, q);
        }
        let port = usize::from(m.port);
        if port != RAMP
            && let Some(up) = geo.neighbour(p, port).filter(|u| (lo..hi).contains(u))
        {
            set_bit(router_next, lo, up);
        }
    }
    out
}

/// The items of `lists` (each sorted by router, the lists in router order: the whole
/// cycle's, or one per part of a persistent batch) whose router is in `a..b`.
#[inline]
fn between<'a, T>(
    lists: &'a [&'a [T]],
    key: impl Fn(&T) -> u32 + Copy + 'a,
    a: usize,
    b: usize,
) -> impl Iterator<Item = &'a T> + 'a {
    lists.iter().flat_map(move |s| {
        let i = s.partition_point(|x| (key(x) as usize) < a);
        let j = s.partition_point(|x| (key(x) as usize) < b);
        s.get(i..j).unwrap_or(&[])
    })
}

/// Applies move `m` to its own router and PE; returns whether the CE must be woken.
fn commit_own(
    m: &Move,
    r: &mut Router,
    pe: &mut Pe,
    env: &CommitEnv<'_>,
    now: u64,
    hops: &mut u64,
) -> bool {
    let (c, port) = (m.c, usize::from(m.port));
    r.pop(c, port, now);
    if let Some(cs) = r.color_mut(c) {
        if let Some(f) = m.filter {
            cs.filter = Some(f);
        }
        cs.cur = m.cur;
        if m.teardown {
            cs.teardown = true;
        }
        if let Some(mm) = &m.mp {
            cs.mp = Some(mm.state);
        }
    }
    if m.teardown {
        r.teardown_pending |= 1 << c;
    }
    let mut links = m.links;
    while links != 0 {
        let d = links.trailing_zeros() as usize;
        links &= links - 1;
        if let Some(s) = r.sent.get_mut(d) {
            *s += 1;
        }
        *hops += 1;
    }
    if env.record
        && m.links != 0
        && let Some(rec) = pe.perf.as_deref_mut()
    {
        rec.sends(m.p as usize, m.links, &env.geo, now, c, m.fwd);
    }
    // The freed slot lets the CE continue (for the RAMP; upstream routers are woken by
    // the chunk that holds them).
    let mut wake_ce = port == RAMP;
    if m.deliver {
        pe.ce_push(
            c,
            Wavelet {
                data: m.data,
                flags: m.flags & wflags::CTRL,
                ready: now + env.geo.ramp,
            },
        );
        *hops += 1;
        r.sent[RAMP] += 1;
        wake_ce = true;
    }
    if m.teardown {
        if env
            .classes
            .get(pe.class)
            .is_some_and(|cl| cl.binding(TEARDOWN_TASK_ID).is_some())
        {
            pe.active |= 1 << TEARDOWN_TASK_ID;
        }
        wake_ce = true;
    }
    if let Some(t) = env.trace
        && pe.traced
    {
        trace_move(t, m, pe.loc, now);
    }
    // A PE sleeping through a stall (`sim::ce_chunk`) does nothing with a wavelet or a
    // freed output slot before its stall ends, when it wakes anyway; only a control
    // wavelet, dispatched during stall cycles, needs its tick now.
    wake_ce && (pe.sleep_until == 0 || pe.ctrl_heads != 0)
}

/// The trace line of a move.
fn trace_move(t: &Tracer, m: &Move, loc: PeLoc, now: u64) {
    let c = m.c;
    let from = dir_of(usize::from(m.port)).name();
    match &m.mp {
        None => {
            let dests = if m.deliver { m.tx } else { m.tx & !RAMP_BIT };
            t.line(format_args!(
                "@{now} {}: router colour {c} {} 0x{:08x} from {from} -> {}{}",
                loc.rel,
                if m.is_ctrl() { "control" } else { "data" },
                m.data,
                mask_names(dests),
                if m.teardown { " (teardown)" } else { "" }
            ));
        }
        Some(mm) => {
            t.line(format_args!(
                "@{now} {}: router colour {c} message {} 0x{:08x} from {from} -> {}{}",
                loc.rel,
                match (mm.header, m.is_ctrl()) {
                    (true, _) => "header",
                    (false, true) => "control",
                    (false, false) => "data",
                },
                m.data,
                if mm.consumed {
                    "(consumed)"
                } else {
                    dir_of(usize::from(mm.out)).name()
                },
                if mm.ends { " (path released)" } else { "" }
            ));
        }
    }
}
