//! Errors of calibration: measurements that cannot be turned into parameters, fits that cannot
//! be computed.

use thiserror::Error;

use crate::ParameterError;
use crate::collectives::CollectiveError;

/// Measurements that cannot be turned into parameters.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum CalibrationError {
    /// A NaN, infinite or (where it must be positive) non-positive measurement.
    #[error("{what}: entry {index} is {value}, which is not a valid measurement")]
    InvalidValue {
        /// Which input.
        what: &'static str,
        /// Position of the entry.
        index: usize,
        /// The rejected value.
        value: f64,
    },
    /// A measurement the method needs is missing.
    #[error("size {size} bytes: missing {what}")]
    MissingMeasurement {
        /// Message size (bytes).
        size: u64,
        /// Which measurement.
        what: &'static str,
    },
    /// Too few points (sizes, samples) for the method.
    #[error("{what}: need at least {needed}, got {got}")]
    TooFew {
        /// What is counted.
        what: &'static str,
        /// Minimum.
        needed: usize,
        /// Supplied.
        got: usize,
    },
    /// Inputs whose shapes do not match (one value per size, ...).
    #[error("{what}: expected {expected} entries, got {got}")]
    LengthMismatch {
        /// Which input.
        what: &'static str,
        /// Required length.
        expected: usize,
        /// Supplied length.
        got: usize,
    },
    /// Measurements that imply a negative cost component: names the measurement at fault.
    #[error("size {size} bytes{at_stride}: {component} = {value:e} s < 0 — {explanation}")]
    Inconsistent {
        /// Message size (bytes).
        size: u64,
        /// ", stride d bytes" when the component depends on a stride (else empty).
        at_stride: String,
        /// The derived component, e.g. `o_mw = T00 - T_mem`.
        component: &'static str,
        /// Its value.
        value: f64,
        /// Which measurement is inconsistent with which.
        explanation: &'static str,
    },
    /// A line of an input file that cannot be read.
    #[error("line {line}: {message}")]
    Parse {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A measurement file that cannot be read within its bound.
    #[error(transparent)]
    File(#[from] crate::FileError),
    /// A measurement file whose content does not parse: the file and the parser's message.
    #[error("{path}: {message}")]
    InFile {
        /// The file, as given.
        path: String,
        /// What is wrong (with the line).
        message: String,
    },
    /// A fit failed.
    #[error(transparent)]
    Fit(#[from] FitError),
    /// The fitted parameters are invalid.
    #[error(transparent)]
    Parameters(#[from] ParameterError),
    /// The fitted local-work or operator prices are invalid.
    #[error(transparent)]
    Collective(#[from] CollectiveError),
}

/// A fit that cannot be computed from the data it was given.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum FitError {
    /// Fewer observations than coefficients (or than the method needs).
    #[error("{what}: need at least {needed} points, got {got}")]
    TooFewPoints {
        /// What was being fitted.
        what: &'static str,
        /// The minimum number of points.
        needed: usize,
        /// The number supplied.
        got: usize,
    },
    /// A design matrix or observation vector with the wrong shape.
    #[error("{what}: expected {expected} entries, got {got}")]
    DimensionMismatch {
        /// Which input.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length supplied.
        got: usize,
    },
    /// A NaN or infinite input.
    #[error("{what}: entry {index} is {value}, which is not finite")]
    NonFinite {
        /// Which input.
        what: &'static str,
        /// Position of the entry.
        index: usize,
        /// The rejected value.
        value: f64,
    },
    /// The columns of the design matrix are linearly dependent (or a column is all zero), so the
    /// coefficients are not determined by the data.
    #[error(
        "design matrix has rank {rank} < {columns} columns: the coefficients are not identifiable (column {column} is a combination of the others or zero)"
    )]
    RankDeficient {
        /// Numerical rank found.
        rank: usize,
        /// Number of columns (coefficients).
        columns: usize,
        /// A column that is (numerically) dependent on the others.
        column: usize,
    },
    /// The singular value decomposition did not converge (pathological input).
    #[error("{what}: the singular value decomposition did not converge")]
    NotConverged {
        /// What was being fitted.
        what: &'static str,
    },
    /// A fit that produced an invalid parameter set.
    #[error("fitted parameters are invalid: {0}")]
    InvalidParameters(#[from] ParameterError),
}
