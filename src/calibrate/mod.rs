//! Calibration: turning measurements into parameters.
//!
//! Data flows one way through the crate: measurements → `calibrate` → parameter structs →
//! [`CommModel`](crate::CommModel) → predictions → collectives. This module holds the fitting
//! machinery; models never call it.
//!
//! * [`least_squares()`] — linear least squares with column normalisation and the fit statistics
//!   every later fit reports ([`FitStatistics`]).
//! * [`detect_changes`] — protocol-change detection on `(size, value)` series, robust to noise,
//!   outliers and level shifts; [`detect_changes_netgauge`] reproduces Netgauge's rule.
//! * [`assess_loggp`] — LogGP with protocol ranges from PRTT samples (Hoefler et al. 2007);
//!   [`probe::measure_prtt`](crate::probe::measure_prtt) takes those samples through any
//!   [`probe::Prober`](crate::probe::Prober).
//! * [`derive_log3p`] and [`derive_memory_logp`] — the software-parameterised models from
//!   half round trips and copy timings.
//! * [`parse_netgauge`] — Netgauge's LogGP output files, as samples and as its reported model.
//! * [`fit_regression`] — the Mlines paper's regression variants S1-S3 / M1-M3
//!   ([`RegressionVariant`]) with held-out statistics.
//! * [`detect_steps`] — level steps of a one-way time series on the coarse size grids of the
//!   standard benchmarks.
//! * [`parse_osu`] and [`parse_imb`] — the output of the OSU Micro-Benchmarks and the Intel MPI
//!   Benchmarks as [`BenchmarkSeries`]; [`fit_loggp_from_benchmarks`] fits LogGP protocol
//!   ranges to a latency and a bandwidth series, [`fit_plogp_from_benchmarks`] pLogP.
//! * [`fit_call_costs`] — per-call costs of Open MPI's algorithms from forced runs
//!   ([`parse_forced_runs`]), checked on the runs it did not fit.

mod adjustment;
mod benchmark_file;
mod benchmark_plogp;
mod benchmarks;
mod collectives;
mod derive;
mod detect;
mod error;
mod forced_sweep;
mod imb;
mod least_squares;
mod local;
mod mlines_regression;
mod netgauge;
mod osu;
mod prtt;
mod steps;

/// Median and 90th percentile of the relative errors `|predicted - measured| / measured` of
/// `(predicted, measured)` pairs — how `docs/ACCURACY.md` summarises held-out checks. `None`
/// for no pairs, and for a pair whose relative error is undefined or not finite (a measurement
/// that is not finite and > 0, a prediction that is not finite, a ratio that overflows).
///
/// # Examples
///
/// ```
/// use commcost::calibrate::relative_errors;
/// let (median, p90) = relative_errors(&[(1.1, 1.0), (2.0, 2.0), (3.3, 3.0)]).unwrap();
/// assert!((median - 0.1).abs() < 1e-12 && (p90 - 0.1).abs() < 1e-12);
/// assert_eq!(relative_errors(&[(1.0, 0.0)]), None); // relative to a zero measurement
/// ```
pub fn relative_errors(pairs: &[(f64, f64)]) -> Option<(f64, f64)> {
    if pairs.is_empty()
        || pairs
            .iter()
            .any(|&(p, m)| !(p.is_finite() && m.is_finite() && m > 0.0))
    {
        return None;
    }
    let mut e: Vec<f64> = pairs.iter().map(|(p, m)| ((p - m) / m).abs()).collect();
    // a subnormal measurement or an extreme ratio overflows: undefined, not infinite
    if e.iter().any(|x| !x.is_finite()) {
        return None;
    }
    e.sort_by(f64::total_cmp);
    let at = |q: f64| e[((e.len() - 1) as f64 * q).round() as usize];
    Some((at(0.5), at(0.9)))
}

pub use adjustment::{Adjustment, GapSource, Parameter, RangeBoundary, Refit};
pub use benchmark_file::{BenchmarkFormat, read_benchmark_file};
pub use benchmark_plogp::{BenchmarkPLogPFit, fit_plogp_from_benchmarks};
pub use benchmarks::{
    BenchmarkFit, BenchmarkFitConfig, BenchmarkPoint, BenchmarkRange, BenchmarkSeries, SeriesKind,
    fit_loggp_from_benchmarks,
};
pub use collectives::{
    CallCostCheck, CallCostErrors, CallCostFit, CallCostPlan, FORCED_RUN_SECONDS, FittedCallCost,
    ForcedRun, ForcedStat, MAX_FORCED_RUNS, check_call_costs, fit_call_costs, parse_forced_runs,
};
pub use derive::{CopyMeasurements, Log3PMeasurements, derive_log3p, derive_memory_logp};
pub use detect::{
    DetectionConfig, Segment, detect_changes, detect_changes_naive, detect_changes_netgauge,
};
pub use error::{CalibrationError, FitError};
pub use imb::parse_imb;
pub use least_squares::{FitStatistics, LinearFit, least_squares};
pub use local::fit_local_work;
pub use mlines_regression::{
    Feature, FeatureSet, MlinesFit, MlinesSample, Order, RegressionVariant, Term, fit_mlines_model,
    fit_regression,
};
pub use netgauge::{NetgaugeRow, NetgaugeRun, parse_netgauge};
pub use osu::parse_osu;
pub use prtt::{
    AssessmentConfig, LogGPAssessment, PrttSample, RangeFit, SizeDiagnostics, assess_loggp,
};
pub use prtt::{LatencySplit, OneWayAccuracy, ShapedLink, assess_shaped_link, split_end_to_end};
pub use steps::{Step, StepConfig, detect_steps};
