//! LogGP (Alexandrov et al. 1995): LogP plus a gap per byte for long messages.

use crate::error::ParameterError;
use crate::{AffineCost, CommModel, Message, PiecewiseCost};

/// The LogGP model: LogP with a per-byte gap `G` for long messages.
///
/// Parameters (seconds): `L` [`latency`](Self::latency), `o` [`overhead`](Self::overhead), `g`
/// [`gap`](Self::gap), `G` [`gap_per_byte`](Self::gap_per_byte) (seconds per byte). The
/// processor count `P` of the system may be recorded with them
/// ([`with_processors`](Self::with_processors)); no formula reads it.
///
/// # Formula
///
/// For an `s`-byte message (Alexandrov et al. 1995; Hoefler, Lichei & Rehm 2007, eq. (1)-(2)):
///
/// ```text
/// T(s)     = 2o + L + (s - 1) G                 point-to-point
/// G_all(s) = g + (s - 1) G                       cumulative gap (loggp-assessment (2))
/// interval = max(o, G_all(s))                    between starts of consecutive sends
/// ```
///
/// `s` is clamped to at least 1, so a 0-byte message costs what a 1-byte message does and
/// `(s - 1) G` is never negative.
///
/// # References
///
/// A. Alexandrov, M. Ionescu, K. E. Schauser, C. Scheiman, "LogGP: Incorporating long messages
/// into the LogP model", SPAA 1995. T. Hoefler, T. Lichei, W. Rehm, "Low-overhead LogGP
/// parameter assessment for modern interconnection networks", IPDPS 2007.
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, LogGP, Message};
///
/// // MPICH2/TCP row of Table 2 (Hoefler et al. 2007): L = 45.74, o = 3.46, g = 0.915 µs,
/// // G = 0.00849 µs/byte
/// let tcp = LogGP::new(45.74e-6, 3.46e-6, 0.915e-6, 0.00849e-6)?;
/// // 1 KiB: 2 * 3.46 + 45.74 + 1023 * 0.00849 = 61.34527 µs
/// assert!((tcp.p2p(&Message::contiguous(1024)) - 61.34527e-6).abs() < 1e-12);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "LogGPParams", into = "LogGPParams")
)]
pub struct LogGP {
    latency: f64,
    overhead: f64,
    gap: f64,
    gap_per_byte: f64,
    processors: Option<u64>,
}

impl LogGP {
    /// Builds a LogGP parameter set.
    ///
    /// # Errors
    ///
    /// [`ParameterError`] naming the field if any time is negative or not finite.
    pub fn new(
        latency: f64,
        overhead: f64,
        gap: f64,
        gap_per_byte: f64,
    ) -> Result<Self, ParameterError> {
        Ok(Self {
            latency: ParameterError::non_negative("latency", latency)?,
            overhead: ParameterError::non_negative("overhead", overhead)?,
            gap: ParameterError::non_negative("gap", gap)?,
            gap_per_byte: ParameterError::non_negative("gap_per_byte", gap_per_byte)?,
            processors: None,
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
    /// use commcost::LogGP;
    ///
    /// let loggp = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
    /// assert_eq!(loggp.processors(), None);
    /// let loggp = loggp.with_processors(64)?;
    /// assert_eq!(loggp.processors(), Some(64));
    /// assert_eq!((loggp.latency(), loggp.gap_per_byte()), (5e-6, 1e-9)); // the rest kept
    /// let err = loggp.with_processors(0).unwrap_err();
    /// assert!(err.to_string().contains("processors"), "{err}");
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    pub fn with_processors(self, processors: u64) -> Result<Self, ParameterError> {
        Ok(Self {
            processors: Some(ParameterError::at_least("processors", processors, 1)?),
            ..self
        })
    }

    /// Builds a parameter set the crate knows to be valid (embedded presets) without checks; a
    /// unit test re-validates every use.
    pub(crate) const fn from_trusted(
        latency: f64,
        overhead: f64,
        gap: f64,
        gap_per_byte: f64,
        processors: u64,
    ) -> Self {
        Self {
            latency,
            overhead,
            gap,
            gap_per_byte,
            processors: Some(processors),
        }
    }

    /// `L`: the network latency, seconds — the part of the one-message time that is neither
    /// end's overhead: `p2p(1 B) = 2o + L`. The end-to-end 1-byte time that Hoefler, Lichei,
    /// Rehm (IPDPS 2007, §3.4) and Netgauge report as `L` is `PRTT(1, 0, 1) / 2 = 2o + L`;
    /// [`split_end_to_end`](crate::calibrate::split_end_to_end) converts it.
    pub fn latency(&self) -> f64 {
        self.latency
    }

    /// `o`: CPU overhead per message at each end, seconds.
    pub fn overhead(&self) -> f64 {
        self.overhead
    }

    /// `g`: gap between consecutive small messages, seconds.
    pub fn gap(&self) -> f64 {
        self.gap
    }

    /// `G`: gap per byte of a long message, seconds per byte.
    pub fn gap_per_byte(&self) -> f64 {
        self.gap_per_byte
    }

    /// `P`: the number of processors recorded with the parameters, if any
    /// ([`with_processors`](Self::with_processors)).
    pub fn processors(&self) -> Option<u64> {
        self.processors
    }

    /// `(s - 1) G` with `s` clamped to at least 1.
    fn serialisation(&self, bytes: u64) -> f64 {
        bytes.saturating_sub(1) as f64 * self.gap_per_byte
    }

    /// `G_all(s) = g + (s - 1) G`, the cumulative gap of an `s`-byte message
    /// (loggp-assessment eq. (2)).
    pub fn cumulative_gap(&self, bytes: u64) -> f64 {
        self.gap + self.serialisation(bytes)
    }
}

impl CommModel for LogGP {
    /// `T(s) = 2o + L + (s - 1) G`.
    fn p2p(&self, msg: &Message) -> f64 {
        2.0 * self.overhead + self.latency + self.serialisation(msg.bytes())
    }

    /// `o`.
    fn send_overhead(&self, _msg: &Message) -> f64 {
        self.overhead
    }

    /// `o`.
    fn recv_overhead(&self, _msg: &Message) -> f64 {
        self.overhead
    }

    /// `max(o, g + (s - 1) G)`.
    fn send_interval(&self, msg: &Message) -> f64 {
        self.overhead.max(self.cumulative_gap(msg.bytes()))
    }

    /// `g`.
    fn gap(&self, _msg: &Message) -> f64 {
        self.gap
    }

    fn piecewise(&self) -> Option<&dyn PiecewiseCost> {
        Some(self)
    }
}

impl PiecewiseCost for LogGP {
    /// `g <= 2o + L`: then `max(o, g + (s - 1) G) <= 2o + L + (s - 1) G` for every `s`.
    fn sender_keeps_pace(&self) -> bool {
        self.gap <= 2.0 * self.overhead + self.latency
    }

    /// `T(s) = (2o + L - G) + G s` for `s >= 1`; the 0-byte message `2o + L` on its own.
    #[inline]
    fn p2p_affine(&self, bytes: u64) -> Option<AffineCost> {
        let startup = 2.0 * self.overhead + self.latency;
        Some(AffineCost::first_unit_then_line(
            bytes,
            startup,
            self.gap_per_byte,
            1,
        ))
    }

    /// The constant `g - 2o - L` on every size: where `g + (s - 1) G >= o`,
    /// `I - T = g + (s - 1) G - (2o + L + (s - 1) G) = g - 2o - L`; elsewhere
    /// `I - T = -o - L - (s - 1) G <= 0` and `g - 2o - L < -o - L - (s - 1) G` too, so both
    /// lags are 0.
    #[inline]
    fn send_lag_affine(&self, _bytes: u64) -> Option<AffineCost> {
        let behind = self.gap - (2.0 * self.overhead + self.latency);
        Some(AffineCost::everywhere(behind, 0.0))
    }
}

/// LogGP's parameters by name, for [`LogGP::from_params`] (seconds) and [`LogGP::from_micros`]:
/// no way to swap `g` and `G` by position. With the `serde` feature this is the form a
/// [`LogGP`] is stored in.
///
/// # Examples
///
/// ```
/// use commcost::LogGP;
/// use commcost::models::loggp::LogGPParams;
/// let params = LogGPParams {
///     latency: 5e-6,
///     overhead: 1e-6,
///     gap: 2e-6,
///     gap_per_byte: 1e-9,
///     processors: None,
/// };
/// assert_eq!(LogGP::from_params(params)?, LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?);
/// assert_eq!(LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?.params(), params);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct LogGPParams {
    /// `L`: wire latency.
    pub latency: f64,
    /// `o`: CPU overhead of a send or a receive.
    pub overhead: f64,
    /// `g`: least interval between message injections.
    pub gap: f64,
    /// `G`: time per byte of a long message.
    pub gap_per_byte: f64,
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
}

impl LogGPParams {
    fn scaled(self, unit: f64) -> Self {
        Self {
            latency: self.latency * unit,
            overhead: self.overhead * unit,
            gap: self.gap * unit,
            gap_per_byte: self.gap_per_byte * unit,
            processors: self.processors,
        }
    }
}

impl LogGP {
    /// Builds LogGP from named parameters in seconds (and seconds per byte).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn from_params(params: LogGPParams) -> Result<Self, ParameterError> {
        let model = Self::new(
            params.latency,
            params.overhead,
            params.gap,
            params.gap_per_byte,
        )?;
        match params.processors {
            Some(processors) => model.with_processors(processors),
            None => Ok(model),
        }
    }

    /// Builds LogGP from named parameters in microseconds (and µs per byte), the unit the
    /// papers and benchmarks print.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::{CommModel, LogGP, Message};
    /// use commcost::models::loggp::LogGPParams;
    /// // MPICH2/TCP, Table 2 of Hoefler, Lichei & Rehm (IPDPS 2007), as printed
    /// let tcp = LogGP::from_micros(LogGPParams {
    ///     latency: 45.74,
    ///     overhead: 3.46,
    ///     gap: 0.915,
    ///     gap_per_byte: 0.00849,
    ///     processors: None,
    /// })?;
    /// // 1 KiB: 2 * 3.46 + 45.74 + 1023 * 0.00849 = 61.34527 µs
    /// assert!((tcp.p2p(&Message::contiguous(1024)) - 61.34527e-6).abs() < 1e-12);
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    pub fn from_micros(params: LogGPParams) -> Result<Self, ParameterError> {
        Self::from_params(params.scaled(1e-6))
    }

    /// The parameters by name, in seconds.
    #[must_use]
    pub fn params(&self) -> LogGPParams {
        LogGPParams {
            latency: self.latency,
            overhead: self.overhead,
            gap: self.gap,
            gap_per_byte: self.gap_per_byte,
            processors: self.processors,
        }
    }
}

impl From<LogGP> for LogGPParams {
    /// The parameters by name (the form `LogGP` is stored in).
    fn from(m: LogGP) -> Self {
        Self {
            latency: m.latency,
            overhead: m.overhead,
            gap: m.gap,
            gap_per_byte: m.gap_per_byte,
            processors: m.processors,
        }
    }
}

impl TryFrom<LogGPParams> for LogGP {
    type Error = ParameterError;
    /// As [`LogGP::from_params`].
    fn try_from(params: LogGPParams) -> Result<Self, Self::Error> {
        Self::from_params(params)
    }
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use super::LogGP;

    /// `processors` is optional in a file: a file with it loads and is written back unchanged, a
    /// file without it loads too (and is written back without it).
    #[test]
    fn processors_is_optional_in_files_and_kept_when_present() {
        let with =
            r#"{"latency":5e-6,"overhead":1e-6,"gap":2e-6,"gap_per_byte":1e-9,"processors":2}"#;
        let model: LogGP = serde_json::from_str(with).unwrap();
        assert_eq!(model.processors(), Some(2));
        assert_eq!(serde_json::to_string(&model).unwrap(), with);
        let without = r#"{"latency":5e-6,"overhead":1e-6,"gap":2e-6,"gap_per_byte":1e-9}"#;
        let model: LogGP = serde_json::from_str(without).unwrap();
        assert_eq!(model.processors(), None);
        assert_eq!(serde_json::to_string(&model).unwrap(), without);
        assert!(serde_json::from_str::<LogGP>(&with.replace(":2}", ":0}")).is_err());
        assert!(serde_json::from_str::<LogGP>(&with.replace(":2}", ":null}")).is_err());
    }
}
