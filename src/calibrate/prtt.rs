//! LogGP parameter assessment from parametrised round trip times (loggp-assessment §3;
//! SPEC §9-§11), and the measurement plan that feeds it.

use super::detect::{DetectionConfig, Segment, detect_changes, detect_changes_netgauge};
use super::least_squares::{FitStatistics, least_squares};
use crate::error::CalibrationError;
use crate::{LogGP, Protocols};

/// One measured parametrised round trip: the client sends `n` messages of `size` bytes, `delay`
/// seconds apart, and receives one `size`-byte reply; `time` is the round trip in seconds
/// (Listing 1 of the paper).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PrttSample {
    /// `n`, messages sent.
    pub n: u32,
    /// `d`, seconds between consecutive sends.
    pub delay: f64,
    /// `s`, bytes per message.
    pub size: u64,
    /// `PRTT(n, d, s)`, seconds.
    pub time: f64,
}

/// Settings of [`assess_loggp`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AssessmentConfig {
    /// The `n` of the `PRTT(n, 0, s)` and `PRTT(n, d, s)` samples (the paper uses 16, Netgauge
    /// 10).
    pub n: u32,
    /// Protocol-change detection settings.
    pub detection: DetectionConfig,
    /// Follow Netgauge's code where it departs from the paper (SPEC §11): its detection rule
    /// ([`super::detect_changes_netgauge`]), the fit `g + G s` instead of `g + G (s - 1)`,
    /// `L = PRTT(1, 0, s_min) / 2`, and a range's `o` taken at its first size.
    pub netgauge_compatible: bool,
}

impl Default for AssessmentConfig {
    /// The paper's method (`n = 16`) with the crate's robust detection.
    fn default() -> Self {
        Self {
            n: 16,
            detection: DetectionConfig::default(),
            netgauge_compatible: false,
        }
    }
}

impl AssessmentConfig {
    /// Netgauge's defaults: `n = 10`, its detection, its fit form.
    pub fn netgauge() -> Self {
        Self {
            n: 10,
            detection: DetectionConfig::default(),
            netgauge_compatible: true,
        }
    }
}

/// What the assessment computed for one message size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizeDiagnostics {
    /// `s`, bytes.
    pub size: u64,
    /// `PRTT(1, 0, s)` (mean of duplicates), seconds.
    pub prtt_single: f64,
    /// `PRTT(n, 0, s)`, seconds.
    pub prtt_burst: f64,
    /// `PRTT(n, d, s)`, seconds.
    pub prtt_delayed: f64,
    /// The `d` of `PRTT(n, d, s)`, seconds.
    pub delay: f64,
    /// `o(s) = (PRTT(n, d, s) - PRTT(1, 0, s)) / (n - 1) - d` (eq. 6).
    pub overhead: f64,
    /// `G_all(s) = g + (s - 1) G = (PRTT(n, 0, s) - PRTT(1, 0, s)) / (n - 1)` (eq. 7).
    pub cumulative_gap: f64,
    /// False when `d <= G_all(s)`: eq. (6) then does not hold and `o(s)` is not trustworthy.
    pub delay_exceeds_gap: bool,
    /// The protocol range holding this size (`None` for a Netgauge change point).
    pub range: Option<usize>,
    /// Left out of its range's fits as an outlier.
    pub outlier: bool,
}

/// The fit of one detected protocol range.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeFit {
    /// First measured size in the range (the model's range starts here).
    pub first_size: u64,
    /// Last measured size in the range.
    pub last_size: u64,
    /// `g`, seconds.
    pub gap: f64,
    /// `G`, seconds per byte.
    pub gap_per_byte: f64,
    /// `o`, seconds.
    pub overhead: f64,
    /// Statistics of the `G_all(s)` line fit (`g`, `G`).
    pub gap_fit: FitStatistics,
    /// Slope of `o(s)` over the range, seconds per byte (the paper notes TCP's `o` grows).
    pub overhead_slope: f64,
    /// Fitted values that came out negative and were set to 0 (their names).
    pub clamped: Vec<&'static str>,
}

/// The result of [`assess_loggp`].
#[derive(Debug, Clone, PartialEq)]
pub struct LogGPAssessment {
    /// The calibrated model, one LogGP range per detected protocol.
    pub model: Protocols<LogGP>,
    /// `PRTT(1, 0, s_min) / 2`: the end-to-end latency the paper reports as `L` (§3.4).
    pub end_to_end_latency: f64,
    /// Per-size quantities, in increasing size order.
    pub sizes: Vec<SizeDiagnostics>,
    /// Per-range fits, in increasing size order.
    pub ranges: Vec<RangeFit>,
}

/// A report for people: one line per protocol range (`L`, `o`, `g` in µs, `G` in µs/B, as
/// LogGP's `p2p` uses them), then the detected switches and the end-to-end latency. The
/// alternate form (`{:#}`) adds the per-size table the ranges were cut from: `G_all(s)` and
/// `o(s)` in µs with each size's range (`*`: left out as an outlier, `-`: a Netgauge change
/// point).
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{AssessmentConfig, PrttPlan, SimulatedProber, assess_loggp, measure_prtt};
/// use commcost::{LogGP, Protocols};
///
/// // an exact (noise-free) single-protocol LogGP link: L = 5 µs, o = 1.5 µs, g = 4 µs,
/// // G = 0.5 ns/B — the report must give back exactly these
/// let truth = Protocols::single(LogGP::new(5e-6, 1.5e-6, 4e-6, 0.5e-9, 2)?);
/// let mut prober = SimulatedProber::new(truth, 0.0, 1);
/// let plan = PrttPlan { sizes: (0..20).map(|k| 1 + 1024 * k).collect(), n: 16, passes: 1, seed: 1 };
/// let measured = measure_prtt(&mut prober, &plan)?;
/// let report = assess_loggp(&measured.samples, &AssessmentConfig::default())?.to_string();
/// assert!(report.contains("L = 5.000 µs, o = 1.500 µs, g = 4.000 µs, G = 0.000500 µs/B"));
/// assert!(report.contains("protocol switches detected: none"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl std::fmt::Display for LogGPAssessment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for r in &self.ranges {
            let m = self.model.model_for(r.first_size);
            writeln!(
                f,
                "  {:>8} … {:>8} B: L = {:.3} µs, o = {:.3} µs, g = {:.3} µs, G = {:.6} µs/B",
                r.first_size,
                r.last_size,
                m.latency() * 1e6,
                m.overhead() * 1e6,
                m.gap() * 1e6,
                m.gap_per_byte() * 1e6
            )?;
        }
        if f.alternate() {
            writeln!(
                f,
                "  {:>8} {:>12} {:>12} {:>6}",
                "size", "G_all (µs)", "o(s) (µs)", "range"
            )?;
            for d in &self.sizes {
                let range = d.range.map_or("-".to_string(), |r| {
                    format!("{r}{}", if d.outlier { "*" } else { "" })
                });
                writeln!(
                    f,
                    "  {:>8} {:>12.4} {:>12.4} {:>6}",
                    d.size,
                    d.cumulative_gap * 1e6,
                    d.overhead * 1e6,
                    range
                )?;
            }
        }
        let switches: Vec<String> = self
            .model
            .switch_points()
            .map(|s| format!("{s} B"))
            .collect();
        write!(
            f,
            "  protocol switches detected: {}; end-to-end latency {:.3} µs",
            if switches.is_empty() {
                "none".to_string()
            } else {
                switches.join(", ")
            },
            self.end_to_end_latency * 1e6
        )
    }
}

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
/// `config` (SPEC §9):
///
/// ```text
/// o(s)     = (PRTT(n, d, s) - PRTT(1, 0, s)) / (n - 1) - d          (6), d > G_all(s)
/// G_all(s) = (PRTT(n, 0, s) - PRTT(1, 0, s)) / (n - 1) = g + (s - 1) G (7)
/// ```
///
/// Protocol ranges are found on the `G_all(s)` series by [`super::detect_changes`]. Per range,
/// `g` and `G` are the least-squares line through its `G_all(s)` (`g` its value at `s = 1`, `G`
/// its slope) and `o` is the range's `o(s)` line at its first size — the mean `o(s)` when that
/// line's slope is not significant (|t| < 3; LogGP's `o` is a constant, and the mean halves the
/// noise). `o(s)` carries the noise of `PRTT(n, d, s)`, which grows with the size (`d` is the
/// round trip itself), so both are weighted by `1 / PRTT(n, d, s)²` — the best linear
/// estimate under multiplicative noise. Neighbouring ranges whose constant `o` agree within 3
/// combined standard errors share their pooled estimate (as every transport of Table 2 does).
/// Negative fitted values are set to 0 and reported.
///
/// Latency: the paper reports `L = PRTT(1, 0, 1) / 2`, the end-to-end latency
/// ([`LogGPAssessment::end_to_end_latency`], at the smallest size measured). As LogGP's `p2p`
/// adds `2o` to `L`, the model's `L` is that minus `2o`, taken from the first range's
/// `PRTT(1, 0, s) / 2` line at its first size so that the model's `p2p` reproduces the
/// measured half round trip — and the `L` of eq. (1).
///
/// The first range of the model starts at 0 bytes, each further one at the first measured
/// size of its range.
///
/// # Errors
///
/// [`CalibrationError::InvalidValue`] for non-finite or non-positive times or negative
/// delays; [`CalibrationError::MissingMeasurement`] when a size lacks one of the three PRTTs;
/// [`CalibrationError::TooFew`] with fewer than 2 sizes; fit errors.
///
/// # References
///
/// T. Hoefler, T. Lichei, W. Rehm, "Low-overhead LogGP parameter assessment for modern
/// interconnection networks", IPDPS 2007, §3.
pub fn assess_loggp(
    samples: &[PrttSample],
    config: &AssessmentConfig,
) -> Result<LogGPAssessment, CalibrationError> {
    if config.n < 2 {
        return Err(CalibrationError::TooFew {
            what: "n of the PRTT(n, ., s) samples",
            needed: 2,
            got: config.n as usize,
        });
    }
    let data = group(samples, config.n)?;
    if data.len() < 2 {
        return Err(CalibrationError::TooFew {
            what: "message sizes",
            needed: 2,
            got: data.len(),
        });
    }
    let n1 = f64::from(config.n - 1);
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
        let (fit, pool) = fit_range(&diagnostics, segment, config)?;
        ranges.push(fit);
        poolable.push(pool);
    }
    pool_overheads(&mut ranges, &poolable);

    let first = &ranges[0];
    let smallest = &diagnostics[0];
    let end_to_end_latency = smallest.prtt_single / 2.0;
    let latency = if config.netgauge_compatible {
        end_to_end_latency
    } else {
        let inliers: Vec<usize> = segments[0].inliers().collect();
        let half_rtt: Vec<f64> = inliers
            .iter()
            .map(|&i| diagnostics[i].prtt_single / 2.0)
            .collect();
        let weights: Vec<f64> = half_rtt.iter().map(|h| h.powi(-2)).collect();
        let (at_first, _) = line_at_first(
            &diagnostics,
            &inliers,
            &half_rtt,
            &weights,
            first.first_size,
        )?;
        at_first - 2.0 * first.overhead
    };
    let latency = latency.max(0.0);

    let mut starts = Vec::with_capacity(ranges.len());
    for (r, fit) in ranges.iter().enumerate() {
        let start = if r == 0 { 0 } else { fit.first_size };
        starts.push((
            start,
            LogGP::new(latency, fit.overhead, fit.gap, fit.gap_per_byte, 2)?,
        ));
    }
    Ok(LogGPAssessment {
        model: Protocols::from_starts(starts)?,
        end_to_end_latency,
        sizes: diagnostics,
        ranges,
    })
}

/// The weighted least-squares line through `(size, value)` of the given points (weights
/// `weights[k]` for `points[k]`), evaluated at `at`, and the t statistic of its slope (infinite
/// for exact data, 0 when the points hold one size).
fn line_at_first(
    diagnostics: &[SizeDiagnostics],
    points: &[usize],
    values: &[f64],
    weights: &[f64],
    at: u64,
) -> Result<(f64, f64), CalibrationError> {
    let weighted_mean = || {
        let w: f64 = weights.iter().sum();
        values.iter().zip(weights).map(|(v, w)| v * w).sum::<f64>() / w
    };
    if points.len() < 2 {
        return Ok((values.first().copied().unwrap_or(0.0), 0.0));
    }
    // rows scaled by sqrt(w): ordinary least squares on them is weighted least squares
    let design: Vec<f64> = points
        .iter()
        .zip(weights)
        .flat_map(|(&i, w)| {
            let r = w.sqrt();
            [r, r * (diagnostics[i].size as f64 - at as f64)]
        })
        .collect();
    let scaled: Vec<f64> = values
        .iter()
        .zip(weights)
        .map(|(v, w)| v * w.sqrt())
        .collect();
    match least_squares(&design, 2, &scaled) {
        Ok(fit) => {
            let [intercept, slope] = [fit.coefficients()[0], fit.coefficients()[1]];
            // standard error of the slope: sigma / sqrt(Σ w (x - x̄_w)²)
            let w_sum: f64 = weights.iter().sum();
            let x_mean = points
                .iter()
                .zip(weights)
                .map(|(&i, w)| w * diagnostics[i].size as f64)
                .sum::<f64>()
                / w_sum;
            let sxx: f64 = points
                .iter()
                .zip(weights)
                .map(|(&i, w)| w * (diagnostics[i].size as f64 - x_mean).powi(2))
                .sum();
            let t = match fit.training().sigma_eps() {
                Some(sigma) if sigma > 0.0 => slope.abs() / (sigma / sxx.sqrt()),
                _ => f64::INFINITY,
            };
            Ok((intercept, t))
        }
        // all points at one size: a constant
        Err(crate::FitError::RankDeficient { .. }) => Ok((weighted_mean(), 0.0)),
        Err(e) => Err(e.into()),
    }
}

/// A range's constant-`o` estimate and its standard error, for pooling (`None` when its `o(s)`
/// has a significant slope, or cannot be estimated).
type PoolableOverhead = Option<(f64, f64)>;

fn fit_range(
    diagnostics: &[SizeDiagnostics],
    segment: &Segment,
    config: &AssessmentConfig,
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
    let (gap, gap_per_byte, gap_fit) = if inliers.len() >= 2 {
        let design: Vec<f64> = inliers
            .iter()
            .flat_map(|&i| [1.0, diagnostics[i].size as f64 - shift])
            .collect();
        let fit = least_squares(&design, 2, &gaps)?;
        (
            fit.coefficients()[0],
            fit.coefficients()[1],
            *fit.training(),
        )
    } else {
        let design = [1.0];
        let fit = least_squares(&design, 1, &gaps[..1])?;
        (gaps[0], 0.0, *fit.training())
    };
    let overheads: Vec<f64> = inliers.iter().map(|&i| diagnostics[i].overhead).collect();
    // o(s) inherits the noise of PRTT(n, d, s), which grows with it: weight 1 / PRTT(n, d, s)²
    let weights: Vec<f64> = inliers
        .iter()
        .map(|&i| diagnostics[i].prtt_delayed.powi(-2))
        .collect();
    let (overhead_at_first, t) =
        line_at_first(diagnostics, &inliers, &overheads, &weights, first_size)?;
    let mean_overhead = overheads
        .iter()
        .zip(&weights)
        .map(|(o, w)| o * w)
        .sum::<f64>()
        / weights.iter().sum::<f64>();
    let overhead = if config.netgauge_compatible {
        diagnostics[segment.start].overhead
    } else if t >= 3.0 {
        overhead_at_first
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
    let overhead_slope = if inliers.len() >= 2 {
        let design: Vec<f64> = inliers
            .iter()
            .flat_map(|&i| [1.0, diagnostics[i].size as f64])
            .collect();
        least_squares(&design, 2, &overheads).map_or(0.0, |f| f.coefficients()[1])
    } else {
        0.0
    };
    let mut clamped = Vec::new();
    let mut non_negative = |name: &'static str, v: f64| {
        if v < 0.0 {
            clamped.push(name);
            0.0
        } else {
            v
        }
    };
    let fit = RangeFit {
        first_size,
        last_size,
        gap: non_negative("gap", gap),
        gap_per_byte: non_negative("gap_per_byte", gap_per_byte),
        overhead: non_negative("overhead", overhead),
        gap_fit,
        overhead_slope,
        clamped,
    };
    Ok((fit, poolable))
}

/// Pools the constant `o` of neighbouring ranges that agree within 3 combined standard errors
/// (inverse-variance weighted): the protocols share their overhead, as every transport of the
/// paper's Table 2 does, and each range's `o` gets the precision of all of them.
fn pool_overheads(ranges: &mut [RangeFit], poolable: &[PoolableOverhead]) {
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

/// Takes one `PRTT(n, d, s)` measurement: Listing 1 of the paper, on whatever transport
/// implements it (loopback TCP, MPI, a simulator).
pub trait Prober {
    /// The round trip, in seconds, of `n` messages of `size` bytes sent `delay` seconds apart
    /// and one `size`-byte reply.
    ///
    /// # Errors
    ///
    /// Whatever stops the measurement, as [`CalibrationError::Probe`].
    fn prtt(&mut self, n: u32, delay: f64, size: u64) -> Result<f64, CalibrationError>;
}

/// A [`Prober`] that answers from a LogGP model instead of a network: eq. (1) and (5) of the
/// paper, `PRTT(n, d, s) = 2 (L + 2o + (s - 1) G) + (n - 1) max(o + d, G_all(s))`, each answer
/// multiplied by an independent uniform factor in `[1 - noise, 1 + noise]` (seeded).
///
/// For testing calibration pipelines and for what-if studies ("how well would the assessment
/// recover this transport with 1 % noise?"); it measures nothing.
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{Prober, SimulatedProber};
/// use commcost::presets;
///
/// let mut prober = SimulatedProber::new(presets::open_mpi_openib(), 0.0, 1);
/// // PRTT(1, 0, 1) = 2 (5.96 + 2 · 4.72) µs = 30.8 µs
/// assert!((prober.prtt(1, 0.0, 1)? - 30.8e-6).abs() < 1e-15);
/// # Ok::<(), commcost::CalibrationError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SimulatedProber {
    model: Protocols<LogGP>,
    noise: f64,
    rng: u64,
}

impl SimulatedProber {
    /// A prober for `model` with relative noise `noise` (0.01 for ±1 %) and a seed.
    pub fn new(model: Protocols<LogGP>, noise: f64, seed: u64) -> Self {
        Self {
            model,
            noise: if noise.is_finite() {
                noise.abs().min(0.99)
            } else {
                0.0
            },
            rng: seed,
        }
    }
}

impl Prober for SimulatedProber {
    fn prtt(&mut self, n: u32, delay: f64, size: u64) -> Result<f64, CalibrationError> {
        let m = self.model.model_for(size);
        let single = 2.0
            * (m.latency() + 2.0 * m.overhead() + size.saturating_sub(1) as f64 * m.gap_per_byte());
        let time = single
            + f64::from(n.saturating_sub(1)) * (m.overhead() + delay).max(m.cumulative_gap(size));
        let mut rng = SplitMix64(self.rng);
        let unit = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        self.rng = rng.0;
        Ok(time * (1.0 + self.noise * (2.0 * unit - 1.0)))
    }
}

/// What [`measure_prtt`] measures.
#[derive(Debug, Clone, PartialEq)]
pub struct PrttPlan {
    /// Message sizes, bytes.
    pub sizes: Vec<u64>,
    /// `n` (16 in the paper).
    pub n: u32,
    /// Measurement passes over the sizes (each in its own shuffled order).
    pub passes: usize,
    /// Seed of the shuffles.
    pub seed: u64,
}

/// How much the passes of [`measure_prtt`] disagreed at one size: `(max - min) / median` of
/// each PRTT kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrttSpread {
    /// Message size, bytes.
    pub size: u64,
    /// Relative spread of `PRTT(1, 0, s)`.
    pub single: f64,
    /// Relative spread of `PRTT(n, 0, s)`.
    pub burst: f64,
    /// Relative spread of `PRTT(n, d, s)`.
    pub delayed: f64,
}

/// The result of [`measure_prtt`]: the median samples for [`assess_loggp`] and the spread.
#[derive(Debug, Clone, PartialEq)]
pub struct PrttMeasurement {
    /// One sample per size and kind (medians over the passes).
    pub samples: Vec<PrttSample>,
    /// Per-size spread over the passes.
    pub spread: Vec<PrttSpread>,
}

/// SplitMix64: a small seeded generator for the shuffles.
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Fisher-Yates shuffle.
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}

pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Measures exactly the samples [`assess_loggp`] needs, robustly against drift of the machine.
///
/// # Method
///
/// A pilot pass (sizes in shuffled order) measures `PRTT(1, 0, s)` and `PRTT(n, 0, s)` and fixes
/// each size's delay `d = PRTT(1, 0, s)` — or `d = PRTT(2, 0, s)` when `PRTT(1, 0, s)` does not
/// exceed `G_all(s)` (the paper's fallback for tiny `L` and large `g`). Then `passes` passes, each
/// over the sizes in its own seeded shuffled order, measure `PRTT(1, 0, s)`, `PRTT(n, 0, s)` and
/// `PRTT(n, d, s)`; the median over the passes is kept and the spread reported.
///
/// Netgauge measures sizes in increasing order, so a slow drift or a level shift of the machine
/// (real loopback runs show 2-3× shifts lasting dozens of sizes) is indistinguishable from a
/// protocol change. Shuffling decorrelates time from size, and the median of several passes
/// removes what a shift does to one pass.
///
/// # Errors
///
/// [`CalibrationError::TooFew`] for no sizes, `n < 2` or no passes; the prober's errors.
pub fn measure_prtt(
    prober: &mut dyn Prober,
    plan: &PrttPlan,
) -> Result<PrttMeasurement, CalibrationError> {
    if plan.sizes.is_empty() || plan.passes == 0 || plan.n < 2 {
        return Err(CalibrationError::TooFew {
            what: "sizes, passes and n (>= 2) of the PRTT plan",
            needed: 1,
            got: 0,
        });
    }
    let mut rng = SplitMix64(plan.seed);
    let mut order: Vec<usize> = (0..plan.sizes.len()).collect();
    let n1 = f64::from(plan.n - 1);
    let mut delays = vec![0.0; plan.sizes.len()];
    rng.shuffle(&mut order);
    for &k in &order {
        let s = plan.sizes[k];
        let single = prober.prtt(1, 0.0, s)?;
        let burst = prober.prtt(plan.n, 0.0, s)?;
        delays[k] = if single > (burst - single) / n1 {
            single
        } else {
            prober.prtt(2, 0.0, s)?
        };
    }
    let mut runs = vec![[Vec::new(), Vec::new(), Vec::new()]; plan.sizes.len()];
    for _ in 0..plan.passes {
        rng.shuffle(&mut order);
        for &k in &order {
            let s = plan.sizes[k];
            runs[k][0].push(prober.prtt(1, 0.0, s)?);
            runs[k][1].push(prober.prtt(plan.n, 0.0, s)?);
            runs[k][2].push(prober.prtt(plan.n, delays[k], s)?);
        }
    }
    let mut samples = Vec::with_capacity(3 * plan.sizes.len());
    let mut spread = Vec::with_capacity(plan.sizes.len());
    for (k, kinds) in runs.iter_mut().enumerate() {
        let size = plan.sizes[k];
        let mut relative = [0.0; 3];
        let mut medians = [0.0; 3];
        for (j, values) in kinds.iter_mut().enumerate() {
            medians[j] = median(values);
            let (lo, hi) = (values[0], values[values.len() - 1]);
            relative[j] = (hi - lo) / medians[j];
        }
        samples.push(PrttSample {
            n: 1,
            delay: 0.0,
            size,
            time: medians[0],
        });
        samples.push(PrttSample {
            n: plan.n,
            delay: 0.0,
            size,
            time: medians[1],
        });
        samples.push(PrttSample {
            n: plan.n,
            delay: delays[k],
            size,
            time: medians[2],
        });
        spread.push(PrttSpread {
            size,
            single: relative[0],
            burst: relative[1],
            delayed: relative[2],
        });
    }
    Ok(PrttMeasurement { samples, spread })
}
