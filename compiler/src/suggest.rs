//! "Did you mean" suggestions for misspelt names: the helpers of [`csl_arch::suggest`],
//! which the simulator's tools use too.

pub use csl_arch::suggest::{closest, did_you_mean};
