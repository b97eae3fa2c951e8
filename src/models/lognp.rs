//! log_n P (Cameron, Ge & Sun): software-parameterised point-to-point cost as `n` hops.

use crate::error::ParameterError;
use crate::table::Table1D;
use crate::table::Table2D;
use crate::{CommModel, LogGP, LogP, Message, PiecewiseCost, Pram};

/// The cost of one hop as a function of the message size `s` (bytes): the unit-stride cost
/// `o_i(s)` or the gap `g_i(s)` of a log_n P hop.
///
/// Every form evaluates to a non-negative number of seconds: a table's linear extrapolation is
/// clamped at 0.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(tag = "form", rename_all = "snake_case", try_from = "SizeCostFields")
)]
pub enum SizeCost {
    /// Measured seconds at discrete sizes, piecewise linear ([`Table1D`]).
    Table(Table1D),
    /// Measured seconds **per byte** at discrete sizes, times the size: `s · t(s)` (memory
    /// logP's per-byte `o`).
    PerByte(Table1D),
    /// `fixed + s · per_byte`: one rate, as a copy-transfer stage (`s / bandwidth`).
    Linear {
        /// Seconds at 0 bytes.
        fixed: f64,
        /// Seconds per byte.
        per_byte: f64,
    },
    /// LogGP's sending hop: `first_byte + (max(s, 1) - 1) · per_byte` (`o + (s - 1) G`).
    LongMessage {
        /// Seconds for a 1-byte message (`o`).
        first_byte: f64,
        /// Seconds per further byte (`G`).
        per_byte: f64,
    },
    /// LogP's network hop: `first_word + (⌈s / w⌉ - 1) · per_extra_word`, at least one word
    /// (`L + (m - 1) max(g, o)`).
    Words {
        /// Seconds for the first word.
        first_word: f64,
        /// Seconds for each further word.
        per_extra_word: f64,
        /// Bytes per word `w`.
        word_bytes: u64,
    },
}

/// The serialised form of [`SizeCost`]; loading validates every form as [`LogNP::new`] does.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(tag = "form", rename_all = "snake_case", deny_unknown_fields)]
enum SizeCostFields {
    Table(Table1D),
    PerByte(Table1D),
    Linear {
        fixed: f64,
        per_byte: f64,
    },
    LongMessage {
        first_byte: f64,
        per_byte: f64,
    },
    Words {
        first_word: f64,
        per_extra_word: f64,
        word_bytes: u64,
    },
}

#[cfg(feature = "serde")]
impl TryFrom<SizeCostFields> for SizeCost {
    type Error = ParameterError;
    fn try_from(f: SizeCostFields) -> Result<Self, Self::Error> {
        let cost = match f {
            SizeCostFields::Table(t) => Self::Table(t),
            SizeCostFields::PerByte(t) => Self::PerByte(t),
            SizeCostFields::Linear { fixed, per_byte } => Self::Linear { fixed, per_byte },
            SizeCostFields::LongMessage {
                first_byte,
                per_byte,
            } => Self::LongMessage {
                first_byte,
                per_byte,
            },
            SizeCostFields::Words {
                first_word,
                per_extra_word,
                word_bytes,
            } => Self::Words {
                first_word,
                per_extra_word,
                word_bytes,
            },
        };
        cost.validate("size_cost")?;
        Ok(cost)
    }
}

impl SizeCost {
    /// The cost of a message of `bytes` bytes, seconds, never negative.
    #[inline]
    pub fn eval(&self, bytes: u64) -> f64 {
        let s = bytes as f64;
        match self {
            Self::Table(t) => t.eval(s).max(0.0),
            Self::PerByte(t) => s * t.eval(s).max(0.0),
            Self::Linear { fixed, per_byte } => fixed + s * per_byte,
            Self::LongMessage {
                first_byte,
                per_byte,
            } => first_byte + bytes.saturating_sub(1) as f64 * per_byte,
            Self::Words {
                first_word,
                per_extra_word,
                word_bytes,
            } => {
                // a word of 0 bytes (the variant's fields are public) is read as 1 byte
                let words = bytes.div_ceil((*word_bytes).max(1)).max(1);
                first_word + (words - 1) as f64 * per_extra_word
            }
        }
    }

    /// The cost as an affine function of the size on the sizes around `bytes` where it is one
    /// (see [`PiecewiseCost::p2p_affine`]): a table's segment (while its line stays non-negative,
    /// as [`eval`](Self::eval) clamps), a single rate, LogGP's long-message line, a constant
    /// per-byte rate, LogP's word staircase (a line in whole words). `None` for a per-byte table
    /// of several points (`s · t(s)` is quadratic in a segment).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::models::lognp::SizeCost;
    ///
    /// // LogGP's sending hop o + (s - 1) G with o = 1 µs, G = 1 ns/byte: (1 µs - G) + G s
    /// let hop = SizeCost::LongMessage { first_byte: 1e-6, per_byte: 1e-9 };
    /// let line = hop.affine_piece(5000).unwrap();
    /// assert_eq!((line.first, line.last), (1, u64::MAX));
    /// assert!((line.at(5000) - hop.eval(5000)).abs() < 1e-18);
    /// // a word staircase is a line in words: 1 µs + 0.1 µs per further started 8-byte word
    /// let words = SizeCost::Words { first_word: 1e-6, per_extra_word: 1e-7, word_bytes: 8 };
    /// let staircase = words.affine_piece(100).unwrap();
    /// assert_eq!(staircase.unit, 8);
    /// assert!((staircase.at(17) - 1.2e-6).abs() < 1e-18); // 3 words
    /// // s · t(s) over a table of several per-byte times is quadratic within a segment
    /// let per_byte = SizeCost::PerByte(commcost::table::Table1D::new(vec![1.0, 100.0], vec![2e-9, 1e-9])?);
    /// assert_eq!(per_byte.affine_piece(50), None);
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    pub fn affine_piece(&self, bytes: u64) -> Option<crate::AffineCost> {
        match self {
            Self::Table(t) => t.non_negative_affine_piece(bytes),
            Self::Linear { fixed, per_byte } => {
                Some(crate::AffineCost::everywhere(*fixed, *per_byte))
            }
            Self::LongMessage {
                first_byte,
                per_byte,
            } => Some(crate::AffineCost::first_unit_then_line(
                bytes,
                *first_byte,
                *per_byte,
                1,
            )),
            Self::Words {
                first_word,
                per_extra_word,
                word_bytes,
            } => Some(crate::AffineCost::first_unit_then_line(
                bytes,
                *first_word,
                *per_extra_word,
                *word_bytes,
            )),
            Self::PerByte(t) if t.num_points() == 1 => {
                Some(crate::AffineCost::everywhere(0.0, t.values()[0].max(0.0)))
            }
            Self::PerByte(_) => None,
        }
    }

    /// Discrete sizes `S_i` this cost counts in the log_n P complexity (§5): the table's points;
    /// 1 for a single rate or a word staircase; 2 for LogGP's short / long ranges (the paper's
    /// `S_0 = 2`).
    pub fn sizes(&self) -> usize {
        match self {
            Self::Table(t) | Self::PerByte(t) => t.num_points(),
            Self::Linear { .. } | Self::Words { .. } => 1,
            Self::LongMessage { .. } => 2,
        }
    }

    fn validate(&self, name: &'static str) -> Result<(), ParameterError> {
        match self {
            Self::Table(t) | Self::PerByte(t) => t.check_non_negative(name),
            Self::Linear { fixed, per_byte } => {
                ParameterError::non_negative(name, *fixed)?;
                ParameterError::non_negative(name, *per_byte).map(drop)
            }
            Self::LongMessage {
                first_byte,
                per_byte,
            } => {
                ParameterError::non_negative(name, *first_byte)?;
                ParameterError::non_negative(name, *per_byte).map(drop)
            }
            Self::Words {
                first_word,
                per_extra_word,
                word_bytes,
            } => {
                ParameterError::non_negative(name, *first_word)?;
                ParameterError::non_negative(name, *per_extra_word)?;
                ParameterError::at_least("word_bytes", *word_bytes, 1).map(drop)
            }
        }
    }
}

/// The additional cost of strided data over unit stride, `l_i(s, d)`, of a log_n P hop; read
/// only for messages that [`Message::strided_access`] reports as strided.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(tag = "form", rename_all = "snake_case", try_from = "StrideCostFields")
)]
pub enum StrideCost {
    /// Measured seconds on a size × stride grid ([`Table2D`]).
    Table(Table2D),
    /// Measured seconds **per byte** on a size × stride grid, times the size (memory logP's
    /// per-byte `l(s, d)`, copy-transfer's `1/bw(d) - 1/bw`).
    PerByte(Table2D),
}

/// The serialised form of [`StrideCost`]; loading checks that no entry is negative (the zero at
/// unit stride is checked by [`LogNP::new`], which knows the unit stride).
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(tag = "form", rename_all = "snake_case", deny_unknown_fields)]
enum StrideCostFields {
    Table(Table2D),
    PerByte(Table2D),
}

#[cfg(feature = "serde")]
impl TryFrom<StrideCostFields> for StrideCost {
    type Error = ParameterError;
    fn try_from(f: StrideCostFields) -> Result<Self, Self::Error> {
        let cost = match f {
            StrideCostFields::Table(t) => Self::Table(t),
            StrideCostFields::PerByte(t) => Self::PerByte(t),
        };
        // unit stride 0: every stride > 0 may cost; negative entries fail
        cost.validate("stride_cost", 0)?;
        Ok(cost)
    }
}

impl StrideCost {
    /// The extra cost of `bytes` bytes at stride `stride`, seconds, never negative.
    #[inline]
    pub fn eval(&self, bytes: u64, stride: u64) -> f64 {
        let (s, d) = (bytes as f64, stride as f64);
        match self {
            Self::Table(t) => t.eval(s, d).max(0.0),
            Self::PerByte(t) => s * t.eval(s, d).max(0.0),
        }
    }

    /// The table's entries (`S_i · D_i` in the complexity count).
    pub fn entries(&self) -> usize {
        match self {
            Self::Table(t) | Self::PerByte(t) => t.num_entries(),
        }
    }

    fn validate(&self, name: &'static str, unit_stride: u64) -> Result<(), ParameterError> {
        match self {
            Self::Table(t) | Self::PerByte(t) => t.check_strided_cost(name, unit_stride),
        }
    }
}

/// One implicit transfer ("hop") of a log_n P communication.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "HopFields")
)]
pub struct Hop {
    /// `o_i(s)`: unit-stride cost.
    pub overhead: SizeCost,
    /// `l_i(s, d)`: additional strided cost; `None` when the hop does not depend on layout.
    pub strided: Option<StrideCost>,
    /// `g_i(s)`: gap; `None` for `g_i = o_i` (no contention, the paper's assumption).
    pub gap: Option<SizeCost>,
}

/// The serialised form of [`Hop`]; every cost in it is validated on load.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct HopFields {
    overhead: SizeCost,
    #[serde(default)]
    strided: Option<StrideCost>,
    #[serde(default)]
    gap: Option<SizeCost>,
}

#[cfg(feature = "serde")]
impl TryFrom<HopFields> for Hop {
    type Error = ParameterError;
    fn try_from(f: HopFields) -> Result<Self, Self::Error> {
        let hop = Self {
            overhead: f.overhead,
            strided: f.strided,
            gap: f.gap,
        };
        hop.validate(0)?;
        Ok(hop)
    }
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
/// let loggp = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9, 2)?;
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
