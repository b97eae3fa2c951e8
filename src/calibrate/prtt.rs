//! LogGP parameter assessment from parametrised round trip times (Hoefler, Lichei, Rehm, "Low-overhead LogGP parameter assessment for modern interconnection
//! networks", IPDPS 2007, §3), and the measurement plan that feeds it.

use super::detect::{DetectionConfig, Segment, detect_changes, detect_changes_netgauge};
use super::least_squares::{FitStatistics, least_squares};
use crate::error::{CalibrationError, ParameterError};
use crate::{CommModel, LogGP, Message, PLogP, Protocols, Table1D};

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
///
/// Deserialisation rejects unknown fields and runs [`validate`](Self::validate).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "AssessmentConfigFields")
)]
pub struct AssessmentConfig {
    /// The `n` of the `PRTT(n, 0, s)` and `PRTT(n, d, s)` samples (the paper uses 16, Netgauge
    /// 10). When the samples hold exactly one `n >= 2`, [`assess_loggp`] takes theirs.
    pub n: u32,
    /// Protocol-change detection settings.
    pub detection: DetectionConfig,
    /// Follow Netgauge's code where it departs from the paper (Netgauge's `ptrn_loggp.c`): its detection rule
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

#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AssessmentConfigFields {
    n: u32,
    detection: DetectionConfig,
    netgauge_compatible: bool,
}

#[cfg(feature = "serde")]
impl TryFrom<AssessmentConfigFields> for AssessmentConfig {
    type Error = ParameterError;
    fn try_from(f: AssessmentConfigFields) -> Result<Self, Self::Error> {
        let config = Self {
            n: f.n,
            detection: f.detection,
            netgauge_compatible: f.netgauge_compatible,
        };
        config.validate()?;
        Ok(config)
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

    /// Checks the settings: `n >= 2` and a valid [`DetectionConfig`].
    ///
    /// # Errors
    ///
    /// [`ParameterError`] naming the field (`n`, or the detection field).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::calibrate::AssessmentConfig;
    /// assert!(AssessmentConfig::default().validate().is_ok());
    /// let bad = AssessmentConfig { n: 1, ..AssessmentConfig::default() };
    /// assert!(bad.validate().unwrap_err().to_string().contains("`n`"));
    /// ```
    pub fn validate(&self) -> Result<(), ParameterError> {
        ParameterError::at_least("n", u64::from(self.n), 2)?;
        self.detection.validate()
    }
}

/// How an end-to-end latency and a per-end overhead become LogGP's `L` and `o`
/// ([`split_end_to_end`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencySplit {
    /// The model's `L`: `L_e2e - 2o`, or 0 when the overheads overlap the wire time.
    pub latency: f64,
    /// The model's `o`: the measured `o`, or `L_e2e / 2` when `2o > L_e2e`.
    pub overhead: f64,
    /// `o - L_e2e / 2` when `2o > L_e2e`: the share of each end's measured overhead that
    /// overlaps the wire time (or the other end's overhead); 0 otherwise.
    pub overlap: f64,
}

/// Splits a measured end-to-end latency `L_e2e = PRTT(1, 0, 1) / 2` and a measured overhead
/// `o` into the `L` and `o` of LogGP's `p2p = 2o + L + (s - 1) G`, so that the model's 1-byte
/// time is the measured one.
///
/// # Formula
///
/// The paper's and Netgauge's `L` is the end-to-end time of a 1-byte message (Hoefler,
/// Lichei, Rehm 2007, §3.4); LogGP's `p2p` adds `2o` to its `L` (Alexandrov et al. 1995,
/// eq. (1) of the 2007 paper), so:
///
/// ```text
/// 2o <= L_e2e:  L = L_e2e - 2o,  o = o                       (the wire time alone)
/// 2o >  L_e2e:  L = 0,           o = L_e2e / 2,  overlap = o_measured - L_e2e / 2
/// ```
///
/// The second case happens in Table 2 of the paper (NMPI/SCI: `L = 5.48`, `o = 6.10` µs;
/// Open MPI/openib: `5.96`, `4.72` µs): the measured overhead overlaps the wire time, and a
/// model whose `p2p` is `2o + L` can only keep the end-to-end time by giving up the part of `o`
/// that overlaps. That part is returned (`overlap`), and [`assess_loggp`] reports it as an
/// [`Adjustment`]; never a silent clamp.
///
/// # Errors
///
/// [`ParameterError`] naming `end_to_end_latency` or `overhead` when negative or not finite.
///
/// # Examples
///
/// ```
/// use commcost::calibrate::split_end_to_end;
/// // MPICH2/TCP, Table 2: L = 45.74 µs end to end, o = 3.46 µs
/// let tcp = split_end_to_end(45.74e-6, 3.46e-6)?;
/// assert!((tcp.latency - 38.82e-6).abs() < 1e-12 && tcp.overlap == 0.0);
/// // Open MPI/openib: 2 · 4.72 > 5.96: o = 2.98 µs, L = 0, 1.74 µs of overlap
/// let ib = split_end_to_end(5.96e-6, 4.72e-6)?;
/// assert!((ib.overhead - 2.98e-6).abs() < 1e-12 && ib.latency == 0.0);
/// assert!((ib.overlap - 1.74e-6).abs() < 1e-12);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
pub fn split_end_to_end(
    end_to_end_latency: f64,
    overhead: f64,
) -> Result<LatencySplit, ParameterError> {
    let end_to_end = ParameterError::non_negative("end_to_end_latency", end_to_end_latency)?;
    let overhead = ParameterError::non_negative("overhead", overhead)?;
    Ok(if 2.0 * overhead <= end_to_end {
        LatencySplit {
            latency: end_to_end - 2.0 * overhead,
            overhead,
            overlap: 0.0,
        }
    } else {
        LatencySplit {
            latency: 0.0,
            overhead: end_to_end / 2.0,
            overlap: overhead - end_to_end / 2.0,
        }
    })
}

/// A fitted value the assessment could not use as fitted, and what it used instead.
#[derive(Debug, Clone, PartialEq)]
pub struct Adjustment {
    /// The protocol range (index into [`LogGPAssessment::ranges`]); `None` for `L`.
    pub range: Option<usize>,
    /// The parameter (`"latency"`, `"overhead"`, `"gap"`, `"gap_per_byte"`; `"burst_gap"`,
    /// `"burst_gap_per_byte"` for the line through `G_all(s)` alone in the default mode;
    /// `"plogp latency"`, `"plogp gap"`, `"plogp overhead"`).
    pub parameter: &'static str,
    /// The unconstrained fit's value (seconds, or seconds per byte).
    pub fitted: f64,
    /// The value the model uses.
    pub used: f64,
    /// How the used value was obtained.
    pub how: &'static str,
}

/// How well a model's `p2p(s)` reproduces the measured one-message time `PRTT(1, 0, s) / 2`
/// over the measured sizes, next to a baseline that fits that time directly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OneWayAccuracy {
    /// Median of `|p2p(s) - PRTT(1, 0, s) / 2| / (PRTT(1, 0, s) / 2)` of the LogGP model.
    pub loggp_median: f64,
    /// 90th percentile of the same.
    pub loggp_p90: f64,
    /// Median relative error of [`LogGPAssessment::plogp`]'s model.
    pub plogp_median: f64,
    /// 90th percentile of the same.
    pub plogp_p90: f64,
    /// Median relative error of the baseline: the best two-piece line fitted directly to
    /// `PRTT(1, 0, s) / 2` (least squares in relative error, every break tried).
    pub baseline_median: f64,
    /// 90th percentile of the same.
    pub baseline_p90: f64,
    /// First size of the baseline's second piece.
    pub baseline_break: u64,
    /// Median of `|g + (s - 1) G - G_all(s)| / G_all(s)` of the LogGP model over the sizes
    /// (what its `G` costs the burst gap; sizes with `G_all(s) <= 0` left out).
    pub loggp_burst_median: f64,
    /// 90th percentile of the same.
    pub loggp_burst_p90: f64,
    /// Median relative error of the per-range lines fitted to `G_all(s)` alone
    /// ([`RangeFit::burst_gap`], [`RangeFit::burst_gap_per_byte`]): the burst gap's baseline.
    pub burst_fit_median: f64,
    /// 90th percentile of the same.
    pub burst_fit_p90: f64,
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
    /// `g`, seconds: the model's (see [`assess_loggp`]).
    pub gap: f64,
    /// `G`, seconds per byte: the model's — in the default mode the slope of the one-message
    /// time `PRTT(1, 0, s) / 2` over the range (see [`assess_loggp`]).
    pub gap_per_byte: f64,
    /// `o`, seconds.
    pub overhead: f64,
    /// `g` of the range's constrained line through `G_all(s)` alone (eq. (7)), seconds: what
    /// the burst says. Equal to [`gap`](Self::gap) in the Netgauge-compatible mode.
    pub burst_gap: f64,
    /// `G` of the same line (the burst rate), seconds per byte. Equal to
    /// [`gap_per_byte`](Self::gap_per_byte) in the Netgauge-compatible mode.
    pub burst_gap_per_byte: f64,
    /// Statistics of the unconstrained `G_all(s)` line fit (`g`, `G`).
    pub gap_fit: FitStatistics,
    /// Slope of `o(s)` over the range, seconds per byte (the paper notes TCP's `o` grows).
    pub overhead_slope: f64,
    /// Fitted values the model does not use as fitted (their names; the values and how they
    /// were refitted are in [`LogGPAssessment::adjustments`]).
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
    /// Every fitted value the model does not use as fitted (`L` included), in the order they
    /// were made.
    pub adjustments: Vec<Adjustment>,
    /// The same measurements as a pLogP model (Kielmann, Bal, Verstoep 2000) with
    /// size-dependent overheads and gap, on the ranges [`super::detect_changes`] finds in
    /// `PRTT(1, 0, s) / 2` (see [`assess_loggp`]).
    pub plogp: PLogP,
    /// Per-size error of both models against the measured `PRTT(1, 0, s) / 2`, next to a
    /// direct two-piece line fit of it.
    pub one_way: OneWayAccuracy,
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
            write!(
                f,
                "  {:>8} … {:>8} B: L = {:.3} µs, o = {:.3} µs, g = {:.3} µs, G = {:.6} µs/B",
                r.first_size,
                r.last_size,
                m.latency() * 1e6,
                m.overhead() * 1e6,
                m.gap() * 1e6,
                m.gap_per_byte() * 1e6
            )?;
            // the burst line alone, where the model's g, G are not it
            let differs = |a: f64, b: f64| (a - b).abs() > 1e-9 * a.abs().max(b.abs());
            if differs(r.burst_gap, r.gap) || differs(r.burst_gap_per_byte, r.gap_per_byte) {
                write!(
                    f,
                    " (G_all alone: g = {:.3} µs, G = {:.6} µs/B)",
                    r.burst_gap * 1e6,
                    r.burst_gap_per_byte * 1e6
                )?;
            }
            writeln!(f)?;
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
        for a in &self.adjustments {
            writeln!(
                f,
                "  adjusted {}{}: fitted {:.6} -> {:.6} µs{} ({})",
                a.parameter,
                a.range.map_or(String::new(), |r| format!(" of range {r}")),
                a.fitted * 1e6,
                a.used * 1e6,
                if a.parameter == "gap_per_byte" {
                    "/B"
                } else {
                    ""
                },
                a.how
            )?;
        }
        let w = &self.one_way;
        writeln!(
            f,
            "  PRTT(1,0,s)/2 relative error, median (90th): LogGP {:.1} % ({:.1} %), pLogP {:.1} % ({:.1} %), direct two-piece line fit {:.1} % ({:.1} %, break at {} B)",
            w.loggp_median * 100.0,
            w.loggp_p90 * 100.0,
            w.plogp_median * 100.0,
            w.plogp_p90 * 100.0,
            w.baseline_median * 100.0,
            w.baseline_p90 * 100.0,
            w.baseline_break
        )?;
        writeln!(
            f,
            "  G_all(s) relative error, median (90th): LogGP {:.1} % ({:.1} %), per-range lines through G_all alone {:.1} % ({:.1} %)",
            w.loggp_burst_median * 100.0,
            w.loggp_burst_p90 * 100.0,
            w.burst_fit_median * 100.0,
            w.burst_fit_p90 * 100.0
        )?;
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
/// `config` (Hoefler, Lichei, Rehm 2007, §3.2-§3.3):
///
/// ```text
/// o(s)     = (PRTT(n, d, s) - PRTT(1, 0, s)) / (n - 1) - d          (6), d > G_all(s)
/// G_all(s) = (PRTT(n, 0, s) - PRTT(1, 0, s)) / (n - 1) = g + (s - 1) G (7)
/// ```
///
/// Protocol ranges are found on the `G_all(s)` series by [`super::detect_changes`]. Per range,
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
/// one-message time (ranges from [`super::detect_changes`] on `PRTT(1, 0, s) / 2`; the measured
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
                parameter: "latency",
                fitted: end_to_end_latency - 2.0 * ranges[0].overhead,
                used: 0.0,
                how: "2o > PRTT(1, 0, s_min) / 2: the overhead overlaps the wire time (split_end_to_end)",
            });
            adjustments.push(Adjustment {
                range: Some(0),
                parameter: "overhead",
                fitted: ranges[0].overhead,
                used: split.overhead,
                how: "o = PRTT(1, 0, s_min) / 4, so that 2o + L is the measured end-to-end time",
            });
            ranges[0].overhead = split.overhead;
            ranges[0].clamped.push("overhead");
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
            LogGP::new(latencies[r], fit.overhead, fit.gap, fit.gap_per_byte, 2)?,
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

/// Makes range `r`'s LogGP reproduce the one-message time `PRTT(1, 0, s) / 2` over the range
/// (the default mode of [`assess_loggp`]): `G` the slope of its weighted line, `2o + L` its
/// value at `s = 1` (range 0: through the measured `PRTT(1, 0, s_min) / 2`), `g` the best
/// `G_all(s)` fit with that `G`, `L` and `o` from [`split_end_to_end`]. Returns `L`; every
/// bound it meets is an [`Adjustment`].
fn one_message_range(
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
    let x = |i: usize| diagnostics[i].size.saturating_sub(1) as f64;
    let half = |i: usize| diagnostics[i].prtt_single / 2.0;
    // least squares in relative error: weights 1 / (PRTT(1, 0, s) / 2)²
    let w = |i: usize| half(i).powi(-2);
    let mut adjust = |parameter: &'static str, fitted: f64, used: f64, how: &'static str| {
        fit.clamped.push(parameter);
        adjustments.push(Adjustment {
            range: Some(r),
            parameter,
            fitted,
            used,
            how,
        });
    };
    let (mut intercept, mut slope);
    if r == 0 {
        // through the measured smallest message, so that p2p(s_min) = PRTT(1, 0, s_min) / 2
        let (x0, y0) = (x(0), half(0));
        let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(a, b), &i| {
            let dx = x(i) - x0;
            (a + w(i) * dx * (half(i) - y0), b + w(i) * dx * dx)
        });
        slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        if slope.is_nan() || slope < 0.0 {
            adjust(
                "gap_per_byte",
                slope,
                0.0,
                "the one-message time falls over the range: G = 0 (p2p constant, the measured PRTT(1, 0, s_min) / 2)",
            );
            slope = 0.0;
        }
        intercept = y0 - slope * x0;
        if intercept.is_nan() || intercept < 0.0 {
            // G (s_min - 1) > PRTT(1, 0, s_min) / 2: the line through the origin and the point
            let through = if x0 > 0.0 { y0 / x0 } else { 0.0 };
            adjust(
                "gap_per_byte",
                slope,
                through,
                "2o + L < 0 at s = 1: G = PRTT(1, 0, s_min) / 2 / (s_min - 1), 2o + L = 0",
            );
            (intercept, slope) = (0.0, through);
        }
    } else {
        let values: Vec<f64> = points.iter().map(|&i| half(i)).collect();
        let weights: Vec<f64> = points.iter().map(|&i| w(i)).collect();
        (intercept, slope) = line_through(diagnostics, &points, &values, &weights, 1)?;
        let w_sum: f64 = weights.iter().sum();
        if slope.is_nan() || slope < 0.0 {
            let mean = values.iter().zip(&weights).map(|(v, w)| v * w).sum::<f64>() / w_sum;
            adjust(
                "gap_per_byte",
                slope,
                0.0,
                "the one-message time falls over the range: G = 0, 2o + L = its weighted mean",
            );
            (intercept, slope) = (mean, 0.0);
        }
        if intercept.is_nan() || intercept < 0.0 {
            let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(a, b), &i| {
                (a + w(i) * x(i) * half(i), b + w(i) * x(i) * x(i))
            });
            let through = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
            adjust(
                "gap_per_byte",
                slope,
                through,
                "the one-message line is below 0 at s = 1: 2o + L = 0, G through the origin",
            );
            (intercept, slope) = (0.0, through);
        }
    }
    // g: the best G_all(s) = g + (s - 1) G with this G (least squares, as the burst line)
    let burst: Vec<usize> = segment.inliers().collect();
    let burst = if burst.is_empty() { points } else { burst };
    let gap = burst
        .iter()
        .map(|&i| diagnostics[i].cumulative_gap - slope * x(i))
        .sum::<f64>()
        / burst.len().max(1) as f64;
    let gap = if gap >= 0.0 {
        gap
    } else {
        adjust(
            "gap",
            gap,
            0.0,
            "G_all(s) - (s - 1) G averages below 0 over the range (G: the one-message slope): g = 0",
        );
        0.0
    };
    fit.gap = gap;
    fit.gap_per_byte = slope;
    let split = split_end_to_end(intercept, fit.overhead)?;
    if split.overlap > 0.0 {
        let overhead = fit.overhead;
        let mut adjust = |parameter: &'static str, fitted: f64, used: f64, how: &'static str| {
            fit.clamped.push(parameter);
            adjustments.push(Adjustment {
                range: Some(r),
                parameter,
                fitted,
                used,
                how,
            });
        };
        adjust(
            "latency",
            intercept - 2.0 * overhead,
            0.0,
            "2o > the range's one-message time at s = 1: the overhead overlaps the wire time (split_end_to_end)",
        );
        adjust(
            "overhead",
            overhead,
            split.overhead,
            "o = half the range's one-message time at s = 1, so that 2o + L reproduces it",
        );
        fit.overhead = split.overhead;
    }
    Ok(split.latency)
}

/// The pLogP model (Kielmann, Bal, Verstoep 2000) of PRTT measurements, on the protocol
/// ranges `segments` found by [`super::detect_changes`] (indices into `diagnostics`).
///
/// # Method
///
/// pLogP's one-message time is `L + g(m)`, its round trip `RTT(m) = 2 (L + g(m))`. Here
/// `L = PRTT(1, 0, s_min) / 2 - G_all(s_min)` (the round trip of the smallest message less the
/// sender's gap, measured by the burst), and `g(m) = PRTT(1, 0, m) / 2 - L` on the weighted
/// least-squares line of each range's `PRTT(1, 0, s) / 2` (weights `1 / value²`), tabulated at
/// the range's first and last size — at `s_min` the measured value itself, so that
/// `p2p(s_min) = PRTT(1, 0, s_min) / 2`. `o_s(m) = o_r(m)` is each range's weighted line of
/// `o(s)` (eq. (6) of Hoefler et al. 2007), tabulated the same way. A negative `L`, or a table
/// entry below 0, is set to 0 and reported in `adjustments`.
///
/// # Errors
///
/// [`CalibrationError::TooFew`] for no sizes or no segments; fit errors.
pub(crate) fn plogp_from_diagnostics(
    diagnostics: &[SizeDiagnostics],
    segments: &[Segment],
    adjustments: &mut Vec<Adjustment>,
) -> Result<PLogP, CalibrationError> {
    let (Some(smallest), false) = (diagnostics.first(), segments.is_empty()) else {
        return Err(CalibrationError::TooFew {
            what: "sizes and protocol ranges for pLogP",
            needed: 1,
            got: 0,
        });
    };
    let end_to_end = smallest.prtt_single / 2.0;
    let fitted_latency = end_to_end - smallest.cumulative_gap;
    let latency = if fitted_latency >= 0.0 && fitted_latency.is_finite() {
        fitted_latency
    } else {
        adjustments.push(Adjustment {
            range: None,
            parameter: "plogp latency",
            fitted: fitted_latency,
            used: 0.0,
            how: "G_all(s_min) > PRTT(1, 0, s_min) / 2: L = 0, g(s_min) = the end-to-end time",
        });
        0.0
    };
    let mut table_sizes: Vec<f64> = Vec::new();
    let mut gap_values = Vec::new();
    let mut overhead_values = Vec::new();
    for (r, segment) in segments.iter().enumerate() {
        let mut inliers: Vec<usize> = segment.inliers().collect();
        if inliers.is_empty() {
            inliers = (segment.start..segment.end).collect();
        }
        let Some(&first) = inliers.first() else {
            continue;
        };
        let half: Vec<f64> = inliers
            .iter()
            .map(|&i| diagnostics[i].prtt_single / 2.0)
            .collect();
        let weights: Vec<f64> = half.iter().map(|h| h.powi(-2)).collect();
        let overheads: Vec<f64> = inliers.iter().map(|&i| diagnostics[i].overhead).collect();
        let first_size = diagnostics[segment.start].size;
        let last_size = diagnostics[segment.end - 1].size;
        let (t_first, t_slope) = line_through(diagnostics, &inliers, &half, &weights, first_size)?;
        let (o_first, o_slope) =
            line_through(diagnostics, &inliers, &overheads, &weights, first_size)?;
        let _ = first;
        let mut points = vec![first_size];
        if last_size > first_size {
            points.push(last_size);
        }
        for (k, &size) in points.iter().enumerate() {
            let dx = (size - first_size) as f64;
            let one_way = if r == 0 && k == 0 && size == smallest.size {
                end_to_end
            } else {
                t_first + t_slope * dx
            };
            let mut entry = |parameter: &'static str, value: f64| {
                if value >= 0.0 && value.is_finite() {
                    value
                } else {
                    adjustments.push(Adjustment {
                        range: Some(r),
                        parameter,
                        fitted: value,
                        used: 0.0,
                        how: "the range's line is below 0 at this size: table entry 0",
                    });
                    0.0
                }
            };
            let g = entry("plogp gap", one_way - latency);
            let o = entry("plogp overhead", o_first + o_slope * dx);
            // sizes strictly increase: ranges are disjoint and in order
            if table_sizes.last().is_none_or(|&last| (size as f64) > last) {
                table_sizes.push(size as f64);
                gap_values.push(g);
                overhead_values.push(o);
            }
        }
    }
    let overhead = Table1D::new(table_sizes.clone(), overhead_values)?;
    let gap = Table1D::new(table_sizes, gap_values)?;
    Ok(PLogP::new(latency, overhead.clone(), overhead, gap, 2)?)
}

/// Least squares of `values` on `size - at` over `points`, weighted by `weights`: the rows are
/// scaled by `sqrt(w)`, and ordinary least squares on them is weighted least squares.
fn weighted_line_fit(
    diagnostics: &[SizeDiagnostics],
    points: &[usize],
    values: &[f64],
    weights: &[f64],
    at: u64,
) -> Result<super::least_squares::LinearFit, crate::FitError> {
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
    least_squares(&design, 2, &scaled)
}

/// The weighted least-squares line through `(size, value)` of `points`: its value at `at` and
/// its slope (a constant, the weighted mean, when the points hold fewer than two sizes).
fn line_through(
    diagnostics: &[SizeDiagnostics],
    points: &[usize],
    values: &[f64],
    weights: &[f64],
    at: u64,
) -> Result<(f64, f64), CalibrationError> {
    let w_sum: f64 = weights.iter().sum();
    let mean = values.iter().zip(weights).map(|(v, w)| v * w).sum::<f64>() / w_sum;
    if points.len() < 2 {
        return Ok((values.first().copied().unwrap_or(0.0), 0.0));
    }
    match weighted_line_fit(diagnostics, points, values, weights, at) {
        Ok(fit) => Ok((fit.coefficients()[0], fit.coefficients()[1])),
        Err(crate::FitError::RankDeficient { .. }) => Ok((mean, 0.0)),
        Err(e) => Err(e.into()),
    }
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
        super::relative_errors(&pairs).unwrap_or((f64::NAN, f64::NAN))
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
    let (baseline_median, baseline_p90) =
        super::relative_errors(&pairs).unwrap_or((f64::NAN, f64::NAN));
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
        super::relative_errors(&model_burst).unwrap_or((f64::NAN, f64::NAN));
    let (burst_fit_median, burst_fit_p90) =
        super::relative_errors(&range_burst).unwrap_or((f64::NAN, f64::NAN));
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

/// The best two-piece fit of `values` over `sizes`: two weighted least-squares lines
/// (weights `1 / value²`, i.e. least squares in relative error), the first over points
/// `0..k`, the second over `k..n`, for the `k` with the smallest total squared relative
/// residual (each piece at least 2 points; one line when `n < 4`). Returns the fitted values
/// and `k`. `O(n)` with prefix sums.
pub(crate) fn two_piece_fit(sizes: &[f64], values: &[f64]) -> (Vec<f64>, usize) {
    let n = sizes.len().min(values.len());
    let scale = sizes.iter().fold(1.0f64, |m, s| m.max(s.abs()));
    // prefix sums of w, w x, w y, w x², w x y, w y² (x scaled to at most 1)
    let mut prefix = vec![[0.0f64; 6]; n + 1];
    for i in 0..n {
        let (x, y) = (sizes[i] / scale, values[i]);
        let w = if y != 0.0 && y.is_finite() {
            y.powi(-2)
        } else {
            0.0
        };
        let y = if y.is_finite() { y } else { 0.0 };
        let add = [w, w * x, w * y, w * x * x, w * x * y, w * y * y];
        for k in 0..6 {
            prefix[i + 1][k] = prefix[i][k] + add[k];
        }
    }
    let line = |a: usize, b: usize| {
        let s: Vec<f64> = (0..6).map(|k| prefix[b][k] - prefix[a][k]).collect();
        let (w, sx, sy, sxx, sxy, syy) = (s[0], s[1], s[2], s[3], s[4], s[5]);
        if w <= 0.0 {
            return (0.0, 0.0, 0.0);
        }
        let cxx = sxx - sx * sx / w;
        let cxy = sxy - sx * sy / w;
        let cyy = syy - sy * sy / w;
        let slope = if cxx > 1e-300 { cxy / cxx } else { 0.0 };
        let intercept = (sy - slope * sx) / w;
        (intercept, slope, (cyy - slope * cxy).max(0.0))
    };
    let mut best = (f64::INFINITY, n);
    if n >= 4 {
        for k in 2..=n - 2 {
            let total = line(0, k).2 + line(k, n).2;
            if total < best.0 {
                best = (total, k);
            }
        }
    }
    let k = if best.0.is_finite() { best.1 } else { n };
    let mut fitted = Vec::with_capacity(n);
    for (a, b) in [(0, k), (k, n)] {
        if a >= b {
            continue;
        }
        let (intercept, slope, _) = line(a, b);
        fitted.extend((a..b).map(|i| intercept + slope * sizes[i] / scale));
    }
    (fitted, k)
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
    match weighted_line_fit(diagnostics, points, values, weights, at) {
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
    // constrained G_all fit: g >= 0 and G >= 0. The best feasible fit when the unconstrained
    // one breaks a bound is on that bound (the problem is convex): G < 0 -> the best constant
    // (G = 0, g = mean G_all); g < 0 -> the best line through the origin (g = 0,
    // G = Σ x y / Σ x², x = s - 1); both -> 0.
    let xs: Vec<f64> = inliers
        .iter()
        .map(|&i| diagnostics[i].size as f64 - shift)
        .collect();
    let (mut gap, mut gap_per_byte) = (gap, gap_per_byte);
    // in the default mode the model's g and G come from the one-message time (assess_loggp):
    // these adjustments are of the burst line alone
    let netgauge = config.netgauge_compatible;
    let mut adjust = |parameter: &'static str, fitted: f64, used: f64, how: &'static str| {
        let parameter = match (netgauge, parameter) {
            (false, "gap") => "burst_gap",
            (false, "gap_per_byte") => "burst_gap_per_byte",
            _ => parameter,
        };
        clamped.push(parameter);
        adjustments.push(Adjustment {
            range: Some(range),
            parameter,
            fitted,
            used,
            how,
        });
    };
    if gap_per_byte.is_nan() || gap_per_byte < 0.0 {
        let mean = gaps.iter().sum::<f64>() / gaps.len().max(1) as f64;
        adjust(
            "gap_per_byte",
            gap_per_byte,
            0.0,
            "G < 0: refitted with G = 0 (g = mean G_all)",
        );
        gap_per_byte = 0.0;
        let fitted = gap;
        gap = mean;
        if gap.is_nan() || gap < 0.0 {
            adjust("gap", fitted, 0.0, "no feasible g >= 0: g = 0");
            gap = 0.0;
        } else {
            adjust("gap", fitted, gap, "refitted with G = 0 (mean G_all)");
        }
    } else if gap.is_nan() || gap < 0.0 {
        let sxx: f64 = xs.iter().map(|x| x * x).sum();
        let sxy: f64 = xs.iter().zip(&gaps).map(|(x, y)| x * y).sum();
        let through_origin = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
        adjust(
            "gap",
            gap,
            0.0,
            "g < 0: refitted with g = 0 (line through the origin)",
        );
        adjust(
            "gap_per_byte",
            gap_per_byte,
            through_origin,
            "refitted with g = 0 (line through the origin)",
        );
        gap = 0.0;
        gap_per_byte = through_origin;
    }
    let overhead = if overhead >= 0.0 {
        overhead
    } else {
        adjust(
            "overhead",
            overhead,
            0.0,
            "o < 0 (its bound is 0; eq. (6) subtracts two noisy round trips): o = 0",
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
/// // PRTT(1, 0, 1) = 2 p2p(1 B) = 2 · 5.96 µs, the paper's end-to-end L (Table 2)
/// assert!((prober.prtt(1, 0.0, 1)? - 11.92e-6).abs() < 1e-15);
/// # Ok::<(), commcost::calibrate::CalibrationError>(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    /// Samples whose one-message time `PRTT(1, 0, s) / 2 = A + B (s - 1)` and burst gap
    /// `G_all(s) = g + G (s - 1)` have different slopes (`B = 0.5`, `G = 0.2` ns/B), with a
    /// constant `o(s)`: the model must take `B`, keep the burst line beside it, and reproduce
    /// the one-message time at every size. Expected values by hand.
    #[test]
    fn the_model_follows_the_one_message_time_and_keeps_the_burst_line() {
        let (a, b, o, g, burst) = (10e-6, 0.5e-9, 3e-6, 4e-6, 0.2e-9);
        let n = 10u32;
        let mut samples = Vec::new();
        for k in 0..20u64 {
            let s = 1 + 1024 * k;
            let x = (s - 1) as f64;
            let single = 2.0 * (a + b * x);
            let burst_time = single + 9.0 * (g + burst * x);
            let delayed = single + 9.0 * (o + single);
            for (n, delay, time) in [(1, 0.0, single), (n, 0.0, burst_time), (n, single, delayed)] {
                samples.push(PrttSample {
                    n,
                    delay,
                    size: s,
                    time,
                });
            }
        }
        let assessment = assess_loggp(&samples, &AssessmentConfig::default()).unwrap();
        assert_eq!(assessment.ranges.len(), 1);
        let m = assessment.model.ranges()[0].model();
        // G = B; 2o + L = A with o = 3 µs: L = 10 - 6 = 4 µs
        assert_relative_eq!(m.gap_per_byte(), b, max_relative = 1e-9);
        assert_relative_eq!(m.overhead(), o, max_relative = 1e-9);
        assert_relative_eq!(m.latency(), 4e-6, max_relative = 1e-9);
        // g = mean(G_all - (s - 1) B) = 4 µs - 0.3 ns/B · 1024 · 9.5 = 1.0816 µs
        assert_relative_eq!(m.gap(), 1.0816e-6, max_relative = 1e-9);
        let r = &assessment.ranges[0];
        assert_relative_eq!(r.burst_gap, g, max_relative = 1e-9);
        assert_relative_eq!(r.burst_gap_per_byte, burst, max_relative = 1e-9);
        for k in 0..20u64 {
            let s = 1 + 1024 * k;
            let t = assessment.model.p2p(&Message::contiguous(s));
            assert_relative_eq!(t, a + b * (s - 1) as f64, max_relative = 1e-9);
        }
        assert!(assessment.one_way.loggp_median < 1e-9);
        assert!(assessment.one_way.burst_fit_median < 1e-9);
        // the burst gap at 19457 B: 1.0816 + 0.5e-3 · 19456 = 10.8096 µs against
        // 4 + 0.2e-3 · 19456 = 7.8912 µs
        let last = assessment.model.model_for(19457).cumulative_gap(19457);
        assert_relative_eq!(last, 10.8096e-6, max_relative = 1e-9);
    }
}
