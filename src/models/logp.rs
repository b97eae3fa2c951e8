//! LogP (Culler et al. 1993): latency, overhead, gap, fixed small-message size.

use crate::error::ParameterError;
use crate::{CommModel, Message, PiecewiseCost};

/// The LogP model: a network that carries fixed-size small messages of `w` bytes.
///
/// Parameters (seconds unless stated): `L` [`latency`](Self::latency), `o`
/// [`overhead`](Self::overhead) (the same at sender and receiver), `g` [`gap`](Self::gap) (the
/// minimum interval between consecutive message injections) and `w`
/// [`word_bytes`](Self::word_bytes). The processor count `P` of the system may be recorded
/// with them ([`with_processors`](Self::with_processors)); no formula reads it.
///
/// # Formula
///
/// A `B`-byte message travels as `m = max(1, ceil(B / w))` small messages (Culler et al., PPoPP 1993):
///
/// ```text
/// T(B) = 2o + L + (m - 1) max(g, o)
/// ```
///
/// The memory-logP paper (§5) writes `o + max(g, o) ceil(B/w) + L + o`, which counts one
/// injection interval too many (for `B <= w` it would not reduce to `2o + L`); this crate follows
/// the `(m - 1)` form. A 0-byte message costs what a 1-byte message does.
///
/// # References
///
/// D. Culler, R. Karp, D. Patterson, A. Sahay, K. E. Schauser, E. Santos, R. Subramonian,
/// T. von Eicken, "LogP: Towards a realistic model of parallel computation", PPoPP 1993.
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, LogP, Message};
///
/// // L = 10 µs, o = 2 µs, g = 4 µs, P = 8, w = 8 bytes
/// let logp = LogP::new(10e-6, 2e-6, 4e-6, 8)?;
/// // 20 bytes = 3 words: 2o + L + 2 max(g, o) = 4 + 10 + 8 = 22 µs
/// assert!((logp.p2p(&Message::contiguous(20)) - 22e-6).abs() < 1e-15);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "LogPParams", into = "LogPParams")
)]
pub struct LogP {
    latency: f64,
    overhead: f64,
    gap: f64,
    processors: Option<u64>,
    word_bytes: u64,
}

impl LogP {
    /// Builds a LogP parameter set.
    ///
    /// # Errors
    ///
    /// [`ParameterError`] naming the field if `latency`, `overhead` or `gap` is negative or not
    /// finite, or if `word_bytes < 1`.
    pub fn new(
        latency: f64,
        overhead: f64,
        gap: f64,
        word_bytes: u64,
    ) -> Result<Self, ParameterError> {
        Ok(Self {
            latency: ParameterError::non_negative("latency", latency)?,
            overhead: ParameterError::non_negative("overhead", overhead)?,
            gap: ParameterError::non_negative("gap", gap)?,
            processors: None,
            word_bytes: ParameterError::at_least("word_bytes", word_bytes, 1)?,
        })
    }

    /// The same parameters, recording the number of processors `P` of the system they
    /// describe (kept in stored files; no formula reads it: collectives take the process
    /// count from their problem).
    ///
    /// # Errors
    ///
    /// [`ParameterError`] if `processors < 1`.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::LogP;
    ///
    /// let logp = LogP::new(5e-6, 1e-6, 2e-6, 8)?;
    /// assert_eq!(logp.processors(), None);
    /// let logp = logp.with_processors(64)?;
    /// assert_eq!(logp.processors(), Some(64));
    /// assert_eq!((logp.latency(), logp.gap(), logp.word_bytes()), (5e-6, 2e-6, 8)); // the rest kept
    /// let err = logp.with_processors(0).unwrap_err();
    /// assert!(err.to_string().contains("processors"), "{err}");
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    pub fn with_processors(self, processors: u64) -> Result<Self, ParameterError> {
        Ok(Self {
            processors: Some(ParameterError::at_least("processors", processors, 1)?),
            ..self
        })
    }

    /// `L`: network latency of one small message, seconds.
    pub fn latency(&self) -> f64 {
        self.latency
    }

    /// `o`: CPU overhead of sending or receiving one small message, seconds.
    pub fn overhead(&self) -> f64 {
        self.overhead
    }

    /// `g`: minimum interval between consecutive injections, seconds.
    pub fn gap(&self) -> f64 {
        self.gap
    }

    /// `P`: the number of processors recorded with the parameters, if any
    /// ([`with_processors`](Self::with_processors)).
    pub fn processors(&self) -> Option<u64> {
        self.processors
    }

    /// `w`: bytes carried by one small message.
    pub fn word_bytes(&self) -> u64 {
        self.word_bytes
    }

    /// `m = max(1, ceil(B / w))`: small messages needed for `bytes`.
    pub fn words(&self, bytes: u64) -> u64 {
        if bytes <= self.word_bytes {
            1 // the common small-message case, without a division
        } else {
            bytes.div_ceil(self.word_bytes)
        }
    }

    /// `max(g, o)`: interval between the starts of two consecutive small-message sends.
    pub fn injection_interval(&self) -> f64 {
        self.gap.max(self.overhead)
    }
}

impl CommModel for LogP {
    /// `T = 2o + L + (m - 1) max(g, o)`, `m = max(1, ceil(B / w))` (Culler et al., PPoPP 1993).
    fn p2p(&self, msg: &Message) -> f64 {
        let m = self.words(msg.bytes());
        2.0 * self.overhead + self.latency + (m - 1) as f64 * self.injection_interval()
    }

    /// `o`.
    fn send_overhead(&self, _msg: &Message) -> f64 {
        self.overhead
    }

    /// `o`.
    fn recv_overhead(&self, _msg: &Message) -> f64 {
        self.overhead
    }

    /// `m max(g, o)`: the next message's first word follows this message's last one.
    fn send_interval(&self, msg: &Message) -> f64 {
        self.words(msg.bytes()) as f64 * self.injection_interval()
    }

    /// `g`.
    fn gap(&self, _msg: &Message) -> f64 {
        self.gap
    }

    fn piecewise(&self) -> Option<&dyn PiecewiseCost> {
        Some(self)
    }
}

impl PiecewiseCost for LogP {
    /// `max(g, o) <= 2o + L`: then `m max(g, o) <= 2o + L + (m - 1) max(g, o)` for every
    /// number of words `m`.
    fn sender_keeps_pace(&self) -> bool {
        self.injection_interval() <= 2.0 * self.overhead + self.latency
    }

    /// `T = (2o + L - I) + I ⌈B / w⌉` in words of `w` bytes for `B >= 1` (`I = max(g, o)`); the
    /// 0-byte message, one word, on its own.
    #[inline]
    fn p2p_affine(&self, bytes: u64) -> Option<crate::AffineCost> {
        let (startup, interval) = (
            2.0 * self.overhead + self.latency,
            self.injection_interval(),
        );
        Some(crate::AffineCost::first_unit_then_line(
            bytes,
            startup,
            interval,
            self.word_bytes,
        ))
    }

    /// The constant `max(g, o) - 2o - L` on every size: `m` words cost
    /// `I - T = m max(g, o) - (2o + L + (m - 1) max(g, o))`, whatever `m`.
    #[inline]
    fn send_lag_affine(&self, _bytes: u64) -> Option<crate::AffineCost> {
        let behind = self.injection_interval() - (2.0 * self.overhead + self.latency);
        Some(crate::AffineCost::everywhere(behind, 0.0))
    }
}

/// LogP's parameters by name, for [`LogP::from_params`] (seconds) and [`LogP::from_micros`].
///
/// # Examples
///
/// ```
/// use commcost::LogP;
/// use commcost::models::logp::LogPParams;
/// let params = LogPParams { latency: 5e-6, overhead: 1e-6, gap: 2e-6, processors: None, word_bytes: 8 };
/// assert_eq!(LogP::from_params(params)?, LogP::new(5e-6, 1e-6, 2e-6, 8)?);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct LogPParams {
    /// `L`: wire latency of a word-sized message.
    pub latency: f64,
    /// `o`: CPU overhead of a send or a receive.
    pub overhead: f64,
    /// `g`: least interval between message injections.
    pub gap: f64,
    /// `P`: the number of processors of the system the parameters describe, if recorded
    /// (optional in files; no formula reads it).
    #[cfg_attr(
        feature = "serde",
        serde(
            default,
            deserialize_with = "super::present_u64",
            skip_serializing_if = "Option::is_none"
        )
    )]
    pub processors: Option<u64>,
    /// `w`: bytes of the fixed small message.
    pub word_bytes: u64,
}

impl LogP {
    /// Builds LogP from named parameters in seconds.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn from_params(params: LogPParams) -> Result<Self, ParameterError> {
        let model = Self::new(
            params.latency,
            params.overhead,
            params.gap,
            params.word_bytes,
        )?;
        match params.processors {
            Some(processors) => model.with_processors(processors),
            None => Ok(model),
        }
    }

    /// Builds LogP from named parameters whose times are in microseconds.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::LogP;
    /// use commcost::models::logp::LogPParams;
    /// let us = LogP::from_micros(LogPParams { latency: 5.0, overhead: 1.0, gap: 2.0, processors: None, word_bytes: 8 })?;
    /// assert!((us.latency() - 5e-6).abs() < 1e-18);
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    pub fn from_micros(params: LogPParams) -> Result<Self, ParameterError> {
        Self::from_params(LogPParams {
            latency: params.latency * 1e-6,
            overhead: params.overhead * 1e-6,
            gap: params.gap * 1e-6,
            ..params
        })
    }
}

impl From<LogP> for LogPParams {
    /// The parameters by name (the form `LogP` is stored in).
    fn from(m: LogP) -> Self {
        Self {
            latency: m.latency,
            overhead: m.overhead,
            gap: m.gap,
            processors: m.processors,
            word_bytes: m.word_bytes,
        }
    }
}

impl TryFrom<LogPParams> for LogP {
    type Error = ParameterError;
    /// As [`LogP::from_params`].
    fn try_from(params: LogPParams) -> Result<Self, Self::Error> {
        Self::from_params(params)
    }
}
