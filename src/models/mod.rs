//! The models, one module per model, with the types that belong to one model only (LogGPO's
//! [`Timeline`](loggpo::Timeline), log_n P's [`Hop`](lognp::Hop), ...) and each model's
//! named-parameter struct.
//!
//! The model types themselves are also at the crate root ([`LogGP`](crate::LogGP), ...); the
//! table of models is in the [crate documentation](crate#models).

pub mod copy_transfer;
#[cfg(feature = "serde")]
mod load;
pub mod log3p;
pub mod loggp;
pub mod loggpo;
pub mod lognp;
pub mod logp;
pub mod memory_logp;
pub mod mlines;
pub mod plogp;
pub mod pram;
pub mod protocol;
pub mod spec;

/// Deserialises an optional field that, when present, is a plain `u64` (no `null`), for
/// `#[serde(default, deserialize_with = "...")]`.
#[cfg(feature = "serde")]
pub(crate) fn present_u64<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u64>, D::Error> {
    <u64 as serde::Deserialize>::deserialize(deserializer).map(Some)
}
