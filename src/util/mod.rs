//! Crate-private helpers shared by several modules.

pub(crate) mod bits;
#[cfg(feature = "calibrate")]
pub(crate) mod rng;
#[cfg(feature = "calibrate")]
pub(crate) mod stats;
