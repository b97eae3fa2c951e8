//! Measured parameter functions `f(s)` and `f(s, d)` with documented interpolation.
//!
//! The software-parameterised models (log_n P, log_3 P, memory logP, LogGPO's `Oi(K)`, ...) are
//! parameterised by functions measured at discrete message sizes `s` and strides `d`
//! (lognp-log3p §3, SPEC §3). [`Table1D`] and [`Table2D`] hold such measurements and evaluate
//! them between and beyond the measured points:
//!
//! * in the size `s`: piecewise linear between measured sizes, and **linear extrapolation**
//!   beyond either end (along the first / last segment), so a per-byte trend continues;
//! * in the stride `d` ([`Table2D`] only): linear between measured strides and **clamped** to the
//!   nearest measured stride outside the grid (a stride-dependent cost saturates once accesses
//!   stop sharing cache lines, so extrapolating it would be a guess).
//!
//! Evaluation costs `O(log n)` (binary search) and allocates nothing. Every measured point is
//! reproduced exactly.

use crate::error::ParameterError;

/// Checks an axis: non-empty, finite, strictly increasing.
fn check_axis(name: &'static str, axis: &[f64]) -> Result<(), ParameterError> {
    if axis.is_empty() {
        return Err(ParameterError::EmptyTable { name });
    }
    check_finite(name, axis)?;
    for (index, pair) in axis.windows(2).enumerate() {
        if pair[1] <= pair[0] {
            return Err(ParameterError::NotIncreasing {
                name,
                index: index + 1,
                value: pair[1],
                previous: pair[0],
            });
        }
    }
    Ok(())
}

fn check_finite(name: &'static str, values: &[f64]) -> Result<(), ParameterError> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(ParameterError::NonFiniteEntry {
            name,
            index,
            value: values[index],
        }),
        None => Ok(()),
    }
}

/// Piecewise-linear interpolation over the strictly increasing `xs` at `x`, with linear
/// extrapolation along the end segments. `y(k)` is the value at `xs[k]`.
///
/// The anchor of the segment formula is the bracketing point at or below `x` (the last point
/// beyond the right end), so `x == xs[k]` returns `y(k)` exactly.
#[inline]
fn interpolate(xs: &[f64], x: f64, y: impl Fn(usize) -> f64) -> f64 {
    let n = xs.len();
    if n == 1 {
        return y(0);
    }
    let i = xs.partition_point(|&v| v <= x);
    let (segment, anchor) = match i {
        0 => (0, 0),
        i if i == n => (n - 2, n - 1),
        i => (i - 1, i - 1),
    };
    let (x0, x1) = (xs[segment], xs[segment + 1]);
    let slope_rise = y(segment + 1) - y(segment);
    y(anchor) + slope_rise * ((x - xs[anchor]) / (x1 - x0))
}

/// A measured function of message size, `f(s)`.
///
/// # Formula
///
/// For `s_k <= s < s_{k+1}`:
///
/// ```text
/// f(s) = f_k + (f_{k+1} - f_k) (s - s_k) / (s_{k+1} - s_k)
/// ```
///
/// and the first / last segment's line beyond the ends. A single point is a constant.
///
/// # Examples
///
/// ```
/// use commcost::Table1D;
///
/// // o_net measured at 1 KiB and 16 KiB (µs)
/// let o_net = Table1D::new(vec![1024.0, 16384.0], vec![20.0, 131.0])?;
/// assert_eq!(o_net.eval(16384.0), 131.0);
/// assert!((o_net.eval(8704.0) - 75.5).abs() < 1e-12); // half way
/// assert!((o_net.eval(31744.0) - 242.0).abs() < 1e-12); // extrapolated
/// # Ok::<(), commcost::ParameterError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "Table1DFields")
)]
pub struct Table1D {
    sizes: Vec<f64>,
    values: Vec<f64>,
}

#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Table1DFields {
    sizes: Vec<f64>,
    values: Vec<f64>,
}

#[cfg(feature = "serde")]
impl TryFrom<Table1DFields> for Table1D {
    type Error = ParameterError;
    fn try_from(f: Table1DFields) -> Result<Self, Self::Error> {
        Table1D::new(f.sizes, f.values)
    }
}

impl Table1D {
    /// A table of `values[k] = f(sizes[k])`.
    ///
    /// # Errors
    ///
    /// [`ParameterError::EmptyTable`] without points, [`ParameterError::LengthMismatch`] when the
    /// lengths differ, [`ParameterError::NonFiniteEntry`] for NaN or infinities and
    /// [`ParameterError::NotIncreasing`] unless `sizes` is strictly increasing.
    pub fn new(sizes: Vec<f64>, values: Vec<f64>) -> Result<Self, ParameterError> {
        check_axis("sizes", &sizes)?;
        if values.len() != sizes.len() {
            return Err(ParameterError::LengthMismatch {
                name: "values",
                expected: sizes.len(),
                got: values.len(),
            });
        }
        check_finite("values", &values)?;
        Ok(Self { sizes, values })
    }

    /// The constant function `f(s) = value`.
    ///
    /// # Errors
    ///
    /// [`ParameterError::NonFiniteEntry`] for a non-finite value.
    pub fn constant(value: f64) -> Result<Self, ParameterError> {
        Self::new(vec![0.0], vec![value])
    }

    /// The line `f(s) = intercept + slope * s`, stored as two points (at 0 and 1 byte).
    ///
    /// # Errors
    ///
    /// [`ParameterError::NonFiniteEntry`] for non-finite coefficients.
    pub fn linear(intercept: f64, slope: f64) -> Result<Self, ParameterError> {
        Self::new(vec![0.0, 1.0], vec![intercept, intercept + slope])
    }

    /// Evaluates `f(s)` (piecewise linear, linear extrapolation); `O(log n)`.
    #[inline]
    pub fn eval(&self, size: f64) -> f64 {
        interpolate(&self.sizes, size, |k| self.values[k])
    }

    /// The measured sizes, strictly increasing.
    pub fn sizes(&self) -> &[f64] {
        &self.sizes
    }

    /// The measured values, one per size.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Number of measured points (at least 1).
    pub fn num_points(&self) -> usize {
        self.sizes.len()
    }

    /// The smallest value the table takes over `s >= 0`: its measured points and, where the
    /// extrapolation can go lower, its value at `s = 0` and the sign of its last slope.
    ///
    /// Returns `-inf` when the last segment decreases (extrapolation falls without bound).
    pub fn min_over_non_negative_sizes(&self) -> f64 {
        let n = self.sizes.len();
        if n >= 2 && self.values[n - 1] < self.values[n - 2] {
            return f64::NEG_INFINITY;
        }
        let at_zero = self.eval(0.0);
        self.values
            .iter()
            .zip(&self.sizes)
            .filter(|(_, s)| **s >= 0.0)
            .map(|(v, _)| *v)
            .fold(at_zero, f64::min)
    }

    /// True when the values never decrease with size (then [`eval`](Self::eval) is
    /// non-decreasing everywhere).
    pub fn is_non_decreasing(&self) -> bool {
        self.values.windows(2).all(|w| w[1] >= w[0])
    }
}

/// A measured function of message size and stride, `f(s, d)`, on a grid.
///
/// # Formula
///
/// With `d_j <= d < d_{j+1}` and `u = (d - d_j) / (d_{j+1} - d_j)`:
///
/// ```text
/// f(s, d) = (1 - u) f_j(s) + u f_{j+1}(s)
/// ```
///
/// where `f_j(s)` is the stride-`d_j` column interpolated in `s` as [`Table1D`] does (linear,
/// extrapolated). Outside the stride grid `d` is clamped to the first / last stride.
///
/// # Examples
///
/// ```
/// use commcost::Table2D;
///
/// // l_mw measured at two sizes and two strides (µs); rows are sizes, columns strides
/// let l_mw = Table2D::new(
///     vec![1024.0, 16384.0],
///     vec![8.0, 1024.0],
///     vec![vec![0.0, 20.0], vec![0.0, 420.0]],
/// )?;
/// assert_eq!(l_mw.eval(16384.0, 1024.0), 420.0);
/// assert_eq!(l_mw.eval(16384.0, 4096.0), 420.0); // clamped in d
/// assert!((l_mw.eval(16384.0, 516.0) - 210.0).abs() < 1e-12);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "Table2DFields")
)]
pub struct Table2D {
    sizes: Vec<f64>,
    strides: Vec<f64>,
    /// One row per size, one entry per stride.
    values: Vec<Vec<f64>>,
}

#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Table2DFields {
    sizes: Vec<f64>,
    strides: Vec<f64>,
    values: Vec<Vec<f64>>,
}

#[cfg(feature = "serde")]
impl TryFrom<Table2DFields> for Table2D {
    type Error = ParameterError;
    fn try_from(f: Table2DFields) -> Result<Self, Self::Error> {
        Table2D::new(f.sizes, f.strides, f.values)
    }
}

impl Table2D {
    /// A grid table: `values[i][j] = f(sizes[i], strides[j])`.
    ///
    /// # Errors
    ///
    /// [`ParameterError::EmptyTable`], [`ParameterError::NotIncreasing`] or
    /// [`ParameterError::NonFiniteEntry`] for a bad axis; [`ParameterError::LengthMismatch`]
    /// unless there is one row per size with one entry per stride;
    /// [`ParameterError::NonFiniteEntry`] for a non-finite value (index row-major).
    pub fn new(
        sizes: Vec<f64>,
        strides: Vec<f64>,
        values: Vec<Vec<f64>>,
    ) -> Result<Self, ParameterError> {
        check_axis("sizes", &sizes)?;
        check_axis("strides", &strides)?;
        if values.len() != sizes.len() {
            return Err(ParameterError::LengthMismatch {
                name: "values (rows, one per size)",
                expected: sizes.len(),
                got: values.len(),
            });
        }
        for (i, row) in values.iter().enumerate() {
            if row.len() != strides.len() {
                return Err(ParameterError::LengthMismatch {
                    name: "values (entries per row, one per stride)",
                    expected: strides.len(),
                    got: row.len(),
                });
            }
            if let Some(j) = row.iter().position(|v| !v.is_finite()) {
                return Err(ParameterError::NonFiniteEntry {
                    name: "values",
                    index: i * strides.len() + j,
                    value: row[j],
                });
            }
        }
        Ok(Self {
            sizes,
            strides,
            values,
        })
    }

    /// Evaluates `f(s, d)`: linear in `s` (extrapolated), linear in `d` (clamped); `O(log n)`.
    #[inline]
    pub fn eval(&self, size: f64, stride: f64) -> f64 {
        let nd = self.strides.len();
        let j = self.strides.partition_point(|&v| v <= stride);
        let column = |c: usize| interpolate(&self.sizes, size, |k| self.values[k][c]);
        if j == 0 {
            column(0)
        } else if j == nd {
            column(nd - 1)
        } else {
            let (d0, d1) = (self.strides[j - 1], self.strides[j]);
            let u = (stride - d0) / (d1 - d0);
            (1.0 - u) * column(j - 1) + u * column(j)
        }
    }

    /// The measured sizes, strictly increasing.
    pub fn sizes(&self) -> &[f64] {
        &self.sizes
    }

    /// The measured strides, strictly increasing.
    pub fn strides(&self) -> &[f64] {
        &self.strides
    }

    /// The measured values, one row per size, one entry per stride.
    pub fn values(&self) -> &[Vec<f64>] {
        &self.values
    }
}
