//! Calibration: turning measurements into parameters.
//!
//! Data flows one way through the crate: measurements → `calibrate` → parameter structs →
//! [`CommModel`](crate::CommModel) → predictions → collectives. This module holds the fitting
//! machinery; models never call it.
//!
//! * [`least_squares`] — linear least squares with column normalisation and the fit statistics
//!   every later fit reports ([`FitStatistics`]).

mod least_squares;

pub use least_squares::{FitStatistics, LinearFit, least_squares};
