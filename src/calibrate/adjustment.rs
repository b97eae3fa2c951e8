//! What a fit reports besides its model: [`Adjustment`]s of fitted values it could not use as
//! fitted, the [`Parameter`] each concerns, why a protocol range starts where it does
//! ([`RangeBoundary`]) and where a pLogP gap came from ([`GapSource`]).

use std::fmt;

/// A fitted value the calibration could not use as fitted, and what it used instead.
#[derive(Debug, Clone, PartialEq)]
pub struct Adjustment {
    /// The protocol range (index into the fit's ranges); `None` for a value of the whole
    /// model (`L`).
    pub range: Option<usize>,
    /// The parameter.
    pub parameter: Parameter,
    /// The unconstrained fit's value (seconds, or seconds per byte).
    pub fitted: f64,
    /// The value the model uses.
    pub used: f64,
    /// How the used value was obtained, in words (the bound met and the refit that followed).
    pub how: &'static str,
}

/// A fitted parameter an [`Adjustment`] or a range's clamped list names. It prints as its
/// [`name`](Self::name) (also in JSON with the `serde` feature).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Parameter {
    /// LogGP's `L`.
    Latency,
    /// LogGP's `o`.
    Overhead,
    /// LogGP's `g`.
    Gap,
    /// LogGP's `G`.
    GapPerByte,
    /// The fixed one-message time `2o + L` of a range's line.
    Fixed,
    /// `g` of the line through `G_all(s)` alone (the LogGP assessment's default mode takes the
    /// model's `g` elsewhere).
    BurstGap,
    /// `G` of that line.
    BurstGapPerByte,
    /// pLogP's `L`.
    PlogpLatency,
    /// A pLogP gap table entry `g(m)`.
    PlogpGap,
    /// A pLogP overhead table entry `o(m)`.
    PlogpOverhead,
}

impl Parameter {
    /// The name (`latency`, `gap_per_byte`, `plogp gap`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Latency => "latency",
            Self::Overhead => "overhead",
            Self::Gap => "gap",
            Self::GapPerByte => "gap_per_byte",
            Self::Fixed => "fixed",
            Self::BurstGap => "burst_gap",
            Self::BurstGapPerByte => "burst_gap_per_byte",
            Self::PlogpLatency => "plogp latency",
            Self::PlogpGap => "plogp gap",
            Self::PlogpOverhead => "plogp overhead",
        }
    }
}

/// Why a fitted protocol range starts where it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RangeBoundary {
    /// The first range.
    First,
    /// A level step of the latency series ([`detect_steps`](super::detect_steps)).
    Step,
    /// A change of the per-byte time (a message outgrowing a cache).
    Slope,
}

impl RangeBoundary {
    /// The name (`first`, `step`, `slope`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::First => "first",
            Self::Step => "step",
            Self::Slope => "slope",
        }
    }
}

/// Where a pLogP fit's gaps `g(m)` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GapSource {
    /// The message interval of a streaming-bandwidth series.
    Bandwidth,
    /// No bandwidth series: `g(m)` is the one-way time and `L = 0`.
    Latency,
}

impl GapSource {
    /// The name (`bandwidth`, `latency`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bandwidth => "bandwidth",
            Self::Latency => "latency",
        }
    }
}

macro_rules! named {
    ($($ty:ident),*) => {$(
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        #[cfg(feature = "serde")]
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }
    )*};
}
named!(Parameter, RangeBoundary, GapSource);
