//! [`ModelSpec`]: any model of the crate as one value, the form in which models are stored, and
//! loading with the path of the offending field ([`deserialize_with_path`], feature `serde`).

use crate::{
    CommModel, CopyTransfer, Log3P, LogGP, LogGpo, LogNP, LogP, MemoryLogP, MemoryNetworkLogP,
    Message, MlinesModel, PLogP, Pram, Protocols,
};

#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub use super::load::{UniqueKeys, deserialize_with_path};

/// Any model of the crate, as a tagged value.
///
/// This is how a scheduler loads a calibrated model from a file: with the `serde` feature a
/// `ModelSpec` (de)serialises with a `"model"` tag naming the model, every parameter struct inside
/// it is validated on load exactly as its `new` validates, and the result is used directly (it
/// implements [`CommModel`]) or boxed with [`into_model`](Self::into_model).
/// `ModelSpec::deserialize_with_path` (feature `serde`) loads one naming the field path of any
/// error (`ranges[1].model.gap`). The `"model"` tag may stand anywhere in the map.
///
/// | tag | variant |
/// |---|---|
/// | `logp` | [`LogP`] |
/// | `loggp` | [`LogGP`] |
/// | `pram` | [`Pram`] |
/// | `logp_protocols` | [`Protocols<LogP>`] |
/// | `loggp_protocols` | [`Protocols<LogGP>`] |
/// | `mlines` | [`MlinesModel`] |
/// | `lognp` | [`LogNP`] |
/// | `log3p` | [`Log3P`] |
/// | `memory_logp` | [`MemoryLogP`] |
/// | `memory_network_logp` | [`MemoryNetworkLogP`] |
/// | `copy_transfer` | [`CopyTransfer`] |
/// | `loggpo` | [`LogGpo`] |
/// | `plogp` | [`PLogP`] |
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, Message, ModelSpec, presets};
///
/// let spec = ModelSpec::from(presets::open_mpi_openib());
/// let model: Box<dyn CommModel> = spec.clone().into_model();
/// let msg = Message::contiguous(4096);
/// assert_eq!(model.p2p(&msg), spec.p2p(&msg));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(tag = "model"))]
#[non_exhaustive]
pub enum ModelSpec {
    /// [`LogP`].
    #[cfg_attr(feature = "serde", serde(rename = "logp"))]
    LogP(LogP),
    /// [`LogGP`].
    #[cfg_attr(feature = "serde", serde(rename = "loggp"))]
    LogGP(LogGP),
    /// [`Pram`].
    #[cfg_attr(feature = "serde", serde(rename = "pram"))]
    Pram(Pram),
    /// [`Protocols`] of [`LogP`] ranges.
    #[cfg_attr(feature = "serde", serde(rename = "logp_protocols"))]
    LogPProtocols(Protocols<LogP>),
    /// [`Protocols`] of [`LogGP`] ranges (Table 2 of the LogGP-assessment paper).
    #[cfg_attr(feature = "serde", serde(rename = "loggp_protocols"))]
    LogGPProtocols(Protocols<LogGP>),
    /// [`MlinesModel`].
    #[cfg_attr(feature = "serde", serde(rename = "mlines"))]
    Mlines(MlinesModel),
    /// [`LogNP`].
    #[cfg_attr(feature = "serde", serde(rename = "lognp"))]
    LogNP(LogNP),
    /// [`Log3P`].
    #[cfg_attr(feature = "serde", serde(rename = "log3p"))]
    Log3P(Log3P),
    /// [`MemoryLogP`].
    #[cfg_attr(feature = "serde", serde(rename = "memory_logp"))]
    MemoryLogP(MemoryLogP),
    /// [`MemoryNetworkLogP`].
    #[cfg_attr(feature = "serde", serde(rename = "memory_network_logp"))]
    MemoryNetworkLogP(MemoryNetworkLogP),
    /// [`CopyTransfer`].
    #[cfg_attr(feature = "serde", serde(rename = "copy_transfer"))]
    CopyTransfer(CopyTransfer),
    /// [`LogGpo`].
    #[cfg_attr(feature = "serde", serde(rename = "loggpo"))]
    LogGpo(LogGpo),
    /// [`PLogP`].
    #[cfg_attr(feature = "serde", serde(rename = "plogp"))]
    PLogP(PLogP),
}

impl ModelSpec {
    /// The model as a trait object borrowed from the spec.
    pub fn as_model(&self) -> &dyn CommModel {
        match self {
            Self::LogP(m) => m,
            Self::LogGP(m) => m,
            Self::Pram(m) => m,
            Self::LogPProtocols(m) => m,
            Self::LogGPProtocols(m) => m,
            Self::Mlines(m) => m,
            Self::LogNP(m) => m,
            Self::Log3P(m) => m,
            Self::MemoryLogP(m) => m,
            Self::MemoryNetworkLogP(m) => m,
            Self::CopyTransfer(m) => m,
            Self::LogGpo(m) => m,
            Self::PLogP(m) => m,
        }
    }

    /// The model as an owned trait object.
    pub fn into_model(self) -> Box<dyn CommModel> {
        match self {
            Self::LogP(m) => Box::new(m),
            Self::LogGP(m) => Box::new(m),
            Self::Pram(m) => Box::new(m),
            Self::LogPProtocols(m) => Box::new(m),
            Self::LogGPProtocols(m) => Box::new(m),
            Self::Mlines(m) => Box::new(m),
            Self::LogNP(m) => Box::new(m),
            Self::Log3P(m) => Box::new(m),
            Self::MemoryLogP(m) => Box::new(m),
            Self::MemoryNetworkLogP(m) => Box::new(m),
            Self::CopyTransfer(m) => Box::new(m),
            Self::LogGpo(m) => Box::new(m),
            Self::PLogP(m) => Box::new(m),
        }
    }
}

macro_rules! spec_from {
    ($($variant:ident($ty:ty)),* $(,)?) => {$(
        impl From<$ty> for ModelSpec {
            fn from(model: $ty) -> Self {
                Self::$variant(model)
            }
        }
    )*};
}

spec_from!(
    LogP(LogP),
    LogGP(LogGP),
    Pram(Pram),
    LogPProtocols(Protocols<LogP>),
    LogGPProtocols(Protocols<LogGP>),
    Mlines(MlinesModel),
    LogNP(LogNP),
    Log3P(Log3P),
    MemoryLogP(MemoryLogP),
    MemoryNetworkLogP(MemoryNetworkLogP),
    CopyTransfer(CopyTransfer),
    LogGpo(LogGpo),
    PLogP(PLogP),
);

impl CommModel for ModelSpec {
    fn p2p(&self, msg: &Message) -> f64 {
        self.as_model().p2p(msg)
    }
    fn send_overhead(&self, msg: &Message) -> f64 {
        self.as_model().send_overhead(msg)
    }
    fn recv_overhead(&self, msg: &Message) -> f64 {
        self.as_model().recv_overhead(msg)
    }
    fn send_interval(&self, msg: &Message) -> f64 {
        self.as_model().send_interval(msg)
    }
    fn gap(&self, msg: &Message) -> f64 {
        self.as_model().gap(msg)
    }
    fn quantities(&self, msg: &Message) -> crate::Quantities {
        self.as_model().quantities(msg)
    }
    fn rendezvous_above(&self) -> Option<u64> {
        self.as_model().rendezvous_above()
    }
    fn piecewise(&self) -> Option<&dyn crate::PiecewiseCost> {
        self.as_model().piecewise()
    }
}

/// A model parameter whose magnitude suggests a unit mistake (see
/// [`ModelSpec::unit_warnings`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UnitWarning {
    /// What was checked.
    pub check: UnitCheck,
    /// Its value (seconds, or seconds per byte).
    pub value: f64,
}

/// A magnitude check of [`ModelSpec::unit_warnings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UnitCheck {
    /// The 1-byte point-to-point time is over a second.
    OneByteTime,
    /// The per-byte cost of a 1 MiB message is over a microsecond per byte.
    PerByteCost,
}

impl UnitCheck {
    /// What is checked, in words (`1-byte point-to-point time`).
    pub const fn quantity(self) -> &'static str {
        match self {
            Self::OneByteTime => "1-byte point-to-point time",
            Self::PerByteCost => "per-byte cost of a 1 MiB message",
        }
    }

    /// The likely mistake, in words.
    pub const fn likely(self) -> &'static str {
        match self {
            Self::OneByteTime => "over a second: probably microseconds written as seconds",
            Self::PerByteCost => {
                "over a microsecond per byte (below 1 MB/s): probably µs/byte written as s/byte"
            }
        }
    }
}

impl std::fmt::Display for UnitWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is {:e}, {}; model times are in seconds",
            self.check.quantity(),
            self.value,
            self.check.likely()
        )
    }
}

impl ModelSpec {
    /// Checks a (typically just loaded) model for magnitudes that are almost surely a unit
    /// mistake: valid numbers, wrong scale. Empty when nothing looks wrong.
    ///
    /// # Method
    ///
    /// Two predictions of the model, so that every model is checked alike:
    ///
    /// * the 1-byte point-to-point time above 1 s — no interconnect or memory path is that
    ///   slow; papers and benchmarks quote µs, so µs written as s is the likely cause;
    /// * the per-byte cost `(T(1 MiB) - T(1 B)) / (1 MiB - 1)` above 1 µs per byte (a bandwidth
    ///   below 1 MB/s) — µs/byte written as s/byte.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::{LogGP, ModelSpec, presets};
    /// assert!(ModelSpec::from(presets::open_mpi_openib()).unit_warnings().is_empty());
    /// // Table 2's MPICH2/TCP row typed in µs but read as seconds
    /// let typo = LogGP::new(45.74, 3.46, 0.915, 0.00849)?;
    /// let warnings = ModelSpec::from(typo).unit_warnings();
    /// assert_eq!(warnings.len(), 2);
    /// assert!(warnings[0].to_string().contains("1-byte point-to-point time"));
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    #[must_use]
    pub fn unit_warnings(&self) -> Vec<UnitWarning> {
        const MIB: u64 = 1 << 20;
        let one = self.p2p(&Message::contiguous(1));
        let big = self.p2p(&Message::contiguous(MIB));
        let per_byte = (big - one) / (MIB - 1) as f64;
        let mut out = Vec::new();
        if one > 1.0 {
            out.push(UnitWarning {
                check: UnitCheck::OneByteTime,
                value: one,
            });
        }
        if per_byte > 1e-6 {
            out.push(UnitWarning {
                check: UnitCheck::PerByteCost,
                value: per_byte,
            });
        }
        out
    }
}
