//! The router and switch tables: the 16-bit words in which a host program writes a
//! tile's colour configuration by name (`miset symbol=router` / `symbol=switch`, the
//! experimental SDK's "magic symbols" of seed 002), and reads it back (`miget`). One
//! definition of the encoding, used by the tools (`cslsim::tools::tables`) and by host
//! generators such as `mdlj-tables` (`examples/md-tungsten`).
//!
//! Seed 002 gives the tables' shapes — `router` is `uint16[rows][cols][24]` (order
//! `y x r`: one word per colour `r`), `switch` is `uint16[rows][cols][24][4]` (order
//! `y x r n`: four words per colour) — and one bit: the router word's teardown bit is
//! `1 << 15`. The vendor's other bits are not public; the rest of the layout is **ours**.
//!
//! # Router word (per tile, per colour)
//!
//! | bits | meaning |
//! | --- | --- |
//! | 0–4 | `rx`: the ports position 0 accepts, bit `d` = [`Direction`] with index `d` (N, S, E, W, RAMP) |
//! | 5–9 | `tx`: the ports position 0 sends to, same bit order |
//! | 10 | colour swap for arrivals from east/west (`color_swap_x`) |
//! | 11 | colour swap for arrivals from north/south (`color_swap_y`) |
//! | 12 | message passing (WSE-3; `rx`/`tx` must be empty) |
//! | 13–14 | reserved, 0 |
//! | 15 | start in teardown |
//!
//! A zero word is an unconfigured colour.
//!
//! # Switch words (per tile, per colour, `n` = 0..=3)
//!
//! * `n = 0`, the status word: bits 0–1 the position at reset, bit 2 ring mode, bits 3–4
//!   the pop mode (0 `no_pop`, 1 `always_pop`, 2 `pop_on_advance`, 3
//!   `pop_on_advance_nop`), bit 15 "this colour has a switch"; bits 5–14 reserved, 0.
//!   Without bit 15 all four words are 0.
//! * `n = 1..=3`, position `n`: bits 0–4 the input port that replaces position 0's (at
//!   most one bit; none: inherited), bits 5–9 the output ports, bit 10 "the outputs
//!   replace position 0's" (clear: inherited, and bits 5–9 are 0); bits 11–15 reserved, 0.
//!   A zero word is an invalid (absent) position. The position at reset must be 0 or a
//!   valid position.
//!
//! Filters are not part of the tables: writing a table keeps a colour's filter.

use crate::fabric::{Arch, Direction, NUM_COLORS};
use crate::image::{ColorConfig, PopMode, SwitchConfig, SwitchPos};
use std::fmt;

/// Words per tile in the router table (one per colour).
pub const ROUTER_WORDS_PER_TILE: usize = NUM_COLORS as usize;
/// Words per colour in the switch table.
pub const SWITCH_WORDS_PER_COLOR: usize = 4;
/// Words per tile in the switch table.
pub const SWITCH_WORDS_PER_TILE: usize = ROUTER_WORDS_PER_TILE * SWITCH_WORDS_PER_COLOR;

/// Router word: first bit of the `rx` mask.
pub const ROUTER_RX_SHIFT: u32 = 0;
/// Router word: first bit of the `tx` mask.
pub const ROUTER_TX_SHIFT: u32 = 5;
/// Router word: colour swap on the east/west axis.
pub const ROUTER_SWAP_X: u16 = 1 << 10;
/// Router word: colour swap on the north/south axis.
pub const ROUTER_SWAP_Y: u16 = 1 << 11;
/// Router word: message passing.
pub const ROUTER_MESSAGE_PASSING: u16 = 1 << 12;
/// Router word: start in teardown (seed 002: "emitted with the teardown bit (1<<15) set").
pub const ROUTER_TEARDOWN: u16 = 1 << 15;
/// Router word: the bits that must be 0.
pub const ROUTER_RESERVED: u16 = 0b11 << 13;

/// Switch status word: mask of the position at reset.
pub const SWITCH_START_MASK: u16 = 0b11;
/// Switch status word: ring mode.
pub const SWITCH_RING: u16 = 1 << 2;
/// Switch status word: first bit of the pop mode.
pub const SWITCH_POP_SHIFT: u32 = 3;
/// Switch status word: the colour has a switch.
pub const SWITCH_PRESENT: u16 = 1 << 15;
/// Switch status word: the bits that must be 0.
pub const SWITCH_STATUS_RESERVED: u16 = 0x7fe0;

/// Switch position word: the outputs replace position 0's.
pub const POSITION_TX_GIVEN: u16 = 1 << 10;
/// Switch position word: the bits that must be 0.
pub const POSITION_RESERVED: u16 = 0xf800;

const PORT_MASK: u16 = 0x1f;

/// The five-bit mask of a set of ports (bit `d.index()`).
pub fn port_mask(ports: &[Direction]) -> u16 {
    ports.iter().fold(0, |m, d| m | 1 << d.index())
}

/// The ports of a five-bit mask, in [`Direction::ALL`] order.
pub fn mask_ports(mask: u16) -> Vec<Direction> {
    Direction::ALL
        .into_iter()
        .filter(|d| mask & 1 << d.index() != 0)
        .collect()
}

/// The pop mode's two-bit code in the status word.
pub fn pop_code(p: PopMode) -> u16 {
    match p {
        PopMode::NoPop => 0,
        PopMode::AlwaysPop => 1,
        PopMode::PopOnAdvance => 2,
        PopMode::PopOnAdvanceNop => 3,
    }
}

fn pop_mode(code: u16) -> PopMode {
    match code & 3 {
        0 => PopMode::NoPop,
        1 => PopMode::AlwaysPop,
        2 => PopMode::PopOnAdvance,
        _ => PopMode::PopOnAdvanceNop,
    }
}

/// Why a table word is not valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableError(pub String);

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TableError {}

/// What a router word says about one colour (everything of a [`ColorConfig`] but its
/// switch positions and filter).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouterEntry {
    /// Input ports of position 0.
    pub rx: Vec<Direction>,
    /// Output ports of position 0.
    pub tx: Vec<Direction>,
    /// Colour swap on the east/west axis.
    pub color_swap_x: bool,
    /// Colour swap on the north/south axis.
    pub color_swap_y: bool,
    /// Message passing.
    pub message_passing: bool,
    /// Start in teardown.
    pub teardown: bool,
}

impl RouterEntry {
    /// The entry of a colour configuration (ports in [`Direction::ALL`] order).
    pub fn of(cfg: &ColorConfig) -> RouterEntry {
        RouterEntry {
            rx: mask_ports(port_mask(&cfg.rx)),
            tx: mask_ports(port_mask(&cfg.tx)),
            color_swap_x: cfg.color_swap_x,
            color_swap_y: cfg.color_swap_y,
            message_passing: cfg.message_passing,
            teardown: cfg.teardown,
        }
    }

    /// Whether the entry configures nothing (word 0).
    pub fn is_empty(&self) -> bool {
        *self == RouterEntry::default()
    }

    /// The router word.
    pub fn encode(&self) -> u16 {
        let flag = |b: bool, bit: u16| if b { bit } else { 0 };
        port_mask(&self.rx) << ROUTER_RX_SHIFT
            | port_mask(&self.tx) << ROUTER_TX_SHIFT
            | flag(self.color_swap_x, ROUTER_SWAP_X)
            | flag(self.color_swap_y, ROUTER_SWAP_Y)
            | flag(self.message_passing, ROUTER_MESSAGE_PASSING)
            | flag(self.teardown, ROUTER_TEARDOWN)
    }

    /// Decodes the router word of colour `color` on `arch`.
    pub fn decode(word: u16, color: u8, arch: Arch) -> Result<RouterEntry, TableError> {
        if word & ROUTER_RESERVED != 0 {
            return Err(TableError(format!(
                "router word 0x{word:04x} of colour {color} sets reserved bits 13-14"
            )));
        }
        let e = RouterEntry {
            rx: mask_ports(word >> ROUTER_RX_SHIFT & PORT_MASK),
            tx: mask_ports(word >> ROUTER_TX_SHIFT & PORT_MASK),
            color_swap_x: word & ROUTER_SWAP_X != 0,
            color_swap_y: word & ROUTER_SWAP_Y != 0,
            message_passing: word & ROUTER_MESSAGE_PASSING != 0,
            teardown: word & ROUTER_TEARDOWN != 0,
        };
        if e.message_passing {
            if !arch.has_message_passing() {
                return Err(TableError(format!(
                    "router word 0x{word:04x} of colour {color} sets message passing (bit 12), \
                     which {arch} does not have"
                )));
            }
            if !(e.rx.is_empty() && e.tx.is_empty()) {
                return Err(TableError(format!(
                    "router word 0x{word:04x} of colour {color} sets message passing (bit 12) \
                     and routes (bits 0-9); a message-passing colour routes by header"
                )));
            }
        }
        Ok(e)
    }

    /// Writes the entry into a configuration (keeping its switch and filter).
    pub fn apply(&self, cfg: &mut ColorConfig) {
        cfg.rx = self.rx.clone();
        cfg.tx = self.tx.clone();
        cfg.color_swap_x = self.color_swap_x;
        cfg.color_swap_y = self.color_swap_y;
        cfg.message_passing = self.message_passing;
        cfg.teardown = self.teardown;
    }
}

/// The four switch words of a colour (all 0 without a switch).
pub fn encode_switch(sw: Option<&SwitchConfig>) -> [u16; SWITCH_WORDS_PER_COLOR] {
    let Some(sw) = sw else {
        return [0; SWITCH_WORDS_PER_COLOR];
    };
    let mut out = [0; SWITCH_WORDS_PER_COLOR];
    out[0] = SWITCH_PRESENT
        | u16::from(sw.current) & SWITCH_START_MASK
        | if sw.ring_mode { SWITCH_RING } else { 0 }
        | pop_code(sw.pop_mode) << SWITCH_POP_SHIFT;
    for (slot, p) in out.iter_mut().skip(1).zip(&sw.positions) {
        *slot = encode_position(p);
    }
    out
}

/// The word of one switch position (0: invalid).
pub fn encode_position(p: &SwitchPos) -> u16 {
    let rx = p.rx.map_or(0, |d| 1 << d.index());
    let tx =
        p.tx.as_ref()
            .map_or(0, |t| POSITION_TX_GIVEN | port_mask(t) << ROUTER_TX_SHIFT);
    rx | tx
}

fn decode_position(word: u16, color: u8, n: usize) -> Result<SwitchPos, TableError> {
    let bad = |why: &str| {
        Err(TableError(format!(
            "switch word {n} (position {n}) 0x{word:04x} of colour {color} {why}"
        )))
    };
    if word & POSITION_RESERVED != 0 {
        return bad("sets reserved bits 11-15");
    }
    let rx = mask_ports(word & PORT_MASK);
    if rx.len() > 1 {
        return bad("names more than one input port (bits 0-4): a position receives from one");
    }
    let tx_mask = word >> ROUTER_TX_SHIFT & PORT_MASK;
    if word & POSITION_TX_GIVEN == 0 && tx_mask != 0 {
        return bad(
            "names output ports (bits 5-9) without bit 10 (the outputs replace position 0's)",
        );
    }
    Ok(SwitchPos {
        rx: rx.first().copied(),
        tx: (word & POSITION_TX_GIVEN != 0).then(|| mask_ports(tx_mask)),
    })
}

/// Decodes the four switch words of colour `color` on `arch` (`None`: no switch).
pub fn decode_switch(
    words: [u16; SWITCH_WORDS_PER_COLOR],
    color: u8,
    arch: Arch,
) -> Result<Option<SwitchConfig>, TableError> {
    let status = words[0];
    if status & SWITCH_PRESENT == 0 {
        if let Some(n) = words.iter().position(|&w| w != 0) {
            return Err(TableError(format!(
                "switch word {n} of colour {color} is 0x{:04x}, but word 0 (the status) does \
                 not set bit 15 (the colour has a switch), so all four must be 0",
                words[n]
            )));
        }
        return Ok(None);
    }
    if !arch.color_has_switch(color) {
        return Err(TableError(format!(
            "colour {color} has no switch on {arch} (switch status word 0x{status:04x})"
        )));
    }
    if status & SWITCH_STATUS_RESERVED != 0 {
        return Err(TableError(format!(
            "switch status word 0x{status:04x} of colour {color} sets reserved bits 5-14"
        )));
    }
    let mut positions: [SwitchPos; 3] = Default::default();
    for (n, p) in positions.iter_mut().enumerate() {
        *p = decode_position(words[n + 1], color, n + 1)?;
    }
    let current = (status & SWITCH_START_MASK) as u8;
    if current > 0 && !positions[usize::from(current) - 1].is_valid() {
        return Err(TableError(format!(
            "switch status word 0x{status:04x} of colour {color} starts in position {current}, \
             which is invalid (switch word {current} is 0)"
        )));
    }
    Ok(Some(SwitchConfig {
        positions,
        current,
        ring_mode: status & SWITCH_RING != 0,
        pop_mode: pop_mode(status >> SWITCH_POP_SHIFT),
    }))
}

/// Whether a configuration carries nothing once its table parts are cleared (no filter):
/// the tile can drop it.
pub fn config_is_empty(cfg: &ColorConfig) -> bool {
    RouterEntry::of(cfg).is_empty() && cfg.switches.is_none() && cfg.filter.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    #[test]
    fn router_words_by_hand() {
        // rx WEST (bit 3), tx EAST + RAMP (bits 2, 4 of the tx field: 5+2, 5+4), teardown.
        let e = RouterEntry {
            rx: vec![West],
            tx: vec![East, Ramp],
            teardown: true,
            ..RouterEntry::default()
        };
        assert_eq!(e.encode(), 0b1000_0010_1000_1000);
        assert_eq!(RouterEntry::decode(0x8288, 0, Arch::Wse3), Ok(e));
        let swap = RouterEntry {
            rx: vec![North, South],
            color_swap_y: true,
            ..RouterEntry::default()
        };
        assert_eq!(swap.encode(), 0x0803);
        assert_eq!(
            RouterEntry::decode(0, 5, Arch::Wse2),
            Ok(RouterEntry::default())
        );
    }

    #[test]
    fn bad_router_words_are_errors() {
        assert!(RouterEntry::decode(1 << 13, 0, Arch::Wse3).is_err());
        assert!(RouterEntry::decode(ROUTER_MESSAGE_PASSING, 0, Arch::Wse2).is_err());
        assert!(RouterEntry::decode(ROUTER_MESSAGE_PASSING | 1, 0, Arch::Wse3).is_err());
        assert!(RouterEntry::decode(ROUTER_MESSAGE_PASSING, 0, Arch::Wse3).is_ok());
    }

    #[test]
    fn switch_words_by_hand_and_back() {
        let sw = SwitchConfig {
            positions: [
                SwitchPos {
                    rx: Some(West),
                    tx: Some(vec![East]),
                },
                SwitchPos {
                    rx: None,
                    tx: Some(vec![Ramp]),
                },
                SwitchPos::default(),
            ],
            current: 2,
            ring_mode: true,
            pop_mode: PopMode::PopOnAdvance,
        };
        // status: present, ring, pop 2 at bits 3-4, start 2.
        let words = [
            0x8000 | 0b100 | 2 << 3 | 2,
            0x0408 | 1 << 7,
            0x0400 | 1 << 9,
            0,
        ];
        assert_eq!(encode_switch(Some(&sw)), words);
        assert_eq!(decode_switch(words, 3, Arch::Wse3), Ok(Some(sw)));
        assert_eq!(encode_switch(None), [0; 4]);
        assert_eq!(decode_switch([0; 4], 23, Arch::Wse3), Ok(None));
    }

    #[test]
    fn bad_switch_words_are_errors() {
        let e = |w: [u16; 4], c: u8| decode_switch(w, c, Arch::Wse3).unwrap_err().0;
        assert!(e([0, 1, 0, 0], 0).contains("status"));
        assert!(e([0x8000, 0, 0, 0], 10).contains("no switch"));
        assert!(e([0x8001, 0, 0, 0], 0).contains("invalid"));
        assert!(e([0x8000 | 1 << 5, 0, 0, 0], 0).contains("reserved"));
        assert!(e([0x8000, 0b11, 0, 0], 0).contains("more than one input"));
        assert!(e([0x8000, 1 << 5, 0, 0], 0).contains("bit 10"));
        assert!(e([0x8000, 1 << 11, 0, 0], 0).contains("reserved"));
        // WSE-2 has switches on every colour.
        assert!(decode_switch([0x8000, 0, 0, 0], 10, Arch::Wse2).is_ok());
    }
}
