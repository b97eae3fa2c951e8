//! Protocol-change detection on `(size, value)` series (Hoefler, Lichei, Rehm,
//! "Low-overhead LogGP parameter assessment for modern interconnection networks", IPDPS 2007,
//! §3.5; Netgauge's `ptrn_loggp.c`).

mod netgauge;
mod robust;
mod window;

pub use netgauge::detect_changes_netgauge;

use robust::detect_with;
use window::{Recomputed, Running};

use crate::error::ParameterError;

use crate::calibrate::CalibrationError;

/// Settings of [`detect_changes`].
///
/// Its fields are public, so a value is checked where it is used: [`detect_changes`] and
/// [`detect_changes_naive`] run [`validate`](Self::validate) and return the error naming the
/// field. Deserialisation rejects unknown fields.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct DetectionConfig {
    /// `x`: points of look-ahead (the paper suggests 3 to 5).
    pub lookahead: usize,
    /// `pfact`: how much the mean least-squares deviation must grow (the paper's 2.0).
    pub pfact: f64,
    /// How many standard deviations of the line's prediction (noise plus the line's own
    /// uncertainty at the point) a point must be off the current line to count as deviating.
    pub deviation: f64,
    /// The smallest relative noise level assumed, so that exact data does not turn rounding
    /// into "changes".
    pub relative_floor: f64,
}

impl Default for DetectionConfig {
    /// `x = 5`, `pfact = 2.0` (the paper's), deviation 4 σ, relative floor 1e-6.
    fn default() -> Self {
        Self {
            lookahead: 5,
            pfact: 2.0,
            deviation: 4.0,
            relative_floor: 1e-6,
        }
    }
}

impl DetectionConfig {
    /// Checks the settings: `lookahead >= 1`, `pfact`, `deviation` and `relative_floor`
    /// finite and `> 0` (`pfact >= 1`: the deviation must grow). A `lookahead` beyond the
    /// series is allowed (no change can then be seen).
    ///
    /// # Errors
    ///
    /// [`ParameterError`] naming the field.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::calibrate::DetectionConfig;
    /// let bad = DetectionConfig { pfact: f64::NAN, ..DetectionConfig::default() };
    /// assert!(bad.validate().unwrap_err().to_string().contains("pfact"));
    /// let zero = DetectionConfig { lookahead: 0, ..DetectionConfig::default() };
    /// assert!(zero.validate().unwrap_err().to_string().contains("lookahead"));
    /// ```
    pub fn validate(&self) -> Result<(), ParameterError> {
        ParameterError::at_least("lookahead", self.lookahead as u64, 1)?;
        ParameterError::finite_at_least("pfact", self.pfact, 1.0, "finite and >= 1")?;
        ParameterError::finite_above("deviation", self.deviation, 0.0, "finite and > 0")?;
        ParameterError::finite_above("relative_floor", self.relative_floor, 0.0, "finite and > 0")?;
        Ok(())
    }
}

/// A detected protocol range: points `start..end` of the series (indices), the points inside
/// it treated as outliers, and its line `value ≈ intercept + slope · size`.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// First point (index into the series).
    pub start: usize,
    /// One past the last point.
    pub end: usize,
    /// Points inside `start..end` left out of the fit.
    pub outliers: Vec<usize>,
    /// Value of the segment's line at size 0.
    pub intercept: f64,
    /// Slope of the segment's line.
    pub slope: f64,
}

impl Segment {
    /// The indices of the points the segment's line was fitted to.
    pub fn inliers(&self) -> impl Iterator<Item = usize> + '_ {
        (self.start..self.end).filter(|i| !self.outliers.contains(i))
    }
}

fn validate(sizes: &[f64], values: &[f64]) -> Result<(), CalibrationError> {
    if sizes.len() != values.len() {
        return Err(CalibrationError::LengthMismatch {
            what: "values (one per size)",
            expected: sizes.len(),
            got: values.len(),
        });
    }
    for (what, series) in [("sizes", sizes), ("values", values)] {
        if let Some(index) = series.iter().position(|v| !v.is_finite()) {
            return Err(CalibrationError::InvalidValue {
                what,
                index,
                value: series[index],
            });
        }
    }
    if let Some(index) = sizes.windows(2).position(|w| w[1] <= w[0]) {
        return Err(CalibrationError::InvalidValue {
            what: "sizes (must be strictly increasing)",
            index: index + 1,
            value: sizes[index + 1],
        });
    }
    Ok(())
}

/// Splits a `(size, value)` series into protocol ranges, each following its own line.
///
/// # Method
///
/// The paper's rule (loggp-assessment §3.5): with `lastchange` the first point of the current
/// range and `lsq(k, l)` the mean squared deviation of the line fitted to points `k..=l`, a
/// change is declared after point `c` when `lsq(lastchange, c + j) > pfact · lsq(lastchange, c)`
/// for every `1 <= j <= x`. Alone, that rule is fragile: one outlier inside the
/// look-ahead raises every look-ahead `lsq`; a few points make `lsq` unreliable; a tiny `lsq`
/// turns rounding into changes; noise that grows with size raises `lsq` by itself. This
/// implementation keeps the rule and adds:
///
/// * **relative residuals**: each point is weighted by `1 / scale²`, `scale` the median |value|
///   of its 5 nearest points, so noise that grows with the value does not look like a change,
///   a switch is found whatever the absolute magnitude (a 4× jump below 1 µs), and one outlier
///   cannot shrink its own weight; whether a point deviates is judged relative to the smaller
///   of its `scale` and the current line's prediction, so a jump up is as visible as a drop;
/// * **every look-ahead point must deviate**: a change also needs each of the `x` look-ahead
///   points to be more than `deviation` noise standard deviations off the current line — a
///   single outlier or a level shift shorter than `x` points never creates a change;
/// * **outliers**: a point that deviates by itself is left out of the fit (and reported), also
///   one found in the first points of a range by leave-one-out;
/// * **small samples**: the noise level estimated from few points is widened by
///   `1 + 4 / dof` (`dof` = points − 2), as a Student t quantile would be;
/// * **noise floors**: the noise level a point's deviation is judged by is at least the
///   larger of `relative_floor` and a robust estimate of the relative noise around it (the
///   MAD of the first differences within 16 points), so a range whose first points happen to
///   lie very close to a line does not reject every later point, and load that scatters one
///   stretch of a run does not hide a switch in another; in the paper's `lsq` comparison, `lsq` is at least
///   `relative_floor²`, so exact data does not turn rounding into changes;
/// * **prediction intervals**: a point's deviation is measured against the line's prediction
///   interval, which widens away from the fitted points (a line extrapolated from the few
///   first points of a range is uncertain);
/// * **boundary points**: the first points after a change stay in the old range when its line
///   is closer to them than the line of the points that follow;
/// * **a merge pass**: neighbouring ranges that one line fits as well as noise explains
///   (Chow's F test at 99.9 %, which allows for the loose noise estimate of short ranges)
///   are merged, and a short range (fewer than `4x` points) between two ranges that
///   lie on one line is a transient level shift whose points become outliers;
/// * **a boundary pass**: a step at the 3rd, 4th or 5th point (before the look-ahead can see
///   it) splits the first range when the new level holds for most of the next `x` points
///   and the step is at least 25 % of the level, and each boundary moves by up to 2 points to where its two lines fit best (the
///   first point of a new level no longer counts as an outlier of the old one).
///
/// Each step costs `O(x)` with running sums, `O(n x)` in all (plus `O(r²)` for `r` ranges in
/// the merge pass); [`detect_changes_naive`] recomputes every window and returns the same
/// result. A switch within the last `x` points cannot be seen (no look-ahead).
///
/// # Errors
///
/// [`CalibrationError::Parameters`] naming the field of an invalid `config`
/// ([`DetectionConfig::validate`]); [`CalibrationError::LengthMismatch`], or
/// [`CalibrationError::InvalidValue`] for non-finite data or sizes that are not strictly
/// increasing.
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{DetectionConfig, detect_changes};
///
/// // a cumulative gap that jumps 4x at size 20, in nanoseconds (tiny absolute values)
/// let sizes: Vec<f64> = (0..40).map(f64::from).collect();
/// let values: Vec<f64> = sizes.iter().map(|&s| if s < 20.0 { 1e-7 + 1e-9 * s } else { 4e-7 + 4e-9 * s }).collect();
/// let segments = detect_changes(&sizes, &values, &DetectionConfig::default())?;
/// assert_eq!(segments.len(), 2);
/// assert_eq!(segments[1].start, 20);
/// # Ok::<(), commcost::calibrate::CalibrationError>(())
/// ```
pub fn detect_changes(
    sizes: &[f64],
    values: &[f64],
    config: &DetectionConfig,
) -> Result<Vec<Segment>, CalibrationError> {
    config.validate()?;
    validate(sizes, values)?;
    Ok(detect_with::<Running>(sizes, values, config))
}

/// [`detect_changes`] recomputing every window's fit from its points: `O(n² x)`. The baseline
/// that shows what the running sums save; same result.
///
/// # Errors
///
/// As [`detect_changes`].
pub fn detect_changes_naive(
    sizes: &[f64],
    values: &[f64],
    config: &DetectionConfig,
) -> Result<Vec<Segment>, CalibrationError> {
    config.validate()?;
    validate(sizes, values)?;
    Ok(detect_with::<Recomputed>(sizes, values, config))
}
