//! Calibration: turning measurements into parameters.
//!
//! Data flows one way through the crate: measurements → `calibrate` → parameter structs →
//! [`CommModel`](crate::CommModel) → predictions → collectives. This module holds the fitting
//! machinery; models never call it.
//!
//! * [`least_squares`] — linear least squares with column normalisation and the fit statistics
//!   every later fit reports ([`FitStatistics`]).
//! * [`fit_regression`] — the Mlines paper's regression variants S1-S3 / M1-M3
//!   ([`RegressionVariant`]) with held-out statistics.

mod least_squares;
mod mlines_regression;

pub use least_squares::{FitStatistics, LinearFit, least_squares};
pub use mlines_regression::{
    Feature, FeatureSet, MlinesFit, MlinesSample, Order, RegressionVariant, Term, fit_regression,
};
