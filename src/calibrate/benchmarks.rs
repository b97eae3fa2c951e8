//! Measurement series read from the output of standard MPI benchmarks (OSU Micro-Benchmarks,
//! Intel MPI Benchmarks), and a LogGP fit from them.

use super::Adjustment;
use super::steps::{
    LineSums, Step, StepConfig, best_split, detect_steps, direct_piecewise_error, prefix_sums,
};
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
    pub clamped: Vec<&'static str>,
    /// Why the range starts where it does: `"first"`, `"step"` (a level step found by
    /// [`detect_steps`](super::detect_steps)) or `"slope"` (a change of the per-byte time, e.g.
    /// a message outgrowing a cache).
    pub boundary: &'static str,
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

/// Fits a LogGP model with protocol ranges to a one-way latency series and, optionally, a
/// streaming-bandwidth series, as `osu_latency` / `osu_bw` or IMB `PingPong` print them.
///
/// # Method
///
/// The latency series (0-byte rows dropped, sorted by size; two rows of one size are an
/// error) is split into protocol ranges in two stages:
///
/// 1. **level steps** ([`detect_steps`](super::detect_steps)): every jump of the one-way time
///    between two neighbouring sizes that stands out of the local trend and noise starts a
///    range, wherever it is on the grid (a range may hold a single point);
/// 2. **slope changes**: inside the step-free stretches, one more cut (each side at least 3
///    points) is added at a time where it lowers the sum of squared relative residuals the
///    most, while that sum drops by at least [`split_gain`](BenchmarkFitConfig::split_gain),
///    the one-line misfit's root mean square exceeds twice the
///    [`noise_floor`](StepConfig::noise_floor), and at most
///    [`max_ranges`](BenchmarkFitConfig::max_ranges) cuts were added — the per-byte time of a
///    message that outgrows a cache is such a range. On up to 64 points (every benchmark
///    grid) the number of cuts found this way is kept and their positions are chosen
///    jointly, the steps fixed: of every placement with at least 3 points in each range next
///    to a slope cut, the one whose range lines (below) have the least sum of absolute relative
///    residuals — the lines' own objective, so that no range is placed to fit a few points
///    exactly. A slope cut may only start a range at a size whose time lies more than 3 noise
///    levels above the series' smallest-size level (the median of its first 3 points; the
///    noise level is the median of [`detect_steps`](super::detect_steps)' local estimates):
///    below that the per-byte time is not measurable, and a change of it is not either. A
///    slope cut whose two ranges, merged into one line, would raise their sum by less than
///    `√split_gain` is dropped (the weakest first, the others placed again). Then, while the
///    model's median relative error is above both 1.2 times that of the best unconstrained
///    piecewise-linear fit with as many pieces and the noise floor, one more slope range is
///    tried, and kept when it at least halves (`1 / split_gain`) the model's median error,
///    up to [`max_ranges`](BenchmarkFitConfig::max_ranges): non-negative LogGP lines cannot
///    follow a time that grows faster than linearly (a copy outgrowing a cache), which
///    unconstrained pieces follow with negative intercepts, so the constrained model needs
///    another range where the direct fit does not. On more than 64 points the cuts are placed
///    by dynamic programming over the least squared relative residuals of the constrained
///    lines instead.
///
/// A range starts one byte after the last measured size of the range below it (the benchmarks
/// measure powers of two, so the real switch is somewhere in between). In each range a
/// relative-weighted least-squares line through the half round trips, constrained to
/// non-negative coefficients, gives
///
/// ```text
/// T(s) = (2o + L) + (s - 1) G        LogGP point-to-point (Alexandrov et al. 1995)
/// ```
///
/// When the unconstrained line has a negative coefficient the better of the two boundary
/// lines (`G = 0`, or `2o + L = 0`) is used; a range of one point takes `G` from its
/// neighbour. Each such change is an [`Adjustment`] in [`BenchmarkFit::adjustments`] (range
/// index, parameter, fitted and used value). The model's error is reported next to that of
/// the best unconstrained piecewise-linear fit with as many pieces
/// ([`direct_latency_error`](BenchmarkFit::direct_latency_error)).
///
/// The bandwidth series is turned into message intervals `I(s) = s / bandwidth(s)`, which
/// LogGP's streaming sender spaces `g + (s - 1) G` apart (Hoefler, Lichei & Rehm, IPDPS 2007,
/// eq. (2)); with `G` fixed from the latency line, `g` is the relative-weighted mean of
/// `I(s) - (s - 1) G` over the range, at least 0 (an adjustment when clamped).
///
/// Cost: on up to 64 points, at most 50 000 placements of `O(n log n)` each per range count
/// tried (8 855 for 4 slope cuts on the OSU grid); beyond, `O(n log n)` (the dynamic program
/// of a slope cut looks at no more than 512 candidate positions).
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
/// [`CalibrationError::InvalidValue`] for a non-positive or non-finite value, or two rows of
/// one size; [`CalibrationError::Inconsistent`] for a bandwidth series given as latency or the
/// reverse; invalid configuration (`max_ranges` outside 1 to 64, `split_gain` not above 1,
/// `overhead_share` outside 0 to 1, invalid [`StepConfig`]) as
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
/// # Ok::<(), commcost::calibrate::CalibrationError>(())
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
    if !(config.split_gain > 1.0 && config.split_gain.is_finite()) {
        return Err(crate::error::ParameterError::OutOfRange {
            name: "split_gain",
            value: config.split_gain,
            expected: "finite and greater than 1",
        }
        .into());
    }
    if !(1..=64).contains(&config.max_ranges) {
        return Err(crate::error::ParameterError::OutOfRange {
            name: "max_ranges",
            value: config.max_ranges as f64,
            expected: "between 1 and 64",
        }
        .into());
    }
    config.steps.validate()?;
    let processors = crate::error::ParameterError::at_least("processors", config.processors, 1)?;

    let lat = sorted_latency(latency)?;
    let intervals: Vec<(u64, f64)> = bandwidth
        .map(|b| b.seconds_per_message())
        .unwrap_or_default();
    check_series("bandwidth", &intervals)?;

    let sizes: Vec<u64> = lat.iter().map(|p| p.0).collect();
    let times: Vec<f64> = lat.iter().map(|p| p.1).collect();
    let steps = detect_steps(&sizes, &times, &config.steps)?;
    let mut cuts: Vec<usize> = steps.iter().map(|s| s.index).collect();
    let step_cuts = cuts.clone();
    let prefix = prefix_sums(&lat);
    add_slope_cuts(&lat, &prefix, &mut cuts, config);
    // as many ranges, their cuts placed jointly where they fit best (the steps stay)
    if cuts.len() > step_cuts.len()
        && let Some(best) = best_split(&prefix, cuts.len() + 1, 1, &step_cuts, true)
    {
        cuts = best;
    }

    // on a benchmark grid: the same number of slope cuts placed where the range lines' own
    // objective is least, the weak ones dropped, and one more range where the constrained
    // lines miss what a direct piecewise fit reaches
    let allowed = visible_sizes(&lat, config.steps.noise_floor);
    let slope = cuts.len() - step_cuts.len();
    let prune = Some(config.split_gain.sqrt());
    if let Some(placed) = place_slope_cuts(&lat, slope, &step_cuts, &allowed, prune) {
        cuts = placed;
        while cuts.len() - step_cuts.len() + 1 < config.max_ranges {
            let model = median_error(&lat, &cuts);
            let direct = direct_piecewise_error(&lat, cuts.len() + 1).map_or(0.0, |e| e.0);
            if model <= BOUND * direct || model <= config.steps.noise_floor {
                break;
            }
            let more = cuts.len() + 1 - step_cuts.len();
            match place_slope_cuts(&lat, more, &step_cuts, &allowed, None) {
                Some(more) if median_error(&lat, &more) * config.split_gain <= model => {
                    cuts = more;
                }
                _ => break,
            }
        }
    }
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
    let (lines, mut adjustments) = range_lines(&lat, &bounds);
    let mut ranges = Vec::new();
    let mut starts = Vec::new();
    for (k, w) in bounds.windows(2).enumerate() {
        let pts = &lat[w[0]..w[1]];
        let (fixed, per_byte, mut clamped) = lines[k].clone();
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
            adjustments.push(adjustment(k, "gap", gap, 0.0, "clamped at 0"));
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
            boundary: if k == 0 {
                "first"
            } else if step_cuts.contains(&w[0]) {
                "step"
            } else {
                "slope"
            },
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
    let direct_latency_error = direct_piecewise_error(&lat, ranges.len()).unwrap_or((0.0, 0.0));
    let bandwidth_error = errors(
        intervals
            .iter()
            .map(|&(s, i)| (model.send_interval(&Message::contiguous(s)), i))
            .collect(),
    );
    Ok(BenchmarkFit {
        model,
        ranges,
        steps,
        adjustments,
        latency_error,
        direct_latency_error,
        bandwidth_error,
    })
}

fn adjustment(
    range: usize,
    parameter: &'static str,
    fitted: f64,
    used: f64,
    how: &'static str,
) -> Adjustment {
    Adjustment {
        range: Some(range),
        parameter,
        fitted,
        used,
        how,
    }
}

fn prefix_range(points: &[(u64, f64)]) -> LineSums {
    let mut sums = LineSums::default();
    for &(s, t) in points {
        sums.add(s.saturating_sub(1) as f64, t);
    }
    sums
}

/// The latency points of at least 1 byte, sorted by size, checked: values finite and > 0,
/// no size twice.
pub(super) fn sorted_latency(
    latency: &BenchmarkSeries,
) -> Result<Vec<(u64, f64)>, CalibrationError> {
    let mut lat: Vec<(u64, f64)> = latency
        .points
        .iter()
        .filter(|p| p.bytes > 0)
        .map(|p| (p.bytes, p.value))
        .collect();
    check_series("latency", &lat)?;
    lat.sort_by_key(|&(s, _)| s);
    if let Some(i) = lat.windows(2).position(|w| w[0].0 == w[1].0) {
        return Err(CalibrationError::InvalidValue {
            what: "latency size (measured twice)",
            index: i + 1,
            value: lat[i].0 as f64,
        });
    }
    if lat.len() < 2 {
        return Err(CalibrationError::TooFew {
            what: "latency points of at least 1 byte",
            needed: 2,
            got: lat.len(),
        });
    }
    Ok(lat)
}

/// The constrained line `(2o + L, G, clamped parameters)` of every range `bounds[k]..bounds[k +
/// 1]` of `lat`, and the adjustments made; a one-point range takes `G` from the nearest range
/// with a line.
#[allow(clippy::type_complexity)]
fn range_lines(
    lat: &[(u64, f64)],
    bounds: &[usize],
) -> (Vec<(f64, f64, Vec<&'static str>)>, Vec<Adjustment>) {
    let mut lines: Vec<(f64, f64, Vec<&'static str>)> = Vec::new();
    let mut adjustments = Vec::new();
    for (k, w) in bounds.windows(2).enumerate() {
        let ((a, b), (fa, fb)) = least_absolute(&lat[w[0]..w[1]]);
        let mut clamped = Vec::new();
        if w[1] - w[0] >= 2 {
            if b.to_bits() != fb.to_bits() {
                clamped.push("gap_per_byte");
                adjustments.push(adjustment(k, "gap_per_byte", fb, b, "constrained fit"));
            }
            if a.to_bits() != fa.to_bits() {
                clamped.push("fixed");
                adjustments.push(adjustment(k, "fixed", fa, a, "constrained fit"));
            }
        }
        lines.push((a, b, clamped));
    }
    for (k, w) in bounds.windows(2).enumerate() {
        if w[1] - w[0] != 1 {
            continue;
        }
        let (s, t) = lat[w[0]];
        let neighbour = (0..bounds.len() - 1)
            .filter(|&j| j != k && bounds[j + 1] - bounds[j] >= 2)
            .min_by_key(|&j| j.abs_diff(k))
            .map_or(0.0, |j| lines[j].1);
        let x = s.saturating_sub(1) as f64;
        let (mut a, mut b) = (t - neighbour * x, neighbour);
        let mut how = "one point: G of the nearest range with a line, 2o + L through the point";
        if a < 0.0 {
            (a, b) = (0.0, if x > 0.0 { t / x } else { 0.0 });
            how = "one point: the line through the origin and the point";
        }
        adjustments.push(adjustment(k, "gap_per_byte", f64::NAN, b, how));
        lines[k] = (a, b, vec!["gap_per_byte"]);
    }
    (lines, adjustments)
}

/// The line with non-negative coefficients that minimises the sum of absolute relative
/// residuals `Σ |t - a - b (s - 1)| / t` (least absolute deviations, robust to a spike), by
/// iteratively reweighted least squares from the least-squares line (at most 50 rounds, each
/// weight `1 / max(|r|, 10⁻⁶)`); with the unconstrained line of the same iteration.
fn least_absolute(points: &[(u64, f64)]) -> ((f64, f64), (f64, f64)) {
    let mut sums = prefix_range(points);
    let (mut line, mut free) = sums.constrained();
    if points.len() < 3 {
        return (line, free);
    }
    let objective = |(a, b): (f64, f64)| -> f64 {
        points
            .iter()
            .map(|&(s, t)| ((t - a - b * s.saturating_sub(1) as f64) / t).abs())
            .sum()
    };
    let mut best = objective(line);
    for _ in 0..50 {
        sums = LineSums::default();
        for &(s, t) in points {
            let x = s.saturating_sub(1) as f64;
            let r = ((t - line.0 - line.1 * x) / t).abs().max(1e-6);
            sums.add_weighted(x, t, 1.0 / r);
        }
        let (next, next_free) = sums.constrained();
        let value = objective(next);
        if value.is_nan() || value >= best * (1.0 - 1e-9) {
            break;
        }
        (line, free, best) = (next, next_free, value);
    }
    (line, free)
}

/// Median relative error of the constrained range lines with the given cuts.
fn median_error(lat: &[(u64, f64)], cuts: &[usize]) -> f64 {
    let mut bounds = vec![0];
    bounds.extend(cuts);
    bounds.push(lat.len());
    let (lines, _) = range_lines(lat, &bounds);
    let mut pairs = Vec::with_capacity(lat.len());
    for (k, w) in bounds.windows(2).enumerate() {
        for &(s, t) in &lat[w[0]..w[1]] {
            pairs.push((lines[k].0 + lines[k].1 * s.saturating_sub(1) as f64, t));
        }
    }
    super::relative_errors(&pairs).map_or(f64::INFINITY, |e| e.0)
}

/// Adds slope-change cuts inside the step-free stretches (see [`fit_loggp_from_benchmarks`]).
fn add_slope_cuts(
    lat: &[(u64, f64)],
    prefix: &[LineSums],
    cuts: &mut Vec<usize>,
    config: &BenchmarkFitConfig,
) {
    const MIN_POINTS: usize = 3;
    let n = lat.len();
    let noise = config.steps.noise_floor;
    for _ in 0..config.max_ranges.saturating_sub(1) {
        let mut bounds = vec![0];
        bounds.extend(cuts.iter().copied());
        bounds.push(n);
        let mut best: Option<(usize, f64)> = None;
        for w in bounds.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            if hi - lo < 2 * MIN_POINTS {
                continue;
            }
            let stretch = &prefix[lo..=hi];
            let whole = prefix[hi].sub(&prefix[lo]).constrained_cost();
            // within the noise floor already: nothing to split
            if whole <= (hi - lo) as f64 * (2.0 * noise).powi(2) {
                continue;
            }
            let Some(split) = best_split(stretch, 2, MIN_POINTS, &[], true) else {
                continue;
            };
            let cut = lo + split[0];
            let cost = prefix[cut].sub(&prefix[lo]).constrained_cost()
                + prefix[hi].sub(&prefix[cut]).constrained_cost();
            if cost * config.split_gain <= whole && best.is_none_or(|(_, g)| whole - cost > g) {
                best = Some((cut, whole - cost));
            }
        }
        let Some((cut, _)) = best else { break };
        let at = cuts.partition_point(|&c| c < cut);
        cuts.insert(at, cut);
    }
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

/// Points a range next to a slope cut holds at least.
const MIN_SLOPE_POINTS: usize = 3;

/// The ratio of the model's median relative error to the direct piecewise fit's above which
/// [`fit_loggp_from_benchmarks`] tries one more range.
const BOUND: f64 = 1.2;

/// The most slope-cut placements [`place_slope_cuts`] compares (C(23, 4) = 8855 on the OSU grid).
const MAX_PLACEMENTS: usize = 50_000;

/// For every point, whether a slope cut may start a range there: its time lies more than 3
/// noise levels (the median of the step detection's local noise estimates, at least
/// `noise_floor`) above the series' smallest-size level (the median of its first 3 points).
/// Below that the per-byte time is not measurable, so a change of it is not either.
fn visible_sizes(lat: &[(u64, f64)], noise_floor: f64) -> Vec<bool> {
    let x: Vec<f64> = lat.iter().map(|p| p.0 as f64).collect();
    let t: Vec<f64> = lat.iter().map(|p| p.1).collect();
    let mut noise = super::steps::local_noise(&x, &t, noise_floor);
    noise.sort_by(f64::total_cmp);
    let sigma = noise.get(noise.len() / 2).copied().unwrap_or(noise_floor);
    let mut first: Vec<f64> = t.iter().take(3).copied().collect();
    first.sort_by(f64::total_cmp);
    let base = first.get(first.len() / 2).copied().unwrap_or(0.0);
    t.iter().map(|&v| v > base * (1.0 + 3.0 * sigma)).collect()
}

/// The least-absolute-deviation line of every range `q..p` of at least 2 points (`lines[q][p]`),
/// with its sum of absolute relative residuals.
#[allow(clippy::type_complexity)]
fn segment_lines(lat: &[(u64, f64)]) -> Vec<Vec<Option<((f64, f64), f64)>>> {
    let n = lat.len();
    let mut lines = vec![vec![None; n + 1]; n + 1];
    for q in 0..n {
        for p in q + 2..=n {
            let ((a, b), _) = least_absolute(&lat[q..p]);
            let cost = lat[q..p]
                .iter()
                .map(|&(s, t)| ((t - a - b * s.saturating_sub(1) as f64) / t).abs())
                .sum();
            lines[q][p] = Some(((a, b), cost));
        }
    }
    lines
}

/// The sum of the absolute relative residuals of the range lines with `bounds` (a one-point
/// range's line passes through its point).
#[allow(clippy::type_complexity)]
fn placement_cost(lines: &[Vec<Option<((f64, f64), f64)>>], bounds: &[usize]) -> f64 {
    bounds
        .windows(2)
        .map(|w| lines[w[0]][w[1]].map_or(0.0, |(_, c)| c))
        .sum()
}

/// Every way to place `slope` cuts at the `allowed` points `1..n` that are not `steps`, each
/// range next to a slope cut holding at least [`MIN_SLOPE_POINTS`] points; `visit` gets the
/// sorted cuts (slope and step cuts together). Stops early, returning `false`, once `limit`
/// placements were looked at.
fn for_each_placement(
    n: usize,
    slope: usize,
    steps: &[usize],
    allowed: &[bool],
    limit: usize,
    visit: &mut dyn FnMut(&[usize]),
) -> bool {
    struct Walk<'a> {
        n: usize,
        steps: &'a [usize],
        allowed: &'a [bool],
        chosen: Vec<usize>,
        calls: usize,
        limit: usize,
    }
    fn rec(w: &mut Walk<'_>, left: usize, from: usize, visit: &mut dyn FnMut(&[usize])) -> bool {
        if left == 0 {
            let mut cuts: Vec<usize> = w.chosen.iter().chain(w.steps).copied().collect();
            cuts.sort_unstable();
            let mut bounds = vec![0];
            bounds.extend(&cuts);
            bounds.push(w.n);
            let ok = bounds.windows(2).all(|b| {
                let next_to_slope = w.chosen.contains(&b[0]) || w.chosen.contains(&b[1]);
                !next_to_slope || b[1] - b[0] >= MIN_SLOPE_POINTS
            });
            // every placement looked at counts, visited or not
            if w.calls >= w.limit {
                return false;
            }
            w.calls += 1;
            if ok {
                visit(&cuts);
            }
            return true;
        }
        for c in from..w.n {
            if w.steps.contains(&c) || !w.allowed.get(c).copied().unwrap_or(false) {
                continue;
            }
            w.chosen.push(c);
            let more = rec(w, left - 1, c + 1, visit);
            w.chosen.pop();
            if !more {
                return false;
            }
        }
        true
    }
    let mut walk = Walk {
        n,
        steps,
        allowed,
        chosen: Vec::with_capacity(slope),
        calls: 0,
        limit,
    };
    rec(&mut walk, slope, MIN_SLOPE_POINTS, visit)
}

/// Places `slope` cuts besides the fixed `steps` (see [`fit_loggp_from_benchmarks`]), on up to
/// 64 points: of all placements (at most [`MAX_PLACEMENTS`]), the one whose constrained
/// least-absolute-deviation range lines have the least sum of absolute relative residuals (the
/// lines' own objective). With `prune = Some(gain)`, a slope cut whose two ranges, merged into
/// one line, would raise their sum by less than the factor `gain` is then dropped (the
/// weakest first, the others placed again). Fewer cuts when no placement of `slope` exists;
/// `None` for more than 64 points or too many placements.
fn place_slope_cuts(
    lat: &[(u64, f64)],
    mut slope: usize,
    steps: &[usize],
    allowed: &[bool],
    prune: Option<f64>,
) -> Option<Vec<usize>> {
    let n = lat.len();
    if n > 64 {
        return None;
    }
    let lines = segment_lines(lat);
    let seg_cost = |q: usize, p: usize| lines[q][p].map_or(0.0, |(_, c)| c);
    loop {
        let mut best: Option<(f64, Vec<usize>)> = None;
        let complete = for_each_placement(n, slope, steps, allowed, MAX_PLACEMENTS, &mut |cuts| {
            let mut bounds = Vec::with_capacity(cuts.len() + 2);
            bounds.push(0);
            bounds.extend(cuts);
            bounds.push(n);
            let cost = placement_cost(&lines, &bounds);
            if best.as_ref().is_none_or(|(b, _)| cost < *b) {
                best = Some((cost, cuts.to_vec()));
            }
        });
        if !complete {
            return None;
        }
        // no placement of this many cuts (too few points where a slope change is visible)
        let Some((_, cuts)) = best else {
            if slope == 0 {
                return None;
            }
            slope -= 1;
            continue;
        };
        let Some(gain) = prune else {
            return Some(cuts);
        };
        // the weakest slope cut: the least rise of the cost when its two ranges merge
        let mut bounds = vec![0];
        bounds.extend(&cuts);
        bounds.push(n);
        let weakest = (1..bounds.len() - 1)
            .filter(|&i| !steps.contains(&bounds[i]))
            .map(|i| {
                let (q, c, p) = (bounds[i - 1], bounds[i], bounds[i + 1]);
                seg_cost(q, p) / (seg_cost(q, c) + seg_cost(c, p)).max(f64::MIN_POSITIVE)
            })
            .min_by(f64::total_cmp);
        match weakest {
            Some(ratio) if ratio < gain && slope > 0 => slope -= 1,
            _ => return Some(cuts),
        }
    }
}
