//! Host programs of the tutorials and the flagship, as library functions so that the test
//! suite can run them, plus small shared helpers. Each tutorial's `run.rs` binary is a thin
//! command-line wrapper around its function here.

pub mod gemv01;
#[path = "md/mod.rs"]
pub mod md;
#[path = "md-tungsten/mod.rs"]
pub mod md_tungsten;

use std::path::Path;

/// Reads the compile metadata (`out.json`) next to an image, if there is one.
pub fn read_metadata(out: &Path) -> Option<serde_json::Value> {
    let dir = if out.is_dir() {
        out.to_path_buf()
    } else {
        out.parent()?.to_path_buf()
    };
    let text = std::fs::read_to_string(dir.join("out.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// A top-level param from the metadata, parsed as an integer.
pub fn param_i64(meta: Option<&serde_json::Value>, name: &str) -> Option<i64> {
    meta?.get("params")?.get(name)?.as_str()?.parse().ok()
}

/// A small deterministic pseudo-random sequence in [-1, 1) (host-side test data).
pub fn lcg_f32(seed: u32, n: usize) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect()
}

/// A small deterministic generator (SplitMix64), seeded with its state: the flagship's
/// input generator and the differential tests draw from it.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform deviate in [0, 1) (the top 53 bits).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
