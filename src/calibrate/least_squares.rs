//! Linear least squares with fit statistics: the one routine every calibration fit uses.

use crate::calibrate::FitError;

/// Fits `y ≈ X β` by linear least squares.
///
/// `design` is the `n × c` design matrix `X` in row-major order (`n = observations.len()`,
/// `c = columns`); include a column of ones for an intercept.
///
/// # Formula
///
/// ```text
/// β = argmin ‖y - X β‖²
/// ```
///
/// Method: every column is divided by its Euclidean norm (so that coefficients of very
/// different magnitudes — seconds per message, per byte, per line — do not ruin the
/// conditioning), the normalised matrix is reduced by a Householder QR with column pivoting
/// (Businger & Golub, "Linear least squares solutions by Householder transformations",
/// Numerische Mathematik 7, 1965) to a `c × c` triangle `R` and `Qᵀ y`, and `R β = Qᵀ y` is
/// solved by back substitution. The numerical rank is the number of diagonal entries
/// `|R_kk| > sqrt(c) · max(n, c) · ε` (the usual matrix-rank rule `σ_max · max(n, c) · ε`, with
/// the normalised matrix's Frobenius norm `sqrt(c) >= σ_max`); a matrix of lower rank is
/// reported, not silently given a minimum-norm answer, because its coefficients are not
/// determined by the data. Cost `O(n c²)`.
///
/// # Errors
///
/// * [`FitError::DimensionMismatch`] if `design.len() != n * c` or `c = 0`;
/// * [`FitError::TooFewPoints`] if `n < c`;
/// * [`FitError::NonFinite`] for NaN or infinite entries, or coefficients that overflow;
/// * [`FitError::RankDeficient`] for a zero column or linearly dependent columns.
///
/// # Examples
///
/// ```
/// use commcost::calibrate::least_squares;
///
/// // y = 2 + 3 x, exactly
/// let xs = [0.0, 1.0, 2.0, 5.0];
/// let design: Vec<f64> = xs.iter().flat_map(|&x| [1.0, x]).collect();
/// let y: Vec<f64> = xs.iter().map(|x| 2.0 + 3.0 * x).collect();
/// let fit = least_squares(&design, 2, &y)?;
/// assert!((fit.coefficients()[0] - 2.0).abs() < 1e-12);
/// assert!((fit.coefficients()[1] - 3.0).abs() < 1e-12);
/// assert!(fit.training().sigma_eps().unwrap() < 1e-12);
/// # Ok::<(), commcost::calibrate::FitError>(())
/// ```
pub fn least_squares(
    design: &[f64],
    columns: usize,
    observations: &[f64],
) -> Result<LinearFit, FitError> {
    const WHAT: &str = "least squares";
    let n = observations.len();
    if columns == 0 {
        return Err(FitError::DimensionMismatch {
            what: "design matrix columns",
            expected: 1,
            got: 0,
        });
    }
    check_shape(design, columns, observations)?;
    if n < columns {
        return Err(FitError::TooFewPoints {
            what: WHAT,
            needed: columns,
            got: n,
        });
    }

    // column-major copy of X, each column divided by its Euclidean norm
    let mut a = vec![0.0; design.len()];
    let mut norms = Vec::with_capacity(columns);
    for column in 0..columns {
        let col = &mut a[column * n..(column + 1) * n];
        for (row, value) in col.iter_mut().enumerate() {
            *value = design[row * columns + column];
        }
        let norm = col.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm <= 0.0 || !norm.is_finite() {
            return Err(FitError::RankDeficient {
                rank: columns - 1,
                columns,
                column,
            });
        }
        col.iter_mut().for_each(|v| *v /= norm);
        norms.push(norm);
    }
    let mut rhs = observations.to_vec();
    let qr = householder_qr(&mut a, n, columns, &mut rhs);
    // the numerical rank: |R_kk| against ‖X‖_F · max(n, c) · ε, ‖X‖_F = sqrt(c) >= σ_max for
    // the normalised columns (the matrix-rank rule with σ_max's upper bound)
    let tolerance = (columns as f64).sqrt() * n.max(columns) as f64 * f64::EPSILON;
    let negligible = |k: usize| {
        let diagonal = a[k * n + k].abs();
        diagonal.is_nan() || diagonal <= tolerance
    };
    if let Some(rank) = (0..columns).find(|&k| negligible(k)) {
        return Err(FitError::RankDeficient {
            rank,
            columns,
            column: qr.permutation[rank],
        });
    }
    let beta_normalised = back_substitute(&a, n, columns, &rhs, &qr.permutation);
    let coefficients: Vec<f64> = beta_normalised
        .iter()
        .zip(&norms)
        .map(|(b, norm)| b / norm)
        .collect();
    // data near the ends of the f64 range (1e308 next to 1e-320) can overflow in the solve:
    // an error, never an infinite or NaN coefficient
    if let Some(index) = coefficients.iter().position(|c| !c.is_finite()) {
        return Err(FitError::NonFinite {
            what: "coefficients (the data overflow the solve)",
            index,
            value: coefficients[index],
        });
    }

    let training = statistics(&coefficients, design, observations);
    Ok(LinearFit {
        coefficients,
        training,
    })
}

/// The column order a pivoted QR chose: `permutation[k]` is the original column in position `k`.
struct PivotedQr {
    permutation: Vec<usize>,
}

/// Householder QR with column pivoting of the column-major `n × c` matrix `a` (`n >= c`), in
/// place: on return the upper triangle of `a`'s first `c` rows holds `R` (columns in the
/// returned order, `|R_00| >= |R_11| >= …` up to rounding), and `rhs` holds `Qᵀ rhs`. At step
/// `k` the column with the largest remaining norm (the first on ties) moves to position `k`,
/// and the reflection `H = I - 2 v vᵀ / (vᵀ v)`, `v = x - α e_1`, `α = -sign(x_1) ‖x‖`, zeroes
/// it below the diagonal (Golub & Van Loan, "Matrix Computations", 4th ed., 2013, §5.2, §5.4.2).
fn householder_qr(a: &mut [f64], n: usize, columns: usize, rhs: &mut [f64]) -> PivotedQr {
    let mut permutation: Vec<usize> = (0..columns).collect();
    let squared = |col: &[f64]| accurate_sum(col.iter().map(|v| v * v));
    for k in 0..columns {
        // pivot: the largest remaining column norm, recomputed (no downdating error)
        let mut pivot = k;
        let mut largest = squared(&a[k * n + k..(k + 1) * n]);
        for j in k + 1..columns {
            let norm = squared(&a[j * n + k..(j + 1) * n]);
            if norm > largest {
                (pivot, largest) = (j, norm);
            }
        }
        if pivot != k {
            for i in 0..n {
                a.swap(k * n + i, pivot * n + i);
            }
            permutation.swap(k, pivot);
        }
        let norm = largest.sqrt();
        if norm == 0.0 {
            continue; // nothing left to zero: R_kk = 0, the rank check reports it
        }
        let x1 = a[k * n + k];
        let alpha = if x1 > 0.0 { -norm } else { norm };
        // v = x - α e_1, kept in a[k.., k] while the other columns are reflected
        a[k * n + k] = x1 - alpha;
        let v_squared = squared(&a[k * n + k..(k + 1) * n]);
        if v_squared > 0.0 {
            let (head, tail) = a.split_at_mut((k + 1) * n);
            let v = &head[k * n + k..];
            for j in 0..columns - k - 1 {
                let col = &mut tail[j * n + k..(j + 1) * n];
                reflect(v, v_squared, col);
            }
            reflect(v, v_squared, &mut rhs[k..n]);
        }
        a[k * n + k] = alpha;
        a[k * n + k + 1..(k + 1) * n].fill(0.0);
    }
    PivotedQr { permutation }
}

/// `x ← (I - 2 v vᵀ / (vᵀ v)) x`.
fn reflect(v: &[f64], v_squared: f64, x: &mut [f64]) {
    let dot = accurate_sum(v.iter().zip(x.iter()).map(|(a, b)| a * b));
    let factor = 2.0 * dot / v_squared;
    for (xi, vi) in x.iter_mut().zip(v) {
        *xi -= factor * vi;
    }
}

/// Solves `R z = (Qᵀ y)[..c]` by back substitution (`R` the upper triangle of the column-major
/// `a`, full rank) and returns `β` in the original column order: `β[permutation[k]] = z[k]`.
fn back_substitute(
    a: &[f64],
    n: usize,
    columns: usize,
    rhs: &[f64],
    permutation: &[usize],
) -> Vec<f64> {
    let mut z = rhs[..columns].to_vec();
    for k in (0..columns).rev() {
        let mut value = z[k];
        for j in k + 1..columns {
            value -= a[j * n + k] * z[j];
        }
        z[k] = value / a[k * n + k];
    }
    let mut beta = vec![0.0; columns];
    for (k, &column) in permutation.iter().enumerate() {
        beta[column] = z[k];
    }
    beta
}

/// `Σ values` with Neumaier's compensation (A. Neumaier, "Rundungsfehleranalyse einiger
/// Verfahren zur Summation endlicher Summen", ZAMM 54, 1974): the rounding error of each
/// addition is carried along, so the inner products of the reflections keep about twice the
/// working precision; without it the QR loses about a digit against a blocked summation.
fn accurate_sum(values: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut compensation) = (0.0f64, 0.0f64);
    for v in values {
        let t = sum + v;
        if sum.abs() >= v.abs() {
            compensation += (sum - t) + v;
        } else {
            compensation += (v - t) + sum;
        }
        sum = t;
    }
    sum + compensation
}

fn check_shape(design: &[f64], columns: usize, observations: &[f64]) -> Result<(), FitError> {
    // checked: `usize::MAX` columns must be an error, not an overflow
    let expected = observations.len().checked_mul(columns);
    if expected != Some(design.len()) {
        let expected = expected.unwrap_or(usize::MAX);
        return Err(FitError::DimensionMismatch {
            what: "design matrix (rows x columns, row-major)",
            expected,
            got: design.len(),
        });
    }
    if let Some(index) = design.iter().position(|v| !v.is_finite()) {
        return Err(FitError::NonFinite {
            what: "design matrix",
            index,
            value: design[index],
        });
    }
    if let Some(index) = observations.iter().position(|v| !v.is_finite()) {
        return Err(FitError::NonFinite {
            what: "observations",
            index,
            value: observations[index],
        });
    }
    Ok(())
}

pub(crate) fn statistics(
    coefficients: &[f64],
    design: &[f64],
    observations: &[f64],
) -> FitStatistics {
    let n = observations.len();
    let mean = observations.iter().sum::<f64>() / n as f64;
    let mut sse = 0.0;
    let mut sst = 0.0;
    for (row, &y) in design.chunks_exact(coefficients.len()).zip(observations) {
        let predicted: f64 = row.iter().zip(coefficients).map(|(x, b)| x * b).sum();
        sse += (y - predicted) * (y - predicted);
        sst += (y - mean) * (y - mean);
    }
    FitStatistics {
        points: n,
        coefficients: coefficients.len(),
        sse,
        sst,
    }
}

/// The result of [`least_squares`]: coefficients and statistics on the training data.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearFit {
    coefficients: Vec<f64>,
    training: FitStatistics,
}

impl LinearFit {
    /// The fitted coefficients `β`, one per design column.
    pub fn coefficients(&self) -> &[f64] {
        &self.coefficients
    }

    /// Statistics of the fit on the data it was fitted to.
    pub fn training(&self) -> &FitStatistics {
        &self.training
    }

    /// `x · β` for one row of regressors.
    ///
    /// # Errors
    ///
    /// [`FitError::DimensionMismatch`] if `row` has the wrong length.
    pub fn predict(&self, row: &[f64]) -> Result<f64, FitError> {
        if row.len() != self.coefficients.len() {
            return Err(FitError::DimensionMismatch {
                what: "regressor row",
                expected: self.coefficients.len(),
                got: row.len(),
            });
        }
        Ok(row.iter().zip(&self.coefficients).map(|(x, b)| x * b).sum())
    }

    /// Statistics of this fit on other data (a held-out test set, as the Mlines paper uses).
    ///
    /// # Errors
    ///
    /// [`FitError::DimensionMismatch`], [`FitError::NonFinite`] as for [`least_squares`], and
    /// [`FitError::TooFewPoints`] for an empty set.
    pub fn evaluate(
        &self,
        design: &[f64],
        observations: &[f64],
    ) -> Result<FitStatistics, FitError> {
        if observations.is_empty() {
            return Err(FitError::TooFewPoints {
                what: "evaluation set",
                needed: 1,
                got: 0,
            });
        }
        check_shape(design, self.coefficients.len(), observations)?;
        Ok(statistics(&self.coefficients, design, observations))
    }
}

/// Goodness-of-fit statistics of a linear fit on one data set.
///
/// # Formula
///
/// With residuals `e_i = y_i - ŷ_i`, `n` points and `c` fitted coefficients:
///
/// ```text
/// SSE  = Σ e_i²                       SST = Σ (y_i - ȳ)²
/// σ_ε  = sqrt(SSE / (n - c))          standard error of the residuals (mlines eq. 8)
/// R²   = 1 - SSE / SST                coefficient of determination
/// U    = SSE / SST                    unexplained-variance ratio
/// ```
///
/// `U` is what the Mlines paper (after Mason et al.) calls "R²": 0 is a perfect model and values
/// below 0.01 are called acceptable there. This crate names it for what it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitStatistics {
    points: usize,
    coefficients: usize,
    sse: f64,
    sst: f64,
}

impl FitStatistics {
    /// Number of data points `n`.
    pub fn points(&self) -> usize {
        self.points
    }

    /// Sum of squared residuals.
    pub fn sse(&self) -> f64 {
        self.sse
    }

    /// Total sum of squares about the mean of the observations.
    pub fn sst(&self) -> f64 {
        self.sst
    }

    /// `σ_ε = sqrt(SSE / (n - c))`; `None` when `n <= c` (no degrees of freedom left).
    pub fn sigma_eps(&self) -> Option<f64> {
        (self.points > self.coefficients)
            .then(|| (self.sse / (self.points - self.coefficients) as f64).sqrt())
    }

    /// `R² = 1 - SSE / SST`; `None` when all observations are equal (`SST = 0`).
    pub fn coefficient_of_determination(&self) -> Option<f64> {
        self.unexplained_variance_ratio().map(|u| 1.0 - u)
    }

    /// `SSE / SST`, the Mlines paper's "R²" (0 is perfect); `None` when `SST = 0`.
    pub fn unexplained_variance_ratio(&self) -> Option<f64> {
        (self.sst > 0.0).then(|| self.sse / self.sst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cubic through 9 points, `y = 1 - 2x + x²/2 + x³/4`: exact data, so the fit must give
    /// back these coefficients and a zero residual.
    #[test]
    fn an_exact_polynomial_is_recovered() {
        let xs: Vec<f64> = (0..9).map(f64::from).collect();
        let design: Vec<f64> = xs
            .iter()
            .flat_map(|&x| [1.0, x, x * x, x * x * x])
            .collect();
        let y: Vec<f64> = xs
            .iter()
            .map(|&x| 1.0 - 2.0 * x + 0.5 * x * x + 0.25 * x * x * x)
            .collect();
        let fit = least_squares(&design, 4, &y).unwrap();
        for (got, want) in fit.coefficients().iter().zip([1.0, -2.0, 0.5, 0.25]) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
        assert!(fit.training().sse() < 1e-20);
    }

    /// Columns of very different scales (an intercept of microseconds, a slope of 0.2 ns/B
    /// over sizes to 1 MB), as every calibration fit has.
    #[test]
    fn scales_far_apart_are_recovered() {
        let sizes: Vec<f64> = (0..20).map(|k| f64::from(k) * 65536.0).collect();
        let design: Vec<f64> = sizes.iter().flat_map(|&s| [1.0, s]).collect();
        let y: Vec<f64> = sizes.iter().map(|&s| 5e-6 + 2e-10 * s).collect();
        let fit = least_squares(&design, 2, &y).unwrap();
        assert!((fit.coefficients()[0] - 5e-6).abs() < 1e-18);
        assert!((fit.coefficients()[1] - 2e-10).abs() < 1e-22);
    }

    /// `(0, 1), (1, 3), (2, 4), (3, 4)` by hand: x̄ = 1.5, ȳ = 3, Sxy = Sxx = 5, so the slope is
    /// 1, the intercept 3 - 1.5 = 1.5, and the residuals ∓0.5 give SSE = 1.
    #[test]
    fn an_overdetermined_line_matches_the_hand_solution() {
        let design = [1.0, 0.0, 1.0, 1.0, 1.0, 2.0, 1.0, 3.0];
        let fit = least_squares(&design, 2, &[1.0, 3.0, 4.0, 4.0]).unwrap();
        assert!((fit.coefficients()[0] - 1.5).abs() < 1e-14);
        assert!((fit.coefficients()[1] - 1.0).abs() < 1e-14);
        assert!((fit.training().sse() - 1.0).abs() < 1e-14);
        // σ_ε = sqrt(1 / 2)
        assert!((fit.training().sigma_eps().unwrap() - 0.5f64.sqrt()).abs() < 1e-14);
    }

    /// Column 2 = column 0 + column 1: rank 2 of 3, and the reported column is a dependent one
    /// (every column is, here).
    #[test]
    fn dependent_columns_are_the_typed_error() {
        let design: Vec<f64> = (0..6)
            .flat_map(|k| {
                let x = f64::from(k);
                [1.0, x * x, 1.0 + x * x]
            })
            .collect();
        let y: Vec<f64> = (0..6).map(f64::from).collect();
        assert!(matches!(
            least_squares(&design, 3, &y),
            Err(FitError::RankDeficient {
                rank: 2,
                columns: 3,
                column: 0..=2
            })
        ));
    }

    /// A weighted line through points that all sit at one size (rows `[√w, √w (s - at)]`, as
    /// the assessment builds them): the two columns are proportional, whatever the weights.
    #[test]
    fn one_size_with_weights_is_rank_deficient() {
        for n in 2..12 {
            let design: Vec<f64> = (0..n)
                .flat_map(|k| {
                    let r = (1.0 + 0.37 * f64::from(k)).powi(-1);
                    [r, r * (4097.0 - 1.0)]
                })
                .collect();
            let y: Vec<f64> = (0..n).map(|k| 1e-6 * (1.0 + 0.01 * f64::from(k))).collect();
            assert!(
                matches!(
                    least_squares(&design, 2, &y),
                    Err(FitError::RankDeficient {
                        rank: 1,
                        columns: 2,
                        ..
                    })
                ),
                "n = {n}"
            );
        }
    }
}
