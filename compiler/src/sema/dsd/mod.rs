//! DSDs at comptime, one module per job:
//!
//! * [`desc`]: [`DsdVal`], the descriptor value, and its encoding;
//! * [`get_dsd`]: `@get_dsd` and the builtins that derive or build descriptors;
//! * [`settings`]: the configuration argument of DSD builtins;
//! * [`ops`]: DSD operations (`@fadds`, `@mov16`, `@dfilt`, ...);
//! * [`map`] (`@map`): a loop over memory DSDs;
//! * [`dsr`]: data structure registers.

mod desc;
mod dsr;
mod get_dsd;
mod map;
mod ops;
mod settings;

pub use desc::{DsdBase, DsdVal};
pub use ops::TASK_ID_PENDING;
