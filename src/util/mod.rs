//! Crate-private helpers shared by several modules.

pub(crate) mod bits;
pub(crate) mod join;
#[cfg(feature = "calibrate")]
pub(crate) mod rng;
#[cfg(feature = "calibrate")]
pub(crate) mod stats;
