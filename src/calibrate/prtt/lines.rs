//! Weighted least-squares lines through per-size quantities, and the direct two-piece fit the
//! assessment compares its models with.

use super::SizeDiagnostics;
use crate::calibrate::least_squares::{LinearFit, least_squares};
use crate::calibrate::{CalibrationError, FitError};

/// Least squares of `values` on `size - at` over `points`, weighted by `weights`: the rows are
/// scaled by `sqrt(w)`, and ordinary least squares on them is weighted least squares.
fn weighted_line_fit(
    diagnostics: &[SizeDiagnostics],
    points: &[usize],
    values: &[f64],
    weights: &[f64],
    at: u64,
) -> Result<LinearFit, FitError> {
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
pub(super) fn line_through(
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
        Err(FitError::RankDeficient { .. }) => Ok((mean, 0.0)),
        Err(e) => Err(e.into()),
    }
}

/// The weighted least-squares line through `(size, value)` of the given points (weights
/// `weights[k]` for `points[k]`), evaluated at `at`, and the t statistic of its slope (infinite
/// for exact data, 0 when the points hold one size).
pub(super) fn line_at_first(
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
        Err(FitError::RankDeficient { .. }) => Ok((weighted_mean(), 0.0)),
        Err(e) => Err(e.into()),
    }
}

/// The best two-piece fit of `values` over `sizes`: two weighted least-squares lines
/// (weights `1 / value²`, i.e. least squares in relative error), the first over points
/// `0..k`, the second over `k..n`, for the `k` with the smallest total squared relative
/// residual (each piece at least 2 points; one line when `n < 4`). Returns the fitted values
/// and `k`. `O(n)` with prefix sums.
pub(super) fn two_piece_fit(sizes: &[f64], values: &[f64]) -> (Vec<f64>, usize) {
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
