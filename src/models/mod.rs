//! One file per model.

pub(crate) mod loggp;
pub(crate) mod logp;
pub(crate) mod mlines;
pub(crate) mod pram;
pub(crate) mod protocol;
