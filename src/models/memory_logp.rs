//! memory logP (Cameron & Sun): the cost of local memory communication (copy, pack, unpack) by
//! data size and distribution, its coupling with network LogP, and a cache-hierarchy predictor.

use crate::error::ParameterError;
use crate::mlines::vector_lines;
use crate::models::lognp::{Hop, LogNP, SizeCost, StrideCost};
use crate::table::Table1D;
use crate::table::Table2D;
use crate::{CommModel, LogP, Message, PiecewiseCost};

/// memory logP: per-byte overhead `o` of contiguous data and per-byte effective latency
/// `l(s, d)` of strided data, for memory communication (copy, pack, unpack).
///
/// # Formula
///
/// memory logP (Cameron & Sun 2003) §4-5, `g = o`, `P = 1`:
///
/// ```text
/// cost of s bytes        T(s, d) = s (o(s) + l(s, d))
/// cost of one word       w_m (o + l)
/// ```
///
/// with `l(s, unit) = 0`: `l` is read only for messages [`Message::strided_access`] reports as
/// strided. `o` may depend on size (a [`Table1D`] of seconds per byte); the paper finds it
/// constant for scalable copies ([`constant_overhead`](Self::constant_overhead)).
///
/// **Interpolation in size.** The tables hold per-byte values, as the paper defines `o` and
/// `l`. Between two measured sizes it is the *cost* `s · o(s)` (and `s · l(s, d)`) that is
/// interpolated linearly — a copy costs a fixed amount plus an amount per byte, which this
/// reproduces exactly, while interpolating the per-byte values would overestimate every size
/// between two measured ones (`a/s + b` is convex). A table measured at a single size is a
/// constant per-byte rate.
///
/// As a [`CommModel`] it prices a local memory communication: `p2p` is `T(s, d)` and all of it is
/// CPU time (`send_overhead = T`).
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, MemoryLogP, Message};
/// use commcost::table::Table2D;
///
/// // o = 0.5 ns/byte; l = 2 ns/byte at stride 64 for every size
/// let l = Table2D::new(vec![0.0], vec![4.0, 64.0], vec![vec![0.0, 2e-9]])?;
/// let m = MemoryLogP::new(MemoryLogP::constant_overhead(0.5e-9)?, Some(l), 4, 4)?;
/// let packed = Message::contiguous(4096);
/// let strided = Message::vector(1024, 4, 64)?;
/// assert!((m.p2p(&packed) - 4096.0 * 0.5e-9).abs() < 1e-18);
/// assert!((m.p2p(&strided) - 4096.0 * 2.5e-9).abs() < 1e-18);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # References
///
/// K. W. Cameron, X.-H. Sun, "Quantifying locality effect in data access delay: memory logP",
/// IPDPS 2003.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "MemoryLogPParams", into = "MemoryLogPParams")
)]
pub struct MemoryLogP {
    overhead_per_byte: Table1D,
    latency_per_byte: Option<Table2D>,
    word_bytes: u64,
    unit_stride: u64,
    /// `s · o(s)` as it is evaluated (derived from `overhead_per_byte`).
    #[cfg_attr(feature = "serde", serde(skip_serializing))]
    overhead_cost: SizeCost,
    /// `s · l(s, d)` as it is evaluated (derived from `latency_per_byte`).
    #[cfg_attr(feature = "serde", serde(skip_serializing))]
    latency_cost: Option<StrideCost>,
}

impl MemoryLogP {
    /// Builds memory logP from the per-byte overhead `o(s)` and latency `l(s, d)` (seconds per
    /// byte), the word size `w_m` and the unit stride (bytes; usually `w_m`).
    ///
    /// # Errors
    ///
    /// [`ParameterError::NegativeCost`] for a negative entry,
    /// [`ParameterError::StridedCostAtUnitStride`] if `l` is not 0 at strides `<= unit_stride`,
    /// [`ParameterError::TooSmall`] for `word_bytes = 0`.
    pub fn new(
        overhead_per_byte: Table1D,
        latency_per_byte: Option<Table2D>,
        word_bytes: u64,
        unit_stride: u64,
    ) -> Result<Self, ParameterError> {
        overhead_per_byte.check_non_negative("overhead_per_byte")?;
        if let Some(l) = &latency_per_byte {
            l.check_strided_cost("latency_per_byte", unit_stride)?;
        }
        let overhead_cost = if overhead_per_byte.num_points() == 1 {
            SizeCost::PerByte(overhead_per_byte.clone())
        } else {
            SizeCost::Table(overhead_per_byte.times_size())
        };
        let latency_cost = latency_per_byte.as_ref().map(|l| {
            if l.sizes().len() == 1 {
                StrideCost::PerByte(l.clone())
            } else {
                StrideCost::Table(l.times_size())
            }
        });
        Ok(Self {
            overhead_per_byte,
            latency_per_byte,
            word_bytes: ParameterError::at_least("word_bytes", word_bytes, 1)?,
            unit_stride,
            overhead_cost,
            latency_cost,
        })
    }

    /// A size-independent per-byte overhead `o` (the paper's scalable case).
    ///
    /// # Errors
    ///
    /// [`ParameterError::NonFiniteEntry`] for a non-finite value (negatives are rejected by
    /// [`new`](Self::new)).
    pub fn constant_overhead(seconds_per_byte: f64) -> Result<Table1D, ParameterError> {
        Table1D::constant(seconds_per_byte)
    }

    /// `o(s)`, seconds per byte.
    pub fn overhead_per_byte(&self) -> &Table1D {
        &self.overhead_per_byte
    }

    /// `l(s, d)`, seconds per byte, if strided data was measured.
    pub fn latency_per_byte(&self) -> Option<&Table2D> {
        self.latency_per_byte.as_ref()
    }

    /// `w_m`, bytes per word.
    pub fn word_bytes(&self) -> u64 {
        self.word_bytes
    }

    /// Unit stride in bytes.
    pub fn unit_stride(&self) -> u64 {
        self.unit_stride
    }

    /// `o(s) + l(s, d)` for the message, seconds per byte: its cost divided by its size (the
    /// per-byte tables at size 0 for an empty message).
    pub fn per_byte(&self, msg: &Message) -> f64 {
        let bytes = msg.bytes();
        if bytes == 0 {
            let latency = match (&self.latency_per_byte, msg.strided_access(self.unit_stride)) {
                (Some(l), Some(d)) => l.eval(0.0, d as f64).max(0.0),
                _ => 0.0,
            };
            return self.overhead_per_byte.eval(0.0).max(0.0) + latency;
        }
        self.cost(msg) / bytes as f64
    }

    /// `s (o(s) + l(s, d))`, with the cost interpolated between measured sizes.
    fn cost(&self, msg: &Message) -> f64 {
        let bytes = msg.bytes();
        let latency = match (&self.latency_cost, msg.strided_access(self.unit_stride)) {
            (Some(l), Some(d)) => l.eval(bytes, d),
            _ => 0.0,
        };
        self.overhead_cost.eval(bytes) + latency
    }

    /// `w_m (o + l)`: the cost of one word at the message's size and distribution.
    pub fn word_cost(&self, msg: &Message) -> f64 {
        self.word_bytes as f64 * self.per_byte(msg)
    }

    /// The hop of a log_n P model that this memory communication is: its cost forms.
    fn hop(&self) -> Hop {
        let hop = Hop::new(self.overhead_cost.clone());
        match &self.latency_cost {
            Some(l) => hop.with_strided(l.clone()),
            None => hop,
        }
    }
}

impl CommModel for MemoryLogP {
    /// `s (o + l)`.
    fn p2p(&self, msg: &Message) -> f64 {
        self.cost(msg)
    }

    /// All of a memory communication is CPU time: `s (o + l)`.
    fn send_overhead(&self, msg: &Message) -> f64 {
        self.p2p(msg)
    }

    fn piecewise(&self) -> Option<&dyn PiecewiseCost> {
        Some(self)
    }
}

impl PiecewiseCost for MemoryLogP {
    /// A contiguous copy pays the interpolated `s o(s)` alone: the segment of that table.
    fn p2p_affine(&self, bytes: u64) -> Option<crate::AffineCost> {
        self.overhead_cost.affine_piece(bytes)
    }

    /// The whole cost is the sender's CPU time and the interval is that overhead: `I = T` for
    /// every message.
    fn sender_keeps_pace(&self) -> bool {
        true
    }
}

/// memory logP coupled with network LogP: memory communication at both ends (packing at the
/// source, unpacking at the target) around the network transfer.
///
/// # Formula
///
/// memory logP (Cameron & Sun 2003) §5: the LogP overhead `o_n` is replaced by the memory communication
/// of the data, `w_n (o_m + l_m)` per network word, so with `m = ⌈s / w_n⌉` network words:
///
/// ```text
/// T(s, d) = s (o_m + l_m) + L_n + (m - 1) g_n + s (o_m + l_m)
/// ```
///
/// For one network word (`s = w_n`) this is the paper's projected cost per byte
/// `(o_m + l_m) + L_n / w_n + (o_m + l_m)` (the text's `(o_m + 1)` is an OCR error for
/// `(o_m + l_m)`). The paper assumes all memory communication happens before the network
/// communication, with no overlap (an infinite network buffer); the words then leave at the
/// network gap `g_n` — the CPU cost that LogP's `max(g, o)` would add is already in the memory
/// terms. As log_n P (lognp §5): hops 0 and 2 are the memory communication, hop 1 the network.
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, LogP, MemoryLogP, MemoryNetworkLogP, Message};
///
/// let memory = MemoryLogP::new(MemoryLogP::constant_overhead(1e-9)?, None, 8, 8)?;
/// let network = LogP::new(20e-6, 2e-6, 4e-6, 1024)?;
/// let coupled = MemoryNetworkLogP::new(memory, network);
/// // 4096 B = 4 words: 2 · 4096 · 1 ns + 20 µs + 3 · 4 µs = 40.192 µs
/// assert!((coupled.p2p(&Message::contiguous(4096)) - 40.192e-6).abs() < 1e-15);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct MemoryNetworkLogP {
    memory: MemoryLogP,
    network: LogP,
}

impl MemoryNetworkLogP {
    /// Couples a memory model with a network model (both validated already).
    pub fn new(memory: MemoryLogP, network: LogP) -> Self {
        Self { memory, network }
    }

    /// The memory side.
    pub fn memory(&self) -> &MemoryLogP {
        &self.memory
    }

    /// The network side.
    pub fn network(&self) -> &LogP {
        &self.network
    }

    /// `L_n + (m - 1) g_n`.
    fn network_time(&self, msg: &Message) -> f64 {
        let words = self.network.words(msg.bytes());
        self.network.latency() + (words - 1) as f64 * self.network.gap()
    }
}

impl CommModel for MemoryNetworkLogP {
    /// `2 s (o_m + l_m) + L_n + (m - 1) g_n`.
    fn p2p(&self, msg: &Message) -> f64 {
        2.0 * self.memory.p2p(msg) + self.network_time(msg)
    }

    /// `s (o_m + l_m)`: packing.
    fn send_overhead(&self, msg: &Message) -> f64 {
        self.memory.p2p(msg)
    }

    /// `s (o_m + l_m)`: unpacking.
    fn recv_overhead(&self, msg: &Message) -> f64 {
        self.memory.p2p(msg)
    }

    /// `max(s (o_m + l_m), m g_n)`: the sender packs, the network drains at its gap.
    fn send_interval(&self, msg: &Message) -> f64 {
        let words = self.network.words(msg.bytes()) as f64;
        self.memory.p2p(msg).max(words * self.network.gap())
    }

    /// `g_n`.
    fn gap(&self, _msg: &Message) -> f64 {
        self.network.gap()
    }
}

impl From<MemoryNetworkLogP> for LogNP {
    /// lognp §5: `n = 3`; hops 0 and 2 are memory communication `s (o + l)`, hop 1 the network
    /// `L + (m - 1) g`.
    fn from(m: MemoryNetworkLogP) -> Self {
        let memory = m.memory.hop();
        LogNP::trusted(
            vec![
                memory.clone(),
                Hop::new(SizeCost::Words {
                    first_word: m.network.latency(),
                    per_extra_word: m.network.gap(),
                    word_bytes: m.network.word_bytes(),
                }),
                memory,
            ],
            m.memory.unit_stride,
        )
    }
}

impl From<MemoryLogP> for LogNP {
    /// A single hop: the memory communication `s (o + l)`.
    fn from(m: MemoryLogP) -> Self {
        LogNP::trusted(vec![m.hop()], m.unit_stride)
    }
}

/// One level of a cache hierarchy for [`CacheHierarchy`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct CacheLevel {
    /// Capacity in bytes.
    pub capacity_bytes: u64,
    /// Extra time (seconds) of a line access that misses this level (served by the next).
    pub miss_penalty: f64,
}

/// A predictor of memory logP's `l(s, d)` from the cache hierarchy — **approximate**: the paper
/// reports +80 % / −60 % accuracy for this kind of prediction; measured tables are the primary
/// input (Cameron & Sun, IPDPS 2003).
///
/// # Formula
///
/// memory logP §8: the average access time `Σ_j (1 - P_j) T_j` over levels `j` with capacity
/// `S_j`, where an access hits level `j` when its reuse (stack) distance is below `S_j`. For the
/// regular, repeated strided copies of the benchmark the reuse distance of every line is the
/// footprint of one pass, so with `N(s, d)` the distinct lines touched (source strided, exact by
/// [`crate::mlines`], plus the contiguous destination) and `F = N · L` the footprint:
///
/// ```text
/// time(s, d) = N(s, d) · Σ_{j : F > S_j} T_j
/// l(s, d)    = max(0, time(s, d) - time(s, e)) / s        (e = element size, unit stride)
/// ```
///
/// where `T_j` is level `j`'s miss penalty. This reproduces the plateaus of the paper's Fig. 5:
/// `l` steps up when the footprint outgrows a level. It ignores associativity conflicts, the TLB
/// and overlap (the paper's assumptions).
///
/// # Examples
///
/// ```
/// use commcost::presets;
///
/// // Pentium III (memory logP §6): 4 KiB of ints at stride 64: 1024 + 128 lines of 32 B =
/// // 36 KiB > 16 KiB L1, so 1152 · 7 cycles; contiguous: 8 KiB fits in L1, 0 cycles
/// let p3 = presets::pentium3_beowulf_caches();
/// let cycle = 1.0 / 933e6;
/// let l = p3.latency_per_byte(4096, 4, 64);
/// assert!((l - 1152.0 * 7.0 * cycle / 4096.0).abs() < 1e-18);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "CacheHierarchyFields")
)]
pub struct CacheHierarchy {
    line_bytes: u64,
    levels: Vec<CacheLevel>,
}

/// Private fields, no public form: loading re-runs [`CacheHierarchy::new`]'s validation.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CacheHierarchyFields {
    line_bytes: u64,
    levels: Vec<CacheLevel>,
}

#[cfg(feature = "serde")]
impl TryFrom<CacheHierarchyFields> for CacheHierarchy {
    type Error = ParameterError;
    fn try_from(f: CacheHierarchyFields) -> Result<Self, Self::Error> {
        CacheHierarchy::new(f.line_bytes, f.levels)
    }
}

impl CacheHierarchy {
    /// A hierarchy with one line size and levels ordered from the smallest (L1) outwards.
    ///
    /// # Errors
    ///
    /// [`ParameterError::TooSmall`] for `line_bytes = 0`, [`ParameterError::EmptyChain`]
    /// without levels, [`ParameterError::InChain`] for a negative or non-finite penalty or a
    /// level not larger than the one before.
    pub fn new(line_bytes: u64, levels: Vec<CacheLevel>) -> Result<Self, ParameterError> {
        ParameterError::at_least("line_bytes", line_bytes, 1)?;
        if levels.is_empty() {
            return Err(ParameterError::EmptyChain { name: "levels" });
        }
        let mut previous: u64 = 0;
        for (i, level) in levels.iter().enumerate() {
            let in_level = ParameterError::in_chain("cache level", i);
            ParameterError::non_negative("miss_penalty", level.miss_penalty).map_err(in_level)?;
            // checked: no level can follow one of u64::MAX bytes
            let min = previous.checked_add(1).ok_or(ParameterError::TooSmall {
                name: "capacity_bytes (no level can follow one of u64::MAX bytes)",
                value: level.capacity_bytes,
                min: u64::MAX,
            });
            min.and_then(|min| {
                ParameterError::at_least("capacity_bytes", level.capacity_bytes, min)
            })
            .map_err(ParameterError::in_chain("cache level", i))?;
            previous = level.capacity_bytes;
        }
        Ok(Self { line_bytes, levels })
    }

    /// A hierarchy the crate knows to be valid (presets); a unit test re-validates it.
    pub(crate) fn trusted(line_bytes: u64, levels: Vec<CacheLevel>) -> Self {
        Self { line_bytes, levels }
    }

    /// Bytes per line.
    pub fn line_bytes(&self) -> u64 {
        self.line_bytes
    }

    /// The levels, smallest first.
    pub fn levels(&self) -> &[CacheLevel] {
        &self.levels
    }

    /// Extra time per line access for a footprint of `footprint` bytes: the penalties of every
    /// level it does not fit in.
    pub fn access_penalty(&self, footprint: u128) -> f64 {
        self.levels
            .iter()
            .filter(|level| footprint > u128::from(level.capacity_bytes))
            .map(|level| level.miss_penalty)
            .sum()
    }

    /// Predicted extra time of one pass of copying `bytes` bytes of `element`-byte elements read
    /// at stride `stride` into a contiguous buffer.
    pub fn copy_time(&self, bytes: u64, element: u64, stride: u64) -> f64 {
        let element = element.max(1);
        let count = bytes.div_ceil(element);
        let stride = stride.max(element);
        let source = vector_lines(count, element, stride, 0, self.line_bytes).unwrap_or(0);
        let destination = u128::from(bytes.div_ceil(self.line_bytes));
        let lines = source + destination;
        // saturating: only compared with capacities of at most u64::MAX bytes
        let footprint = lines.saturating_mul(u128::from(self.line_bytes));
        lines as f64 * self.access_penalty(footprint)
    }

    /// Predicted `l(s, d)` in seconds per byte for `element`-byte elements at stride `stride`.
    pub fn latency_per_byte(&self, bytes: u64, element: u64, stride: u64) -> f64 {
        if bytes == 0 {
            return 0.0;
        }
        let extra =
            self.copy_time(bytes, element, stride) - self.copy_time(bytes, element, element);
        extra.max(0.0) / bytes as f64
    }

    /// A predicted `l(s, d)` table for [`MemoryLogP`], on the given sizes and strides (strides
    /// at or below `element` get 0, as unit stride must).
    ///
    /// # Errors
    ///
    /// As [`Table2D::new`] for empty or unsorted axes.
    pub fn latency_table(
        &self,
        sizes: &[u64],
        strides: &[u64],
        element: u64,
    ) -> Result<Table2D, ParameterError> {
        let values = sizes
            .iter()
            .map(|&s| {
                strides
                    .iter()
                    .map(|&d| {
                        if d <= element {
                            0.0
                        } else {
                            self.latency_per_byte(s, element, d)
                        }
                    })
                    .collect()
            })
            .collect();
        Table2D::new(
            sizes.iter().map(|&s| s as f64).collect(),
            strides.iter().map(|&d| d as f64).collect(),
            values,
        )
    }
}

/// Memory logP's parameters by name, for [`MemoryLogP::from_params`].
///
/// # Examples
///
/// ```
/// use commcost::MemoryLogP;
/// use commcost::models::memory_logp::MemoryLogPParams;
/// let params = MemoryLogPParams {
///     overhead_per_byte: MemoryLogP::constant_overhead(0.5e-9)?,
///     latency_per_byte: None,
///     word_bytes: 8,
///     unit_stride: 8,
/// };
/// assert_eq!(MemoryLogP::from_params(params)?.word_bytes(), 8);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct MemoryLogPParams {
    /// `o(s)`: copy overhead per byte by size (seconds per byte).
    pub overhead_per_byte: Table1D,
    /// `l(s, d)`: extra per-byte latency of strided data (seconds per byte), if measured.
    pub latency_per_byte: Option<Table2D>,
    /// `w_m`: word size, bytes.
    pub word_bytes: u64,
    /// Unit stride, bytes (usually `w_m`).
    pub unit_stride: u64,
}

impl MemoryLogP {
    /// [`new`](Self::new) with named parameters.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn from_params(params: MemoryLogPParams) -> Result<Self, ParameterError> {
        Self::new(
            params.overhead_per_byte,
            params.latency_per_byte,
            params.word_bytes,
            params.unit_stride,
        )
    }
}

impl From<MemoryLogP> for MemoryLogPParams {
    /// The parameters by name (the form `MemoryLogP` is stored in).
    fn from(m: MemoryLogP) -> Self {
        Self {
            overhead_per_byte: m.overhead_per_byte,
            latency_per_byte: m.latency_per_byte,
            word_bytes: m.word_bytes,
            unit_stride: m.unit_stride,
        }
    }
}

impl TryFrom<MemoryLogPParams> for MemoryLogP {
    type Error = ParameterError;
    /// As [`MemoryLogP::from_params`].
    fn try_from(params: MemoryLogPParams) -> Result<Self, Self::Error> {
        Self::from_params(params)
    }
}
