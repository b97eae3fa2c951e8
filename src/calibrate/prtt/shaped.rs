//! A link shaped by a token bucket, assessed from the same PRTT samples as LogGP:
//! [`assess_shaped_link`].

use super::LogGPAssessment;
use crate::LogGP;
use crate::calibrate::{CalibrationError, relative_errors};
use crate::util::stats;

/// The median, NaN for no values.
fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        f64::NAN
    } else {
        stats::median(&mut values.to_vec())
    }
}

/// A token-bucket-shaped link (Linux `tc tbf`, a cloud provider's traffic shaping), from
/// [`assess_shaped_link`]: trains of back-to-back messages are held to the rate (`G`), while a
/// message that finds the link idle crosses its first [`burst`](Self::burst) bytes on credit.
///
/// Use it with the simulator: `model` as the [`CommModel`](crate::CommModel) and `burst` as
/// [`SimOptions::link_burst`](crate::sim::SimOptions::link_burst). The model alone prices every
/// message as part of a train (no credit).
#[derive(Debug, Clone, PartialEq)]
pub struct ShapedLink {
    /// LogGP with `G` the train's time per byte, `g` the train's gap per message (both from
    /// `G_all(s)`), `2o + L` the one-message time of small messages and `o` their overhead.
    pub model: LogGP,
    /// The credit a message larger than it crosses without paying `G`, bytes (0: the link is
    /// not shaped at the sizes measured).
    pub burst: u64,
    /// Median and 90th percentile of the relative error of the one-message time with credit,
    /// `2o + L + max(0, s - 1 - burst) G`, against `PRTT(1, 0, s) / 2` over every size.
    pub one_way_error: (f64, f64),
}

/// Assesses a shaped link from a LogGP assessment's per-size diagnostics.
///
/// On a link shaped by a token bucket the two slopes of the PRTT data differ for a physical
/// reason: `G_all(s)` (eq. (7) of Hoefler, Lichei, Rehm, "Low-overhead LogGP parameter
/// assessment for modern interconnection networks", IPDPS 2007), measured on `n` messages sent
/// back to back, is held to the bucket's rate, while the one-message time `PRTT(1, 0, s) / 2`
/// finds the bucket full and pays the rate only on the bytes beyond its credit. A LogGP fitted
/// to the one-message time (as [`assess_loggp`](super::assess_loggp) does) then prices every
/// train far too fast; one fitted to the train prices every lone message too slow.
///
/// ```text
/// G      = slope of the line through G_all(s) over the last protocol range (the train)
/// g      = intercept of the line through G_all(s) over the first range
/// A      = median of PRTT(1, 0, s) / 2 over the small sizes, s <= max(s_min, s_max / 64)   (2o + L)
/// o, L   = median o(s) over the same sizes (eq. (6)), at most A / 2; L = A - 2o
/// c(s)   = s - 1 - (PRTT(1, 0, s) / 2 - A) / G     the bytes the lone message did not pay for
/// burst  = median of c(s) over the sizes of the upper half of the measured range (s >= s_max / 2)
/// ```
///
/// A burst estimated from sizes at most twice its value is a lower bound (a message smaller
/// than the credit pays nothing); measure to sizes well beyond it. A negative credit (a lone
/// message slower than a train) is taken as 0: the link is not shaped.
///
/// # Errors
///
/// [`CalibrationError::TooFew`] with fewer than two sizes or no protocol range;
/// [`CalibrationError::InvalidValue`] when the train's time per byte is not positive (the
/// samples do not show a rate).
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{AssessmentConfig, PrttSample, assess_loggp, assess_shaped_link};
///
/// // a link of 40 ns/B with a 9000-byte bucket, 2o + L = 20 µs (o = 8 µs), g = 5 µs, n = 16
/// let (a, o, g, big_g, burst, n) = (20e-6, 8e-6, 5e-6, 40e-9, 9000.0, 16u32);
/// let mut samples = Vec::new();
/// for k in 0..40u64 {
///     let s = 1 + k * 2048;
///     let x = (s - 1) as f64;
///     let single = 2.0 * (a + (x - burst).max(0.0) * big_g);
///     let g_all = g + x * big_g;
///     let d = single;
///     samples.push(PrttSample { n: 1, delay: 0.0, size: s, time: single });
///     samples.push(PrttSample { n, delay: 0.0, size: s, time: single + 15.0 * g_all });
///     samples.push(PrttSample { n, delay: d, size: s, time: single + 15.0 * (o + d) });
/// }
/// let assessment = assess_loggp(&samples, &AssessmentConfig::default())?;
/// let link = assess_shaped_link(&assessment)?;
/// assert!((link.model.gap_per_byte() - 40e-9).abs() < 1e-12);
/// assert_eq!(link.burst, 9000);
/// assert!((link.model.overhead() - 8e-6).abs() < 1e-12 && (link.model.latency() - 4e-6).abs() < 1e-12);
/// assert!(link.one_way_error.0 < 1e-6);
/// # Ok::<(), commcost::calibrate::CalibrationError>(())
/// ```
pub fn assess_shaped_link(assessment: &LogGPAssessment) -> Result<ShapedLink, CalibrationError> {
    let sizes = &assessment.sizes;
    let ranges = &assessment.ranges;
    if sizes.len() < 2 || ranges.is_empty() {
        return Err(CalibrationError::TooFew {
            what: "sizes and protocol ranges of the assessment",
            needed: 2,
            got: sizes.len().min(ranges.len()),
        });
    }
    let (first, last) = (&ranges[0], &ranges[ranges.len() - 1]);
    // (first: the train's gap per message; last: its time per byte)
    let big_g = last.burst_gap_per_byte;
    if !(big_g > 0.0 && big_g.is_finite()) {
        return Err(CalibrationError::InvalidValue {
            what: "the train's time per byte G (slope of G_all(s) over the last range)",
            index: ranges.len() - 1,
            value: big_g,
        });
    }
    // the small messages: sizes up to 1/64 of the largest (at least the smallest size)
    let s_min = sizes.iter().map(|d| d.size).min().unwrap_or(0);
    let s_max = sizes.iter().map(|d| d.size).max().unwrap_or(0);
    let small: Vec<_> = sizes
        .iter()
        .filter(|d| d.size <= s_min.max(s_max / 64))
        .collect();
    let a = median(
        &small
            .iter()
            .map(|d| d.prtt_single / 2.0)
            .collect::<Vec<_>>(),
    );
    let o = median(
        &small
            .iter()
            .filter(|d| d.delay_exceeds_gap)
            .map(|d| d.overhead)
            .collect::<Vec<_>>(),
    );
    let o = if o.is_finite() {
        o.clamp(0.0, a / 2.0)
    } else {
        0.0
    };
    let latency = (a - 2.0 * o).max(0.0);
    let gap = first.burst_gap.max(0.0);
    let credits: Vec<f64> = sizes
        .iter()
        .filter(|d| d.size.saturating_mul(2) >= s_max)
        .map(|d| (d.size - 1) as f64 - (d.prtt_single / 2.0 - a) / big_g)
        .collect();
    let burst = median(&credits);
    let burst = if burst.is_finite() && burst > 0.0 {
        burst.round() as u64
    } else {
        0
    };
    let model = LogGP::new(latency, o, gap, big_g)?;
    let pairs: Vec<(f64, f64)> = sizes
        .iter()
        .map(|d| {
            let x = (d.size - 1) as f64;
            let lone = 2.0 * o + latency + (x - burst as f64).max(0.0) * big_g;
            (lone, d.prtt_single / 2.0)
        })
        .collect();
    let one_way_error = relative_errors(&pairs).ok_or(CalibrationError::InvalidValue {
        what: "the one-message error of the shaped link (PRTT(1, 0, s) / 2)",
        index: 0,
        value: f64::NAN,
    })?;
    Ok(ShapedLink {
        model,
        burst,
        one_way_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::{AssessmentConfig, PrttSample, assess_loggp};

    /// PRTT samples of a link with one-message time `2 (a + max(0, s - 1 - burst) G)`.
    fn samples(burst: f64) -> Vec<PrttSample> {
        let (a, o, g, big_g) = (20e-6, 8e-6, 5e-6, 40e-9);
        let mut v = Vec::new();
        for k in 0..40u64 {
            let s = 1 + k * 2048;
            let x = (s - 1) as f64;
            let single = 2.0 * (a + (x - burst).max(0.0) * big_g);
            let g_all = g + x * big_g;
            v.push(PrttSample {
                n: 1,
                delay: 0.0,
                size: s,
                time: single,
            });
            v.push(PrttSample {
                n: 16,
                delay: 0.0,
                size: s,
                time: single + 15.0 * g_all,
            });
            v.push(PrttSample {
                n: 16,
                delay: single,
                size: s,
                time: single + 15.0 * (o + single),
            });
        }
        v
    }

    #[test]
    fn an_unshaped_link_has_no_burst() {
        let a = assess_loggp(&samples(0.0), &AssessmentConfig::default()).unwrap();
        let link = assess_shaped_link(&a).unwrap();
        assert_eq!(link.burst, 0);
        assert!(link.one_way_error.1 < 1e-9);
    }

    #[test]
    fn a_lone_message_slower_than_a_train_is_not_credit() {
        // negative credit: the one-message time grows faster than the train
        let a = assess_loggp(&samples(-5000.0), &AssessmentConfig::default()).unwrap();
        assert_eq!(assess_shaped_link(&a).unwrap().burst, 0);
    }
}
