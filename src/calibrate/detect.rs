//! Protocol-change detection on `(size, value)` series (Hoefler, Lichei, Rehm,
//! "Low-overhead LogGP parameter assessment for modern interconnection networks", IPDPS 2007,
//! §3.5; Netgauge's `ptrn_loggp.c`).

use crate::error::{CalibrationError, ParameterError};

/// Settings of [`detect_changes`].
///
/// Deserialisation rejects unknown fields and runs [`validate`](Self::validate);
/// [`detect_changes`] validates too.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "DetectionConfigFields")
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

#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DetectionConfigFields {
    lookahead: usize,
    pfact: f64,
    deviation: f64,
    relative_floor: f64,
}

#[cfg(feature = "serde")]
impl TryFrom<DetectionConfigFields> for DetectionConfig {
    type Error = ParameterError;
    fn try_from(f: DetectionConfigFields) -> Result<Self, Self::Error> {
        let config = Self {
            lookahead: f.lookahead,
            pfact: f.pfact,
            deviation: f.deviation,
            relative_floor: f.relative_floor,
        };
        config.validate()?;
        Ok(config)
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
        if !(self.pfact >= 1.0 && self.pfact.is_finite()) {
            return Err(ParameterError::OutOfRange {
                name: "pfact",
                value: self.pfact,
                expected: "finite and >= 1",
            });
        }
        for (name, value) in [
            ("deviation", self.deviation),
            ("relative_floor", self.relative_floor),
        ] {
            if !(value > 0.0 && value.is_finite()) {
                return Err(ParameterError::OutOfRange {
                    name,
                    value,
                    expected: "finite and > 0",
                });
            }
        }
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

/// Weighted least-squares sums of a line fit, with sizes and values shifted by an origin for
/// accuracy.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sums {
    count: usize,
    w: f64,
    x: f64,
    y: f64,
    xx: f64,
    xy: f64,
    yy: f64,
    origin: (f64, f64),
}

/// The fitted line and its mean squared (relative) deviation.
#[derive(Debug, Clone, Copy)]
struct Line {
    intercept: f64,
    slope: f64,
    /// `SSE / (count - 2)`; 0 with fewer than 3 points.
    lsq: f64,
    /// `count - 2`, the residual degrees of freedom (0 with fewer than 3 points).
    dof: usize,
    /// Weighted mean size of the fitted points.
    center: f64,
    /// Sum of the weights.
    weight: f64,
    /// Weighted sum of squared size deviations from `center`.
    spread: f64,
}

impl Line {
    /// The noise standard deviation to judge deviations by: `sqrt(max(lsq, floor))`, widened
    /// by `1 + 4 / dof` while few points back it (a standardised residual then follows a
    /// Student t distribution with heavy tails, not a normal one).
    fn sigma(&self, floor: f64) -> f64 {
        let widen = if self.dof == 0 {
            f64::INFINITY
        } else {
            1.0 + 4.0 / self.dof as f64
        };
        self.lsq.max(floor).sqrt() * widen
    }

    /// How much wider than the noise the prediction interval at `size` is, for a point whose
    /// residual is taken relative to `level`: `sqrt(1 + (1/W + (size - x̄)² / Sxx) / level²)`,
    /// the textbook prediction variance of a weighted least-squares line. Far from the fitted
    /// points (extrapolating a line fitted to few of them) the line itself is uncertain.
    fn prediction_factor(&self, size: f64, level: f64) -> f64 {
        if self.weight <= 0.0 {
            return 1.0;
        }
        let leverage = if self.spread > 0.0 {
            (size - self.center).powi(2) / self.spread
        } else {
            0.0
        };
        (1.0 + (1.0 / self.weight + leverage) / (level * level)).sqrt()
    }
}

impl Sums {
    fn new(origin: (f64, f64)) -> Self {
        Self {
            count: 0,
            w: 0.0,
            x: 0.0,
            y: 0.0,
            xx: 0.0,
            xy: 0.0,
            yy: 0.0,
            origin,
        }
    }

    fn add(&mut self, s: &Series<'_>, i: usize) {
        self.add_weighted(s, i, s.weights[i]);
    }

    fn add_weighted(&mut self, s: &Series<'_>, i: usize, w: f64) {
        let (dx, dy) = (s.sizes[i] - self.origin.0, s.values[i] - self.origin.1);
        self.count += 1;
        self.w += w;
        self.x += w * dx;
        self.y += w * dy;
        self.xx += w * dx * dx;
        self.xy += w * dx * dy;
        self.yy += w * dy * dy;
    }

    fn line(&self) -> Line {
        if self.count == 0 {
            return Line {
                intercept: self.origin.1,
                slope: 0.0,
                lsq: 0.0,
                dof: 0,
                center: self.origin.0,
                weight: 0.0,
                spread: 0.0,
            };
        }
        let (mx, my) = (self.x / self.w, self.y / self.w);
        let cxx = self.xx - self.x * mx;
        let cxy = self.xy - self.x * my;
        let cyy = self.yy - self.y * my;
        let slope = if cxx > 0.0 { cxy / cxx } else { 0.0 };
        let sse = (cyy - slope * cxy).max(0.0);
        let lsq = if self.count > 2 {
            sse / (self.count - 2) as f64
        } else {
            0.0
        };
        // in original coordinates: y = origin.y + my + slope (x - origin.x - mx)
        let intercept = self.origin.1 + my - slope * (self.origin.0 + mx);
        Line {
            intercept,
            slope,
            lsq,
            dof: self.count.saturating_sub(2),
            center: self.origin.0 + mx,
            weight: self.w,
            spread: cxx.max(0.0),
        }
    }
}

/// The series with its per-point weights.
struct Series<'a> {
    sizes: &'a [f64],
    values: &'a [f64],
    /// `1 / scale²`, scale = the median |value| of the 5 nearest points: residuals are relative
    /// to the local level, and one outlier cannot change its own weight.
    weights: Vec<f64>,
    scales: Vec<f64>,
}

impl<'a> Series<'a> {
    fn new(sizes: &'a [f64], values: &'a [f64]) -> Self {
        let n = values.len();
        let scales: Vec<f64> = (0..n)
            .map(|i| {
                let lo = i.saturating_sub(2);
                let hi = (i + 3).min(n);
                let mut window = [0.0f64; 5];
                let len = hi - lo;
                for (w, v) in window.iter_mut().zip(&values[lo..hi]) {
                    *w = v.abs();
                }
                window[..len].sort_unstable_by(f64::total_cmp);
                window[len / 2].max(f64::MIN_POSITIVE)
            })
            .collect();
        let weights = scales.iter().map(|s| 1.0 / (s * s)).collect();
        Self {
            sizes,
            values,
            weights,
            scales,
        }
    }

    /// The relative residual of point `i` from `line`: relative to the smaller of the point's
    /// own level and the level the line predicts there. Relative to its own level alone, a
    /// point on a higher plateau could never be more than 100 % off (`(v - p) / v < 1`), so
    /// with noisy data (σ ≥ 25 %) no upward jump, however large, would count as deviating.
    fn residual(&self, line: &Line, i: usize) -> f64 {
        (self.values[i] - self.predicted(line, i)) / self.level(line, i)
    }

    /// Robust estimates of the relative noise of the series, so that a range whose first few
    /// points happen to lie unusually close to a line does not take every later point for an
    /// outlier: with `r_i = value_i / scale_i` and `d_i = r_i - r_(i-1)`,
    /// `1.4826 · median|d_j - median(d)| / √2` (the MAD of first differences; a switch or an
    /// outlier moves only a few of them) — over the whole series (the first value), and for
    /// each point over the differences within [`NOISE_HALF_WIDTH`] points of it (the second),
    /// so that load scattering one stretch of a run does not hide a switch in another. 0 where
    /// fewer than 2 differences are in reach.
    fn robust_noise(&self) -> (f64, Vec<f64>) {
        let n = self.values.len();
        let d: Vec<f64> = (1..n)
            .map(|i| self.values[i] / self.scales[i] - self.values[i - 1] / self.scales[i - 1])
            .collect();
        let mut window = Vec::with_capacity(d.len());
        let mut mad = |part: &[f64]| {
            if part.len() < 2 {
                return 0.0;
            }
            window.clear();
            window.extend_from_slice(part);
            let middle = window.len() / 2;
            let center = *window.select_nth_unstable_by(middle, f64::total_cmp).1;
            for x in window.iter_mut() {
                *x = (*x - center).abs();
            }
            let spread = *window.select_nth_unstable_by(middle, f64::total_cmp).1;
            1.4826 * spread / std::f64::consts::SQRT_2
        };
        let global = mad(&d);
        let local = (0..n)
            .map(|i| {
                // differences d_j (between points j and j + 1) with both points in reach
                let lo = i.saturating_sub(NOISE_HALF_WIDTH);
                let hi = (i + NOISE_HALF_WIDTH).min(n.saturating_sub(1));
                mad(&d[lo..hi.max(lo)])
            })
            .collect();
        (global, local)
    }

    fn predicted(&self, line: &Line, i: usize) -> f64 {
        line.intercept + line.slope * self.sizes[i]
    }

    fn level(&self, line: &Line, i: usize) -> f64 {
        self.scales[i]
            .min(self.predicted(line, i).abs())
            .max(f64::MIN_POSITIVE)
    }

    /// The residual of point `i` in prediction standard deviations: the relative residual
    /// over the noise level (`sigma`) widened by the line's own uncertainty at the point.
    fn standardized(&self, line: &Line, i: usize, floor: f64) -> f64 {
        let spread = line.sigma(floor) * line.prediction_factor(self.sizes[i], self.level(line, i));
        self.residual(line, i).abs() / spread
    }

    fn sums_of(&self, origin: usize, points: impl Iterator<Item = usize>) -> Sums {
        let mut sums = Sums::new((self.sizes[origin], self.values[origin]));
        for i in points {
            sums.add(self, i);
        }
        sums
    }
}

/// How the window sums of the current segment are obtained: kept running (fast) or recomputed
/// from scratch for every window (the naive baseline). Both add the same points in the same
/// order, so their sums — and decisions — are identical.
trait Window {
    fn start(series: &Series<'_>, origin: usize, points: &[usize]) -> Self;
    fn push(&mut self, series: &Series<'_>, i: usize);
    fn sums(&self, series: &Series<'_>) -> Sums;
    /// Whether the window's `lsq` exceeds `threshold` with each prefix of `extra` added, the
    /// added points weighted relative to `line`'s level (as [`Series::level`]): relative to
    /// their own level, points on a higher plateau could add at most 1 each.
    fn lookahead_exceeds(
        &self,
        series: &Series<'_>,
        line: &Line,
        extra: std::ops::RangeInclusive<usize>,
        threshold: f64,
    ) -> bool {
        let mut sums = self.sums(series);
        extra.into_iter().all(|i| {
            sums.add_weighted(series, i, series.level(line, i).powi(-2));
            sums.line().lsq > threshold
        })
    }
}

struct Running {
    sums: Sums,
}

impl Window for Running {
    fn start(series: &Series<'_>, origin: usize, points: &[usize]) -> Self {
        Self {
            sums: series.sums_of(origin, points.iter().copied()),
        }
    }
    fn push(&mut self, series: &Series<'_>, i: usize) {
        self.sums.add(series, i);
    }
    fn sums(&self, _: &Series<'_>) -> Sums {
        self.sums
    }
}

struct Recomputed {
    origin: usize,
    points: Vec<usize>,
}

impl Window for Recomputed {
    fn start(_: &Series<'_>, origin: usize, points: &[usize]) -> Self {
        Self {
            origin,
            points: points.to_vec(),
        }
    }
    fn push(&mut self, _: &Series<'_>, i: usize) {
        self.points.push(i);
    }
    fn sums(&self, series: &Series<'_>) -> Sums {
        series.sums_of(self.origin, self.points.iter().copied())
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

/// How many points on either side of a point its local noise estimate looks at (a window of
/// 33 points, 32 first differences): wide enough for a robust spread, narrow enough that load
/// scattering one stretch of a run does not set the noise of another.
const NOISE_HALF_WIDTH: usize = 16;

/// The noise levels (squared, relative) deviations are judged by: per point the larger of
/// the configured floor and the local robust noise; for the whole series the larger of the
/// floor and the series' robust noise.
struct Floors {
    local: Vec<f64>,
    global: f64,
}

impl Floors {
    fn at(&self, i: usize) -> f64 {
        self.local.get(i).copied().unwrap_or(self.global)
    }

    /// The mean floor over `points`.
    fn mean_over(&self, points: impl Iterator<Item = usize>) -> f64 {
        let (sum, count) = points.fold((0.0, 0usize), |(s, c), i| (s + self.at(i), c + 1));
        if count == 0 { 0.0 } else { sum / count as f64 }
    }
}

fn detect_with<W: Window>(sizes: &[f64], values: &[f64], config: &DetectionConfig) -> Vec<Segment> {
    let n = values.len();
    if n == 0 {
        return Vec::new();
    }
    let series = Series::new(sizes, values);
    // a look-ahead beyond the series sees nothing; capping it keeps `c + x` from overflowing
    let x = config.lookahead.clamp(1, n);
    // the noise level deviations are judged by is at least the robust noise around the point;
    // the paper's lsq comparison only needs a floor against rounding
    let (global, local) = series.robust_noise();
    let floors = Floors {
        local: local
            .into_iter()
            .map(|noise| noise.max(config.relative_floor).powi(2))
            .collect(),
        global: global.max(config.relative_floor).powi(2),
    };
    let lsq_floor = config.relative_floor * config.relative_floor;
    let warmup = x.max(3);
    let mut segments: Vec<Segment> = Vec::new();
    let mut start = 0;
    while start < n {
        let warm_end = (start + warmup).min(n);
        let (mut points, mut outliers) = warm_up(&series, start, warm_end, config, &floors);
        let mut window = W::start(&series, start, &points);
        let mut c = warm_end - 1;
        let mut changed = false;
        while c + x < n {
            let line = window.sums(&series).line();
            let base = line.lsq.max(lsq_floor);
            let deviates =
                |i: usize| series.standardized(&line, i, floors.at(i)) > config.deviation;
            if (c + 1..=c + x).all(deviates)
                && window.lookahead_exceeds(&series, &line, c + 1..=c + x, config.pfact * base)
            {
                // the first look-ahead points may be ordinary noisy points of this range
                // that the switch right after them makes look like the start of the next
                // one: each stays here while this range's line is closer to it than the line
                // of the points after it
                for _ in 1..x {
                    let rest_end = (c + x).min(n - 1);
                    if rest_end < c + 3 || !closer_to_first(&series, &line, c + 1, c + 2..=rest_end)
                    {
                        break;
                    }
                    window.push(&series, c + 1);
                    points.push(c + 1);
                    c += 1;
                }
                changed = true;
                break;
            }
            if deviates(c + 1) {
                outliers.push(c + 1);
            } else {
                window.push(&series, c + 1);
                points.push(c + 1);
            }
            c += 1;
        }
        if !changed {
            // the tail: too short for a look-ahead; its deviants are outliers
            for i in c + 1..n {
                let line = window.sums(&series).line();
                if series.standardized(&line, i, floors.at(i)) > config.deviation {
                    outliers.push(i);
                } else {
                    window.push(&series, i);
                    points.push(i);
                }
            }
            c = n - 1;
        }
        let line = window.sums(&series).line();
        segments.push(Segment {
            start,
            end: c + 1,
            outliers,
            intercept: line.intercept,
            slope: line.slope,
        });
        start = c + 1;
    }
    let merged = merge(&series, segments, config, &floors);
    refine(&series, merged, config, &floors)
}

/// Whether point `i` is closer (in relative residual) to `current` than to the line fitted to
/// the points `next`.
fn closer_to_first(
    series: &Series<'_>,
    current: &Line,
    i: usize,
    next: std::ops::RangeInclusive<usize>,
) -> bool {
    let following = series.sums_of(*next.start(), next).line();
    series.residual(current, i).abs() < series.residual(&following, i).abs()
}

/// The first points of a range, with at most one outlier removed by leave-one-out: the point
/// whose removal leaves a line it is far from.
fn warm_up(
    series: &Series<'_>,
    start: usize,
    end: usize,
    config: &DetectionConfig,
    floors: &Floors,
) -> (Vec<usize>, Vec<usize>) {
    let all: Vec<usize> = (start..end).collect();
    if all.len() < 4 {
        return (all, Vec::new());
    }
    let mut worst: Option<(usize, f64)> = None;
    for &i in &all {
        let line = series
            .sums_of(start, all.iter().copied().filter(|&j| j != i))
            .line();
        let z = series.standardized(&line, i, floors.at(i));
        if z > 2.0 * config.deviation && worst.is_none_or(|(_, w)| z > w) {
            worst = Some((i, z));
        }
    }
    match worst {
        Some((i, _)) => (all.into_iter().filter(|&j| j != i).collect(), vec![i]),
        None => (all, Vec::new()),
    }
}

/// The weighted sum of squared relative residuals of the line through `points` (0 for fewer
/// than 3), and its residual degrees of freedom.
fn sse_of(series: &Series<'_>, points: &[usize]) -> (f64, usize) {
    match points.first() {
        Some(&origin) if points.len() > 2 => {
            let line = series.sums_of(origin, points.iter().copied()).line();
            (line.lsq * line.dof as f64, line.dof)
        }
        _ => (0.0, 0),
    }
}

/// The boundary pass of [`detect_changes`]: a switch among the first points of the series
/// (before the look-ahead could see it: at the 3rd, 4th or 5th point) splits the first range
/// when the point after the switch and most of the next `x` are more than `deviation` noise
/// levels off the first line, and the point before the switch is off the next line by more
/// than that and by at least 25 % of its level (a step, not the corner of
/// `max(o, g + (s - 1) G)`); every boundary then moves by up to 2 points to where the two
/// neighbouring lines fit best.
fn refine(
    series: &Series<'_>,
    mut segments: Vec<Segment>,
    config: &DetectionConfig,
    floors: &Floors,
) -> Vec<Segment> {
    let inliers = |s: &Segment, from: usize, to: usize| -> Vec<usize> {
        (from..to).filter(|i| !s.outliers.contains(i)).collect()
    };
    // an early switch: split the first range at the k whose two lines fit best, if the test
    // says two lines are needed and every one of the next `x` points is off the first line
    if let Some(first) = segments.first().cloned() {
        let x = config.lookahead.clamp(1, series.values.len().max(1));
        let last_k = (first.start + x.max(3)).min(first.end.saturating_sub(x.max(3)));
        let mut best: Option<(usize, f64)> = None;
        for k in first.start + 2..=last_k {
            let (a, b) = (
                inliers(&first, first.start, k),
                inliers(&first, k, first.end),
            );
            if a.len() < 2 || b.len() < 3 {
                continue;
            }
            // the series' noise: the local estimates of the first few points see one side
            let sigma = floors.global.sqrt().max(config.relative_floor);
            // the new level: the first point after k is off the first range's level, and so
            // are most of the next `x` points (noise may bring one of them close; one outlier
            // is not a level). Two to four points give no slope worth extrapolating: the first
            // range is judged by its weighted mean level.
            let w: f64 = a.iter().map(|&i| series.weights[i]).sum();
            let level = a
                .iter()
                .map(|&i| series.weights[i] * series.values[i])
                .sum::<f64>()
                / w;
            let mut offs: Vec<f64> = (k..(k + x).min(first.end))
                .map(|i| {
                    let scale = series.scales[i].min(level.abs()).max(f64::MIN_POSITIVE);
                    (series.values[i] - level).abs() / scale / sigma
                })
                .collect();
            let first_off = offs.first().copied().unwrap_or(0.0);
            offs.sort_by(f64::total_cmp);
            let median_off = offs.get(offs.len() / 2).copied().unwrap_or(0.0);
            let new_level = first_off > config.deviation && median_off > config.deviation;
            // a step, not a kink: the next range's line, taken back to the last point of the
            // first range (not an outlier), misses it by more than the noise and by at least a quarter of the level (a
            // max(o, g + (s - 1) G) corner is continuous; so few points give no noise
            // estimate of their own)
            let line_b = series.sums_of(b[0], b.iter().copied()).line();
            let last_a = a[a.len() - 1];
            let back = series.residual(&line_b, last_a).abs();
            let step = back >= 0.25 && back > config.deviation * sigma;
            let total = sse_of(series, &a).0 + sse_of(series, &b).0;
            if new_level && step && best.is_none_or(|(_, t)| total < t) {
                best = Some((k, total));
            }
        }
        if let Some((k, _)) = best {
            let tail = Segment {
                start: k,
                outliers: first.outliers.iter().copied().filter(|&i| i >= k).collect(),
                ..first.clone()
            };
            let head = Segment {
                end: k,
                outliers: first.outliers.iter().copied().filter(|&i| i < k).collect(),
                ..first
            };
            segments.splice(0..1, [head, tail]);
        }
    }
    // boundaries: move each by up to 2 points to the best fit of its two lines
    for j in 1..segments.len() {
        let (a, b) = (segments[j - 1].clone(), segments[j].clone());
        // the first range may keep only 2 points (a switch at the 3rd size)
        let least = if j == 1 { 2 } else { 3 };
        let lo = b.start.saturating_sub(2).max(a.start + least);
        let hi = (b.start + 2).min(b.end.saturating_sub(3));
        // points near the boundary count, even where a range took them for outliers: the
        // first point of a new level looks like an outlier of the old one
        let merged = Segment {
            start: a.start,
            end: b.end,
            outliers: a
                .outliers
                .iter()
                .chain(&b.outliers)
                .copied()
                .filter(|&i| i + 2 < lo || i > hi + 2)
                .collect(),
            intercept: 0.0,
            slope: 0.0,
        };
        let mut best = (b.start, f64::INFINITY);
        for k in lo..=hi {
            let left = inliers(&merged, a.start, k);
            let right = inliers(&merged, k, b.end);
            let total = sse_of(series, &left).0 + sse_of(series, &right).0;
            // ties keep the detected boundary
            if total < best.1 * (1.0 - 1e-9) || (k == b.start && total <= best.1) {
                best = (k, total);
            }
        }
        let k = best.0;
        if k != b.start && best.1.is_finite() {
            segments[j - 1].end = k;
            segments[j - 1].outliers = merged
                .outliers
                .iter()
                .copied()
                .filter(|&i| i >= a.start && i < k)
                .collect();
            segments[j].start = k;
            segments[j].outliers = merged
                .outliers
                .iter()
                .copied()
                .filter(|&i| i >= k && i < b.end)
                .collect();
        }
    }
    for s in &mut segments {
        let points: Vec<usize> = s.inliers().collect();
        if let Some(&origin) = points.first() {
            let line = series.sums_of(origin, points.iter().copied()).line();
            s.intercept = line.intercept;
            s.slope = line.slope;
        }
    }
    segments
}

/// The merge pass of [`detect_changes`].
fn merge(
    series: &Series<'_>,
    mut segments: Vec<Segment>,
    config: &DetectionConfig,
    floors: &Floors,
) -> Vec<Segment> {
    let line_of = |parts: &[&Segment]| {
        let origin = parts[0].start;
        series
            .sums_of(origin, parts.iter().flat_map(|s| s.inliers()))
            .line()
    };
    // Two ranges lie on one line when the joint fit adds no more deviation than noise
    // explains: Chow's test, `F = ((SSE_joint - SSE_a - SSE_b) / 2) / (pooled noise)` against
    // the 99.9 % quantile of `F(2, d)`, `d` the pooled degrees of freedom. That quantile has the
    // closed form `(d / 2) ((1 - p)^(-2 / d) - 1)`; it is large for ranges of few points, whose
    // own fits can be far tighter than the noise.
    let consistent = |parts: &[&Segment]| {
        let joint = line_of(parts);
        let (mut sse, mut dof) = (0.0, 0usize);
        for s in parts {
            let own = line_of(&[s]);
            sse += own.lsq * own.dof as f64;
            dof += own.dof;
        }
        let floor = floors.mean_over(parts.iter().flat_map(|s| s.inliers()));
        let noise = if dof == 0 {
            floor
        } else {
            (sse / dof as f64).max(floor)
        };
        let extra = (joint.lsq * joint.dof as f64 - sse).max(0.0) / 2.0;
        let d = dof.max(1) as f64;
        let quantile = d / 2.0 * (1e-3f64.powf(-2.0 / d) - 1.0);
        extra <= quantile * noise
    };
    // replaces segments[first..=last] by one range over them; the points of `transient`
    // (a level shift between them) become outliers
    let join =
        |segments: &mut Vec<Segment>, first: usize, last: usize, transient: Option<usize>| {
            let mut outliers = Vec::new();
            for (k, s) in segments[first..=last].iter().enumerate() {
                if Some(first + k) == transient {
                    outliers.extend(s.start..s.end);
                } else {
                    outliers.extend(s.outliers.iter().copied());
                }
            }
            let joined = Segment {
                start: segments[first].start,
                end: segments[last].end,
                outliers,
                intercept: 0.0,
                slope: 0.0,
            };
            let line = line_of(&[&joined]);
            segments.splice(
                first..=last,
                [Segment {
                    intercept: line.intercept,
                    slope: line.slope,
                    ..joined
                }],
            );
        };
    let short = config
        .lookahead
        .clamp(1, series.values.len().max(1))
        .saturating_mul(4);
    loop {
        // first a short transient between two ranges on one line, then neighbours on one line
        let transient = (1..segments.len().saturating_sub(1)).find(|&k| {
            let (a, b, c) = (&segments[k - 1], &segments[k], &segments[k + 1]);
            b.end - b.start < short && consistent(&[a, c])
        });
        if let Some(k) = transient {
            join(&mut segments, k - 1, k + 1, Some(k));
            continue;
        }
        let neighbours =
            (1..segments.len()).find(|&k| consistent(&[&segments[k - 1], &segments[k]]));
        match neighbours {
            Some(k) => join(&mut segments, k - 1, k, None),
            None => return segments,
        }
    }
}

/// Netgauge's detection (`ptrn_loggp.c`), for the "Netgauge-compatible" assessment.
///
/// After each new point (`elems` points so far): only when `lastchange + x + 2 <= elems`, the
/// candidate is `c = elems - x`; `base` is `lsqu` of the ordinary least-squares line over
/// `[lastchange, c)`, with `lsqu = sqrt(Σ r² / (count - 2))`; the change is rejected if for any
/// `ix` in `c+1 ..= c+4` the fit over `[lastchange, ix)` has `lsqu < pfact · base`, if `base` is
/// NaN, or if `base < 0.15 µs`. On a change the closed range is `[lastchange, c)` and
/// `lastchange = c + 1`: point `c` belongs to no range. Points of the current range more than
/// `2 lsqu` above its line are dropped when `lsqu > 100 µs`. Values are seconds (the floors are
/// Netgauge's µs converted). `x = 5`, `pfact = 2`.
///
/// Known weaknesses, reproduced on purpose: the 0.15 µs floor hides real switches on fast
/// transports; noisy transports produce false changes.
///
/// # Errors
///
/// As [`detect_changes`].
pub fn detect_changes_netgauge(
    sizes: &[f64],
    values: &[f64],
) -> Result<Vec<Segment>, CalibrationError> {
    validate(sizes, values)?;
    const X: usize = 5;
    const PFACT: f64 = 2.0;
    const FLOOR: f64 = 0.15e-6;
    const OUTLIER_LSQU: f64 = 100e-6;
    let n = values.len();
    let fit = |points: &[usize]| -> (f64, f64, f64) {
        let count = points.len() as f64;
        let mx = points.iter().map(|&i| sizes[i]).sum::<f64>() / count;
        let my = points.iter().map(|&i| values[i]).sum::<f64>() / count;
        let (mut h, mut j) = (0.0, 0.0);
        for &i in points {
            h += (sizes[i] - mx) * (values[i] - my);
            j += (sizes[i] - mx) * (sizes[i] - mx);
        }
        let a = h / j;
        let b = my - a * mx;
        let sse: f64 = points
            .iter()
            .map(|&i| (a * sizes[i] + b - values[i]).powi(2))
            .sum();
        (b, a, (sse / (count - 2.0)).sqrt())
    };
    // the points seen so far (indices into the series), with dropped outliers removed
    let mut kept: Vec<usize> = Vec::with_capacity(n);
    let mut lastchange = 0usize; // position in `kept`
    let mut segments = Vec::new();
    let mut dropped: Vec<usize> = Vec::new();
    for i in 0..n {
        kept.push(i);
        // outlier removal against the current range's line
        if kept.len() - lastchange >= 3 {
            let (b, a, lsqu) = fit(&kept[lastchange..]);
            if lsqu > OUTLIER_LSQU {
                let before = kept.len();
                let mut k = lastchange;
                while k < kept.len() {
                    let p = kept[k];
                    if values[p] > a * sizes[p] + b + 2.0 * lsqu {
                        dropped.push(p);
                        kept.remove(k);
                    } else {
                        k += 1;
                    }
                }
                if kept.len() != before && kept.len() <= lastchange {
                    continue;
                }
            }
        }
        let elems = kept.len();
        if lastchange + X + 2 > elems {
            continue;
        }
        let c = elems - X;
        let (_, _, base) = fit(&kept[lastchange..c]);
        let mut flag = !(base.is_nan() || base < FLOOR);
        for ix in c + 1..c + X {
            let (_, _, l) = fit(&kept[lastchange..ix]);
            if l < PFACT * base {
                flag = false;
            }
        }
        if flag {
            let (b, a, _) = fit(&kept[lastchange..c]);
            segments.push(netgauge_segment(&kept[lastchange..c], &dropped, a, b));
            lastchange = c + 1;
        }
    }
    if lastchange < kept.len() {
        let points = &kept[lastchange..];
        let (b, a, _) = if points.len() >= 2 {
            fit(points)
        } else {
            (values[points[0]], 0.0, f64::NAN)
        };
        segments.push(netgauge_segment(points, &dropped, a, b));
    }
    Ok(segments)
}

fn netgauge_segment(points: &[usize], dropped: &[usize], slope: f64, intercept: f64) -> Segment {
    let (start, end) = (points[0], points[points.len() - 1] + 1);
    Segment {
        start,
        end,
        outliers: dropped
            .iter()
            .copied()
            .filter(|&d| d >= start && d < end)
            .collect(),
        intercept,
        slope,
    }
}
