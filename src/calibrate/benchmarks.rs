//! Measurement series read from the output of standard MPI benchmarks (OSU Micro-Benchmarks,
//! Intel MPI Benchmarks), and a LogGP fit from them.

use super::least_squares;
use crate::error::CalibrationError;
use crate::{CommModel, LogGP, Message, Protocols};

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
    /// The most protocol ranges to split the latency series into (at least 1).
    pub max_ranges: usize,
    /// A split is kept when it lowers the sum of squared relative residuals by at least this
    /// factor (greater than 1).
    pub split_gain: f64,
    /// `P` of the fitted model.
    pub processors: u64,
}

impl Default for BenchmarkFitConfig {
    /// `overhead_share = 0`, at most 3 ranges, split gain 4, `P = 2`.
    fn default() -> Self {
        Self {
            overhead_share: 0.0,
            max_ranges: 3,
            split_gain: 4.0,
            processors: 2,
        }
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
    /// Parameters clamped to 0 because the fit gave a negative value.
    pub clamped: Vec<&'static str>,
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
    /// Median and 90th percentile of `|p2p - measured| / measured` over the latency series.
    pub latency_error: (f64, f64),
    /// The same for the bandwidth series' message intervals (`send_interval` against
    /// `bytes / bandwidth`), when one was given.
    pub bandwidth_error: Option<(f64, f64)>,
}

/// Relative-weighted least squares of `y ≈ a + b (s - 1)`, weights `1 / y`, so that every
/// point of a geometric size grid counts alike. Returns `(a, b, Σ relative residual²)`.
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

fn relative_line(points: &[(u64, f64)]) -> Result<(f64, f64, f64), CalibrationError> {
    let mut design = Vec::with_capacity(points.len() * 2);
    let mut y = Vec::with_capacity(points.len());
    for &(s, t) in points {
        design.push(1.0 / t);
        design.push(s.saturating_sub(1) as f64 / t);
        y.push(1.0);
    }
    let fit = least_squares(&design, 2, &y)?;
    let (a, b) = (fit.coefficients()[0], fit.coefficients()[1]);
    Ok((a, b, fit.training().sse()))
}

/// Sum of squared relative residuals of the best line through `points`; infinite when the
/// points do not determine a line (fewer than 2 distinct sizes).
fn line_cost(points: &[(u64, f64)]) -> f64 {
    relative_line(points).map_or(f64::INFINITY, |(_, _, sse)| sse)
}

/// Splits `points[lo..hi]` into at most `budget` segments by binary segmentation.
fn segment(
    points: &[(u64, f64)],
    lo: usize,
    hi: usize,
    budget: usize,
    gain: f64,
    cuts: &mut Vec<usize>,
) {
    const MIN_POINTS: usize = 3;
    if budget < 2 || hi - lo < 2 * MIN_POINTS {
        return;
    }
    let whole = line_cost(&points[lo..hi]);
    // a line already within 1e-9 relative everywhere: splitting would fit rounding
    if whole <= (hi - lo) as f64 * 1e-18 {
        return;
    }
    let mut best: Option<(usize, f64)> = None;
    for cut in lo + MIN_POINTS..=hi - MIN_POINTS {
        let cost = line_cost(&points[lo..cut]) + line_cost(&points[cut..hi]);
        if best.is_none_or(|(_, c)| cost < c) {
            best = Some((cut, cost));
        }
    }
    if let Some((cut, cost)) = best
        && cost.is_finite()
        && cost * gain <= whole
    {
        let left_budget = budget / 2;
        segment(points, lo, cut, left_budget.max(1), gain, cuts);
        cuts.push(cut);
        segment(points, cut, hi, (budget - left_budget).max(1), gain, cuts);
    }
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

/// Fits a LogGP model with protocol ranges to a one-way latency series and, optionally, a
/// streaming-bandwidth series, as `osu_latency` / `osu_bw` or IMB `PingPong` print them.
///
/// # Method
///
/// The latency series (0-byte rows dropped) is sorted by size and split into protocol ranges
/// by binary segmentation: a range is cut where two lines fit much better than one (the sum of
/// squared relative residuals drops by [`split_gain`](BenchmarkFitConfig::split_gain)), each
/// side keeping at least 3 points, a line already within 10⁻⁹ relative is not cut, at most [`max_ranges`](BenchmarkFitConfig::max_ranges)
/// ranges. A range starts one byte after the last measured size of the range below it (the
/// benchmarks measure powers of two, so the real switch is somewhere in between). In each
/// range a relative-weighted least-squares line through the half round trips gives
///
/// ```text
/// T(s) = (2o + L) + (s - 1) G        LogGP point-to-point (Alexandrov et al. 1995)
/// ```
///
/// The bandwidth series is turned into message intervals `I(s) = s / bandwidth(s)`, which
/// LogGP's streaming sender spaces `g + (s - 1) G` apart (Hoefler, Lichei & Rehm, IPDPS 2007,
/// eq. (2)); with `G` fixed from the latency line, `g` is the relative-weighted mean of
/// `I(s) - (s - 1) G` over the range. Negative values are clamped to 0 and reported.
///
/// # Limits
///
/// A ping-pong and a bandwidth stream see only sums: `2o + L` and `max(o, g + (s - 1) G)`.
/// They do not separate the CPU overhead `o` from the wire latency `L` — that takes a method
/// that overlaps computation with communication, such as the parametrised round trips of
/// [`assess_loggp`](super::assess_loggp). Here `2o` is
/// [`overhead_share`](BenchmarkFitConfig::overhead_share) of the fixed part (0 by default), a
/// choice, not a measurement; point-to-point predictions do not depend on it, overlap and
/// pipelined-collective predictions do. Without a bandwidth series `g` is 0.
///
/// # Errors
///
/// [`CalibrationError::TooFew`] for fewer than 2 latency points of at least 1 byte;
/// [`CalibrationError::InvalidValue`] for a non-positive or non-finite value;
/// [`CalibrationError::Inconsistent`] for a bandwidth series given as latency or the reverse;
/// [`CalibrationError::Fit`] when a range's sizes are all equal; invalid configuration as
/// [`CalibrationError::Parameters`].
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{BenchmarkFitConfig, fit_loggp_from_benchmarks, parse_osu};
///
/// let latency = parse_osu("# OSU MPI Latency Test v7.4\n# Size          Latency (us)\n\
///     1 1.500\n2 1.501\n4 1.503\n8 1.507\n16 1.515\n1024 2.523\n")?;
/// let fit = fit_loggp_from_benchmarks(&latency, None, &BenchmarkFitConfig::default())?;
/// let range = &fit.ranges[0];
/// // the points lie on 1.5 µs + (s - 1) · 1 ns
/// assert!((range.fixed - 1.5e-6).abs() < 1e-15);
/// assert!((range.gap_per_byte - 1e-9).abs() < 1e-18);
/// # Ok::<(), commcost::CalibrationError>(())
/// ```
pub fn fit_loggp_from_benchmarks(
    latency: &BenchmarkSeries,
    bandwidth: Option<&BenchmarkSeries>,
    config: &BenchmarkFitConfig,
) -> Result<BenchmarkFit, CalibrationError> {
    if latency.kind.is_bandwidth() {
        return Err(CalibrationError::Inconsistent {
            size: 0,
            at_stride: String::new(),
            component: "latency series",
            value: 0.0,
            explanation: "the latency series is a bandwidth table",
        });
    }
    if let Some(bw) = bandwidth
        && !bw.kind.is_bandwidth()
    {
        return Err(CalibrationError::Inconsistent {
            size: 0,
            at_stride: String::new(),
            component: "bandwidth series",
            value: 0.0,
            explanation: "the bandwidth series is a time table",
        });
    }
    let share =
        crate::error::ParameterError::non_negative("overhead_share", config.overhead_share)?;
    if share > 1.0 {
        return Err(crate::error::ParameterError::OutOfRange {
            name: "overhead_share",
            value: share,
            expected: "between 0 and 1",
        }
        .into());
    }
    if config.split_gain.is_nan() || config.split_gain <= 1.0 {
        return Err(crate::error::ParameterError::OutOfRange {
            name: "split_gain",
            value: config.split_gain,
            expected: "greater than 1",
        }
        .into());
    }
    let processors = crate::error::ParameterError::at_least("processors", config.processors, 1)?;

    let mut lat: Vec<(u64, f64)> = latency
        .points
        .iter()
        .filter(|p| p.bytes > 0)
        .map(|p| (p.bytes, p.value))
        .collect();
    check_series("latency", &lat)?;
    lat.sort_by_key(|&(s, _)| s);
    if lat.len() < 2 {
        return Err(CalibrationError::TooFew {
            what: "latency points of at least 1 byte",
            needed: 2,
            got: lat.len(),
        });
    }
    let intervals: Vec<(u64, f64)> = bandwidth
        .map(|b| b.seconds_per_message())
        .unwrap_or_default();
    check_series("bandwidth", &intervals)?;

    let mut cuts = Vec::new();
    segment(
        &lat,
        0,
        lat.len(),
        config.max_ranges.max(1),
        config.split_gain,
        &mut cuts,
    );
    let mut bounds = vec![0];
    bounds.extend(&cuts);
    bounds.push(lat.len());

    // range k covers [start_k, start_{k+1}): one byte after the last size below it
    let range_starts: Vec<u64> = bounds[..bounds.len() - 1]
        .iter()
        .map(|&b| {
            if b == 0 {
                0
            } else {
                lat[b - 1].0.saturating_add(1)
            }
        })
        .collect();
    let mut ranges = Vec::new();
    let mut starts = Vec::new();
    for (k, w) in bounds.windows(2).enumerate() {
        let pts = &lat[w[0]..w[1]];
        let (mut fixed, mut per_byte, _) = relative_line(pts)?;
        let mut clamped = Vec::new();
        if per_byte < 0.0 {
            per_byte = 0.0;
            clamped.push("gap_per_byte");
            // refit the fixed part alone
            fixed = weighted_mean(pts.iter().map(|&(_, t)| (t, t)));
        }
        if fixed < 0.0 {
            fixed = 0.0;
            clamped.push("fixed");
        }
        let start = range_starts[k];
        let next = range_starts.get(k + 1).copied();
        let in_range: Vec<(u64, f64)> = intervals
            .iter()
            .copied()
            .filter(|&(s, _)| s >= start && next.is_none_or(|n| s < n))
            .collect();
        let mut gap = if in_range.is_empty() {
            0.0
        } else {
            weighted_mean(
                in_range
                    .iter()
                    .map(|&(s, i)| (i - s.saturating_sub(1) as f64 * per_byte, i)),
            )
        };
        if gap < 0.0 {
            gap = 0.0;
            clamped.push("gap");
        }
        let overhead = share * fixed / 2.0;
        let model = LogGP::new(fixed - 2.0 * overhead, overhead, gap, per_byte, processors)?;
        starts.push((start, model));
        ranges.push(BenchmarkRange {
            start,
            measured_sizes: (pts[0].0, pts[pts.len() - 1].0),
            fixed,
            gap_per_byte: per_byte,
            gap,
            latency_points: pts.len(),
            bandwidth_points: in_range.len(),
            clamped,
        });
    }
    let model = Protocols::from_starts(starts)?;
    let errors = |pairs: Vec<(f64, f64)>| super::relative_errors(&pairs);
    let latency_error = errors(
        lat.iter()
            .map(|&(s, t)| (model.p2p(&Message::contiguous(s)), t))
            .collect(),
    )
    .unwrap_or((0.0, 0.0));
    let bandwidth_error = errors(
        intervals
            .iter()
            .map(|&(s, i)| (model.send_interval(&Message::contiguous(s)), i))
            .collect(),
    );
    Ok(BenchmarkFit {
        model,
        ranges,
        latency_error,
        bandwidth_error,
    })
}

/// `Σ (x / w²) / Σ (1 / w²)`: the value minimising the squared relative residuals
/// `((c - x) / w)²`.
fn weighted_mean(pairs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for (x, w) in pairs {
        num += x / (w * w);
        den += 1.0 / (w * w);
    }
    if den > 0.0 { num / den } else { 0.0 }
}
