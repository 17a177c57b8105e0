//! [`SimParams`]: every modelling parameter the hardware documentation leaves open, in one
//! place (SIMULATOR.md explains each choice).

use crate::ring::MAX_RING;
use csl_arch::fabric::Arch;

/// Tunable parameters of the fabric model. `SimParams::default()` is what the `cslsim`
/// binary and [`crate::SdkRuntime`] use unless told otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimParams {
    /// Wavelets each router input buffer holds per (input port, colour), counting the
    /// wavelets in flight on the link towards it (credit-based flow control). At most
    /// 8; values outside `1..=8` are clamped. Default 4: enough for one
    /// wavelet per cycle per link at a 2-cycle hop latency.
    pub router_buffer_depth: u32,
    /// Cycles a wavelet takes from one router to the next; `None` = the architecture's
    /// [`Arch::hop_latency`] (WSE-2 1, WSE-3 2).
    pub hop_latency: Option<u32>,
    /// Cycles a wavelet takes across the RAMP in either direction (router to CE input
    /// queue, CE output queue to router). Default 1.
    pub ramp_latency: u32,
    /// WSE-2: depth of the CE input buffer of a colour not bound to an input queue with
    /// `@initialize_queue` (a bound colour uses its queue's depth). Default 4.
    pub wse2_color_input_depth: u32,
    /// Cycles a DSD operation spends after issue before its first element (on the issuing
    /// thread for synchronous ops, on the microthread for asynchronous ones). Default 3.
    pub dsd_setup_cycles: u32,
    /// Wavelets of a streaming `memcpy_h2d`, per PE, that the memcpy path between the host
    /// and the PE's CE input buffer holds (the support PEs and router buffers, not
    /// simulated): a stream completes once every wavelet has left the host, i.e. when
    /// at most this many still wait in front of a full CE input buffer. Default 4,
    /// calibrated on the vendor's pipeline-01 figure (SIMULATOR.md §8): with a WSE-2 PE
    /// that moves its input (queue depth 4) to an output nobody drains (output queue
    /// depth 6), a 14-wavelet stream completes and a 15-wavelet one stalls.
    pub h2d_path_depth: u32,
    /// Cycles of a taken branch or jump. Default 1 (every instruction one cycle);
    /// [`SimParams::measured`] uses 6, the figure measured on WSE-3.
    pub branch_taken_cycles: u32,
    /// Cycles of a conditional branch that falls through. Default 1; measured on WSE-3: 3.
    pub branch_not_taken_cycles: u32,
    /// Cycles per element of the f32 multiply-add DSD operation (`@fmacs`). Default 1;
    /// measured on WSE-3: 2 (half an element per cycle, on silicon and in the vendor's
    /// simulator).
    pub fmacs_cycles_per_element: u32,
    /// Most bytes the simulator may allocate for an image (an estimate made before
    /// loading: see [`crate::Simulator::memory_estimate`]); `None` = the memory the
    /// operating system reports available (no limit where it reports nothing).
    pub memory_limit_bytes: Option<u64>,
}

/// Most cycles [`SimParams::hop_latency`], [`SimParams::ramp_latency`] and
/// [`SimParams::dsd_setup_cycles`] may be: far beyond any hardware figure, small enough
/// that schedules never overflow.
pub const MAX_LATENCY_CYCLES: u32 = 1 << 16;

impl Default for SimParams {
    fn default() -> Self {
        SimParams {
            router_buffer_depth: 4,
            hop_latency: None,
            ramp_latency: 1,
            wse2_color_input_depth: 4,
            dsd_setup_cycles: 3,
            h2d_path_depth: 4,
            branch_taken_cycles: 1,
            branch_not_taken_cycles: 1,
            fmacs_cycles_per_element: 1,
            memory_limit_bytes: None,
        }
    }
}

/// The timing presets `cslsim --timing` and [`TIMING_ENV`] name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Timing {
    /// One cycle per instruction and per DSD element, 3 cycles of DSD setup (the default;
    /// every figure in the README was measured with it).
    #[default]
    Simple,
    /// The costs measured on WSE-3 silicon and the vendor's simulator
    /// ([`SimParams::measured`]; SIMULATOR.md §2 lists their sources).
    Measured,
}

impl Timing {
    /// Parses `simple` or `measured`.
    pub fn parse(s: &str) -> Result<Timing, String> {
        match s.trim() {
            "simple" => Ok(Timing::Simple),
            "measured" => Ok(Timing::Measured),
            other => Err(format!(
                "unknown timing model `{other}`; expected `simple` or `measured`"
            )),
        }
    }

    /// The parameters of this preset.
    pub fn params(self) -> SimParams {
        match self {
            Timing::Simple => SimParams::default(),
            Timing::Measured => SimParams::measured(),
        }
    }
}

/// The environment variable that selects the timing preset of [`crate::SdkRuntime`]
/// (`CSLSIM_TIMING=measured`; the Python package's runtime reads it too).
pub const TIMING_ENV: &str = "CSLSIM_TIMING";

impl SimParams {
    /// The default parameters with the costs measured on WSE-3 (shared spec
    /// simulator-model.md §1.2, §1.3): a taken branch 6 cycles, a branch that falls
    /// through 3, 15 cycles of DSD setup (13–17 measured), `@fmacs` 2 cycles per element.
    /// Hop latencies stay the architecture's (WSE-3: 2 cycles, measured).
    pub fn measured() -> SimParams {
        SimParams {
            branch_taken_cycles: 6,
            branch_not_taken_cycles: 3,
            dsd_setup_cycles: 15,
            fmacs_cycles_per_element: 2,
            ..SimParams::default()
        }
    }

    /// The hop latency used for `arch` (at least 1).
    pub fn hop(&self, arch: Arch) -> u64 {
        u64::from(
            self.hop_latency
                .unwrap_or_else(|| arch.hop_latency())
                .max(1),
        )
    }

    /// Checks every parameter against its documented range, naming the first one
    /// outside it (`cslsim` flag spelling in parentheses).
    pub fn check(&self) -> Result<(), String> {
        let ring = MAX_RING as u32;
        let lat = MAX_LATENCY_CYCLES;
        let checks: [(&str, u32, u32, u32); 9] = [
            (
                "router_buffer_depth (--buffer-depth)",
                self.router_buffer_depth,
                1,
                ring,
            ),
            (
                "hop_latency (--hop-latency)",
                self.hop_latency.unwrap_or(1),
                1,
                lat,
            ),
            ("ramp_latency", self.ramp_latency, 1, lat),
            (
                "wse2_color_input_depth",
                self.wse2_color_input_depth,
                1,
                ring,
            ),
            (
                "dsd_setup_cycles (--dsd-setup-cycles)",
                self.dsd_setup_cycles,
                0,
                lat,
            ),
            ("h2d_path_depth", self.h2d_path_depth, 0, 1 << 20),
            ("branch_taken_cycles", self.branch_taken_cycles, 1, lat),
            (
                "branch_not_taken_cycles",
                self.branch_not_taken_cycles,
                1,
                lat,
            ),
            (
                "fmacs_cycles_per_element",
                self.fmacs_cycles_per_element,
                1,
                lat,
            ),
        ];
        for (name, v, lo, hi) in checks {
            if !(lo..=hi).contains(&v) {
                return Err(format!("{name} is {v}; it must be between {lo} and {hi}"));
            }
        }
        Ok(())
    }

    /// The router buffer depth, clamped to `1..=MAX_RING`.
    pub fn buffer_depth(&self) -> usize {
        (self.router_buffer_depth as usize).clamp(1, MAX_RING)
    }
}
