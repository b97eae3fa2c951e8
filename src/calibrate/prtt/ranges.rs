//! One protocol range of the assessment: the burst line through `G_all(s)`, the constant
//! overhead `o` (pooled across neighbouring ranges that agree), and — in the default mode —
//! the LogGP parameters that reproduce the one-message time over the range.

use super::super::detect::Segment;
use super::lines::{line_at_first, line_through};
use super::{AssessmentConfig, RangeFit, SizeDiagnostics, split_end_to_end};
use crate::calibrate::CalibrationError;
use crate::calibrate::least_squares::{FitStatistics, least_squares};
use crate::calibrate::{Adjustment, Parameter, Refit};
use crate::util::stats::median;

/// A range's constant-`o` estimate and its standard error, for pooling (`None` when its `o(s)`
/// has a significant slope, or cannot be estimated).
pub(super) type PoolableOverhead = Option<(f64, f64)>;

/// Records the bounds a range's fit meets: the parameter in the range's `clamped` list, the
/// fitted and used values as an [`Adjustment`].
struct Bounds<'a> {
    range: usize,
    /// The parameters `gap` and `gap_per_byte` are the burst line's (`burst_gap`,
    /// `burst_gap_per_byte`): the default mode's model takes its `g` and `G` elsewhere.
    burst_line: bool,
    clamped: &'a mut Vec<Parameter>,
    adjustments: &'a mut Vec<Adjustment>,
}

impl Bounds<'_> {
    fn adjust(&mut self, parameter: Parameter, fitted: f64, used: f64, how: Refit) {
        let parameter = match (self.burst_line, parameter) {
            (true, Parameter::Gap) => Parameter::BurstGap,
            (true, Parameter::GapPerByte) => Parameter::BurstGapPerByte,
            _ => parameter,
        };
        self.clamped.push(parameter);
        self.adjustments.push(Adjustment {
            range: Some(self.range),
            parameter,
            fitted,
            used,
            how,
        });
    }
}

/// Fits range `range` of [`assess_loggp`](super::assess_loggp): the burst line
/// `G_all(s) = g + G (s - 1)` (Netgauge: `g + G s`) by least squares, the constant `o` (see
/// [`range_overhead`]), each within its bounds `>= 0`. Returns the fit and the range's
/// poolable `o`.
pub(super) fn fit_range(
    diagnostics: &[SizeDiagnostics],
    segment: &Segment,
    config: &AssessmentConfig,
    range: usize,
    adjustments: &mut Vec<Adjustment>,
) -> Result<(RangeFit, PoolableOverhead), CalibrationError> {
    let inliers: Vec<usize> = segment.inliers().collect();
    let first_size = diagnostics[segment.start].size;
    let last_size = diagnostics[segment.end - 1].size;
    let gaps: Vec<f64> = inliers
        .iter()
        .map(|&i| diagnostics[i].cumulative_gap)
        .collect();
    // G_all(s) = g + G (s - 1) (paper) or g + G s (Netgauge)
    let shift = if config.netgauge_compatible { 0.0 } else { 1.0 };
    let (gap, gap_per_byte, gap_fit) = burst_line(diagnostics, &inliers, &gaps, shift)?;
    let estimate = range_overhead(diagnostics, segment, &inliers, config)?;
    let mut clamped = Vec::new();
    // in the default mode the model's g and G come from the one-message time (assess_loggp):
    // these adjustments are of the burst line alone
    let mut bounds = Bounds {
        range,
        burst_line: !config.netgauge_compatible,
        clamped: &mut clamped,
        adjustments,
    };
    let xs: Vec<f64> = inliers
        .iter()
        .map(|&i| diagnostics[i].size as f64 - shift)
        .collect();
    let (gap, gap_per_byte) = bound_burst_line(gap, gap_per_byte, &gaps, &xs, &mut bounds);
    let overhead = if estimate.overhead >= 0.0 {
        estimate.overhead
    } else {
        bounds.adjust(
            Parameter::Overhead,
            estimate.overhead,
            0.0,
            Refit::NegativeOverhead,
        );
        0.0
    };
    let fit = RangeFit {
        first_size,
        last_size,
        gap,
        gap_per_byte,
        overhead,
        burst_gap: gap,
        burst_gap_per_byte: gap_per_byte,
        gap_fit,
        overhead_slope: estimate.slope,
        clamped,
    };
    Ok((fit, estimate.poolable))
}

/// The unconstrained least-squares burst line through `(size - shift, G_all)` of the inliers:
/// `g`, `G` and the fit's statistics (a constant for a single size).
fn burst_line(
    diagnostics: &[SizeDiagnostics],
    inliers: &[usize],
    gaps: &[f64],
    shift: f64,
) -> Result<(f64, f64, FitStatistics), CalibrationError> {
    Ok(if inliers.len() >= 2 {
        let design: Vec<f64> = inliers
            .iter()
            .flat_map(|&i| [1.0, diagnostics[i].size as f64 - shift])
            .collect();
        let fit = least_squares(&design, 2, gaps)?;
        (
            fit.coefficients()[0],
            fit.coefficients()[1],
            *fit.training(),
        )
    } else {
        let design = [1.0];
        let fit = least_squares(&design, 1, &gaps[..1])?;
        (gaps[0], 0.0, *fit.training())
    })
}

/// A range's overhead before its bound: LogGP's constant `o`, the range's poolable estimate and
/// the (unweighted) slope of `o(s)`.
struct OverheadEstimate {
    overhead: f64,
    poolable: PoolableOverhead,
    slope: f64,
}

/// LogGP's constant `o` of a range from eq. (6)'s `o(s)`: the weighted mean (weights
/// `1 / PRTT(n, d, s)²`) when the slope of `o(s)` is not significant (|t| < 3), else the
/// median `o(s)` of the range's first five sizes; Netgauge's mode takes the range's first
/// `o(s)`.
fn range_overhead(
    diagnostics: &[SizeDiagnostics],
    segment: &Segment,
    inliers: &[usize],
    config: &AssessmentConfig,
) -> Result<OverheadEstimate, CalibrationError> {
    let first_size = diagnostics[segment.start].size;
    let overheads: Vec<f64> = inliers.iter().map(|&i| diagnostics[i].overhead).collect();
    // o(s) inherits the noise of PRTT(n, d, s), which grows with it: weight 1 / PRTT(n, d, s)²
    let weights: Vec<f64> = inliers
        .iter()
        .map(|&i| diagnostics[i].prtt_delayed.powi(-2))
        .collect();
    let (overhead_at_first, t) =
        line_at_first(diagnostics, inliers, &overheads, &weights, first_size)?;
    let mean_overhead = overheads
        .iter()
        .zip(&weights)
        .map(|(o, w)| o * w)
        .sum::<f64>()
        / weights.iter().sum::<f64>();
    // a significant slope: LogGP's constant o is the CPU time at the range's small end — the
    // median o(s) of its first five sizes. The line through all of o(s) is pulled by what
    // grows with the size: per-byte work (LogGP charges it to G) and, in rendezvous ranges,
    // the blocking send's wait for the receiver (hundreds of µs under load)
    let overhead = if config.netgauge_compatible {
        diagnostics[segment.start].overhead
    } else if t >= 3.0 {
        let mut small_end: Vec<f64> = overheads.iter().copied().take(5).collect();
        if small_end.is_empty() {
            overhead_at_first
        } else {
            median(&mut small_end)
        }
    } else {
        mean_overhead
    };
    // standard error of the weighted mean: sqrt(s² / Σw), s² = Σ w (o - ō)² / (k - 1)
    let poolable = (!config.netgauge_compatible && t < 3.0 && overheads.len() >= 2).then(|| {
        let w_sum: f64 = weights.iter().sum();
        let s2 = overheads
            .iter()
            .zip(&weights)
            .map(|(o, w)| w * (o - mean_overhead).powi(2))
            .sum::<f64>()
            / (overheads.len() - 1) as f64;
        (mean_overhead, (s2 / w_sum).sqrt())
    });
    let slope = if inliers.len() >= 2 {
        let design: Vec<f64> = inliers
            .iter()
            .flat_map(|&i| [1.0, diagnostics[i].size as f64])
            .collect();
        least_squares(&design, 2, &overheads).map_or(0.0, |f| f.coefficients()[1])
    } else {
        0.0
    };
    Ok(OverheadEstimate {
        overhead,
        poolable,
        slope,
    })
}

/// The constrained burst line: `g >= 0` and `G >= 0`. The best feasible fit when the
/// unconstrained one breaks a bound is on that bound (the problem is convex): `G < 0` -> the
/// best constant (`G = 0`, `g` = mean `G_all`); `g < 0` -> the best line through the origin
/// (`g = 0`, `G = Σ x y / Σ x²`, `x = s - shift`); both -> 0.
fn bound_burst_line(
    gap: f64,
    gap_per_byte: f64,
    gaps: &[f64],
    xs: &[f64],
    bounds: &mut Bounds<'_>,
) -> (f64, f64) {
    let (mut gap, mut gap_per_byte) = (gap, gap_per_byte);
    if gap_per_byte.is_nan() || gap_per_byte < 0.0 {
        let mean = gaps.iter().sum::<f64>() / gaps.len().max(1) as f64;
        bounds.adjust(
            Parameter::GapPerByte,
            gap_per_byte,
            0.0,
            Refit::NegativeGapPerByteRefit,
        );
        gap_per_byte = 0.0;
        let fitted = gap;
        gap = mean;
        if gap.is_nan() || gap < 0.0 {
            bounds.adjust(Parameter::Gap, fitted, 0.0, Refit::NoFeasibleGap);
            gap = 0.0;
        } else {
            bounds.adjust(Parameter::Gap, fitted, gap, Refit::RefitWithZeroGapPerByte);
        }
    } else if gap.is_nan() || gap < 0.0 {
        let sxx: f64 = xs.iter().map(|x| x * x).sum();
        let sxy: f64 = xs.iter().zip(gaps).map(|(x, y)| x * y).sum();
        let through_origin = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
        bounds.adjust(Parameter::Gap, gap, 0.0, Refit::NegativeGapRefit);
        bounds.adjust(
            Parameter::GapPerByte,
            gap_per_byte,
            through_origin,
            Refit::RefitWithZeroGap,
        );
        gap = 0.0;
        gap_per_byte = through_origin;
    }
    (gap, gap_per_byte)
}

/// Pools the constant `o` of neighbouring ranges that agree within 3 combined standard errors
/// (inverse-variance weighted): the protocols share their overhead, as every transport of the
/// paper's Table 2 does, and each range's `o` gets the precision of all of them.
pub(super) fn pool_overheads(ranges: &mut [RangeFit], poolable: &[PoolableOverhead]) {
    let mut k = 0;
    while k < ranges.len() {
        let Some((mut mean, mut se)) = poolable[k] else {
            k += 1;
            continue;
        };
        let mut end = k + 1;
        while let Some(Some((m, e))) = poolable.get(end) {
            if (m - mean).abs() > 3.0 * (se * se + e * e).sqrt() || se <= 0.0 || *e <= 0.0 {
                break;
            }
            let (wa, wb) = (se.powi(-2), e.powi(-2));
            mean = (mean * wa + m * wb) / (wa + wb);
            se = (wa + wb).powf(-0.5);
            end += 1;
        }
        if end > k + 1 && mean >= 0.0 {
            for range in &mut ranges[k..end] {
                range.overhead = mean;
            }
        }
        k = end;
    }
}

/// `s - 1` of a size's row.
fn offset(d: &SizeDiagnostics) -> f64 {
    d.size.saturating_sub(1) as f64
}

/// The one-message time `PRTT(1, 0, s) / 2` of a size's row.
fn half(d: &SizeDiagnostics) -> f64 {
    d.prtt_single / 2.0
}

/// Its least-squares weight in relative error, `1 / (PRTT(1, 0, s) / 2)²`.
fn weight(d: &SizeDiagnostics) -> f64 {
    half(d).powi(-2)
}

/// Makes range `r`'s LogGP reproduce the one-message time `PRTT(1, 0, s) / 2` over the range
/// (the default mode of [`assess_loggp`](super::assess_loggp)): `G` the slope of its weighted
/// line, `2o + L` its value at `s = 1` (range 0: through the measured `PRTT(1, 0, s_min) / 2`),
/// `g` the best `G_all(s)` fit with that `G`, `L` and `o` from [`split_end_to_end`]. Returns
/// `L`; every bound it meets is an [`Adjustment`].
pub(super) fn one_message_range(
    diagnostics: &[SizeDiagnostics],
    segment: &Segment,
    fit: &mut RangeFit,
    r: usize,
    adjustments: &mut Vec<Adjustment>,
) -> Result<f64, CalibrationError> {
    let mut points: Vec<usize> = segment.inliers().collect();
    if points.is_empty() {
        points = (segment.start..segment.end).collect();
    }
    let mut bounds = Bounds {
        range: r,
        burst_line: false,
        clamped: &mut fit.clamped,
        adjustments,
    };
    let (intercept, slope) = if r == 0 {
        line_through_smallest(diagnostics, &points, &mut bounds)
    } else {
        one_message_line(diagnostics, &points, &mut bounds)?
    };
    let gap = gap_with_slope(diagnostics, segment, &points, slope, &mut bounds);
    fit.gap = gap;
    fit.gap_per_byte = slope;
    let split = split_end_to_end(intercept, fit.overhead)?;
    if split.overlap > 0.0 {
        let overhead = fit.overhead;
        let mut bounds = Bounds {
            range: r,
            burst_line: false,
            clamped: &mut fit.clamped,
            adjustments,
        };
        bounds.adjust(
            Parameter::Latency,
            intercept - 2.0 * overhead,
            0.0,
            Refit::OverheadOverlapsRangeTime,
        );
        bounds.adjust(
            Parameter::Overhead,
            overhead,
            split.overhead,
            Refit::OverheadHalfOfRangeTime,
        );
        fit.overhead = split.overhead;
    }
    Ok(split.latency)
}

/// Range 0's one-message line, through the measured smallest message so that
/// `p2p(s_min) = PRTT(1, 0, s_min) / 2`: `(2o + L, G)`, each within its bound `>= 0`.
fn line_through_smallest(
    diagnostics: &[SizeDiagnostics],
    points: &[usize],
    bounds: &mut Bounds<'_>,
) -> (f64, f64) {
    let (x0, y0) = (offset(&diagnostics[0]), half(&diagnostics[0]));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(a, b), &i| {
        let d = &diagnostics[i];
        let dx = offset(d) - x0;
        (a + weight(d) * dx * (half(d) - y0), b + weight(d) * dx * dx)
    });
    let mut slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    if slope.is_nan() || slope < 0.0 {
        bounds.adjust(
            Parameter::GapPerByte,
            slope,
            0.0,
            Refit::FallingOneMessageConstant,
        );
        slope = 0.0;
    }
    let intercept = y0 - slope * x0;
    if intercept.is_nan() || intercept < 0.0 {
        // G (s_min - 1) > PRTT(1, 0, s_min) / 2: the line through the origin and the point
        let through = if x0 > 0.0 { y0 / x0 } else { 0.0 };
        bounds.adjust(
            Parameter::GapPerByte,
            slope,
            through,
            Refit::NegativeFixedTime,
        );
        return (0.0, through);
    }
    (intercept, slope)
}

/// A further range's one-message line, the weighted least-squares line of its
/// `PRTT(1, 0, s) / 2`: `(2o + L, G)`, each within its bound `>= 0`.
fn one_message_line(
    diagnostics: &[SizeDiagnostics],
    points: &[usize],
    bounds: &mut Bounds<'_>,
) -> Result<(f64, f64), CalibrationError> {
    let values: Vec<f64> = points.iter().map(|&i| half(&diagnostics[i])).collect();
    let weights: Vec<f64> = points.iter().map(|&i| weight(&diagnostics[i])).collect();
    let (mut intercept, mut slope) = line_through(diagnostics, points, &values, &weights, 1)?;
    let w_sum: f64 = weights.iter().sum();
    if slope.is_nan() || slope < 0.0 {
        let mean = values.iter().zip(&weights).map(|(v, w)| v * w).sum::<f64>() / w_sum;
        bounds.adjust(
            Parameter::GapPerByte,
            slope,
            0.0,
            Refit::FallingOneMessageMean,
        );
        (intercept, slope) = (mean, 0.0);
    }
    if intercept.is_nan() || intercept < 0.0 {
        let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(a, b), &i| {
            let d = &diagnostics[i];
            (
                a + weight(d) * offset(d) * half(d),
                b + weight(d) * offset(d) * offset(d),
            )
        });
        let through = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
        bounds.adjust(
            Parameter::GapPerByte,
            slope,
            through,
            Refit::OneMessageLineThroughOrigin,
        );
        (intercept, slope) = (0.0, through);
    }
    Ok((intercept, slope))
}

/// `g`: the best `G_all(s) = g + (s - 1) G` with the one-message slope `G` (least squares over
/// the range's inliers, as the burst line), within its bound `>= 0`.
fn gap_with_slope(
    diagnostics: &[SizeDiagnostics],
    segment: &Segment,
    points: &[usize],
    slope: f64,
    bounds: &mut Bounds<'_>,
) -> f64 {
    let inliers: Vec<usize> = segment.inliers().collect();
    let burst = if inliers.is_empty() { points } else { &inliers };
    let gap = burst
        .iter()
        .map(|&i| diagnostics[i].cumulative_gap - slope * offset(&diagnostics[i]))
        .sum::<f64>()
        / burst.len().max(1) as f64;
    if gap >= 0.0 {
        gap
    } else {
        bounds.adjust(Parameter::Gap, gap, 0.0, Refit::BurstLineBelowZero);
        0.0
    }
}
