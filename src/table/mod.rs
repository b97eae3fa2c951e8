//! Measured parameter functions `f(s)` and `f(s, d)` with documented interpolation.
//!
//! The software-parameterised models (log_n P, log_3 P, memory logP, LogGPO's `Oi(K)`, ...) are
//! parameterised by functions measured at discrete message sizes `s` and strides `d`
//! (Cameron, Ge & Sun 2007, §3). [`Table1D`] and [`Table2D`] hold such measurements and evaluate
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

mod grid;

pub use grid::Table2D;

/// Checks an axis: non-empty, finite, strictly increasing.
fn check_axis(name: &'static str, axis: &[f64]) -> Result<(), ParameterError> {
    if axis.is_empty() {
        return Err(ParameterError::EmptyTable { name });
    }
    check_finite(name, axis)?;
    // magnitude and spacing (crate::limits): linear extrapolation to any u64 size stays finite
    if let Some(index) = axis
        .iter()
        .position(|x| x.abs() > crate::limits::MAX_AXIS || !crate::limits::zero_or_normal(*x))
    {
        return Err(ParameterError::OutOfRangeEntry {
            name,
            index,
            value: axis[index],
            expected: "0 or a normal number of magnitude <= 1e21 (limits::MAX_AXIS)",
        });
    }
    for (index, pair) in axis.windows(2).enumerate() {
        if pair[1] > pair[0] && pair[1] - pair[0] < crate::limits::MIN_AXIS_STEP {
            return Err(ParameterError::OutOfRangeEntry {
                name,
                index: index + 1,
                value: pair[1],
                expected: "at least 1e-6 above the previous point (limits::MIN_AXIS_STEP)",
            });
        }
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

/// Checks table values: finite, 0 or normal, magnitude at most
/// [`MAX_TABLE_VALUE`](crate::limits::MAX_TABLE_VALUE).
fn check_values(name: &'static str, values: &[f64]) -> Result<(), ParameterError> {
    check_finite(name, values)?;
    match values.iter().position(|v| {
        v.abs() > crate::limits::MAX_TABLE_VALUE || !crate::limits::zero_or_normal(*v)
    }) {
        Some(index) => Err(ParameterError::OutOfRangeEntry {
            name,
            index,
            value: values[index],
            expected: "0 or a normal number of magnitude <= 1e30 (limits::MAX_TABLE_VALUE)",
        }),
        None => Ok(()),
    }
}

/// Where `x` falls on the strictly increasing axis `xs`: the segment `(k, k+1)` whose line is
/// used and the anchor point of the formula — the bracketing point at or below `x`, the first
/// point left of the axis, the last point right of it — so `x == xs[k]` reproduces `y(k)`
/// exactly. One binary search, `O(log n)`.
#[derive(Debug, Clone, Copy)]
struct Segment {
    /// Left end of the segment (`None` for a one-point axis: a constant).
    left: Option<usize>,
    anchor: usize,
    /// `(x - xs[anchor]) / (xs[left + 1] - xs[left])`.
    fraction: f64,
}

impl Segment {
    #[inline]
    fn locate(xs: &[f64], x: f64) -> Self {
        let n = xs.len();
        if n == 1 {
            return Self {
                left: None,
                anchor: 0,
                fraction: 0.0,
            };
        }
        let i = xs.partition_point(|&v| v <= x);
        let (left, anchor) = match i {
            0 => (0, 0),
            i if i == n => (n - 2, n - 1),
            i => (i - 1, i - 1),
        };
        Self {
            left: Some(left),
            anchor,
            fraction: (x - xs[anchor]) / (xs[left + 1] - xs[left]),
        }
    }

    /// Piecewise-linear value with linear extrapolation along the end segments; `y(k)` is the
    /// value at `xs[k]`.
    #[inline]
    fn value(&self, y: impl Fn(usize) -> f64) -> f64 {
        match self.left {
            None => y(0),
            Some(k) => y(self.anchor) + (y(k + 1) - y(k)) * self.fraction,
        }
    }
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
/// use commcost::table::Table1D;
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

/// Private fields, no public form: loading re-runs [`Table1D::new`]'s validation.
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
        check_values("values", &values)?;
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

    /// The constant function for a value the crate has validated (finite) already.
    pub(crate) fn trusted_constant(value: f64) -> Self {
        Self::trusted_point(0.0, value)
    }

    /// A one-point (constant) table from finite values the crate has validated already.
    pub(crate) fn trusted_point(size: f64, value: f64) -> Self {
        Self {
            sizes: vec![size],
            values: vec![value],
        }
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
        Segment::locate(&self.sizes, size).value(|k| self.values[k])
    }

    /// The line through the segment that holds `bytes`, with the whole sizes it is used for:
    /// [`eval`](Self::eval) on any size in `first..=last` equals `intercept + per_byte · size`
    /// up to rounding (the end segments reach 0 and `u64::MAX`; a one-point table is a
    /// constant everywhere). `O(log n)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::table::Table1D;
    ///
    /// // 1 at 0 bytes, 3 at 100, 4 at 300: the last segment is 2.5 + 0.005 s from 100 bytes on
    /// let t = Table1D::new(vec![0.0, 100.0, 300.0], vec![1.0, 3.0, 4.0])?;
    /// let line = t.affine_piece(150);
    /// assert_eq!((line.first, line.last), (100, u64::MAX)); // the last segment extrapolates
    /// assert!((line.intercept - 2.5).abs() < 1e-12 && (line.per_unit - 0.005).abs() < 1e-15);
    /// let first = t.affine_piece(50);
    /// assert_eq!((first.first, first.last), (0, 100));
    /// assert!((first.at(50) - 2.0).abs() < 1e-12); // 1 + 0.02 · 50
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    pub fn affine_piece(&self, bytes: u64) -> crate::AffineCost {
        let xs = &self.sizes;
        let n = xs.len();
        if n == 1 {
            return crate::AffineCost::everywhere(self.values[0], 0.0);
        }
        let segment = Segment::locate(xs, bytes as f64);
        let left = segment.left.unwrap_or(0);
        let per_byte = (self.values[left + 1] - self.values[left]) / (xs[left + 1] - xs[left]);
        let intercept = self.values[segment.anchor] - per_byte * xs[segment.anchor];
        // f64 -> u64 casts saturate (negative sizes to 0); the ends of the line are shared
        // with the neighbouring segments, which agree there.
        let first = if left == 0 { 0 } else { xs[left].ceil() as u64 };
        let last = if left + 2 == n {
            u64::MAX
        } else {
            xs[left + 1].floor() as u64
        };
        crate::AffineCost {
            first: first.min(bytes),
            last: last.max(bytes),
            ..crate::AffineCost::everywhere(intercept, per_byte)
        }
    }

    /// [`affine_piece`](Self::affine_piece) where the line stays non-negative over its whole
    /// range — where `eval(size).max(0.0)`, the clamped value the cost models use, is that line
    /// (`None` otherwise).
    ///
    /// ```
    /// use commcost::table::Table1D;
    /// // falls from 2 to 1 between 0 and 100 bytes, and on below 0 beyond 200 bytes
    /// let t = Table1D::new(vec![0.0, 100.0], vec![2.0, 1.0])?;
    /// assert_eq!(t.non_negative_affine_piece(50), None); // the end segment turns negative
    /// let rising = Table1D::new(vec![0.0, 100.0], vec![1.0, 2.0])?;
    /// assert!(rising.non_negative_affine_piece(50).is_some());
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    pub fn non_negative_affine_piece(&self, bytes: u64) -> Option<crate::AffineCost> {
        let piece = self.affine_piece(bytes);
        let stays_non_negative = piece.at(piece.first) >= 0.0
            && (piece.per_unit >= 0.0 || (piece.last < u64::MAX && piece.at(piece.last) >= 0.0));
        stays_non_negative.then_some(piece)
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

    /// True when the values never decrease with size (then [`eval`](Self::eval) is
    /// non-decreasing everywhere).
    pub fn is_non_decreasing(&self) -> bool {
        self.values.windows(2).all(|w| w[1] >= w[0])
    }

    /// Checks that no value is negative (a cost table).
    ///
    /// # Errors
    ///
    /// [`ParameterError::NegativeCost`] naming the table `name` and the first negative entry.
    pub fn check_non_negative(&self, name: &'static str) -> Result<(), ParameterError> {
        match self.values.iter().position(|v| *v < 0.0) {
            Some(index) => Err(ParameterError::NegativeCost {
                name,
                index,
                value: self.values[index],
            }),
            None => Ok(()),
        }
    }

    /// The table of `size · value` (a per-byte table turned into a cost table).
    pub(crate) fn times_size(&self) -> Self {
        Self {
            sizes: self.sizes.clone(),
            values: self
                .sizes
                .iter()
                .zip(&self.values)
                .map(|(s, v)| s * v)
                .collect(),
        }
    }

    /// The same table with every value multiplied by `factor` (a finite factor: used for exact
    /// halvings and unit conversions, where the products stay finite).
    pub(crate) fn scaled(&self, factor: f64) -> Self {
        Self {
            sizes: self.sizes.clone(),
            values: self.values.iter().map(|v| v * factor).collect(),
        }
    }
}
