//! One file per model.

pub(crate) mod copy_transfer;
pub(crate) mod loggp;
pub(crate) mod loggpo;
pub(crate) mod lognp;
pub(crate) mod logp;
pub(crate) mod memory_logp;
pub(crate) mod mlines;
pub(crate) mod plogp;
pub(crate) mod pram;
pub(crate) mod protocol;
