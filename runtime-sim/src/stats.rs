//! The counters of a run ([`RunStats`], one [`PeStats`] per PE) and the JSON document
//! `cslsim --stats` writes from them (`sim_stats.json`), as serde-derived structs.

use crate::error::PeLoc;
use csl_arch::fabric::Direction;
use serde::Serialize;
use std::collections::BTreeMap;

/// Counters of one PE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeStats {
    /// The PE.
    pub pe: PeLoc,
    /// Cycles in which its CE executed an instruction, started a task, or advanced a DSD
    /// operation (on any thread).
    pub busy_cycles: u64,
    /// Cycles in which it had a running task or microthread but could not progress.
    pub stalled_cycles: u64,
    /// The other cycles.
    pub idle_cycles: u64,
    /// Instructions executed.
    pub instructions: u64,
    /// Tasks and host calls started.
    pub tasks_started: u64,
    /// DSD elements processed.
    pub dsd_elements: u64,
    /// Wavelets its router forwarded per output port, in [`Direction::ALL`] order (the last,
    /// RAMP, counts wavelets delivered to its own CE).
    pub wavelets_sent: [u64; 5],
    /// Most wavelets ever held by one of its CE input queues.
    pub input_high_water: u32,
}

/// Counters of a whole run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Simulated cycles so far.
    pub cycles: u64,
    /// Instructions executed by all PEs.
    pub instructions: u64,
    /// Wavelet moves across router outputs (link hops and deliveries to a CE).
    pub wavelet_hops: u64,
    /// Per PE, row-major over the program rectangle.
    pub pes: Vec<PeStats>,
}

impl RunStats {
    /// Busy cycles summed over PEs.
    pub fn busy_pe_cycles(&self) -> u64 {
        self.pes.iter().map(|p| p.busy_cycles).sum()
    }

    /// The statistics as the JSON document `cslsim --stats` writes (`sim_stats.json`).
    pub fn to_json(&self) -> serde_json::Value {
        let cycles = self.cycles.max(1) as f64;
        let doc = StatsDoc {
            cycles: self.cycles,
            instructions: self.instructions,
            busy_pe_cycles: self.busy_pe_cycles(),
            wavelet_hops: self.wavelet_hops,
            pes: self.pes.iter().map(|p| PeDoc::new(p, cycles)).collect(),
        };
        // Plain integers, floats and strings: serialising them cannot fail.
        serde_json::to_value(doc).unwrap_or_default()
    }
}

/// `sim_stats.json`: the whole run.
#[derive(Serialize)]
struct StatsDoc {
    cycles: u64,
    instructions: u64,
    busy_pe_cycles: u64,
    wavelet_hops: u64,
    pes: Vec<PeDoc>,
}

/// `sim_stats.json`: one PE.
#[derive(Serialize)]
struct PeDoc {
    x: u32,
    y: u32,
    fabric_x: u32,
    fabric_y: u32,
    busy_cycles: u64,
    stalled_cycles: u64,
    idle_cycles: u64,
    instructions: u64,
    tasks_started: u64,
    dsd_elements: u64,
    input_queue_high_water: u32,
    /// By lower-case port name (`east`, ..., `ramp`).
    links_out: BTreeMap<String, LinkDoc>,
}

/// `sim_stats.json`: one output port of a PE's router.
#[derive(Serialize)]
struct LinkDoc {
    wavelets: u64,
    /// Wavelets per cycle of the run.
    occupancy: f64,
}

impl PeDoc {
    fn new(p: &PeStats, cycles: f64) -> PeDoc {
        PeDoc {
            x: p.pe.rel.x,
            y: p.pe.rel.y,
            fabric_x: p.pe.abs.x,
            fabric_y: p.pe.abs.y,
            busy_cycles: p.busy_cycles,
            stalled_cycles: p.stalled_cycles,
            idle_cycles: p.idle_cycles,
            instructions: p.instructions,
            tasks_started: p.tasks_started,
            dsd_elements: p.dsd_elements,
            input_queue_high_water: p.input_high_water,
            links_out: Direction::ALL
                .iter()
                .zip(p.wavelets_sent)
                .map(|(d, n)| {
                    let occupancy = n as f64 / cycles;
                    (
                        d.name().to_lowercase(),
                        LinkDoc {
                            wavelets: n,
                            occupancy,
                        },
                    )
                })
                .collect(),
        }
    }
}
