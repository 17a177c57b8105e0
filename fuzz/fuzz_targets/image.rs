//! Fuzz target: any bytes loaded as a fabric image (the ELF reader, every section's
//! decoder, `Image::validate`), and an image that loads is simulated for a few thousand
//! cycles. Loading must return a typed error and simulation a `SimError`, never panic,
//! and no image may make the loader allocate more than its size justifies.

#![no_main]

use csl_arch::image::Image;
use libfuzzer_sys::fuzz_target;

/// Images whose simulator would need more than this are skipped after the estimate (the
/// estimate itself is what is under test there).
const MAX_SIM_BYTES: u64 = 256 << 20;

fuzz_target!(|data: &[u8]| {
    let Ok(image) = Image::from_elf(data) else {
        return;
    };
    if image.validate().is_err() {
        return;
    }
    // Round trip: what loads must write and load again to the same image.
    if let Ok(bytes) = image.to_elf() {
        let again =
            Image::from_elf(&bytes).expect("an image that loaded and wrote must load again");
        assert_eq!(
            again.to_elf().ok(),
            Some(bytes),
            "image round trip changed the bytes"
        );
    }
    if cslsim::sim::Simulator::memory_estimate(&image) > MAX_SIM_BYTES {
        return;
    }
    if let Ok(mut sim) = cslsim::sim::Simulator::new(&image) {
        let _ = sim.run_until_idle(5_000);
    }
});
