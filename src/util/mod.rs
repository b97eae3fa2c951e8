//! Crate-private helpers shared by several modules.

pub(crate) mod bits;
