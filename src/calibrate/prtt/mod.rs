//! LogGP parameter assessment from parametrised round trip times (Hoefler, Lichei, Rehm,
//! "Low-overhead LogGP parameter assessment for modern interconnection networks", IPDPS 2007,
//! §3): the sample, configuration and result types here; the assessment in `assess`, its
//! per-range fits in `ranges` on the lines of `lines`, the `L`/`o` split in `split`, the pLogP
//! model in `plogp`, the report in `report`. The measuring side ([`crate::probe::PrttPlan`],
//! [`crate::probe::measure_prtt`]) is in [`crate::probe`].

mod assess;
mod lines;
mod plogp;
mod ranges;
mod report;
mod shaped;
mod split;

pub use assess::assess_loggp;
pub use shaped::{ShapedLink, assess_shaped_link};
pub use split::{LatencySplit, split_end_to_end};

use super::detect::DetectionConfig;
use super::least_squares::FitStatistics;
use crate::calibrate::{Adjustment, Parameter};
use crate::error::ParameterError;
use crate::{LogGP, PLogP, Protocols};

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
/// Its fields are public, so a value is checked where it is used: [`assess_loggp`] runs
/// [`validate`](Self::validate) and returns the error naming the field. Deserialisation rejects
/// unknown fields.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
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
    pub clamped: Vec<Parameter>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CommModel, Message};
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
