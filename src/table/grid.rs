//! [`Table2D`]: a measured function of message size and stride on a grid.

use super::{Segment, check_axis, check_values};
use crate::error::ParameterError;

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
/// where `f_j(s)` is the stride-`d_j` column interpolated in `s` as [`Table1D`](super::Table1D) does (linear,
/// extrapolated). Outside the stride grid `d` is clamped to the first / last stride.
///
/// # Examples
///
/// ```
/// use commcost::table::Table2D;
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
    serde(try_from = "Table2DFields", into = "Table2DFields")
)]
pub struct Table2D {
    sizes: Vec<f64>,
    strides: Vec<f64>,
    /// Row-major: `grid[i * strides.len() + j] = f(sizes[i], strides[j])` (flat, so an entry
    /// is one load).
    grid: Vec<f64>,
}

/// Private flat grid, serialised one row per size: loading re-runs [`Table2D::new`]'s validation.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Table2DFields {
    sizes: Vec<f64>,
    strides: Vec<f64>,
    values: Vec<Vec<f64>>,
}

#[cfg(feature = "serde")]
impl From<Table2D> for Table2DFields {
    fn from(t: Table2D) -> Self {
        Self {
            values: t.rows().map(<[f64]>::to_vec).collect(),
            sizes: t.sizes,
            strides: t.strides,
        }
    }
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
            check_values("values", row).map_err(|e| match e {
                ParameterError::OutOfRangeEntry {
                    name,
                    index,
                    value,
                    expected,
                } => ParameterError::OutOfRangeEntry {
                    name,
                    index: i * strides.len() + index,
                    value,
                    expected,
                },
                other => other,
            })?;
        }
        Ok(Self {
            sizes,
            strides,
            grid: values.into_iter().flatten().collect(),
        })
    }

    /// Evaluates `f(s, d)`: linear in `s` (extrapolated), linear in `d` (clamped); `O(log n)`.
    #[inline]
    pub fn eval(&self, size: f64, stride: f64) -> f64 {
        let nd = self.strides.len();
        let j = self.strides.partition_point(|&v| v <= stride);
        let segment = Segment::locate(&self.sizes, size);
        let column = |c: usize| segment.value(|k| self.grid[k * nd + c]);
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

    /// The measured values, one row (one entry per stride) per size.
    pub fn rows(&self) -> impl Iterator<Item = &[f64]> + '_ {
        self.grid.chunks_exact(self.strides.len())
    }

    /// The value measured at `sizes()[i]`, `strides()[j]` (`None` outside the grid).
    pub fn value(&self, i: usize, j: usize) -> Option<f64> {
        (i < self.sizes.len() && j < self.strides.len())
            .then(|| self.grid[i * self.strides.len() + j])
    }

    /// A one-entry (constant) grid from finite values the crate has validated already.
    pub(crate) fn trusted_point(size: f64, stride: f64, value: f64) -> Self {
        Self {
            sizes: vec![size],
            strides: vec![stride],
            grid: vec![value],
        }
    }

    /// A size-independent table (one row at size 0) from strides and values the crate has
    /// built from validated data (strictly increasing, finite).
    pub(crate) fn trusted_row(strides: Vec<f64>, values: Vec<f64>) -> Self {
        Self {
            sizes: vec![0.0],
            strides,
            grid: values,
        }
    }

    /// Number of entries, sizes × strides.
    pub fn num_entries(&self) -> usize {
        self.sizes.len() * self.strides.len()
    }

    /// Checks that no value is negative and that every column at a stride `<= unit_stride` is
    /// zero (a strided-cost table: `l(s, unit) = 0`).
    ///
    /// # Errors
    ///
    /// [`ParameterError::NegativeCost`] or [`ParameterError::StridedCostAtUnitStride`] naming
    /// the table `name`.
    pub fn check_strided_cost(
        &self,
        name: &'static str,
        unit_stride: u64,
    ) -> Result<(), ParameterError> {
        let nd = self.strides.len();
        for (i, row) in self.rows().enumerate() {
            for (j, &value) in row.iter().enumerate() {
                if value < 0.0 {
                    return Err(ParameterError::NegativeCost {
                        name,
                        index: i * nd + j,
                        value,
                    });
                }
                if self.strides[j] <= unit_stride as f64 && value != 0.0 {
                    return Err(ParameterError::StridedCostAtUnitStride {
                        name,
                        unit_stride,
                        stride: self.strides[j],
                        value,
                    });
                }
            }
        }
        Ok(())
    }

    /// The table of `size · value` (see [`Table1D::times_size`]).
    pub(crate) fn times_size(&self) -> Self {
        let nd = self.strides.len();
        Self {
            sizes: self.sizes.clone(),
            strides: self.strides.clone(),
            grid: self
                .grid
                .iter()
                .enumerate()
                .map(|(k, v)| self.sizes[k / nd] * v)
                .collect(),
        }
    }

    /// The same table with every value multiplied by `factor` (see [`Table1D::scaled`]).
    pub(crate) fn scaled(&self, factor: f64) -> Self {
        Self {
            sizes: self.sizes.clone(),
            strides: self.strides.clone(),
            grid: self.grid.iter().map(|v| v * factor).collect(),
        }
    }
}
