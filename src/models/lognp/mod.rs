//! log_n P (Cameron, Ge & Sun): software-parameterised point-to-point cost as `n` hops.

use crate::error::ParameterError;
use crate::table::Table1D;
use crate::{CommModel, LogGP, LogP, Message, PiecewiseCost, Pram};

mod cost;

pub use cost::{SizeCost, StrideCost};

/// One implicit transfer ("hop") of a log_n P communication.
///
/// Its fields are public, so a `Hop` is not checked on its own: [`LogNP::new`] validates every
/// hop (costs non-negative and finite, strided tables zero at unit stride), and so does loading
/// a [`LogNP`], whose error names the hop and the field.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct Hop {
    /// `o_i(s)`: unit-stride cost.
    pub overhead: SizeCost,
    /// `l_i(s, d)`: additional strided cost; `None` when the hop does not depend on layout.
    #[cfg_attr(feature = "serde", serde(default))]
    pub strided: Option<StrideCost>,
    /// `g_i(s)`: gap; `None` for `g_i = o_i` (no contention, the paper's assumption).
    #[cfg_attr(feature = "serde", serde(default))]
    pub gap: Option<SizeCost>,
}

impl Hop {
    /// A hop with a unit-stride cost only.
    pub fn new(overhead: SizeCost) -> Self {
        Self {
            overhead,
            strided: None,
            gap: None,
        }
    }

    /// The same hop with a strided cost.
    pub fn with_strided(mut self, strided: StrideCost) -> Self {
        self.strided = Some(strided);
        self
    }

    /// The same hop with a gap.
    pub fn with_gap(mut self, gap: SizeCost) -> Self {
        self.gap = Some(gap);
        self
    }

    /// `max(o_i, g_i) + l_i` for a message.
    #[inline]
    pub fn cost(&self, msg: &Message, unit_stride: u64) -> f64 {
        self.cost_at(msg.bytes(), msg.strided_access(unit_stride))
    }

    /// `max(o_i, g_i) + l_i` for `bytes` bytes, at `stride` when the message is strided.
    #[inline]
    fn cost_at(&self, bytes: u64, stride: Option<u64>) -> f64 {
        let mut unit = self.overhead.eval(bytes);
        if let Some(gap) = &self.gap {
            unit = unit.max(gap.eval(bytes));
        }
        let strided = match (&self.strided, stride) {
            (Some(l), Some(d)) => l.eval(bytes, d),
            _ => 0.0,
        };
        unit + strided
    }

    fn validate(&self, unit_stride: u64) -> Result<(), ParameterError> {
        self.overhead.validate("overhead")?;
        if let Some(gap) = &self.gap {
            gap.validate("gap")?;
        }
        if let Some(strided) = &self.strided {
            strided.validate("strided", unit_stride)?;
        }
        Ok(())
    }

    fn terms(&self) -> usize {
        self.overhead.sizes() + self.strided.as_ref().map_or(0, StrideCost::entries)
    }
}

/// The log_n P model: an explicit communication as `n` implicit transfers (hops), each with a
/// unit-stride cost `o_i(s)`, an additional strided cost `l_i(s, d)` and a gap `g_i(s)`.
///
/// # Formula
///
/// log_n P eq. (1) (lognp-log3p §2.1):
///
/// ```text
/// T = Σ_{i=0}^{n-1} ( max(o_i, g_i) + l_i )
/// ```
///
/// with eq. (2), `T = Σ (o_i + l_i)`, when no gap is given (`g_i = o_i`). `l_i` is read at the
/// message's stride only when [`Message::strided_access`] says the message is strided (not
/// contiguous, stride above [`unit_stride`](Self::unit_stride)); otherwise it is 0.
///
/// [`CommModel::send_overhead`] is the first hop's cost, [`CommModel::recv_overhead`] the last
/// hop's; the send interval is the first hop's cost (a sender is free once its own hop is done).
///
/// Every classic model is log_n P with assumptions (lognp §5): `From` conversions exist for
/// [`LogP`], [`LogGP`], [`Pram`], [`Log3P`](crate::Log3P) and, in their modules, memory logP and
/// copy-transfer; each predicts exactly the original's `p2p` for every message.
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, LogGP, LogNP, Message};
///
/// let loggp = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// let as_lognp = LogNP::from(loggp.clone());
/// let msg = Message::contiguous(4096);
/// assert!((as_lognp.p2p(&msg) - loggp.p2p(&msg)).abs() < 1e-18);
/// assert_eq!(as_lognp.terms(), 4); // the paper's count for LogGP
/// # Ok::<(), commcost::ParameterError>(())
/// ```
///
/// # References
///
/// K. W. Cameron, R. Ge, X.-H. Sun, "log_n P and log_3 P: Accurate analytical models of
/// point-to-point communication in distributed systems", IEEE Trans. Computers 56(3), 2007.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "LogNPParams", into = "LogNPParams")
)]
pub struct LogNP {
    pub(super) hops: Vec<Hop>,
    pub(super) unit_stride: u64,
}

impl LogNP {
    /// Builds a log_n P model from its hops; `unit_stride` (bytes) is the element size the
    /// strided tables were measured with (8 for doubles in the paper).
    ///
    /// # Errors
    ///
    /// [`ParameterError::EmptyChain`] without hops; [`ParameterError::InChain`] around a
    /// negative cost, a strided table that is not zero at strides `<= unit_stride`, or a word
    /// size of 0.
    pub fn new(hops: Vec<Hop>, unit_stride: u64) -> Result<Self, ParameterError> {
        if hops.is_empty() {
            return Err(ParameterError::EmptyChain { name: "hops" });
        }
        for (i, hop) in hops.iter().enumerate() {
            hop.validate(unit_stride)
                .map_err(ParameterError::in_chain("hop", i))?;
        }
        Ok(Self { hops, unit_stride })
    }

    /// A model from hops the crate built from validated parameters (conversions); the
    /// conversion tests re-validate every form.
    pub(crate) fn trusted(hops: Vec<Hop>, unit_stride: u64) -> Self {
        Self { hops, unit_stride }
    }

    /// The hops, in order from source to target.
    pub fn hops(&self) -> &[Hop] {
        &self.hops
    }

    /// `n`, the number of hops.
    pub fn num_hops(&self) -> usize {
        self.hops.len()
    }

    /// Unit stride in bytes: messages at or below it pay no strided cost.
    pub fn unit_stride(&self) -> u64 {
        self.unit_stride
    }

    /// Each hop's `max(o_i, g_i) + l_i` for a message.
    pub fn hop_costs(&self, msg: &Message) -> Vec<f64> {
        self.hops
            .iter()
            .map(|h| h.cost(msg, self.unit_stride))
            .collect()
    }

    /// The model's complexity, the number of measured terms `Σ_i (S_i + S_i D_i)` (lognp §5):
    /// for each hop the discrete sizes of its unit-stride cost plus the entries of its strided
    /// table.
    ///
    /// The paper's counts follow: LogP 3, LogGP 4, PRAM 1, copy-transfer `N S (1 + D)`. Its
    /// uniform count `3 S (1 + D)` for log_3 P and memory logP also counts the network hop's
    /// `l_1 = 0` as an `S × D` table; a model holding only what it measured counts
    /// `3 S + 2 S D` (log_3 P) here.
    pub fn terms(&self) -> usize {
        self.hops.iter().map(Hop::terms).sum()
    }
}

impl CommModel for LogNP {
    /// `Σ (max(o_i, g_i) + l_i)`.
    fn p2p(&self, msg: &Message) -> f64 {
        let (bytes, stride) = (msg.bytes(), msg.strided_access(self.unit_stride));
        self.hops.iter().map(|h| h.cost_at(bytes, stride)).sum()
    }

    /// The first hop's cost.
    fn send_overhead(&self, msg: &Message) -> f64 {
        self.hops[0].cost(msg, self.unit_stride)
    }

    /// The last hop's cost.
    fn recv_overhead(&self, msg: &Message) -> f64 {
        self.hops[self.hops.len() - 1].cost(msg, self.unit_stride)
    }

    /// The slowest hop's cost, `max_i max(o_i, g_i) + l_i`: the hops form a pipeline, and the
    /// sender's next message cannot pass a hop before this one has (a message's bytes have
    /// left the sender only when the bottleneck hop has carried them). A model converted from
    /// LogP keeps its `p2p` but, before this, took only the first hop (`o`) as the interval,
    /// so a pipelined broadcast cost less than one message.
    fn send_interval(&self, msg: &Message) -> f64 {
        let (bytes, stride) = (msg.bytes(), msg.strided_access(self.unit_stride));
        self.hops
            .iter()
            .map(|h| h.cost_at(bytes, stride))
            .fold(0.0, f64::max)
    }

    fn piecewise(&self) -> Option<&dyn PiecewiseCost> {
        Some(self)
    }
}

impl PiecewiseCost for LogNP {
    /// Always: the interval is the slowest hop, `max_i c_i`, and `T = Σ_i c_i` sums the same
    /// hop costs `c_i = max(o_i, g_i) + l_i`, none negative (Cameron, Ge & Sun, IEEE TC 2007,
    /// eq. (1)), so `I <= T` for every message, gapped or not, strided or not. In floating
    /// point too: a sum of non-negative numbers rounds to no less than any of its terms.
    fn sender_keeps_pace(&self) -> bool {
        true
    }

    /// The constant 0 on every size: the lag `I - T` is never positive
    /// ([`sender_keeps_pace`](Self::sender_keeps_pace)), and a line `<= 0` wherever `I - T`
    /// is `<= 0` is all the contract asks there.
    fn send_lag_affine(&self, _bytes: u64) -> Option<crate::AffineCost> {
        Some(crate::AffineCost::everywhere(0.0, 0.0))
    }

    /// A contiguous message pays `Σ o_i(s)`: the sum of the hops' affine pieces, on the sizes
    /// they share. `None` when a hop has a gap (`max(o_i, g_i)` is not one line in general) or a
    /// cost form without a line.
    fn p2p_affine(&self, bytes: u64) -> Option<crate::AffineCost> {
        self.hops.iter().try_fold(
            crate::AffineCost::everywhere(0.0, 0.0),
            |sum, hop| match hop.gap {
                Some(_) => None,
                None => sum.plus(hop.overhead.affine_piece(bytes)?),
            },
        )
    }
}

impl From<LogP> for LogNP {
    /// Cameron, Ge, Sun, "log_n P and log_3 P: accurate analytical models of point-to-point
    /// communication in distributed systems", IEEE TC 2007, §5: `n = 3`, `f(s,1)_0 = o`,
    /// `f(s,1)_1 = L`, `f(s,1)_2 = o`, every `l_i = 0`; the `(m - 1) max(g, o)` of a multi-word
    /// message is carried by the network hop.
    ///
    /// The conversion keeps `p2p` but not the per-message quantities the collectives use:
    /// log_n P's send interval is its slowest hop (`L + (m - 1) max(g, o)`, not LogP's
    /// `m max(g, o)`), its gap 0 (LogP's `g` between rounds is not charged), so collectives
    /// priced on the converted model differ from LogP's; with `max(g, o) > L`, `k` messages of
    /// `m / k` words cost less than one of `m` words.
    fn from(m: LogP) -> Self {
        let o = SizeCost::Table(Table1D::trusted_constant(m.overhead()));
        Self {
            hops: vec![
                Hop::new(o.clone()),
                Hop::new(SizeCost::Words {
                    first_word: m.latency(),
                    per_extra_word: m.injection_interval(),
                    word_bytes: m.word_bytes(),
                }),
                Hop::new(o),
            ],
            unit_stride: 0,
        }
    }
}

impl From<LogGP> for LogNP {
    /// Cameron, Ge, Sun (IEEE TC 2007), §5: as LogP, but hop 0 is `o` for the short range and
    /// `o + (s - 1) G` for long messages. Keeps `p2p`; the send interval becomes the slowest
    /// hop and the gap 0 (LogGP: `max(o, g + (s - 1) G)` and `g`), so collectives priced on
    /// the converted model differ from LogGP's.
    fn from(m: LogGP) -> Self {
        Self {
            hops: vec![
                Hop::new(SizeCost::LongMessage {
                    first_byte: m.overhead(),
                    per_byte: m.gap_per_byte(),
                }),
                Hop::new(SizeCost::Table(Table1D::trusted_constant(m.latency()))),
                Hop::new(SizeCost::Table(Table1D::trusted_constant(m.overhead()))),
            ],
            unit_stride: 0,
        }
    }
}

impl From<Pram> for LogNP {
    /// lognp §5: `n = 1`, unit cost.
    fn from(m: Pram) -> Self {
        Self {
            hops: vec![Hop::new(SizeCost::Table(Table1D::trusted_constant(
                m.unit_cost(),
            )))],
            unit_stride: 0,
        }
    }
}

/// log_n P's parameters by name, for [`LogNP::from_params`]; with the `serde` feature the form a
/// [`LogNP`] is stored in.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct LogNPParams {
    /// The implicit transfers, in order.
    pub hops: Vec<Hop>,
    /// Unit stride in bytes: messages whose stride is at or below it pay no strided cost.
    pub unit_stride: u64,
}

impl LogNP {
    /// Builds the model from its parameters by name (the form it is stored in).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn from_params(params: LogNPParams) -> Result<Self, ParameterError> {
        Self::new(params.hops, params.unit_stride)
    }
}

impl TryFrom<LogNPParams> for LogNP {
    type Error = ParameterError;
    /// As [`LogNP::from_params`].
    fn try_from(params: LogNPParams) -> Result<Self, Self::Error> {
        Self::from_params(params)
    }
}

impl From<LogNP> for LogNPParams {
    /// The parameters by name.
    fn from(m: LogNP) -> Self {
        Self {
            hops: m.hops,
            unit_stride: m.unit_stride,
        }
    }
}
