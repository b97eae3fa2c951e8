//! The LogGP fit of [`fit_loggp_from_benchmarks`]: protocol ranges from level steps and slope
//! changes of the one-way latency, then per-range lines.

use super::slope_cuts::{add_slope_cuts, place_slope_cuts, visible_sizes};
use super::{BenchmarkFit, BenchmarkFitConfig, BenchmarkRange, BenchmarkSeries, check_series};
use crate::calibrate::CalibrationError;
use crate::calibrate::steps::{
    LineSums, best_split, detect_steps, direct_piecewise_error, prefix_sums,
};
use crate::calibrate::{Adjustment, Parameter, RangeBoundary, Refit, relative_errors};
use crate::{CommModel, LogGP, Message, Protocols};

/// The ratio of the model's median relative error to the direct piecewise fit's above which
/// [`fit_loggp_from_benchmarks`] tries one more range.
const BOUND: f64 = 1.2;

/// Fits a LogGP model with protocol ranges to a one-way latency series and, optionally, a
/// streaming-bandwidth series, as `osu_latency` / `osu_bw` or IMB `PingPong` print them.
///
/// # Method
///
/// The latency series (0-byte rows dropped, sorted by size; two rows of one size are an
/// error) is split into protocol ranges in two stages:
///
/// 1. **level steps** ([`detect_steps`]): every jump of the one-way time
///    between two neighbouring sizes that stands out of the local trend and noise starts a
///    range, wherever it is on the grid (a range may hold a single point);
/// 2. **slope changes**: inside the step-free stretches, one more cut (each side at least 3
///    points) is added at a time where it lowers the sum of squared relative residuals the
///    most, while that sum drops by at least [`split_gain`](BenchmarkFitConfig::split_gain),
///    the one-line misfit's root mean square exceeds twice the
///    [`noise_floor`](crate::calibrate::StepConfig::noise_floor), and at most
///    [`max_ranges`](BenchmarkFitConfig::max_ranges) cuts were added — the per-byte time of a
///    message that outgrows a cache is such a range. On up to 64 points (every benchmark
///    grid) the number of cuts found this way is kept and their positions are chosen
///    jointly, the steps fixed: of every placement with at least 3 points in each range next
///    to a slope cut, the one whose range lines (below) have the least sum of absolute relative
///    residuals — the lines' own objective, so that no range is placed to fit a few points
///    exactly. A slope cut may only start a range at a size whose time lies more than 3 noise
///    levels above the series' smallest-size level (the median of its first 3 points; the
///    noise level is the median of [`detect_steps`]' local estimates):
///    below that the per-byte time is not measurable, and a change of it is not either. A
///    slope cut whose two ranges, merged into one line, would raise their sum by less than
///    `√split_gain` is dropped (the weakest first, the others placed again). Then, while the
///    model's median relative error is above both 1.2 times that of the best unconstrained
///    piecewise-linear fit with as many pieces and the noise floor, and the non-negativity of
///    some range's line binds (else the model is the unconstrained piecewise fit and the gap
///    is noise about its lines), one more slope range is
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
/// [`assess_loggp`](crate::calibrate::assess_loggp). Here `2o` is
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
/// `overhead_share` outside 0 to 1, invalid [`StepConfig`](crate::calibrate::StepConfig)) as
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
    config.validate()?;
    let (share, processors) = (config.overhead_share, config.processors);

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
            if model <= BOUND * direct
                || model <= config.steps.noise_floor
                || !constraint_binds(&lat, &cuts)
            {
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
            adjustments.push(adjustment(
                k,
                Parameter::Gap,
                gap,
                0.0,
                Refit::ClampedAtZero,
            ));
            gap = 0.0;
            clamped.push(Parameter::Gap);
        }
        let overhead = share * fixed / 2.0;
        let model = LogGP::new(fixed - 2.0 * overhead, overhead, gap, per_byte)
            .and_then(|m| m.with_processors(processors))?;
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
                RangeBoundary::First
            } else if step_cuts.contains(&w[0]) {
                RangeBoundary::Step
            } else {
                RangeBoundary::Slope
            },
        });
    }
    let model = Protocols::from_starts(starts)?;
    let errors = |pairs: Vec<(f64, f64)>| relative_errors(&pairs);
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
    parameter: Parameter,
    fitted: f64,
    used: f64,
    how: Refit,
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
pub(crate) fn sorted_latency(
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
) -> (Vec<(f64, f64, Vec<Parameter>)>, Vec<Adjustment>) {
    let mut lines: Vec<(f64, f64, Vec<Parameter>)> = Vec::new();
    let mut adjustments = Vec::new();
    for (k, w) in bounds.windows(2).enumerate() {
        let ((a, b), (fa, fb)) = least_absolute(&lat[w[0]..w[1]]);
        let mut clamped = Vec::new();
        if w[1] - w[0] >= 2 {
            if b.to_bits() != fb.to_bits() {
                clamped.push(Parameter::GapPerByte);
                adjustments.push(adjustment(
                    k,
                    Parameter::GapPerByte,
                    fb,
                    b,
                    Refit::ConstrainedFit,
                ));
            }
            if a.to_bits() != fa.to_bits() {
                clamped.push(Parameter::Fixed);
                adjustments.push(adjustment(
                    k,
                    Parameter::Fixed,
                    fa,
                    a,
                    Refit::ConstrainedFit,
                ));
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
        let mut how = Refit::OnePointNearestSlope;
        if a < 0.0 {
            (a, b) = (0.0, if x > 0.0 { t / x } else { 0.0 });
            how = Refit::OnePointThroughOrigin;
        }
        adjustments.push(adjustment(k, Parameter::GapPerByte, f64::NAN, b, how));
        lines[k] = (a, b, vec![Parameter::GapPerByte]);
    }
    (lines, adjustments)
}

/// The line with non-negative coefficients that minimises the sum of absolute relative
/// residuals `Σ |t - a - b (s - 1)| / t` (least absolute deviations, robust to a spike), by
/// iteratively reweighted least squares from the least-squares line (at most 50 rounds, each
/// weight `1 / max(|r|, 10⁻⁶)`); with the unconstrained line of the same iteration.
pub(super) fn least_absolute(points: &[(u64, f64)]) -> ((f64, f64), (f64, f64)) {
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

/// Whether the non-negativity of a line binds in some range of two or more points with the
/// given cuts: its constrained line differs from the unconstrained one. Where none binds, the
/// constrained model is the unconstrained piecewise fit, and a gap to the direct fit is noise
/// about the lines, not a shape they cannot follow.
fn constraint_binds(lat: &[(u64, f64)], cuts: &[usize]) -> bool {
    let mut bounds = vec![0];
    bounds.extend(cuts);
    bounds.push(lat.len());
    bounds.windows(2).any(|w| {
        w[1] - w[0] >= 2 && {
            let (line, free) = least_absolute(&lat[w[0]..w[1]]);
            line.0.to_bits() != free.0.to_bits() || line.1.to_bits() != free.1.to_bits()
        }
    })
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
    relative_errors(&pairs).map_or(f64::INFINITY, |e| e.0)
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
