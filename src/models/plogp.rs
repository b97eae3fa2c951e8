//! pLogP (Kielmann, Bal, Verstoep 2000): LogP with size-dependent overheads and gap.

use crate::error::ParameterError;
use crate::table::Table1D;
use crate::{AffineCost, CommModel, Message, PiecewiseCost};

/// The parameterised LogP model: a latency `L` and, per message size `m`, a send overhead
/// `o_s(m)`, a receive overhead `o_r(m)` and a gap `g(m)`, each a measured function of the size
/// (a piecewise-linear [`Table1D`]), and `P` processors.
///
/// # Formula
///
/// For an `m`-byte message (Kielmann, Bal, Verstoep 2000, §2; the forms Pješivac-Grbović et al.
/// 2007 derive Open MPI's collective costs from):
///
/// ```text
/// T(m)        = L + g(m)               end-to-end time of one message
/// o_s(m), o_r(m)                       CPU time at the sender / receiver (g(m) >= o_s(m), o_r(m))
/// interval(m) = max(g(m), o_s(m))      between the starts of consecutive sends
/// gap(m)      = 0                      a sender idles nothing beyond g(m), which T(m) holds
/// ```
///
/// `L` is the end-to-end latency without the sender's share `g(m)`; the round trip of one
/// message is `RTT(m) = 2 (L + g(m))`. With the trait's collective forms this gives the paper
/// family's `⌈log2 P⌉ (L + g(m))` for a binomial broadcast and `L + (P - 1) g(m)` for a linear
/// one. The tables interpolate linearly and extrapolate along their end segments (as
/// [`Table1D`]); a value a table extrapolates below 0 counts as 0.
///
/// # References
///
/// T. Kielmann, H. E. Bal, K. Verstoep, "Fast measurement of LogP parameters for message
/// passing platforms", IPDPS 2000 Workshops (LNCS 1800), 2000. J. Pješivac-Grbović, T. Angskun,
/// G. Bosilca, G. E. Fagg, E. Gabriel, J. J. Dongarra, "Performance analysis of MPI collective
/// operations", Cluster Computing 10(2), 2007.
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, Message, PLogP};
/// use commcost::table::Table1D;
///
/// // L = 5 µs; g(m) = 2 µs + 1 ns/B; o_s(m) = 1 µs + 0.5 ns/B; o_r(m) = 1 µs
/// let model = PLogP::new(
///     5e-6,
///     Table1D::linear(1e-6, 0.5e-9)?,
///     Table1D::constant(1e-6)?,
///     Table1D::linear(2e-6, 1e-9)?,
///     2,
/// )?;
/// let msg = Message::contiguous(1000);
/// // T(1000) = L + g(1000) = 5 + 2 + 1 = 8 µs
/// assert!((model.p2p(&msg) - 8e-6).abs() < 1e-15);
/// assert!((model.send_overhead(&msg) - 1.5e-6).abs() < 1e-15);
/// assert!((model.send_interval(&msg) - 3e-6).abs() < 1e-15);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "PLogPParams", into = "PLogPParams")
)]
pub struct PLogP {
    latency: f64,
    send_overhead: Table1D,
    recv_overhead: Table1D,
    gap: Table1D,
    processors: u64,
    /// Whether `max(g(m), o_s(m)) <= L + g(m)` on every size, worked out once by
    /// [`new`](Self::new) from the lag lines ([`PiecewiseCost::sender_keeps_pace`](crate::PiecewiseCost::sender_keeps_pace)); derived from
    /// the fields above, so not serialised.
    #[cfg_attr(feature = "serde", serde(skip_serializing))]
    keeps_pace: bool,
}

impl PLogP {
    /// Builds a pLogP parameter set from `L` (seconds) and the tables `o_s(m)`, `o_r(m)`, `g(m)`
    /// (seconds over message sizes in bytes).
    ///
    /// # Errors
    ///
    /// [`ParameterError`] naming the field: `latency` negative or not finite; a table with a
    /// negative entry (`send_overhead`, `recv_overhead`, `gap`); `processors < 1`.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::PLogP;
    /// use commcost::table::Table1D;
    /// let flat = Table1D::constant(1e-6)?;
    /// let negative = Table1D::constant(-1e-6)?;
    /// assert!(PLogP::new(5e-6, flat.clone(), flat.clone(), flat.clone(), 2).is_ok());
    /// let err = PLogP::new(5e-6, flat.clone(), flat, negative, 2).unwrap_err();
    /// assert!(err.to_string().contains("gap"));
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    pub fn new(
        latency: f64,
        send_overhead: Table1D,
        recv_overhead: Table1D,
        gap: Table1D,
        processors: u64,
    ) -> Result<Self, ParameterError> {
        let latency = ParameterError::non_negative("latency", latency)?;
        send_overhead.check_non_negative("send_overhead")?;
        recv_overhead.check_non_negative("recv_overhead")?;
        gap.check_non_negative("gap")?;
        let mut model = Self {
            latency,
            send_overhead,
            recv_overhead,
            gap,
            processors: ParameterError::at_least("processors", processors, 1)?,
            keeps_pace: false,
        };
        model.keeps_pace = model.lag_never_positive();
        Ok(model)
    }

    /// `L`: the latency of a message without the sender's share `g(m)`, seconds.
    pub fn latency(&self) -> f64 {
        self.latency
    }

    /// The table `o_s(m)`, seconds over bytes.
    pub fn send_overhead_table(&self) -> &Table1D {
        &self.send_overhead
    }

    /// The table `o_r(m)`, seconds over bytes.
    pub fn recv_overhead_table(&self) -> &Table1D {
        &self.recv_overhead
    }

    /// The table `g(m)`, seconds over bytes.
    pub fn gap_table(&self) -> &Table1D {
        &self.gap
    }

    /// `P`: number of processors.
    pub fn processors(&self) -> u64 {
        self.processors
    }

    /// `g(m)`, clamped at 0 where the table extrapolates below it.
    pub fn gap_at(&self, bytes: u64) -> f64 {
        self.gap.eval(bytes as f64).max(0.0)
    }
}

impl PLogP {
    /// The lag `E(m)` ([`PiecewiseCost::send_lag_affine`](crate::PiecewiseCost::send_lag_affine)) on the sizes around `bytes` where the
    /// segments of `g` and `o_s` that hold `bytes` both apply and `g(m)` keeps one sign.
    ///
    /// `I(m) - T(m) = max(g⁺, o_s⁺) - L - g⁺ = max(0, o_s⁺ - g⁺) - L` with `x⁺ = max(0, x)`
    /// the clamped table values. Where `g(m) >= 0` the line is `o_s - g - L`: it is `I - T`
    /// where `o_s >= g` (then `o_s >= 0` too) and below `-L`, where `I - T = -L <= 0`,
    /// elsewhere. Where `g(m) < 0` (`g⁺ = 0`, a table extrapolated below 0) the line is
    /// `o_s - L`: `I - T` where `o_s >= 0`, below `I - T = -L` where not.
    fn lag_line(&self, bytes: u64) -> AffineCost {
        let gap = self.clamped_gap_piece(bytes);
        let overhead = self.send_overhead.affine_piece(bytes);
        AffineCost {
            intercept: overhead.intercept - gap.intercept - self.latency,
            first: gap.first.max(overhead.first),
            per_unit: overhead.per_unit - gap.per_unit,
            last: gap.last.min(overhead.last),
            unit: 1,
        }
    }

    /// `g⁺(m) = max(0, g(m))`, the gap as the model uses it, as a line on the sizes around
    /// `bytes` where the gap table's segment that holds `bytes` applies and keeps the sign it
    /// has at `bytes`: the segment where `g(bytes) >= 0`, the constant 0 where not.
    fn clamped_gap_piece(&self, bytes: u64) -> AffineCost {
        let gap = self.gap.affine_piece(bytes);
        let (mut first, mut last) = (gap.first, gap.last);
        // the side of g's root that `bytes` is on, as the model evaluates it; the root
        // `-intercept / slope` bounds the range on the integers where the line has that sign
        // (an integer next to the root may differ in sign between the line and the table's
        // evaluation only where both are within rounding of 0, and so are the two pieces)
        let counts = self.gap.eval(bytes as f64) >= 0.0;
        if gap.per_unit != 0.0 {
            // f64 -> u64 casts saturate: a root below 0 or above u64::MAX bounds nothing
            let root = -gap.intercept / gap.per_unit;
            if (gap.per_unit > 0.0) == counts {
                // the sign holds above the root: g rising and >= 0, or falling and < 0
                let above = if counts {
                    root.ceil() as u64
                } else {
                    (root.floor() as u64).saturating_add(1)
                };
                first = first.max(above.min(bytes));
            } else {
                // the sign holds below the root: g falling and >= 0, or rising and < 0
                let below = if counts {
                    root.floor() as u64
                } else {
                    (root.ceil() as u64).saturating_sub(1)
                };
                last = last.min(below.max(bytes));
            }
        }
        let line = if counts {
            gap
        } else {
            AffineCost::everywhere(0.0, 0.0)
        };
        AffineCost {
            first,
            last,
            ..line
        }
    }

    /// Whether every lag line stays `<= 0` over its range (a line is at most its larger end):
    /// then `I(m) <= T(m)` on every size. The lines are walked from 0 bytes to `u64::MAX`;
    /// there are at most two per pair of table segments (`g`'s root splits one), so the walk
    /// is bounded, and a walk that would take longer answers `false` (no promise).
    fn lag_never_positive(&self) -> bool {
        let pieces = self
            .gap
            .num_points()
            .saturating_add(self.send_overhead.num_points());
        let mut bytes = 0u64;
        for _ in 0..pieces.saturating_mul(2).saturating_add(4) {
            let line = self.lag_line(bytes);
            if line.at(line.first) > 0.0 || line.at(line.last) > 0.0 {
                return false;
            }
            match line.last.checked_add(1) {
                Some(next) => bytes = next,
                None => return true,
            }
        }
        false
    }
}

impl CommModel for PLogP {
    /// `T(m) = L + g(m)`.
    fn p2p(&self, msg: &Message) -> f64 {
        self.latency + self.gap_at(msg.bytes())
    }

    /// `o_s(m)`.
    fn send_overhead(&self, msg: &Message) -> f64 {
        self.send_overhead.eval(msg.bytes() as f64).max(0.0)
    }

    /// `o_r(m)`.
    fn recv_overhead(&self, msg: &Message) -> f64 {
        self.recv_overhead.eval(msg.bytes() as f64).max(0.0)
    }

    /// `max(g(m), o_s(m))`.
    fn send_interval(&self, msg: &Message) -> f64 {
        self.gap_at(msg.bytes()).max(self.send_overhead(msg))
    }

    /// 0: the gap `g(m)` is part of `T(m)` and of the send interval already.
    fn gap(&self, _msg: &Message) -> f64 {
        0.0
    }

    fn piecewise(&self) -> Option<&dyn PiecewiseCost> {
        Some(self)
    }
}

impl PiecewiseCost for PLogP {
    /// `o_s(m) <= L + g(m)` on every size (`max(g(m), o_s(m)) <= L + g(m)`, with the tables'
    /// values clamped at 0 as everywhere): decided once at construction, exactly, from the lag
    /// lines ([`send_lag_affine`](Self::send_lag_affine)) — a line is `<= 0` on its range
    /// when it is at both ends. True in particular when `o_s(m) <= g(m)`, as Kielmann, Bal &
    /// Verstoep (2000, §2) measure it; false when the sender's overhead outgrows the network,
    /// e.g. `o_s(m) > L + g(m)` from some size on.
    fn sender_keeps_pace(&self) -> bool {
        self.keeps_pace
    }

    /// The lag `I(m) - T(m) = max(0, o_s(m) - g(m)) - L` as a line on the sizes where the
    /// segments of both tables that hold `bytes` apply and `g(m)` keeps its sign:
    /// `o_s - g - L` where `g(m) >= 0`, `o_s - L` where the gap table extrapolates below 0
    /// (clamped to 0). Where `o_s(m) >= g(m)` the line is the lag; where not, `I - T = -L` and
    /// the line is below it, `<= 0` as the contract asks.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::{CommModel, Message, PLogP, PiecewiseCost};
    /// use commcost::table::Table1D;
    /// // L = 1 µs, o_s(m) = 8 µs, g(m) = 2 µs + 1 ns/B: the sender lags by 5 µs - 1 ns/B
    /// let model = PLogP::new(
    ///     1e-6,
    ///     Table1D::constant(8e-6)?,
    ///     Table1D::constant(1e-6)?,
    ///     Table1D::linear(2e-6, 1e-9)?,
    ///     2,
    /// )?;
    /// assert!(!model.sender_keeps_pace());
    /// let line = model.send_lag_affine(1000).unwrap();
    /// let m = Message::contiguous(1000);
    /// let lag = model.send_interval(&m) - model.p2p(&m); // 8 - (1 + 3) = 4 µs
    /// assert!((line.at(1000) - lag).abs() < 1e-18 && (lag - 4e-6).abs() < 1e-18);
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    fn send_lag_affine(&self, bytes: u64) -> Option<AffineCost> {
        Some(self.lag_line(bytes))
    }

    /// `T(m) = L + g⁺(m)` as a line: `L` plus the gap table's segment around `bytes`, cut to
    /// where `g(m)` keeps its sign (`L` alone where the table extrapolates below 0).
    fn p2p_affine(&self, bytes: u64) -> Option<AffineCost> {
        let gap = self.clamped_gap_piece(bytes);
        Some(AffineCost {
            intercept: gap.intercept + self.latency,
            ..gap
        })
    }

    /// The sizes where the gap table's slope changes (its inner points).
    fn size_breakpoints(&self) -> Vec<u64> {
        let sizes = self.gap.sizes();
        sizes
            .iter()
            .skip(1)
            .take(sizes.len().saturating_sub(2))
            .filter(|s| **s >= 0.0)
            .map(|s| s.ceil() as u64)
            .collect()
    }
}

/// pLogP's parameters by name, for [`PLogP::from_params`]; with the `serde` feature the form a
/// [`PLogP`] is stored in.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct PLogPParams {
    /// `L`: latency, seconds.
    pub latency: f64,
    /// `o_s(m)`: send overhead by message size, seconds.
    pub send_overhead: Table1D,
    /// `o_r(m)`: receive overhead by message size, seconds.
    pub recv_overhead: Table1D,
    /// `g(m)`: gap by message size, seconds.
    pub gap: Table1D,
    /// `P`: processors.
    pub processors: u64,
}

impl PLogP {
    /// Builds the model from its parameters by name (the form it is stored in).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn from_params(params: PLogPParams) -> Result<Self, ParameterError> {
        Self::new(
            params.latency,
            params.send_overhead,
            params.recv_overhead,
            params.gap,
            params.processors,
        )
    }
}

impl TryFrom<PLogPParams> for PLogP {
    type Error = ParameterError;
    /// As [`PLogP::from_params`].
    fn try_from(params: PLogPParams) -> Result<Self, Self::Error> {
        Self::from_params(params)
    }
}

impl From<PLogP> for PLogPParams {
    /// The parameters by name.
    fn from(m: PLogP) -> Self {
        Self {
            latency: m.latency,
            send_overhead: m.send_overhead,
            recv_overhead: m.recv_overhead,
            gap: m.gap,
            processors: m.processors,
        }
    }
}
