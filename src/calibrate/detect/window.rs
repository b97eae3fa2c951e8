//! The weighted line fits the robust detection runs over a series: per-point relative weights,
//! running least-squares sums, and the two ways of keeping a window's sums.

/// How many points on either side of a point its local noise estimate looks at (a window of
/// 33 points, 32 first differences): wide enough for a robust spread, narrow enough that load
/// scattering one stretch of a run does not set the noise of another.
pub(super) const NOISE_HALF_WIDTH: usize = 16;

/// Weighted least-squares sums of a line fit, with sizes and values shifted by an origin for
/// accuracy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Sums {
    pub(super) count: usize,
    pub(super) w: f64,
    pub(super) x: f64,
    pub(super) y: f64,
    pub(super) xx: f64,
    pub(super) xy: f64,
    pub(super) yy: f64,
    pub(super) origin: (f64, f64),
}

/// The fitted line and its mean squared (relative) deviation.
#[derive(Debug, Clone, Copy)]
pub(super) struct Line {
    pub(super) intercept: f64,
    pub(super) slope: f64,
    /// `SSE / (count - 2)`; 0 with fewer than 3 points.
    pub(super) lsq: f64,
    /// `count - 2`, the residual degrees of freedom (0 with fewer than 3 points).
    pub(super) dof: usize,
    /// Weighted mean size of the fitted points.
    pub(super) center: f64,
    /// Sum of the weights.
    pub(super) weight: f64,
    /// Weighted sum of squared size deviations from `center`.
    pub(super) spread: f64,
}

impl Line {
    /// The noise standard deviation to judge deviations by: `sqrt(max(lsq, floor))`, widened
    /// by `1 + 4 / dof` while few points back it (a standardised residual then follows a
    /// Student t distribution with heavy tails, not a normal one).
    pub(super) fn sigma(&self, floor: f64) -> f64 {
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
    pub(super) fn prediction_factor(&self, size: f64, level: f64) -> f64 {
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
    pub(super) fn new(origin: (f64, f64)) -> Self {
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

    pub(super) fn add(&mut self, s: &Series<'_>, i: usize) {
        self.add_weighted(s, i, s.weights[i]);
    }

    pub(super) fn add_weighted(&mut self, s: &Series<'_>, i: usize, w: f64) {
        let (dx, dy) = (s.sizes[i] - self.origin.0, s.values[i] - self.origin.1);
        self.count += 1;
        self.w += w;
        self.x += w * dx;
        self.y += w * dy;
        self.xx += w * dx * dx;
        self.xy += w * dx * dy;
        self.yy += w * dy * dy;
    }

    pub(super) fn line(&self) -> Line {
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
pub(super) struct Series<'a> {
    pub(super) sizes: &'a [f64],
    pub(super) values: &'a [f64],
    /// `1 / scale²`, scale = the median |value| of the 5 nearest points: residuals are relative
    /// to the local level, and one outlier cannot change its own weight.
    pub(super) weights: Vec<f64>,
    pub(super) scales: Vec<f64>,
}

impl<'a> Series<'a> {
    pub(super) fn new(sizes: &'a [f64], values: &'a [f64]) -> Self {
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
    pub(super) fn residual(&self, line: &Line, i: usize) -> f64 {
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
    pub(super) fn robust_noise(&self) -> (f64, Vec<f64>) {
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

    pub(super) fn predicted(&self, line: &Line, i: usize) -> f64 {
        line.intercept + line.slope * self.sizes[i]
    }

    pub(super) fn level(&self, line: &Line, i: usize) -> f64 {
        self.scales[i]
            .min(self.predicted(line, i).abs())
            .max(f64::MIN_POSITIVE)
    }

    /// The residual of point `i` in prediction standard deviations: the relative residual
    /// over the noise level (`sigma`) widened by the line's own uncertainty at the point.
    pub(super) fn standardized(&self, line: &Line, i: usize, floor: f64) -> f64 {
        let spread = line.sigma(floor) * line.prediction_factor(self.sizes[i], self.level(line, i));
        self.residual(line, i).abs() / spread
    }

    pub(super) fn sums_of(&self, origin: usize, points: impl Iterator<Item = usize>) -> Sums {
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
pub(super) trait Window {
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

pub(super) struct Running {
    pub(super) sums: Sums,
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

pub(super) struct Recomputed {
    pub(super) origin: usize,
    pub(super) points: Vec<usize>,
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
