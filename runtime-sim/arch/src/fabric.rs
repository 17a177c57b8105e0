//! Hardware constants of the wafer-scale engine, per architecture.
//!
//! Every number the compiler checks against and the simulator models lives here once.
//! Sources: the public CSL documentation as digested in `shared/spec/` (fabric.md,
//! simulator-model.md); choices of our own are marked "ours".

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::RangeInclusive;

/// Target architecture generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    /// WSE-2 ("Feynman"): data tasks are bound to colours.
    Wse2,
    /// WSE-3 ("Schrodinger"): data tasks are bound to input queues.
    Wse3,
}

impl Arch {
    /// The spelling used by `cslc --arch=` and `@is_arch`.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Wse2 => "wse2",
            Arch::Wse3 => "wse3",
        }
    }

    /// Parses `wse2` / `wse3`.
    pub fn from_name(s: &str) -> Option<Arch> {
        match s {
            "wse2" => Some(Arch::Wse2),
            "wse3" => Some(Arch::Wse3),
            _ => None,
        }
    }

    /// Task ids that may be bound to local tasks (`@get_local_task_id`).
    pub fn local_task_ids(self) -> RangeInclusive<u8> {
        match self {
            Arch::Wse2 => 0..=30,
            Arch::Wse3 => 8..=30,
        }
    }

    /// Task ids that may be bound to data tasks (one per colour on WSE-2, one per input
    /// queue on WSE-3).
    pub fn data_task_ids(self) -> RangeInclusive<u8> {
        match self {
            Arch::Wse2 => 0..=23,
            Arch::Wse3 => 0..=7,
        }
    }

    /// Task ids that may be bound to control tasks.
    pub fn control_task_ids(self) -> RangeInclusive<u8> {
        0..=63
    }

    /// Valid input-queue ids.
    pub fn input_queues(self) -> RangeInclusive<u8> {
        0..=7
    }

    /// Valid output-queue ids.
    pub fn output_queues(self) -> RangeInclusive<u8> {
        match self {
            Arch::Wse2 => 0..=5,
            Arch::Wse3 => 0..=7,
        }
    }

    /// Whether colour `c` may have a switch configuration (WSE-3 allows switches only on
    /// colours 0-9, 12, 13, 16, 17, 20 and 21).
    pub fn color_has_switch(self, c: u8) -> bool {
        match self {
            Arch::Wse2 => c < NUM_COLORS,
            Arch::Wse3 => matches!(c, 0..=9 | 12 | 13 | 16 | 17 | 20 | 21),
        }
    }

    /// Whether routers support message passing (`<message_passing>`, WSE-3 only).
    pub fn has_message_passing(self) -> bool {
        matches!(self, Arch::Wse3)
    }

    /// Cycles a wavelet takes to cross one router hop (WSE-2 ≈ 1 per the HPDC'24 model,
    /// WSE-3 2.0 measured).
    pub fn hop_latency(self) -> u32 {
        match self {
            Arch::Wse2 => 1,
            Arch::Wse3 => 2,
        }
    }

    /// Depth in wavelets of input queue `q` (fabric.md §6.1), or `None` if there is no
    /// such queue.
    pub fn input_queue_depth(self, q: u8) -> Option<u32> {
        match (self, q) {
            (Arch::Wse2, 0 | 1) => Some(6),
            (Arch::Wse2, 2 | 3) => Some(4),
            (Arch::Wse2, 4..=7) => Some(2),
            (Arch::Wse3, 0 | 1) => Some(8),
            (Arch::Wse3, 2..=7) => Some(4),
            _ => None,
        }
    }

    /// Depth in wavelets of output queue `q` (fabric.md §6.1; WSE-3: the default), or
    /// `None` if there is no such queue.
    pub fn output_queue_depth(self, q: u8) -> Option<u32> {
        match (self, q) {
            (Arch::Wse2, 0 | 1 | 4 | 5) => Some(2),
            (Arch::Wse2, 2 | 3) => Some(6),
            (Arch::Wse3, 0..=7) => Some(8),
            _ => None,
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Bytes of SRAM per PE (48 KB on both generations).
pub const PE_MEMORY_BYTES: u32 = 48 * 1024;

/// Bytes at the top of PE memory reserved for the call stack (ours: the compiler keeps
/// globals below `PE_MEMORY_BYTES - STACK_BYTES`; the simulator faults on overflow).
pub const STACK_BYTES: u32 = 2048;

/// Number of routable colours (0..=23) on both generations.
pub const NUM_COLORS: u8 = 24;

/// Number of task ids (0..=63).
pub const NUM_TASK_IDS: u8 = 64;

/// A set of (PE, colour) pairs of a rectangle, one bit each: finds a colour configured
/// twice among the millions of a whole wafer without hashing.
#[derive(Clone, Debug, Default)]
pub struct PeColorSet {
    width: u32,
    height: u32,
    bits: Vec<u64>,
}

impl PeColorSet {
    /// An empty set for a `width` x `height` rectangle.
    pub fn new(width: u32, height: u32) -> PeColorSet {
        let n = width as usize * height as usize * usize::from(NUM_COLORS);
        PeColorSet {
            width,
            height,
            bits: vec![0; n.div_ceil(64)],
        }
    }

    /// Adds (x, y, colour); false if it was already there or lies outside the rectangle
    /// or the colours.
    pub fn insert(&mut self, x: u32, y: u32, color: u8) -> bool {
        if x >= self.width || y >= self.height || color >= NUM_COLORS {
            return false;
        }
        let i = (y as usize * self.width as usize + x as usize) * usize::from(NUM_COLORS)
            + usize::from(color);
        let (word, bit) = (i / 64, 1u64 << (i % 64));
        let fresh = self.bits[word] & bit == 0;
        self.bits[word] |= bit;
        fresh
    }
}

/// Microthreads per PE (asynchronous DSD operations run on them; ids `0..MICROTHREADS`).
pub const MICROTHREADS: u8 = 8;

/// Colours reserved by the memcpy infrastructure when `--memcpy` is given.
pub const MEMCPY_RESERVED_COLORS: [u8; 3] = [21, 22, 23];

/// Local task ids reserved by the memcpy infrastructure.
pub const MEMCPY_RESERVED_LOCAL_TASKS: [u8; 3] = [27, 28, 30];

/// Control task ids reserved by the memcpy infrastructure.
pub const MEMCPY_RESERVED_CONTROL_TASKS: [u8; 5] = [33, 34, 35, 36, 37];

/// The system teardown task id.
pub const TEARDOWN_TASK_ID: u8 = 29;

/// Task id under which the memcpy runtime runs a host-launched function (ours: one of the
/// ids the memcpy library reserves).
pub const LAUNCH_TASK_ID: u8 = 28;

/// Memory-mapped registers. Addresses are **byte** addresses (pointers in CSL hold byte
/// addresses); the documented registers are word addresses, so each is doubled.
pub mod mmio {
    /// Start of the register window; loads and stores at or above it do not touch SRAM.
    pub const BASE: u32 = 0xF000;
    /// Three 16-bit words: the 48-bit timestamp counter (word 0x7B30).
    pub const TSC: u32 = 0x7B30 * 2;
    /// Row id of this PE within the fabric (word 0x7C45).
    pub const ROW_ID: u32 = 0x7C45 * 2;
    /// Column id of this PE within the fabric (word 0x7C46).
    pub const COL_ID: u32 = 0x7C46 * 2;
    /// Ours: a store of any value tells the host I/O model that this PE has finished the
    /// current host command (`unblock_cmd_stream` of `<memcpy/memcpy>`). Word 0x7DF0.
    pub const HOST_CMD_UNBLOCK: u32 = 0x7DF0 * 2;
    /// Ours: a store appends its low byte to this PE's simulator-log line; a newline ends
    /// the line (`<simprint>`). Word 0x7DF4.
    pub const PRINT_CHAR: u32 = 0x7DF4 * 2;
    /// Ours: four 16-bit words (words 0x7DF8..=0x7DFB), bit `i` set = task id `i` has high
    /// priority (`<tile_config>` task_priority). Readable and writable.
    pub const TASK_PRIORITY: u32 = 0x7DF8 * 2;
    /// Ours: a store of a colour id ends teardown mode for that colour at this PE (what
    /// `tile_config.teardown.exit(color)` does). Word 0x7DF1.
    pub const TEARDOWN_EXIT: u32 = 0x7DF1 * 2;
    /// Ours: two 16-bit words, the bitmap of colours in teardown mode at this PE (bit `c`
    /// = colour `c`; colours 16..=23 in the second word). Words 0x7DF2 and 0x7DF3.
    pub const TEARDOWN_PENDING: u32 = 0x7DF2 * 2;
    /// One 16-bit word per colour (words 0x7F20..=0x7F37, the WSE-2 colour configuration
    /// registers as public CSL programs address them; `<tile_config>` color_config):
    /// bits 4:0 the tx ports, bits 9:5 the rx ports of position 0 (port order WEST, EAST,
    /// SOUTH, NORTH, RAMP), bits 13:12 the pop mode (ours: 0 none, 1 always, 2 on advance,
    /// 3 on advance or NOP), bit 14 teardown in progress. Readable and writable; a write
    /// also sets the positions 1–3 again from their one-sided overrides.
    pub const COLOR_CONFIG: u32 = 0x7F20 * 2;
    /// One 16-bit word per colour (words 0x7F40..=0x7F57, the switch configuration
    /// registers; `<tile_config>` switch_config): for position `p` in 1..=3 the four bits
    /// at `4 * (p - 1)`: bits 2:0 a port (WEST 0, EAST 1, SOUTH 2, NORTH 3, RAMP 4;
    /// [`SWITCH_POS_INVALID`] = the position is invalid) and bit 3 the side it replaces
    /// (1 = input, 0 = output); bit 12 ring mode; bits 14:13 the current position (a
    /// write moves the switch there; an invalid position means 0). The four bits of a
    /// position stored as invalid read back as stored, side bit included.
    pub const SWITCH_CONFIG: u32 = 0x7F40 * 2;
    /// The port code of an invalid switch position in [`SWITCH_CONFIG`].
    pub const SWITCH_POS_INVALID: u16 = 5;
    /// The number of per-colour words in each of the three switch/colour register arrays.
    pub const PER_COLOR_WORDS: u32 = 24;
}

/// The 32-bit payload of a control wavelet (fabric.md §3.1, seed 003): eight 3-bit
/// commands and a control-task id. In each command, bits 1:0 are the opcode and bit 2 the
/// CE filter.
pub mod control {
    /// Opcode: no operation.
    pub const NOP: u8 = 0;
    /// Opcode: advance the colour's switch.
    pub const SWITCH_ADV: u8 = 1;
    /// Opcode: reset the colour's switch to position 0.
    pub const SWITCH_RST: u8 = 2;
    /// Opcode: put the colour into teardown mode.
    pub const TEARDOWN: u8 = 3;
    /// Command bit: do not deliver the wavelet to the CE.
    pub const CE_FILTER: u8 = 4;

    /// What a command's opcode (bits 1:0) does, for messages: "a NOP", "a switch
    /// advance", "a switch reset" or "a teardown".
    pub fn opcode_phrase(cmd: u8) -> &'static str {
        match cmd & 3 {
            NOP => "a NOP",
            SWITCH_ADV => "a switch advance",
            SWITCH_RST => "a switch reset",
            _ => "a teardown",
        }
    }
    /// Number of commands in a payload.
    pub const MAX_CMDS: usize = 8;

    /// Command `i` (0..=7) of `payload` (3 bits).
    pub fn command(payload: u32, i: usize) -> u8 {
        let c = match i {
            0 => payload >> 22,
            1 => payload >> 25,
            2 => ((payload >> 28) & 3) | ((payload & 1) << 2),
            3 => payload >> 1,
            4 => payload >> 4,
            5 => payload >> 7,
            6 => payload >> 10,
            7 => payload >> 13,
            _ => 0,
        };
        (c & 7) as u8
    }

    /// `payload` with command `i` (0..=7) replaced by the low 3 bits of `cmd`.
    pub fn with_command(payload: u32, i: usize, cmd: u8) -> u32 {
        let c = u32::from(cmd & 7);
        let field = |shift: u32| (payload & !(7 << shift)) | (c << shift);
        match i {
            0 => field(22),
            1 => field(25),
            2 => (payload & !(3 << 28) & !1) | ((c & 3) << 28) | (c >> 2),
            3 => field(1),
            4 => field(4),
            5 => field(7),
            6 => field(10),
            7 => field(13),
            _ => payload,
        }
    }

    /// The control-task id (bits 21:16).
    pub fn task_id(payload: u32) -> u8 {
        ((payload >> 16) & 0x3f) as u8
    }

    /// `payload` after a router pops command 0: commands 1..=7 move down one place and
    /// command 7 becomes a NOP without the CE filter; the task id is kept.
    pub fn pop(payload: u32) -> u32 {
        let mut out = payload;
        for i in 0..MAX_CMDS - 1 {
            out = with_command(out, i, command(payload, i + 1));
        }
        with_command(out, MAX_CMDS - 1, NOP)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn documented_payloads_decode() {
            // Advance with the CE filter on every command (seed 003).
            let adv = 0x0940_9249;
            assert_eq!(command(adv, 0), SWITCH_ADV | CE_FILTER);
            for i in 1..MAX_CMDS {
                assert_eq!(command(adv, i), NOP | CE_FILTER, "cmd {i}");
            }
            assert_eq!(command(0x0180_0000, 0), SWITCH_RST | CE_FILTER);
            assert_eq!(command(0x01df_0000, 0), TEARDOWN | CE_FILTER);
            assert_eq!(task_id(0x01df_0000), 31);
            let mut built = 0;
            for i in 0..MAX_CMDS {
                built = with_command(built, i, command(adv, i));
            }
            assert_eq!(built, adv);
            let popped = pop(adv);
            assert_eq!(command(popped, 0), NOP | CE_FILTER);
            assert_eq!(command(popped, 7), NOP);
        }
    }
}

/// Router message passing (WSE-3, simulator-model.md §5): a colour configured for it
/// routes each message by the destination in its header wavelet, X first, then Y, then to
/// the CE, and holds the path until the message has passed.
///
/// # Header wavelet (32 bits)
///
/// | bits | field |
/// |---|---|
/// | 31:20 | destination column within the program rectangle |
/// | 19:8 | destination row within the program rectangle |
/// | 7 | north: the destination row is above the sender's (ours: informational) |
/// | 6 | south: the destination row is below the sender's (ours: informational) |
/// | 5 | ctrl_term: the message ends with the first control wavelet after the header |
/// | 4:0 | payload length in wavelets (used when ctrl_term is clear) |
pub mod message {
    use std::ops::RangeInclusive;

    /// Colours the `<message_passing>` library reserves.
    pub const LIBRARY_COLORS: RangeInclusive<u8> = 14..=18;
    /// The colour the library sends messages on (`mp_comm_color`).
    pub const COMM_COLOR: u8 = 14;
    /// Shift of the destination column.
    pub const DEST_COL_SHIFT: u32 = 20;
    /// Shift of the destination row.
    pub const DEST_ROW_SHIFT: u32 = 8;
    /// Mask of a destination coordinate (after shifting).
    pub const COORD_MASK: u32 = 0xfff;
    /// The north bit.
    pub const NORTH: u32 = 1 << 7;
    /// The south bit.
    pub const SOUTH: u32 = 1 << 6;
    /// The ctrl_term bit.
    pub const CTRL_TERM: u32 = 1 << 5;
    /// Mask of the payload length.
    pub const LEN_MASK: u32 = 0x1f;

    /// A decoded header wavelet.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Header {
        /// Destination column.
        pub col: u32,
        /// Destination row.
        pub row: u32,
        /// North bit.
        pub north: bool,
        /// South bit.
        pub south: bool,
        /// The message ends with a control wavelet.
        pub ctrl_term: bool,
        /// Payload length (used when `ctrl_term` is clear).
        pub len: u8,
    }

    impl Header {
        /// Decodes a header payload.
        pub fn decode(w: u32) -> Header {
            Header {
                col: (w >> DEST_COL_SHIFT) & COORD_MASK,
                row: (w >> DEST_ROW_SHIFT) & COORD_MASK,
                north: w & NORTH != 0,
                south: w & SOUTH != 0,
                ctrl_term: w & CTRL_TERM != 0,
                len: (w & LEN_MASK) as u8,
            }
        }

        /// Encodes the header (coordinates and length are truncated to their fields).
        pub fn encode(self) -> u32 {
            ((self.col & COORD_MASK) << DEST_COL_SHIFT)
                | ((self.row & COORD_MASK) << DEST_ROW_SHIFT)
                | if self.north { NORTH } else { 0 }
                | if self.south { SOUTH } else { 0 }
                | if self.ctrl_term { CTRL_TERM } else { 0 }
                | (u32::from(self.len) & LEN_MASK)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn header_round_trips() {
            let h = Header {
                col: 3,
                row: 2,
                north: false,
                south: true,
                ctrl_term: true,
                len: 5,
            };
            let w = h.encode();
            assert_eq!(w, (3 << 20) | (2 << 8) | (1 << 6) | (1 << 5) | 5);
            assert_eq!(Header::decode(w), h);
        }
    }
}

/// A router port direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Direction {
    /// Towards row y-1.
    North,
    /// Towards row y+1.
    South,
    /// Towards column x+1.
    East,
    /// Towards column x-1.
    West,
    /// The link between the router and its own compute engine.
    Ramp,
}

impl Direction {
    /// All five directions in encoding order.
    pub const ALL: [Direction; 5] = [
        Direction::North,
        Direction::South,
        Direction::East,
        Direction::West,
        Direction::Ramp,
    ];

    /// The CSL spelling (`NORTH`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Direction::North => "NORTH",
            Direction::South => "SOUTH",
            Direction::East => "EAST",
            Direction::West => "WEST",
            Direction::Ramp => "RAMP",
        }
    }

    /// Parses the CSL spelling.
    pub fn from_name(s: &str) -> Option<Direction> {
        Direction::ALL.into_iter().find(|d| d.name() == s)
    }

    /// The port index (in [`Direction::index`] encoding) at which a wavelet leaving
    /// through port `d` arrives at the neighbour: north and south swap, east and west
    /// swap; the ramp (4) stays itself. Any other value is returned unchanged.
    pub const fn opposite_index(d: u8) -> u8 {
        match d {
            0 => 1,
            1 => 0,
            2 => 3,
            3 => 2,
            other => other,
        }
    }

    /// Small integer encoding (0..=4).
    pub fn index(self) -> u8 {
        self as u8
    }
}

/// A routable colour id, checked to be below [`NUM_COLORS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Color(u8);

impl Color {
    /// Returns `None` unless `id < NUM_COLORS`.
    pub fn new(id: u32) -> Option<Color> {
        u8::try_from(id).ok().filter(|&c| c < NUM_COLORS).map(Color)
    }

    /// The colour number.
    pub fn id(self) -> u8 {
        self.0
    }
}

/// A PE coordinate: `x` is the column (grows east), `y` the row (grows south).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PeCoord {
    /// Column.
    pub x: u32,
    /// Row.
    pub y: u32,
}

impl fmt::Display for PeCoord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PE({},{})", self.x, self.y)
    }
}
