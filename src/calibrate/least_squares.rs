//! Linear least squares with fit statistics: the one routine every calibration fit uses.

use nalgebra::{DMatrix, DVector};

use crate::error::FitError;

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
/// conditioning), the normalised matrix is reduced by a Householder QR to a `c × c` triangle `R`
/// and `Qᵀ y`, and `R` is solved through its singular value decomposition (pseudo-inverse). The
/// numerical rank uses the tolerance `σ_max · max(n, c) · ε` (the usual matrix-rank rule); a
/// matrix of lower rank is reported, not silently given a minimum-norm answer, because its
/// coefficients are not determined by the data. Cost `O(n c²)`.
///
/// # Errors
///
/// * [`FitError::DimensionMismatch`] if `design.len() != n * c` or `c = 0`;
/// * [`FitError::TooFewPoints`] if `n < c`;
/// * [`FitError::NonFinite`] for NaN or infinite entries, or coefficients that overflow;
/// * [`FitError::RankDeficient`] for a zero column or linearly dependent columns;
/// * [`FitError::NotConverged`] if the SVD fails to converge.
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

    let mut x = DMatrix::from_row_slice(n, columns, design);
    let mut norms = Vec::with_capacity(columns);
    for (column, mut col) in x.column_iter_mut().enumerate() {
        let norm = col.norm();
        if norm <= 0.0 || !norm.is_finite() {
            return Err(FitError::RankDeficient {
                rank: columns - 1,
                columns,
                column,
            });
        }
        col /= norm;
        norms.push(norm);
    }

    let qr = x.qr();
    let r = qr.r();
    let mut qty = DVector::from_column_slice(observations);
    qr.q_tr_mul(&mut qty);
    let rhs = qty.rows(0, columns).into_owned();

    let svd = nalgebra::SVD::try_new(r, true, true, f64::EPSILON, 10_000)
        .ok_or(FitError::NotConverged { what: WHAT })?;
    let sigma = &svd.singular_values;
    let sigma_max = sigma.max();
    let tolerance = sigma_max * n.max(columns) as f64 * f64::EPSILON;
    let rank = sigma.iter().filter(|&&s| s > tolerance).count();
    let (u, v_t) = match (&svd.u, &svd.v_t) {
        (Some(u), Some(v_t)) => (u, v_t),
        _ => return Err(FitError::NotConverged { what: WHAT }),
    };
    if rank < columns {
        // the right-singular vector of the smallest singular value spans the null space;
        // its largest component names a dependent column
        let (smallest, _) = sigma
            .iter()
            .enumerate()
            .fold(
                (0, f64::INFINITY),
                |best, (i, &s)| {
                    if s < best.1 { (i, s) } else { best }
                },
            );
        let null = v_t.row(smallest);
        let column = (0..columns)
            .max_by(|&a, &b| null[a].abs().total_cmp(&null[b].abs()))
            .unwrap_or(0);
        return Err(FitError::RankDeficient {
            rank,
            columns,
            column,
        });
    }
    // β_normalised = V Σ⁻¹ Uᵀ (Qᵀ y)
    let mut ut_b = u.transpose() * rhs;
    for (value, s) in ut_b.iter_mut().zip(sigma.iter()) {
        *value /= *s;
    }
    let beta_normalised = v_t.transpose() * ut_b;
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
