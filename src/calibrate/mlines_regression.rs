//! The Mlines paper's regression variants (Table 1): S1-S3 and M1-M3 as feature set × order.

use crate::calibrate::FitError;
use crate::calibrate::{FitStatistics, least_squares};
use crate::mlines::{LinesError, lines_touched};
use crate::{CommModel, Message};

/// One observation for the Mlines regressions: the features of a communication (or computation)
/// and its measured time in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct MlinesSample {
    /// `m`: number of messages (1 for per-message samples).
    pub messages: f64,
    /// `b`: bytes (for computation: loads and stores, Mlines paper "computation").
    pub bytes: f64,
    /// `Mlines`: unique memory lines touched.
    pub lines: f64,
    /// Arithmetic operations (scans and computation, Mlines paper); 0 for plain communication.
    pub operations: f64,
    /// Measured time, seconds.
    pub time: f64,
}

impl MlinesSample {
    /// A per-message sample (`m = 1`, no operations) for `msg`, with its exact line count.
    ///
    /// # Errors
    ///
    /// [`LinesError::ZeroLine`] for `line_bytes = 0`.
    pub fn from_message(msg: &Message, line_bytes: u64, time: f64) -> Result<Self, LinesError> {
        Ok(Self {
            messages: 1.0,
            bytes: msg.bytes() as f64,
            lines: lines_touched(msg, line_bytes)? as f64,
            operations: 0.0,
            time,
        })
    }
}

/// Which features a variant uses: the standard model's (`S`: messages and bytes) or the Mlines
/// model's (`M`: messages, bytes and memory lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum FeatureSet {
    /// `m, b` — the models in the literature (S1-S3).
    Standard,
    /// `m, b, Mlines` — the paper's model (M1-M3).
    Lines,
}

/// The order of a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Order {
    /// The features themselves (S1, M1).
    First,
    /// Plus the square of each feature (S2, M2).
    Squares,
    /// Plus squares and pairwise products (S3, M3; M3 includes `b · Mlines`).
    CrossProducts,
}

/// A regression term (a column of the design matrix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Term {
    /// `m` (its coefficient is `α`).
    Messages,
    /// `b` (`β`).
    Bytes,
    /// `Mlines` (`γ`).
    Lines,
    /// Arithmetic operations.
    Operations,
    /// The square of a feature.
    Square(Feature),
    /// The product of two features.
    Product(Feature, Feature),
}

/// A feature that enters second-order terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// `b`.
    Bytes,
    /// `Mlines`.
    Lines,
    /// Arithmetic operations.
    Operations,
}

impl Feature {
    fn of(self, s: &MlinesSample) -> f64 {
        match self {
            Feature::Bytes => s.bytes,
            Feature::Lines => s.lines,
            Feature::Operations => s.operations,
        }
    }
}

impl Term {
    fn of(self, s: &MlinesSample) -> f64 {
        match self {
            Term::Messages => s.messages,
            Term::Bytes => s.bytes,
            Term::Lines => s.lines,
            Term::Operations => s.operations,
            Term::Square(f) => f.of(s) * f.of(s),
            Term::Product(a, b) => a.of(s) * b.of(s),
        }
    }
}

/// One of the Mlines paper's regression variants: feature set × order, optionally with the
/// arithmetic-operation count (scans, computation).
///
/// # Formula
///
/// The first-order columns are `m, b` (standard) or `m, b, Mlines` (lines), plus `ops` when
/// [`operations`](Self::operations) is set. Second-order terms are formed from the features
/// other than `m`: with per-message samples `m = 1`, so `m²` and `m · x` would duplicate
/// existing columns; the message count enters linearly with coefficient `α`.
///
/// | variant | columns |
/// |---|---|
/// | S1 | `m, b` |
/// | S2 | `m, b, b²` |
/// | S3 | `m, b, b²` (one non-`m` feature: no products) |
/// | M1 | `m, b, Mlines` |
/// | M2 | `m, b, Mlines, b², Mlines²` |
/// | M3 | `m, b, Mlines, b², Mlines², b·Mlines` |
///
/// Table 1 of the paper lost its exact regressors in extraction; this "feature set × order"
/// reading follows its text (S1 is the standard model, M1 the paper's, M3 includes
/// `b · Mlines`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct RegressionVariant {
    /// Standard or lines features.
    pub features: FeatureSet,
    /// First order, squares, or squares and cross products.
    pub order: Order,
    /// Whether the arithmetic-operation count is a feature.
    pub operations: bool,
}

impl RegressionVariant {
    /// S1, the standard model.
    pub const S1: Self = Self::new(FeatureSet::Standard, Order::First);
    /// S2.
    pub const S2: Self = Self::new(FeatureSet::Standard, Order::Squares);
    /// S3.
    pub const S3: Self = Self::new(FeatureSet::Standard, Order::CrossProducts);
    /// M1, the paper's model.
    pub const M1: Self = Self::new(FeatureSet::Lines, Order::First);
    /// M2.
    pub const M2: Self = Self::new(FeatureSet::Lines, Order::Squares);
    /// M3, the paper's most accurate.
    pub const M3: Self = Self::new(FeatureSet::Lines, Order::CrossProducts);
    /// All six, in Table 1's order.
    pub const ALL: [Self; 6] = [Self::S1, Self::S2, Self::S3, Self::M1, Self::M2, Self::M3];

    /// A variant without the operation count.
    pub const fn new(features: FeatureSet, order: Order) -> Self {
        Self {
            features,
            order,
            operations: false,
        }
    }

    /// The same variant with the arithmetic-operation count as a feature (scans, computation).
    pub const fn with_operations(mut self) -> Self {
        self.operations = true;
        self
    }

    /// The paper's name, `S1` … `M3` (with `+ops` when operations are a feature).
    pub fn name(&self) -> String {
        let letter = match self.features {
            FeatureSet::Standard => 'S',
            FeatureSet::Lines => 'M',
        };
        let digit = match self.order {
            Order::First => 1,
            Order::Squares => 2,
            Order::CrossProducts => 3,
        };
        let ops = if self.operations { "+ops" } else { "" };
        format!("{letter}{digit}{ops}")
    }

    /// The design-matrix columns, in order.
    pub fn terms(&self) -> Vec<Term> {
        let mut features = vec![Feature::Bytes];
        if self.features == FeatureSet::Lines {
            features.push(Feature::Lines);
        }
        if self.operations {
            features.push(Feature::Operations);
        }
        let mut terms = vec![Term::Messages];
        terms.extend(features.iter().map(|f| match f {
            Feature::Bytes => Term::Bytes,
            Feature::Lines => Term::Lines,
            Feature::Operations => Term::Operations,
        }));
        if self.order != Order::First {
            terms.extend(features.iter().map(|&f| Term::Square(f)));
        }
        if self.order == Order::CrossProducts {
            for (i, &a) in features.iter().enumerate() {
                for &b in &features[i + 1..] {
                    terms.push(Term::Product(a, b));
                }
            }
        }
        terms
    }

    fn design(&self, samples: &[MlinesSample]) -> (Vec<f64>, Vec<f64>) {
        let terms = self.terms();
        let design = samples
            .iter()
            .flat_map(|s| terms.iter().map(move |t| t.of(s)))
            .collect();
        let times = samples.iter().map(|s| s.time).collect();
        (design, times)
    }
}

/// Fits a regression variant on a training set and scores it on a separate test set.
///
/// The paper's protocol (§5): training and test sets of equal size (100 points each), `σ_ε`
/// and the unexplained-variance ratio (the paper's "R²") reported on the test set. Any
/// non-empty test set is accepted here.
///
/// # Errors
///
/// [`FitError`] from [`least_squares()`] (too few points, non-finite input, dependent columns —
/// e.g. all samples with the same shape), [`FitError::TooFewPoints`] for an empty test set, and
/// [`FitError::InvalidParameters`] for a coefficient of magnitude above
/// [`MAX_SECONDS`](crate::limits::MAX_SECONDS) (it would predict infinite times).
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{MlinesSample, RegressionVariant, fit_regression};
///
/// // exact data from T = 5 µs + 1 ns/byte + 20 ns/line
/// let sample = |b: f64, lines: f64| MlinesSample {
///     messages: 1.0, bytes: b, lines, operations: 0.0,
///     time: 5e-6 + 1e-9 * b + 20e-9 * lines,
/// };
/// let train: Vec<_> = (1..20).map(|i| sample(100.0 * i as f64, (7 * i % 13 + i) as f64)).collect();
/// let test: Vec<_> = (1..20).map(|i| sample(150.0 * i as f64, (5 * i % 11 + 2 * i) as f64)).collect();
/// let fit = fit_regression(RegressionVariant::M1, 64, &train, &test)?;
/// assert!((fit.coefficients()[2] - 20e-9).abs() < 1e-15);
/// # Ok::<(), commcost::calibrate::FitError>(())
/// ```
pub fn fit_regression(
    variant: RegressionVariant,
    line_bytes: u64,
    training: &[MlinesSample],
    test: &[MlinesSample],
) -> Result<MlinesFit, FitError> {
    if line_bytes == 0 {
        return Err(FitError::InvalidParameters(
            crate::ParameterError::TooSmall {
                name: "line_bytes",
                value: 0,
                min: 1,
            },
        ));
    }
    let (design, times) = variant.design(training);
    let terms = variant.terms();
    let fit = least_squares(&design, terms.len(), &times)?;
    // a coefficient beyond the time range (limits::MAX_SECONDS) would predict infinite times
    // for large messages
    if let Some(&value) = fit
        .coefficients()
        .iter()
        .find(|c| c.abs() > crate::limits::MAX_SECONDS)
    {
        return Err(FitError::InvalidParameters(
            crate::ParameterError::OutOfRange {
                name: "coefficient",
                value,
                expected: "of magnitude <= 1e9 (limits::MAX_SECONDS)",
            },
        ));
    }
    let (test_design, test_times) = variant.design(test);
    let test_statistics = fit.evaluate(&test_design, &test_times)?;
    Ok(MlinesFit {
        variant,
        line_bytes,
        terms,
        coefficients: fit.coefficients().to_vec(),
        training: *fit.training(),
        test: test_statistics,
    })
}

/// Fits an [`crate::MlinesModel`] (`T = α + β b + γ Mlines`, per message) with every
/// coefficient non-negative, as a cost model needs.
///
/// # Method
///
/// Non-negative least squares, exactly: the ordinary least-squares fit of every non-empty
/// subset of the columns `m, b, Mlines` (the others fixed at 0) is computed, and the subset
/// with the smallest SSE among those whose coefficients are all `>= 0` wins. With three
/// columns that is seven small fits; when the unconstrained fit (M1) is already non-negative it
/// is the answer.
///
/// # Errors
///
/// [`FitError`] as [`least_squares()`] for empty or non-finite data, or when no subset gives a
/// non-negative fit (only possible for data whose least-squares fits all have a negative
/// coefficient, e.g. negative times); [`FitError::InvalidParameters`] for `line_bytes = 0`.
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{MlinesSample, fit_mlines_model};
///
/// // times grow with lines only; a tiny negative byte effect in the data would make plain
/// // least squares return β < 0 — here β is exactly 0
/// let samples: Vec<MlinesSample> = (1..30)
///     .map(|i| {
///         let (b, lines) = (64.0 * i as f64, (i * i % 17 + i) as f64);
///         MlinesSample { messages: 1.0, bytes: b, lines, operations: 0.0, time: 1e-6 + 3e-9 * lines - 1e-13 * b }
///     })
///     .collect();
/// let model = fit_mlines_model(&samples, 64)?;
/// assert_eq!(model.per_byte(), 0.0);
/// assert!((model.per_line() - 3e-9).abs() < 1e-11);
/// # Ok::<(), commcost::calibrate::FitError>(())
/// ```
pub fn fit_mlines_model(
    samples: &[MlinesSample],
    line_bytes: u64,
) -> Result<crate::MlinesModel, FitError> {
    let feature = |s: &MlinesSample, j: usize| [s.messages, s.bytes, s.lines][j];
    let times: Vec<f64> = samples.iter().map(|s| s.time).collect();
    let mut best: Option<([f64; 3], f64)> = None;
    for mask in 1u8..8 {
        let columns: Vec<usize> = (0..3).filter(|j| mask & (1 << j) != 0).collect();
        let design: Vec<f64> = samples
            .iter()
            .flat_map(|s| columns.iter().map(move |&j| feature(s, j)))
            .collect();
        let Ok(fit) = least_squares(&design, columns.len(), &times) else {
            continue;
        };
        if fit.coefficients().iter().any(|c| *c < 0.0) {
            continue;
        }
        let sse = fit.training().sse();
        if best.is_none_or(|(_, b)| sse < b) {
            let mut coefficients = [0.0; 3];
            for (&j, &c) in columns.iter().zip(fit.coefficients()) {
                coefficients[j] = c;
            }
            best = Some((coefficients, sse));
        }
    }
    let Some(([alpha, beta, gamma], _)) = best else {
        // reproduce the unconstrained error (or report that no fit is non-negative)
        let design: Vec<f64> = samples
            .iter()
            .flat_map(|s| [s.messages, s.bytes, s.lines])
            .collect();
        least_squares(&design, 3, &times)?;
        return Err(FitError::InvalidParameters(
            crate::ParameterError::OutOfRange {
                name: "per_message, per_byte, per_line",
                value: f64::NAN,
                expected: "non-negative for some subset of the features",
            },
        ));
    };
    Ok(crate::MlinesModel::new(alpha, beta, gamma, line_bytes)?)
}

/// A fitted regression variant: coefficients, statistics, and a model that predicts.
#[derive(Debug, Clone, PartialEq)]
pub struct MlinesFit {
    variant: RegressionVariant,
    line_bytes: u64,
    terms: Vec<Term>,
    coefficients: Vec<f64>,
    training: FitStatistics,
    test: FitStatistics,
}

impl MlinesFit {
    /// The variant fitted.
    pub fn variant(&self) -> RegressionVariant {
        self.variant
    }

    /// The design columns, matching [`coefficients`](Self::coefficients).
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// One coefficient per term (seconds per unit of the term).
    pub fn coefficients(&self) -> &[f64] {
        &self.coefficients
    }

    /// Statistics on the training set.
    pub fn training(&self) -> &FitStatistics {
        &self.training
    }

    /// Statistics on the test set (`σ_ε`, unexplained-variance ratio: the paper's Table 2).
    pub fn test(&self) -> &FitStatistics {
        &self.test
    }

    /// Line size the samples' `Mlines` were counted with.
    pub fn line_bytes(&self) -> u64 {
        self.line_bytes
    }

    /// Statistics of this fit on other samples (e.g. only the column transfers of a test set).
    ///
    /// # Errors
    ///
    /// [`FitError::TooFewPoints`] for no samples, [`FitError::NonFinite`] for bad features.
    pub fn evaluate(&self, samples: &[MlinesSample]) -> Result<FitStatistics, FitError> {
        if samples.is_empty() {
            return Err(FitError::TooFewPoints {
                what: "evaluation samples",
                needed: 1,
                got: 0,
            });
        }
        let (design, times) = self.variant.design(samples);
        if let Some(index) = design.iter().chain(&times).position(|v| !v.is_finite()) {
            return Err(FitError::NonFinite {
                what: "evaluation samples",
                index,
                value: design
                    .iter()
                    .chain(&times)
                    .nth(index)
                    .copied()
                    .unwrap_or(f64::NAN),
            });
        }
        Ok(crate::calibrate::least_squares::statistics(
            &self.coefficients,
            &design,
            &times,
        ))
    }

    /// Predicted time of a sample's features (its `time` is ignored); may be negative far
    /// outside the training data, since a regression is not constrained.
    pub fn predict(&self, sample: &MlinesSample) -> f64 {
        self.terms
            .iter()
            .zip(&self.coefficients)
            .map(|(t, c)| t.of(sample) * c)
            .sum()
    }
}

impl CommModel for MlinesFit {
    /// The regression's prediction for one message (`m = 1`, `b` its bytes, `Mlines` its exact
    /// line count, no operations), clamped at 0.
    fn p2p(&self, msg: &Message) -> f64 {
        let sample = MlinesSample {
            messages: 1.0,
            bytes: msg.bytes() as f64,
            lines: lines_touched(msg, self.line_bytes).unwrap_or(0) as f64,
            operations: 0.0,
            time: 0.0,
        };
        self.predict(&sample).max(0.0)
    }
}
