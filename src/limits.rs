//! The value ranges every parameter set is checked against, so that every accepted model gives
//! a finite, non-negative prediction for every valid [`Message`](crate::Message).
//!
//! A message holds at most `u64::MAX ≈ 1.8e19` bytes. With every time parameter at most
//! [`MAX_SECONDS`], every per-byte time at most [`MAX_SECONDS`] and every bandwidth at least
//! [`MIN_BANDWIDTH`], one hop of any model costs at most about `1e9 · 1.8e19 ≈ 2e28` s, and a
//! table (values at most [`MAX_TABLE_VALUE`] in magnitude, axis points at most [`MAX_AXIS`] in
//! magnitude and at least [`MIN_AXIS_STEP`] apart) extrapolates to at most about `1e57`: sums
//! over hops, protocol ranges and the rounds of a collective on `2^64` processes stay far below
//! `f64::MAX ≈ 1.8e308`.
//!
//! Subnormal numbers (nonzero and below `f64::MIN_POSITIVE ≈ 2.2e-308`) are rejected wherever a
//! real parameter is read: they are never a measurement, and a division by one overflows.
//!
//! # Examples
//!
//! ```
//! use commcost::{LogGP, limits};
//!
//! assert!(LogGP::new(5e-6, 1e-6, 2e-6, 1e-9, 2).is_ok());
//! // a per-byte gap above the limit, a subnormal latency: rejected
//! assert!(LogGP::new(5e-6, 1e-6, 2e-6, limits::MAX_SECONDS * 2.0, 2).is_err());
//! assert!(LogGP::new(1e-320, 1e-6, 2e-6, 1e-9, 2).is_err());
//! ```

/// Largest accepted time parameter, seconds (and seconds per byte, word or line): `1e9` s,
/// about 32 years.
pub const MAX_SECONDS: f64 = 1e9;

/// Smallest accepted bandwidth, bytes per second (`1e-3`: a byte every 17 minutes).
pub const MIN_BANDWIDTH: f64 = 1e-3;

/// Largest accepted bandwidth, bytes per second (`1e30`).
pub const MAX_BANDWIDTH: f64 = 1e30;

/// Largest accepted magnitude of a table value (`1e30`: seconds, seconds per byte or bytes per
/// second).
pub const MAX_TABLE_VALUE: f64 = 1e30;

/// Largest accepted magnitude of a table axis point, bytes (`1e21`, above `u64::MAX`).
pub const MAX_AXIS: f64 = 1e21;

/// Smallest accepted distance between consecutive axis points, bytes (`1e-6`).
pub const MIN_AXIS_STEP: f64 = 1e-6;

/// True for 0 and for normal numbers (not NaN, not infinite, not subnormal).
#[inline]
pub(crate) fn zero_or_normal(value: f64) -> bool {
    value == 0.0 || value.is_normal()
}
