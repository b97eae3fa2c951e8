//! What a fit reports besides its model: [`Adjustment`]s of fitted values it could not use as
//! fitted, the [`Parameter`] each concerns and how it was refitted ([`Refit`]), why a protocol range starts where it does
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
    /// How the used value was obtained.
    pub how: Refit,
}

/// How an [`Adjustment`]'s used value was obtained: the bound the fitted value met and what the
/// calibration used instead. It prints as the sentence below each variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refit {
    /// o = PRTT(1, 0, s_min) / 4, so that 2o + L is the measured end-to-end time
    OverheadQuarterOfEndToEnd,
    /// constrained fit
    ConstrainedFit,
    /// the range's line is below 0 at this size: table entry 0
    TableEntryZero,
    /// the one-message time falls over the range: G = 0, 2o + L = its weighted mean
    FallingOneMessageMean,
    /// the one-message time falls over the range: G = 0 (p2p constant, the measured PRTT(1, 0, s_min) / 2)
    FallingOneMessageConstant,
    /// the one-message line is below 0 at s = 1: 2o + L = 0, G through the origin
    OneMessageLineThroughOrigin,
    /// refitted with g = 0 (line through the origin)
    RefitWithZeroGap,
    /// refitted with G = 0 (mean G_all)
    RefitWithZeroGapPerByte,
    /// one point: the line through the origin and the point
    OnePointThroughOrigin,
    /// one point: G of the nearest range with a line, 2o + L through the point
    OnePointNearestSlope,
    /// o = half the range's one-message time at s = 1, so that 2o + L reproduces it
    OverheadHalfOfRangeTime,
    /// o < 0 (its bound is 0; eq. (6) subtracts two noisy round trips): o = 0
    NegativeOverhead,
    /// no feasible g >= 0: g = 0
    NoFeasibleGap,
    /// g = the range's mean of g + (s - 1) G, at least 0
    NetgaugeGapMean,
    /// g < 0: refitted with g = 0 (line through the origin)
    NegativeGapRefit,
    /// clamped at 0: the bandwidth series' interval exceeds the one-way time
    IntervalExceedsOneWay,
    /// clamped at 0
    ClampedAtZero,
    /// Netgauge's o_s < 0: o = 0
    NetgaugeNegativeOverhead,
    /// Netgauge's g < 0: g = 0
    NetgaugeNegativeGap,
    /// Netgauge's G < 0: G = 0
    NetgaugeNegativeGapPerByte,
    /// G_all(s_min) > PRTT(1, 0, s_min) / 2: L = 0, g(s_min) = the end-to-end time
    BurstExceedsOneWay,
    /// G_all(s) - (s - 1) G averages below 0 over the range (G: the one-message slope): g = 0
    BurstLineBelowZero,
    /// G through 0 with the same G_all at the range's last size
    NetgaugeSlopeThroughOrigin,
    /// G < 0: refitted with G = 0 (g = mean G_all)
    NegativeGapPerByteRefit,
    /// 2o > the range's one-message time at s = 1: the overhead overlaps the wire time (split_end_to_end)
    OverheadOverlapsRangeTime,
    /// 2o > PRTT(1, 0, s_min) / 2: the overhead overlaps the wire time (split_end_to_end)
    OverheadOverlapsEndToEnd,
    /// 2o + L < 0 at s = 1: G = PRTT(1, 0, s_min) / 2 / (s_min - 1), 2o + L = 0
    NegativeFixedTime,
    /// 2 o_s > PRTT(1, 0, s_min) / 2: the overhead overlaps the wire time
    NetgaugeOverheadOverlaps,
}

impl Refit {
    /// The sentence.
    pub const fn text(self) -> &'static str {
        match self {
            Self::OverheadQuarterOfEndToEnd => {
                "o = PRTT(1, 0, s_min) / 4, so that 2o + L is the measured end-to-end time"
            }
            Self::ConstrainedFit => "constrained fit",
            Self::TableEntryZero => "the range's line is below 0 at this size: table entry 0",
            Self::FallingOneMessageMean => {
                "the one-message time falls over the range: G = 0, 2o + L = its weighted mean"
            }
            Self::FallingOneMessageConstant => {
                "the one-message time falls over the range: G = 0 (p2p constant, the measured PRTT(1, 0, s_min) / 2)"
            }
            Self::OneMessageLineThroughOrigin => {
                "the one-message line is below 0 at s = 1: 2o + L = 0, G through the origin"
            }
            Self::RefitWithZeroGap => "refitted with g = 0 (line through the origin)",
            Self::RefitWithZeroGapPerByte => "refitted with G = 0 (mean G_all)",
            Self::OnePointThroughOrigin => "one point: the line through the origin and the point",
            Self::OnePointNearestSlope => {
                "one point: G of the nearest range with a line, 2o + L through the point"
            }
            Self::OverheadHalfOfRangeTime => {
                "o = half the range's one-message time at s = 1, so that 2o + L reproduces it"
            }
            Self::NegativeOverhead => {
                "o < 0 (its bound is 0; eq. (6) subtracts two noisy round trips): o = 0"
            }
            Self::NoFeasibleGap => "no feasible g >= 0: g = 0",
            Self::NetgaugeGapMean => "g = the range's mean of g + (s - 1) G, at least 0",
            Self::NegativeGapRefit => "g < 0: refitted with g = 0 (line through the origin)",
            Self::IntervalExceedsOneWay => {
                "clamped at 0: the bandwidth series' interval exceeds the one-way time"
            }
            Self::ClampedAtZero => "clamped at 0",
            Self::NetgaugeNegativeOverhead => "Netgauge's o_s < 0: o = 0",
            Self::NetgaugeNegativeGap => "Netgauge's g < 0: g = 0",
            Self::NetgaugeNegativeGapPerByte => "Netgauge's G < 0: G = 0",
            Self::BurstExceedsOneWay => {
                "G_all(s_min) > PRTT(1, 0, s_min) / 2: L = 0, g(s_min) = the end-to-end time"
            }
            Self::BurstLineBelowZero => {
                "G_all(s) - (s - 1) G averages below 0 over the range (G: the one-message slope): g = 0"
            }
            Self::NetgaugeSlopeThroughOrigin => {
                "G through 0 with the same G_all at the range's last size"
            }
            Self::NegativeGapPerByteRefit => "G < 0: refitted with G = 0 (g = mean G_all)",
            Self::OverheadOverlapsRangeTime => {
                "2o > the range's one-message time at s = 1: the overhead overlaps the wire time (split_end_to_end)"
            }
            Self::OverheadOverlapsEndToEnd => {
                "2o > PRTT(1, 0, s_min) / 2: the overhead overlaps the wire time (split_end_to_end)"
            }
            Self::NegativeFixedTime => {
                "2o + L < 0 at s = 1: G = PRTT(1, 0, s_min) / 2 / (s_min - 1), 2o + L = 0"
            }
            Self::NetgaugeOverheadOverlaps => {
                "2 o_s > PRTT(1, 0, s_min) / 2: the overhead overlaps the wire time"
            }
        }
    }
}

impl fmt::Display for Refit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
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
