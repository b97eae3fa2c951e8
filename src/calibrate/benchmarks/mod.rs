//! Measurement series read from the output of standard MPI benchmarks (OSU Micro-Benchmarks,
//! Intel MPI Benchmarks), and a LogGP fit from them.

mod fit;
mod slope_cuts;

pub use fit::fit_loggp_from_benchmarks;
pub(crate) use fit::sorted_latency;

use super::steps::{Step, StepConfig};
use super::{Adjustment, Parameter, RangeBoundary};
use crate::calibrate::CalibrationError;
use crate::error::ParameterError;
use crate::{LogGP, Protocols};

/// What a [`BenchmarkSeries`] measures.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum SeriesKind {
    /// One-way point-to-point time: half the round trip of a ping-pong (`osu_latency`, IMB
    /// `PingPong`'s `t[usec]`). Values in seconds.
    Latency,
    /// Both ranks send at once and each waits for the other's message (IMB `PingPing`).
    /// Values in seconds.
    ExchangeLatency,
    /// Unidirectional streaming bandwidth: a window of back-to-back messages (`osu_bw`).
    /// Values in bytes per second.
    Bandwidth,
    /// Bidirectional streaming bandwidth (`osu_bibw`), both directions summed. Values in bytes
    /// per second.
    BidirectionalBandwidth,
    /// A collective's time per call, lower-case name as the benchmark prints it
    /// (`"allreduce"`, `"broadcast"`, `"bcast"`, `"alltoall"`...). Values in seconds.
    Collective(String),
    /// Any other table (name as printed). Values as the table's main column, converted to
    /// seconds for `[usec]` / `(us)` columns and bytes per second for `MB/s` columns.
    Other(String),
}

impl SeriesKind {
    /// Whether the values are bandwidths (bytes per second) rather than times (seconds).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::calibrate::SeriesKind;
    /// assert!(SeriesKind::Bandwidth.is_bandwidth());
    /// assert!(!SeriesKind::Latency.is_bandwidth());
    /// ```
    #[must_use]
    pub fn is_bandwidth(&self) -> bool {
        matches!(self, Self::Bandwidth | Self::BidirectionalBandwidth)
    }
}

/// One row of a benchmark table.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BenchmarkPoint {
    /// Message size in bytes (0 for tables without a size column, e.g. a barrier).
    pub bytes: u64,
    /// The main value: seconds (average time) or bytes per second (bandwidth), see
    /// [`SeriesKind`].
    pub value: f64,
    /// Minimum over the ranks or repetitions, same unit, when the table has one (OSU `-f`, IMB
    /// `t_min`).
    pub min: Option<f64>,
    /// Maximum, same unit, when the table has one (OSU `-f`, IMB `t_max`).
    pub max: Option<f64>,
    /// Repetitions behind the row, when printed (OSU `-f` `Iterations`, IMB `#repetitions`).
    pub repetitions: Option<u64>,
}

/// A table of one benchmark run, in SI units (seconds, bytes, bytes per second).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BenchmarkSeries {
    /// The benchmark's own title and version, e.g. `"OSU MPI Latency Test v5.3"` or
    /// `"IMB PingPong"`.
    pub title: String,
    /// What the values are.
    pub kind: SeriesKind,
    /// Number of processes, when the output states it (IMB `#processes`).
    pub processes: Option<u64>,
    /// The rows in file order.
    pub points: Vec<BenchmarkPoint>,
}

impl BenchmarkSeries {
    /// `(bytes, seconds per message)` for every point: times as they are, bandwidths turned
    /// into the interval between messages, `bytes / bandwidth` (a zero bandwidth or a 0-byte
    /// row of a bandwidth table is skipped).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::calibrate::{BenchmarkPoint, BenchmarkSeries, SeriesKind};
    /// let bw = BenchmarkSeries {
    ///     title: "osu_bw".into(),
    ///     kind: SeriesKind::Bandwidth,
    ///     processes: None,
    ///     points: vec![BenchmarkPoint { bytes: 1000, value: 1e9, min: None, max: None, repetitions: None }],
    /// };
    /// // 1000 bytes at 1 GB/s: one message every microsecond
    /// assert!((bw.seconds_per_message()[0].1 - 1e-6).abs() < 1e-18);
    /// ```
    #[must_use]
    pub fn seconds_per_message(&self) -> Vec<(u64, f64)> {
        self.points
            .iter()
            .filter_map(|p| {
                if self.kind.is_bandwidth() {
                    (p.bytes > 0 && p.value > 0.0).then(|| (p.bytes, p.bytes as f64 / p.value))
                } else {
                    Some((p.bytes, p.value))
                }
            })
            .collect()
    }
}

/// Settings of [`fit_loggp_from_benchmarks`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BenchmarkFitConfig {
    /// The share of the fixed one-way time `2o + L` assigned to the two overheads `2o`, in
    /// `[0, 1]`. These benchmarks cannot measure it (see the method); 0 puts everything in `L`.
    pub overhead_share: f64,
    /// One more than the most cuts that slope changes may add to the ranges the level steps
    /// make (1 to 64; steps always split).
    pub max_ranges: usize,
    /// A slope change splits a step-free stretch when two lines lower its sum of squared
    /// relative residuals by at least this factor (greater than 1).
    pub split_gain: f64,
    /// `P` of the fitted model.
    pub processors: u64,
    /// Settings of the level-step detection ([`detect_steps`](super::detect_steps)).
    pub steps: StepConfig,
}

impl Default for BenchmarkFitConfig {
    /// `overhead_share = 0`, at most 6 ranges from slope changes, split gain 2, `P = 2`, the
    /// default step detection.
    fn default() -> Self {
        Self {
            overhead_share: 0.0,
            max_ranges: 6,
            split_gain: 2.0,
            processors: 2,
            steps: StepConfig::default(),
        }
    }
}

impl BenchmarkFitConfig {
    /// Checks the settings.
    ///
    /// # Errors
    ///
    /// [`ParameterError`] naming the field: `overhead_share` not in `[0, 1]`, `max_ranges` not
    /// between 1 and 64, `split_gain` not finite and greater than 1, `processors` 0, or a field
    /// of `steps` ([`StepConfig::validate`]).
    ///
    /// ```
    /// use commcost::calibrate::BenchmarkFitConfig;
    /// assert!(BenchmarkFitConfig::default().validate().is_ok());
    /// let bad = BenchmarkFitConfig { split_gain: 1.0, ..BenchmarkFitConfig::default() };
    /// assert!(bad.validate().unwrap_err().to_string().contains("split_gain"));
    /// ```
    pub fn validate(&self) -> Result<(), ParameterError> {
        ParameterError::finite_in(
            "overhead_share",
            self.overhead_share,
            0.0..=1.0,
            "between 0 and 1",
        )?;
        ParameterError::in_range(
            "max_ranges",
            self.max_ranges as u64,
            1..=64,
            "between 1 and 64",
        )?;
        ParameterError::finite_above(
            "split_gain",
            self.split_gain,
            1.0,
            "finite and greater than 1",
        )?;
        ParameterError::at_least("processors", self.processors, 1)?;
        self.steps.validate()
    }
}

/// One protocol range of a [`BenchmarkFit`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BenchmarkRange {
    /// First message size of the range (the model's range start).
    pub start: u64,
    /// Smallest and largest latency-series sizes fitted in this range.
    pub measured_sizes: (u64, u64),
    /// Fitted fixed one-way time `2o + L` (seconds).
    pub fixed: f64,
    /// Fitted per-byte gap `G` (seconds per byte), the latency series' slope.
    pub gap_per_byte: f64,
    /// Fitted gap `g` (seconds), from the bandwidth series; 0 without one.
    pub gap: f64,
    /// Latency points in the range.
    pub latency_points: usize,
    /// Bandwidth points in the range.
    pub bandwidth_points: usize,
    /// Parameters the constrained fit set to a bound (0) or took from elsewhere; each is an
    /// entry of [`BenchmarkFit::adjustments`] too.
    pub clamped: Vec<Parameter>,
    /// Why the range starts where it does.
    pub boundary: RangeBoundary,
}

/// The result of [`fit_loggp_from_benchmarks`]: the model and how well it reproduces the
/// series it was fitted to.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BenchmarkFit {
    /// The fitted model, one LogGP range per detected protocol.
    pub model: Protocols<LogGP>,
    /// Per-range details.
    pub ranges: Vec<BenchmarkRange>,
    /// The level steps of the latency series.
    pub steps: Vec<Step>,
    /// Every value the constrained fit used instead of the unconstrained one.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub adjustments: Vec<Adjustment>,
    /// Median and 90th percentile of `|p2p - measured| / measured` over the latency series.
    pub latency_error: (f64, f64),
    /// The same for the best unconstrained piecewise-linear fit of the latency series with as
    /// many pieces as the model has ranges (cut positions free): what a direct fit reaches.
    pub direct_latency_error: (f64, f64),
    /// The same for the bandwidth series' message intervals (`send_interval` against
    /// `bytes / bandwidth`), when one was given.
    pub bandwidth_error: Option<(f64, f64)>,
}

/// A parse error at `line` (1-based) of a benchmark's output.
pub(super) fn parse_error(line: usize, message: String) -> CalibrationError {
    CalibrationError::Parse { line, message }
}

/// A table field that must be a finite, non-negative number (`what` names it in the error),
/// scaled by `unit`.
pub(super) fn parse_measurement(
    field: &str,
    line: usize,
    unit: f64,
    what: &str,
) -> Result<f64, CalibrationError> {
    let v = field
        .parse::<f64>()
        .map_err(|_| parse_error(line, format!("`{field}` is not a number")))?;
    if !v.is_finite() || v < 0.0 {
        return Err(parse_error(
            line,
            format!("`{field}` is not a finite non-negative {what}"),
        ));
    }
    Ok(v * unit)
}

/// A table field that must be a whole number.
pub(super) fn parse_whole(field: &str, line: usize) -> Result<u64, CalibrationError> {
    field
        .parse::<u64>()
        .map_err(|_| parse_error(line, format!("`{field}` is not a whole number")))
}

fn check_series(what: &'static str, points: &[(u64, f64)]) -> Result<(), CalibrationError> {
    for (index, &(_, t)) in points.iter().enumerate() {
        if !t.is_finite() || t <= 0.0 {
            return Err(CalibrationError::InvalidValue {
                what,
                index,
                value: t,
            });
        }
    }
    Ok(())
}
