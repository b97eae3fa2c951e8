//! Step detection and piecewise-linear fits on the coarse, geometric size grids of the
//! standard MPI benchmarks (OSU: 23 sizes from 1 byte to 4 MiB; IMB: 24 with 0 bytes).
//!
//! [`detect_changes`](super::detect_changes) needs a look-ahead of several points on each side
//! of a switch and dense grids (PRTT plans sample every few hundred bytes). On a power-of-two
//! grid a protocol switch is one jump between two neighbouring sizes, often in the first or last
//! few points, where no look-ahead exists. [`detect_steps`] tests every gap between two
//! neighbouring sizes for a level step instead, against the local trend of the points on both
//! sides (at least one on each side) and the local noise.

use crate::error::ParameterError;

use crate::calibrate::CalibrationError;

/// Settings of [`detect_steps`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StepConfig {
    /// Points on each side of a gap the local trend is fitted to (at least 1).
    pub window: usize,
    /// The least ratio between the levels after and before a gap that counts as a step
    /// (greater than 1).
    pub min_ratio: f64,
    /// How many standard errors of the estimated jump (from the local noise) the jump must
    /// exceed (greater than 0).
    pub significance: f64,
    /// The smallest relative noise level assumed (greater than 0), so that exact data does not
    /// turn rounding into steps.
    pub noise_floor: f64,
    /// The most steps reported (the largest first).
    pub max_steps: usize,
}

impl Default for StepConfig {
    /// Window 3, ratio 1.3, 2.5 standard errors, noise floor 0.5 %, at most 8 steps: on the OSU
    /// grid a step of 1.5× is found at its size under uniform multiplicative noise up to ±5 %,
    /// and smooth convex curves give none (the table tests of `tests/calibrate/benchmark_steps.rs`).
    fn default() -> Self {
        Self {
            window: 3,
            min_ratio: 1.3,
            significance: 2.5,
            noise_floor: 0.005,
            max_steps: 8,
        }
    }
}

impl StepConfig {
    /// Checks the settings.
    ///
    /// # Errors
    ///
    /// [`ParameterError`] naming the field: `window` or `max_steps` not between 1 and 64,
    /// `min_ratio` not finite and greater than 1, `significance` or `noise_floor` not finite and greater than 0.
    pub fn validate(&self) -> Result<(), ParameterError> {
        for (name, value) in [("window", self.window), ("max_steps", self.max_steps)] {
            ParameterError::in_range(name, value as u64, 1..=64, "between 1 and 64")?;
        }
        ParameterError::finite_above("min_ratio", self.min_ratio, 1.0, "finite and > 1")?;
        ParameterError::finite_above("significance", self.significance, 0.0, "finite and > 0")?;
        ParameterError::finite_above("noise_floor", self.noise_floor, 0.0, "finite and > 0")?;
        Ok(())
    }
}

/// A level step found by [`detect_steps`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Step {
    /// Index of the first point of the new level.
    pub index: usize,
    /// The last size before the step and the first size after it (bytes): the switch lies in
    /// between.
    pub between: (u64, u64),
    /// Level after the step over the level before it, at the gap (`> 1`).
    pub ratio: f64,
    /// The jump in standard errors.
    pub z: f64,
}

/// Robust relative noise level around each point: the median, over up to 16 points on each
/// side, of the relative deviation of a point from the straight line through its two
/// neighbours (zero on a LogGP range `a + b s`, whatever its curvature in a log-log plot),
/// divided by that deviation's standard deviation for unit relative noise, `/ 0.6745`.
pub(super) fn local_noise(sizes: &[f64], t: &[f64], floor: f64) -> Vec<f64> {
    let n = t.len();
    if n < 3 {
        return vec![floor; n];
    }
    let dev: Vec<f64> = (1..n - 1)
        .map(|i| {
            let f = (sizes[i] - sizes[i - 1]) / (sizes[i + 1] - sizes[i - 1]);
            let interp = (1.0 - f) * t[i - 1] + f * t[i + 1];
            let scale =
                (1.0 + ((1.0 - f) * t[i - 1] / t[i]).powi(2) + (f * t[i + 1] / t[i]).powi(2))
                    .sqrt();
            ((t[i] - interp) / t[i]).abs() / scale
        })
        .collect();
    const HALF: usize = 16;
    let mut out = Vec::with_capacity(n);
    let mut buf = Vec::with_capacity(2 * HALF + 1);
    for i in 0..n {
        // deviation k belongs to point k + 1
        let lo = i.saturating_sub(HALF + 1).min(dev.len() - 1);
        let hi = (i + HALF).min(dev.len()).max(lo + 1);
        buf.clear();
        buf.extend_from_slice(&dev[lo..hi]);
        buf.sort_by(f64::total_cmp);
        out.push((buf[buf.len() / 2] / 0.6745).max(floor));
    }
    out
}

/// A relative-weighted line through `points` of one side of a gap, with what its prediction's
/// variance needs: `(a, b, 1 / W, x̄, S_xx)` in the weighted least-squares sense.
fn side_line(sizes: &[f64], t: &[f64], r: &[usize]) -> (f64, f64, f64, f64, f64) {
    let mut sums = LineSums::default();
    for &i in r {
        sums.add(sizes[i], t[i]);
    }
    let (a, b) = sums.unconstrained();
    let center = sums.x / sums.w;
    let sxx = (sums.xx - sums.x * sums.x / sums.w).max(0.0);
    (a, b, 1.0 / sums.w, center, sxx)
}

/// The jump at gap `b` (between points `b - 1` and `b`) as `ln(right / left)` of the two
/// sides' lines at the middle of the gap, with its standard error for relative noise `sigma`.
fn jump(
    sizes: &[f64],
    t: &[f64],
    sigma: f64,
    mid: f64,
    left: &[usize],
    right: &[usize],
) -> Option<(f64, f64)> {
    let (nl, nr) = (left.len(), right.len());
    if nl == 0 || nr == 0 || nl + nr < 3 {
        return None;
    }
    // the prediction at `mid` of a side and its variance (in units of σ², times t²)
    let predict = |own: &[usize], other: &[usize]| -> (f64, f64) {
        if own.len() >= 2 {
            let (a, slope, inv_w, center, sxx) = side_line(sizes, t, own);
            let lever = if sxx > 0.0 {
                (mid - center).powi(2) / sxx
            } else {
                0.0
            };
            // a side whose points scatter more than the noise about their line (a window that
            // straddles another step) is less certain in proportion
            let misfit = if own.len() >= 3 {
                let sse: f64 = own
                    .iter()
                    .map(|&i| ((t[i] - a - slope * sizes[i]) / t[i]).powi(2))
                    .sum();
                (sse / (own.len() - 2) as f64) / (sigma * sigma)
            } else {
                1.0
            };
            (
                a + slope * mid,
                (inv_w + lever) * if misfit > MISFIT { misfit } else { 1.0 },
            )
        } else {
            // one point: the other side's slope through it
            let i = own[0];
            let (_, slope, _, _, sxx) = side_line(sizes, t, other);
            let lever = if sxx > 0.0 {
                (mid - sizes[i]).powi(2) / sxx
            } else {
                0.0
            };
            (t[i] + slope * (mid - sizes[i]), t[i] * t[i] + lever)
        }
    };
    let (l, vl) = predict(left, right);
    let (r, vr) = predict(right, left);
    if !(l > 0.0 && r > 0.0) {
        return None;
    }
    let jump = (r / l).ln();
    let se = sigma * (vl / (l * l) + vr / (r * r)).sqrt();
    (jump.is_finite() && se > 0.0 && se.is_finite()).then_some((jump, se))
}

/// A side's mean squared relative residual about its line, over `σ²`, above which the side
/// counts as scattering beyond the noise (for 1 residual degree of freedom, a 4.6 % chance).
const MISFIT: f64 = 4.0;

/// The point of `side` (3 or more points) farthest from the side's line, when the side
/// scatters beyond the noise (see [`MISFIT`]).
fn outlier(sizes: &[f64], t: &[f64], sigma: f64, side: &[usize]) -> Option<usize> {
    if side.len() < 3 {
        return None;
    }
    let (a, slope, ..) = side_line(sizes, t, side);
    let residual = |i: usize| ((t[i] - a - slope * sizes[i]) / t[i]).abs();
    let sse: f64 = side.iter().map(|&i| residual(i).powi(2)).sum();
    if sse / (side.len() - 2) as f64 <= MISFIT * sigma * sigma {
        return None;
    }
    side.iter()
        .copied()
        .max_by(|&i, &j| residual(i).total_cmp(&residual(j)))
}

/// Finds the level steps of a one-way time series on a coarse size grid.
///
/// # Method
///
/// A LogGP range is a line `t = a + b s`; a protocol switch is a jump between two
/// neighbouring points. For every gap between points `b - 1` and `b`, a relative-weighted
/// least-squares line (weights `1 / t²`) is fitted to the [`window`](StepConfig::window) points
/// on each side (a side of one point takes the other side's slope; a gap between two accepted
/// steps uses only the points between them), and the jump is `Δ = ln(r / l)`, `l` and `r`
/// the two lines at the middle of the gap: 0 on one LogGP range, however the window sits.
/// When a side of 3 or more points scatters about its line by more than 4 `σ²` (mean
/// square), the smaller `Δ` (in standard errors) of the full side and of the side without its
/// farthest point counts, so that a single spike, which tilts a short window's line, makes no
/// step.
/// Its standard error is the textbook prediction variance of a weighted line,
/// `σ √(Σ_side (1/W + (m − x̄)² / S_xx) / pred²)`, with `σ` the local relative noise (the
/// median relative deviation of a point from the straight line through its two neighbours,
/// over the 33 nearest points, scaled to unit variance and `/ 0.6745`; at least
/// [`noise_floor`](StepConfig::noise_floor)). A gap is a step when `Δ ≥ ln(min_ratio)` and
/// `Δ ≥ significance · se` (a side whose points scatter about their line by more than 4 `σ²`
/// — a window reaching over another step — has its variance scaled by that mean square):
/// only rises count — a protocol switch makes larger messages slower
/// per byte or per message, a LogGP range with a lower level than the one below it would
/// predict a larger message faster than a smaller one, and a drop is noise or the end of a
/// spike. The most significant step is accepted first, then the remaining gaps are re-tested with
/// windows that stop at the accepted steps, until none passes or
/// [`max_steps`](StepConfig::max_steps) are found. A per-byte time that grows abruptly (a
/// message outgrowing a cache) is a step like any other; a smoothly convex curve is not, as
/// long as one octave's growth stays within `min_ratio` of the line through the octaves
/// before it.
///
/// Cost: `O(n · window)` per accepted step, `O(n)` for the noise levels.
///
/// # Errors
///
/// [`CalibrationError::Parameters`] for an invalid `config`;
/// [`CalibrationError::LengthMismatch`] for `sizes` and `times` of different lengths;
/// [`CalibrationError::InvalidValue`] for a size of 0 or not above the previous one, or a time
/// not finite and > 0.
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{StepConfig, detect_steps};
/// // 1 µs + 1 ns/B with an eager limit after 4 KiB: the time jumps 2.5x
/// let sizes: Vec<u64> = (0..23).map(|k| 1u64 << k).collect();
/// let times: Vec<f64> = sizes
///     .iter()
///     .map(|&s| (1e-6 + 1e-9 * s as f64) * if s > 4096 { 2.5 } else { 1.0 })
///     .collect();
/// let steps = detect_steps(&sizes, &times, &StepConfig::default())?;
/// assert_eq!(steps.len(), 1);
/// assert_eq!(steps[0].between, (4096, 8192));
/// # Ok::<(), commcost::calibrate::CalibrationError>(())
/// ```
pub fn detect_steps(
    sizes: &[u64],
    times: &[f64],
    config: &StepConfig,
) -> Result<Vec<Step>, CalibrationError> {
    config.validate()?;
    if sizes.len() != times.len() {
        return Err(CalibrationError::LengthMismatch {
            what: "sizes and times",
            expected: sizes.len(),
            got: times.len(),
        });
    }
    for (index, w) in sizes.windows(2).enumerate() {
        if w[1] <= w[0] {
            return Err(CalibrationError::InvalidValue {
                what: "size (not above the previous one)",
                index: index + 1,
                value: w[1] as f64,
            });
        }
    }
    if let Some(index) = sizes.iter().position(|&s| s == 0) {
        return Err(CalibrationError::InvalidValue {
            what: "size (0 bytes has no logarithm)",
            index,
            value: 0.0,
        });
    }
    if let Some(index) = times.iter().position(|t| !(t.is_finite() && *t > 0.0)) {
        return Err(CalibrationError::InvalidValue {
            what: "time",
            index,
            value: times[index],
        });
    }
    let n = sizes.len();
    let x: Vec<f64> = sizes.iter().map(|&s| s as f64).collect();
    let noise = local_noise(&x, times, config.noise_floor);
    let threshold = config.min_ratio.ln();
    let mut accepted: Vec<usize> = Vec::new(); // sorted gap indices
    let mut steps = Vec::new();
    while steps.len() < config.max_steps {
        let mut best: Option<(usize, f64, f64)> = None;
        for b in 1..n {
            if accepted.binary_search(&b).is_ok() {
                continue;
            }
            let at = accepted.partition_point(|&a| a < b);
            let lo = if at == 0 { 0 } else { accepted[at - 1] };
            let hi = accepted.get(at).copied().unwrap_or(n);
            let left: Vec<usize> = (b.saturating_sub(config.window).max(lo)..b).collect();
            let right: Vec<usize> = (b..b.saturating_add(config.window).min(hi)).collect();
            let sigma = noise[b - 1].max(noise[b]);
            let mid = 0.5 * (x[b - 1] + x[b]);
            let Some((mut d, se)) = jump(&x, times, sigma, mid, &left, &right) else {
                continue;
            };
            let mut z = d / se;
            if !(d >= threshold && z >= config.significance) {
                continue;
            }
            // a side of 3 or more points that scatters beyond the noise (a spike tilts a short
            // window's line): the step must survive leaving out its worst point
            for (side, is_left) in [(&left, true), (&right, false)] {
                let Some(worst) = outlier(&x, times, sigma, side) else {
                    continue;
                };
                let fewer: Vec<usize> = side.iter().copied().filter(|&i| i != worst).collect();
                let (l, r) = if is_left {
                    (&fewer, &right)
                } else {
                    (&left, &fewer)
                };
                match jump(&x, times, sigma, mid, l, r) {
                    Some((d2, se2)) if d2 / se2 < z => (d, z) = (d2, d2 / se2),
                    Some(_) => {}
                    None => z = 0.0,
                }
            }
            if d >= threshold && z >= config.significance && best.is_none_or(|(_, _, bz)| z > bz) {
                best = Some((b, d, z));
            }
        }
        let Some((b, d, z)) = best else { break };
        let at = accepted.partition_point(|&a| a < b);
        accepted.insert(at, b);
        steps.push(Step {
            index: b,
            between: (sizes[b - 1], sizes[b]),
            ratio: d.exp(),
            z,
        });
    }
    steps.sort_by_key(|s| s.index);
    Ok(steps)
}

/// Relative-weighted least-squares sums of a line `t ≈ a + b x` (weights `1 / t²`, so every
/// residual counts relative to its measurement).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LineSums {
    w: f64,
    x: f64,
    y: f64,
    xx: f64,
    xy: f64,
    yy: f64,
    count: usize,
}

impl LineSums {
    pub(super) fn add(&mut self, x: f64, t: f64) {
        self.add_weighted(x, t, 1.0);
    }

    /// Adds a point with an extra weight factor (on top of `1 / t²`).
    pub(super) fn add_weighted(&mut self, x: f64, t: f64, factor: f64) {
        let w = factor / (t * t);
        self.w += w;
        self.x += w * x;
        self.y += w * t;
        self.xx += w * x * x;
        self.xy += w * x * t;
        self.yy += w * t * t;
        self.count += 1;
    }

    pub(super) fn sub(&self, other: &Self) -> Self {
        Self {
            w: self.w - other.w,
            x: self.x - other.x,
            y: self.y - other.y,
            xx: self.xx - other.xx,
            xy: self.xy - other.xy,
            yy: self.yy - other.yy,
            count: self.count - other.count,
        }
    }

    fn sse(&self, a: f64, b: f64) -> f64 {
        // Σ w (y - a - b x)²
        let v = self.yy + a * a * self.w + b * b * self.xx - 2.0 * a * self.y - 2.0 * b * self.xy
            + 2.0 * a * b * self.x;
        v.max(0.0)
    }

    /// The unconstrained line `(a, b)`; a flat line for fewer than 2 distinct sizes.
    fn unconstrained(&self) -> (f64, f64) {
        let det = self.w * self.xx - self.x * self.x;
        if self.count >= 2 && det > 1e-12 * self.w * self.xx && det.is_finite() {
            let b = (self.w * self.xy - self.x * self.y) / det;
            let a = (self.y - b * self.x) / self.w;
            (a, b)
        } else if self.w > 0.0 {
            (self.y / self.w, 0.0)
        } else {
            (0.0, 0.0)
        }
    }

    /// Sum of squared relative residuals of the unconstrained line.
    pub(super) fn cost(&self) -> f64 {
        let (a, b) = self.unconstrained();
        self.sse(a, b)
    }

    /// Sum of squared relative residuals of the line with non-negative coefficients.
    pub(super) fn constrained_cost(&self) -> f64 {
        let ((a, b), _) = self.constrained();
        self.sse(a, b)
    }

    /// The best line with `a ≥ 0` and `b ≥ 0` (the unconstrained one when it is feasible,
    /// otherwise the better of the two lines on the boundary), and whether it differs.
    pub(super) fn constrained(&self) -> ((f64, f64), (f64, f64)) {
        let free = self.unconstrained();
        if free.0 >= 0.0 && free.1 >= 0.0 {
            return (free, free);
        }
        let flat = ((self.y / self.w).max(0.0), 0.0);
        let through_origin = (
            0.0,
            if self.xx > 0.0 {
                (self.xy / self.xx).max(0.0)
            } else {
                0.0
            },
        );
        let best = if self.sse(flat.0, flat.1) <= self.sse(through_origin.0, through_origin.1) {
            flat
        } else {
            through_origin
        };
        (best, free)
    }
}

/// The sizes and times of a series, as `x = s - 1` (a LogGP line's variable).
pub(super) fn prefix_sums(points: &[(u64, f64)]) -> Vec<LineSums> {
    let mut out = Vec::with_capacity(points.len() + 1);
    let mut acc = LineSums::default();
    out.push(acc);
    for &(s, t) in points {
        acc.add(s.saturating_sub(1) as f64, t);
        out.push(acc);
    }
    out
}

/// Candidate cut positions for a dynamic program over `n` points: all of them up to 512
/// points, otherwise 512 evenly spaced ones plus `forced`.
fn candidates(n: usize, forced: &[usize]) -> Vec<usize> {
    const MAX: usize = 512;
    let mut c: Vec<usize> = if n <= MAX {
        (1..n).collect()
    } else {
        (1..MAX).map(|k| k * n / MAX).collect()
    };
    c.extend(forced.iter().copied().filter(|&f| f > 0 && f < n));
    c.sort_unstable();
    c.dedup();
    c
}

/// The least-cost split of `points` into exactly `k` consecutive segments of at least
/// `min_points` points each (relative-weighted lines, with non-negative coefficients when
/// `constrained`), by dynamic programming
/// over at most ~512 candidate cuts; the `forced` cuts are kept. Returns the cut indices, or
/// `None` when no such split exists.
pub(super) fn best_split(
    prefix: &[LineSums],
    k: usize,
    min_points: usize,
    forced: &[usize],
    constrained: bool,
) -> Option<Vec<usize>> {
    let n = prefix.len().checked_sub(1)?;
    if k == 0 || k > n {
        return None;
    }
    // positions: 0, candidates..., n
    let mut pos = vec![0];
    pos.extend(candidates(n, forced));
    pos.push(n);
    let m = pos.len();
    let cost = |i: usize, j: usize| -> f64 {
        let (a, b) = (pos[i], pos[j]);
        if b - a < min_points {
            return f64::INFINITY;
        }
        // a segment may not swallow a forced cut
        if forced.iter().any(|&f| f > a && f < b) {
            return f64::INFINITY;
        }
        let sums = prefix[b].sub(&prefix[a]);
        if constrained {
            sums.constrained_cost()
        } else {
            sums.cost()
        }
    };
    // best[j][p]: least cost of positions 0..pos[p] in j segments
    let mut best = vec![vec![f64::INFINITY; m]; k + 1];
    let mut back = vec![vec![0usize; m]; k + 1];
    best[0][0] = 0.0;
    for j in 1..=k {
        for p in 1..m {
            for q in (j - 1)..p {
                if !best[j - 1][q].is_finite() {
                    continue;
                }
                let c = best[j - 1][q] + cost(q, p);
                if c < best[j][p] {
                    best[j][p] = c;
                    back[j][p] = q;
                }
            }
        }
    }
    if !best[k][m - 1].is_finite() {
        return None;
    }
    let mut cuts = Vec::with_capacity(k - 1);
    let mut p = m - 1;
    for j in (1..=k).rev() {
        p = back[j][p];
        if j > 1 {
            cuts.push(pos[p]);
        }
    }
    cuts.reverse();
    Some(cuts)
}

/// Median relative error of the best unconstrained piecewise-linear fit of `points` with `k`
/// pieces (the cut positions free, pieces of at least one point): the direct fit a model with
/// `k` protocol ranges is compared with.
pub(super) fn direct_piecewise_error(points: &[(u64, f64)], k: usize) -> Option<(f64, f64)> {
    let prefix = prefix_sums(points);
    let cuts = best_split(&prefix, k.min(points.len()).max(1), 1, &[], false)?;
    let mut bounds = vec![0];
    bounds.extend(&cuts);
    bounds.push(points.len());
    let mut pairs = Vec::with_capacity(points.len());
    for w in bounds.windows(2) {
        // the line from the segment's own sums (a difference of prefix sums loses digits)
        let mut sums = LineSums::default();
        for &(s, t) in &points[w[0]..w[1]] {
            sums.add(s.saturating_sub(1) as f64, t);
        }
        let (a, b) = sums.unconstrained();
        for &(s, t) in &points[w[0]..w[1]] {
            pairs.push((a + b * s.saturating_sub(1) as f64, t));
        }
    }
    super::relative_errors(&pairs)
}
