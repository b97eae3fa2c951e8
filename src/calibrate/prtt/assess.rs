//! The assessment itself: per-size quantities from the samples, protocol ranges, the LogGP
//! model and the accuracy of both models against the one-message time.

use super::super::detect::{detect_changes, detect_changes_netgauge};
use super::lines::two_piece_fit;
use super::plogp::plogp_from_diagnostics;
use super::ranges::{fit_range, one_message_range, pool_overheads};
use super::{
    AssessmentConfig, LogGPAssessment, OneWayAccuracy, PrttSample, RangeFit, SizeDiagnostics,
    split_end_to_end,
};
use crate::calibrate::relative_errors;
use crate::calibrate::{Adjustment, CalibrationError, Parameter, Refit};
use crate::{CommModel, LogGP, Message, PLogP, Protocols};

/// Per-size means of the three PRTT kinds.
struct SizeData {
    size: u64,
    single: f64,
    burst: f64,
    delayed: f64,
    delay: f64,
}

fn group(samples: &[PrttSample], n: u32) -> Result<Vec<SizeData>, CalibrationError> {
    for (index, s) in samples.iter().enumerate() {
        if !(s.time > 0.0 && s.time.is_finite()) {
            return Err(CalibrationError::InvalidValue {
                what: "PRTT sample time",
                index,
                value: s.time,
            });
        }
        if !(s.delay >= 0.0 && s.delay.is_finite()) {
            return Err(CalibrationError::InvalidValue {
                what: "PRTT sample delay",
                index,
                value: s.delay,
            });
        }
    }
    // one pass: per size, (count, Σtime, Σdelay) of each kind
    #[derive(Default)]
    struct Sum {
        count: usize,
        time: f64,
        delay: f64,
    }
    let mut by_size: std::collections::BTreeMap<u64, [Sum; 3]> = Default::default();
    for s in samples {
        let kind = if s.n == 1 && s.delay == 0.0 {
            0
        } else if s.n == n && s.delay == 0.0 {
            1
        } else if s.n == n && s.delay > 0.0 {
            2
        } else {
            continue; // e.g. PRTT(2, 0, s) used only to choose d
        };
        let sum = &mut by_size.entry(s.size).or_default()[kind];
        sum.count += 1;
        sum.time += s.time;
        sum.delay += s.delay;
    }
    const WHAT: [&str; 3] = ["PRTT(1, 0, s)", "PRTT(n, 0, s)", "PRTT(n, d, s) with d > 0"];
    by_size
        .into_iter()
        .map(|(size, sums)| {
            let mut means = [(0.0, 0.0); 3];
            for (k, sum) in sums.iter().enumerate() {
                if sum.count == 0 {
                    return Err(CalibrationError::MissingMeasurement {
                        size,
                        what: WHAT[k],
                    });
                }
                means[k] = (sum.time / sum.count as f64, sum.delay / sum.count as f64);
            }
            Ok(SizeData {
                size,
                single: means[0].0,
                burst: means[1].0,
                delayed: means[2].0,
                delay: means[2].1,
            })
        })
        .collect()
}

/// Assesses LogGP parameters, with protocol ranges, from PRTT samples.
///
/// # Method
///
/// Per size `s` (samples may come unsorted and repeated; repeats are averaged), with the `n` of
/// `config` (Hoefler, Lichei, Rehm 2007, §3.2-§3.3):
///
/// ```text
/// o(s)     = (PRTT(n, d, s) - PRTT(1, 0, s)) / (n - 1) - d          (6), d > G_all(s)
/// G_all(s) = (PRTT(n, 0, s) - PRTT(1, 0, s)) / (n - 1) = g + (s - 1) G (7)
/// ```
///
/// Protocol ranges are found on the `G_all(s)` series by [`detect_changes`]. Per range,
/// the burst line `G_all(s) = g + (s - 1) G` is fitted by least squares
/// ([`RangeFit::burst_gap`], [`RangeFit::burst_gap_per_byte`]), and the overhead `o(s)` by a
/// line weighted by `1 / PRTT(n, d, s)²` (its noise grows with `PRTT(n, d, s)`, since `d` is
/// the round trip itself: the best linear estimate under multiplicative noise). LogGP's `o` is
/// a constant: the weighted mean `o(s)` when that line's slope is not significant (|t| < 3;
/// neighbouring ranges whose constant `o` agree within 3 combined standard errors share their
/// pooled estimate, as every transport of Table 2 does); otherwise the CPU time at the range's
/// small end, the median `o(s)` of its first five sizes. What grows with the size in eq. (6)'s
/// `o(s)` is not LogGP's `o`: per-byte work (LogGP charges it to `G`) and, in rendezvous
/// ranges, a blocking send waiting for its receiver (hundreds of µs on a loaded machine).
///
/// The model's `L`, `G` and `g` per range (default mode) reproduce the one-message time
/// `PRTT(1, 0, s) / 2`, LogGP's `p2p(s) = 2o + L + (s - 1) G`:
///
/// ```text
/// PRTT(1, 0, s) / 2 ≈ A + B (s - 1)   weighted least squares over the range (weights
///                                     1 / value², i.e. relative error); range 0 through the
///                                     measured PRTT(1, 0, s_min) / 2
/// G = B                               the one-message slope
/// L, o = split_end_to_end(A, o)       2o + L = A: L = A - 2o, or L = 0 and o = A / 2
///                                     when the measured o overlaps the wire time
/// g = mean over the range of G_all(s) - (s - 1) G     (the best burst gap with this G)
/// ```
///
/// LogGP has one `G` for the one-message time and the burst gap. Where the two slopes differ
/// (Open MPI's shared-memory rendezvous: one message 0.29 ns/B, a burst 0.08 ns/B on this
/// project's machine), the model takes the one-message slope — the end-to-end time of a message
/// is what `p2p` promises — and loses the burst's slope: its `g + (s - 1) G` is then the
/// burst gap only on average over the range. [`OneWayAccuracy`] states both costs (the
/// one-message error next to a direct two-piece fit, the burst-gap error next to the per-range
/// lines through `G_all(s)` alone), and the burst line stays in each [`RangeFit`].
///
/// Latency: the paper reports `L = PRTT(1, 0, 1) / 2`, the end-to-end latency
/// ([`LogGPAssessment::end_to_end_latency`], at the smallest size measured); the model's
/// `p2p(s_min)` is that measured value in both modes. In the default mode each range has its own
/// `L` (a rendezvous adds handshakes); in the Netgauge-compatible mode, Netgauge's LogGP: one
/// `L` from [`split_end_to_end`] of the end-to-end latency and the first range's `o`, `g` and `G`
/// the burst line, `o` each range's first `o(s)` — that model does not follow the one-message
/// time where `o(s)` grows (docs/ACCURACY.md).
///
/// Constraints: `g`, `G`, `o`, `L` and `2o + L` are fitted with their bounds `>= 0`. When the
/// unconstrained least-squares fit of a range breaks one, the best feasible fit lies on that
/// bound (the problem is convex): `G < 0` gives the best constant (`G = 0`, `g` = mean
/// `G_all`), `g < 0` the best line through the origin (`g = 0`, `G = Σ x y / Σ x²`,
/// `x = s - 1`), `o < 0` gives `o = 0`, and likewise for the one-message line. Every such
/// change is an [`Adjustment`] in [`LogGPAssessment::adjustments`] and in the report (the
/// burst line's as `burst_gap` / `burst_gap_per_byte` in the default mode).
///
/// `n`: when the samples hold exactly one `n >= 2` (a Netgauge file holds 10), it is used
/// whatever `config.n` says.
///
/// pLogP: [`LogGPAssessment::plogp`] is the same data as a pLogP model with size-dependent
/// overheads and gap (Kielmann, Bal, Verstoep 2000): `L = PRTT(1, 0, s_min) / 2 -
/// G_all(s_min)`, `g(m) = PRTT(1, 0, m) / 2 - L` on the weighted line of each range of the
/// one-message time (ranges from [`detect_changes`] on `PRTT(1, 0, s) / 2`; the measured
/// value at `s_min`), `o_s(m) = o_r(m)` the weighted line of `o(s)` per range. Its `p2p`
/// follows the measured one-message time, which a constant-`o` LogGP cannot when `o(s)`
/// grows; [`LogGPAssessment::one_way`] states the median and 90th-percentile relative error
/// of both models against `PRTT(1, 0, s) / 2` next to a line fitted directly to it (the best
/// two-piece line).
///
/// The first range of the model starts at 0 bytes, each further one at the first measured
/// size of its range.
///
/// # Errors
///
/// [`CalibrationError::Parameters`] naming the field of an invalid `config`
/// ([`AssessmentConfig::validate`]); [`CalibrationError::InvalidValue`] for non-finite or
/// non-positive times or negative delays; [`CalibrationError::MissingMeasurement`] when a size
/// lacks one of the three PRTTs; [`CalibrationError::TooFew`] with fewer than 2 sizes; fit
/// errors.
///
/// # References
///
/// T. Hoefler, T. Lichei, W. Rehm, "Low-overhead LogGP parameter assessment for modern
/// interconnection networks", IPDPS 2007, §3.
pub fn assess_loggp(
    samples: &[PrttSample],
    config: &AssessmentConfig,
) -> Result<LogGPAssessment, CalibrationError> {
    config.validate()?;
    // Netgauge writes n = 10, the paper uses 16: when the samples carry exactly one n >= 2,
    // it is theirs that counts
    let mut burst_ns: Vec<u32> = samples.iter().map(|s| s.n).filter(|&n| n >= 2).collect();
    burst_ns.sort_unstable();
    burst_ns.dedup();
    let n = match burst_ns.as_slice() {
        [only] => *only,
        _ => config.n,
    };
    let data = group(samples, n)?;
    if data.len() < 2 {
        return Err(CalibrationError::TooFew {
            what: "message sizes",
            needed: 2,
            got: data.len(),
        });
    }
    let n1 = f64::from(n - 1);
    let mut diagnostics: Vec<SizeDiagnostics> = data
        .iter()
        .map(|d| {
            let gap = (d.burst - d.single) / n1;
            SizeDiagnostics {
                size: d.size,
                prtt_single: d.single,
                prtt_burst: d.burst,
                prtt_delayed: d.delayed,
                delay: d.delay,
                overhead: (d.delayed - d.single) / n1 - d.delay,
                cumulative_gap: gap,
                delay_exceeds_gap: d.delay > gap,
                range: None,
                outlier: false,
            }
        })
        .collect();
    let sizes: Vec<f64> = diagnostics.iter().map(|d| d.size as f64).collect();
    let gaps: Vec<f64> = diagnostics.iter().map(|d| d.cumulative_gap).collect();
    let segments = if config.netgauge_compatible {
        detect_changes_netgauge(&sizes, &gaps)?
    } else {
        detect_changes(&sizes, &gaps, &config.detection)?
    };

    let mut ranges = Vec::with_capacity(segments.len());
    let mut poolable = Vec::with_capacity(segments.len());
    let mut adjustments = Vec::new();
    for (r, segment) in segments.iter().enumerate() {
        for (i, d) in diagnostics
            .iter_mut()
            .enumerate()
            .take(segment.end)
            .skip(segment.start)
        {
            d.range = Some(r);
            d.outlier = segment.outliers.contains(&i);
        }
        let (fit, pool) = fit_range(&diagnostics, segment, config, r, &mut adjustments)?;
        ranges.push(fit);
        poolable.push(pool);
    }
    pool_overheads(&mut ranges, &poolable);

    // L: the measured end-to-end time of the smallest message, PRTT(1, 0, s_min) / 2 (§3.4),
    // split into LogGP's L and 2o so that p2p(s_min) reproduces it
    let end_to_end_latency = diagnostics[0].prtt_single / 2.0;
    let mut latencies = Vec::with_capacity(ranges.len());
    if config.netgauge_compatible {
        let split = split_end_to_end(end_to_end_latency, ranges[0].overhead)?;
        if split.overlap > 0.0 {
            adjustments.push(Adjustment {
                range: None,
                parameter: Parameter::Latency,
                fitted: end_to_end_latency - 2.0 * ranges[0].overhead,
                used: 0.0,
                how: Refit::OverheadOverlapsEndToEnd,
            });
            adjustments.push(Adjustment {
                range: Some(0),
                parameter: Parameter::Overhead,
                fitted: ranges[0].overhead,
                used: split.overhead,
                how: Refit::OverheadQuarterOfEndToEnd,
            });
            ranges[0].overhead = split.overhead;
            ranges[0].clamped.push(Parameter::Overhead);
        }
        latencies.resize(ranges.len(), split.latency);
    } else {
        for (r, segment) in segments.iter().enumerate() {
            latencies.push(one_message_range(
                &diagnostics,
                segment,
                &mut ranges[r],
                r,
                &mut adjustments,
            )?);
        }
    }

    let mut starts = Vec::with_capacity(ranges.len());
    for (r, fit) in ranges.iter().enumerate() {
        let start = if r == 0 { 0 } else { fit.first_size };
        starts.push((
            start,
            LogGP::new(latencies[r], fit.overhead, fit.gap, fit.gap_per_byte)
                .and_then(|m| m.with_processors(2))?,
        ));
    }
    let model = Protocols::from_starts(starts)?;
    // pLogP's ranges are those of its own one-message time PRTT(1, 0, s) / 2, found by the
    // robust detection (also in the Netgauge-compatible mode: pLogP is not Netgauge's)
    let halves: Vec<f64> = diagnostics.iter().map(|d| d.prtt_single / 2.0).collect();
    let one_way_segments = detect_changes(&sizes, &halves, &config.detection)?;
    let plogp = plogp_from_diagnostics(&diagnostics, &one_way_segments, &mut adjustments)?;
    let one_way = one_way_accuracy(&diagnostics, &model, &plogp, &ranges);
    Ok(LogGPAssessment {
        model,
        end_to_end_latency,
        sizes: diagnostics,
        ranges,
        adjustments,
        plogp,
        one_way,
    })
}

/// The relative errors of both models and of the direct two-piece baseline against
/// `PRTT(1, 0, s) / 2`.
fn one_way_accuracy(
    diagnostics: &[SizeDiagnostics],
    loggp: &Protocols<LogGP>,
    plogp: &PLogP,
    ranges: &[RangeFit],
) -> OneWayAccuracy {
    let measured: Vec<f64> = diagnostics.iter().map(|d| d.prtt_single / 2.0).collect();
    let errors_of = |predict: &dyn Fn(u64) -> f64| {
        let pairs: Vec<(f64, f64)> = diagnostics
            .iter()
            .zip(&measured)
            .map(|(d, m)| (predict(d.size), *m))
            .collect();
        relative_errors(&pairs).unwrap_or((f64::NAN, f64::NAN))
    };
    let (loggp_median, loggp_p90) = errors_of(&|s| loggp.p2p(&Message::contiguous(s)));
    let (plogp_median, plogp_p90) = errors_of(&|s| plogp.p2p(&Message::contiguous(s)));
    let sizes: Vec<f64> = diagnostics.iter().map(|d| d.size as f64).collect();
    let (baseline, split) = two_piece_fit(&sizes, &measured);
    let pairs: Vec<(f64, f64)> = baseline
        .iter()
        .copied()
        .zip(measured.iter().copied())
        .collect();
    let (baseline_median, baseline_p90) = relative_errors(&pairs).unwrap_or((f64::NAN, f64::NAN));
    // the burst gap G_all(s): the model's g + (s - 1) G, and each range's line through G_all
    // alone, over the sizes with a positive G_all (Netgauge's change points have no range)
    let mut model_burst = Vec::new();
    let mut range_burst = Vec::new();
    for d in diagnostics.iter().filter(|d| d.cumulative_gap > 0.0) {
        model_burst.push((
            loggp.model_for(d.size).cumulative_gap(d.size),
            d.cumulative_gap,
        ));
        if let Some(r) = ranges
            .iter()
            .find(|r| (r.first_size..=r.last_size).contains(&d.size))
        {
            let line = r.burst_gap + r.burst_gap_per_byte * d.size.saturating_sub(1) as f64;
            range_burst.push((line, d.cumulative_gap));
        }
    }
    let (loggp_burst_median, loggp_burst_p90) =
        relative_errors(&model_burst).unwrap_or((f64::NAN, f64::NAN));
    let (burst_fit_median, burst_fit_p90) =
        relative_errors(&range_burst).unwrap_or((f64::NAN, f64::NAN));
    OneWayAccuracy {
        loggp_burst_median,
        loggp_burst_p90,
        burst_fit_median,
        burst_fit_p90,
        loggp_median,
        loggp_p90,
        plogp_median,
        plogp_p90,
        baseline_median,
        baseline_p90,
        baseline_break: diagnostics.get(split).map_or(0, |d| d.size),
    }
}
