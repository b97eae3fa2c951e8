//! The copy-transfer model (Stricker & Gross): a communication as a chain of hardware copies and
//! transfers, each with a throughput that depends on the access pattern.

use crate::error::ParameterError;
use crate::models::lognp::{Hop, LogNP, SizeCost, StrideCost};
use crate::table::Table1D;
use crate::table::Table2D;
use crate::{CommModel, Message, PiecewiseCost};

/// One stage of a [`CopyTransfer`] chain: a local copy or a transfer across the interconnect.
///
/// Its throughput is `contiguous_bandwidth` for contiguous data and, for strided data, the
/// `strided_bandwidth` table by stride. Between measured strides the **time per byte**
/// (`1 / bandwidth`, the quantity that adds up along a chain) is interpolated linearly; outside
/// the measured strides it is clamped to the nearest one.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "StageFields")
)]
pub struct Stage {
    name: String,
    contiguous_bandwidth: f64,
    strided_bandwidth: Option<Table1D>,
    startup: f64,
    /// `1 / strided_bandwidth` at the same strides (derived, for evaluation).
    #[cfg_attr(feature = "serde", serde(skip_serializing))]
    strided_time_per_byte: Option<Table1D>,
}

/// Private fields, no public form: loading re-runs [`Stage::new`]'s validation.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct StageFields {
    name: String,
    contiguous_bandwidth: f64,
    strided_bandwidth: Option<Table1D>,
    startup: f64,
}

#[cfg(feature = "serde")]
impl TryFrom<StageFields> for Stage {
    type Error = ParameterError;
    fn try_from(f: StageFields) -> Result<Self, Self::Error> {
        let stage = Stage::new(f.name, f.contiguous_bandwidth, f.startup)?;
        match f.strided_bandwidth {
            Some(t) => stage.with_strided_bandwidth(t.sizes().to_vec(), t.values().to_vec()),
            None => Ok(stage),
        }
    }
}

impl Stage {
    /// A stage with a contiguous bandwidth (bytes per second) and a start-up cost (seconds).
    ///
    /// # Errors
    ///
    /// [`ParameterError::OutOfRange`] for a bandwidth that is not finite and > 0, or a negative
    /// start-up cost.
    pub fn new(
        name: impl Into<String>,
        contiguous_bandwidth: f64,
        startup: f64,
    ) -> Result<Self, ParameterError> {
        Ok(Self {
            name: name.into(),
            contiguous_bandwidth: ParameterError::positive(
                "contiguous_bandwidth",
                contiguous_bandwidth,
            )?,
            strided_bandwidth: None,
            startup: ParameterError::non_negative("startup", startup)?,
            strided_time_per_byte: None,
        })
    }

    /// The same stage with bandwidths (bytes per second) measured at strides (bytes).
    ///
    /// # Errors
    ///
    /// As [`Table1D::new`] for the axis; [`ParameterError::OutOfRange`] for a bandwidth that is
    /// not finite and > 0; [`ParameterError::StridedFasterThanContiguous`] for a strided
    /// bandwidth above the contiguous one.
    pub fn with_strided_bandwidth(
        mut self,
        strides: Vec<f64>,
        bandwidths: Vec<f64>,
    ) -> Result<Self, ParameterError> {
        for (&stride, &value) in strides.iter().zip(&bandwidths) {
            ParameterError::positive("strided_bandwidth", value)?;
            if value > self.contiguous_bandwidth {
                return Err(ParameterError::StridedFasterThanContiguous {
                    name: "strided_bandwidth",
                    stride,
                    value,
                    contiguous: self.contiguous_bandwidth,
                });
            }
        }
        let times = bandwidths.iter().map(|b| 1.0 / b).collect();
        let table = Table1D::new(strides, bandwidths)?;
        self.strided_time_per_byte = Some(Table1D::new(table.sizes().to_vec(), times)?);
        self.strided_bandwidth = Some(table);
        Ok(self)
    }

    /// The stage's name ("pack", "DMA", "wire", ...).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes per second for contiguous data.
    pub fn contiguous_bandwidth(&self) -> f64 {
        self.contiguous_bandwidth
    }

    /// Bytes per second by stride, if measured (the table's axis holds strides).
    pub fn strided_bandwidth(&self) -> Option<&Table1D> {
        self.strided_bandwidth.as_ref()
    }

    /// Fixed cost per use, seconds.
    pub fn startup(&self) -> f64 {
        self.startup
    }

    /// Seconds per byte at `stride` (`None`: contiguous).
    #[inline]
    pub fn time_per_byte(&self, stride: Option<u64>) -> f64 {
        match stride {
            Some(d) => self.strided_time_at(d as f64),
            None => 1.0 / self.contiguous_bandwidth,
        }
    }

    /// Seconds per byte of strided data at a (real) stride: the interpolated table, clamped to
    /// its strides, or the contiguous rate when no table was measured.
    fn strided_time_at(&self, stride: f64) -> f64 {
        match &self.strided_time_per_byte {
            Some(t) => {
                let axis = t.sizes();
                t.eval(stride.clamp(axis[0], axis[axis.len() - 1]))
            }
            None => 1.0 / self.contiguous_bandwidth,
        }
    }

    fn check_unit_stride(&self, unit_stride: u64) -> Result<(), ParameterError> {
        let Some(t) = &self.strided_time_per_byte else {
            return Ok(());
        };
        let contiguous = 1.0 / self.contiguous_bandwidth;
        for (&stride, &time) in t.sizes().iter().zip(t.values()) {
            if stride <= unit_stride as f64 && time - contiguous != 0.0 {
                return Err(ParameterError::StridedCostAtUnitStride {
                    name: "strided_bandwidth",
                    unit_stride,
                    stride,
                    value: time - contiguous,
                });
            }
        }
        Ok(())
    }
}

/// How the stages of a chain combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Composition {
    /// One stage after the other (store and forward): `Σ_i (startup_i + s / bw_i(d))` — the
    /// paper's composition, and the log_n P reduction of eq. (2).
    Sequential,
    /// Stages overlap (pipelined, e.g. DMA): the chain runs at its slowest stage,
    /// `Σ_i startup_i + s / min_i bw_i(d)`.
    Pipelined,
}

/// The copy-transfer model: a chain of copies and transfers.
///
/// # Formula
///
/// Cameron, Ge & Sun 2007 §5; Stricker & Gross 1995; with `t_i(d) = 1 / bw_i(d)` seconds per byte (contiguous bandwidth for
/// messages that are not strided by [`Message::strided_access`]):
///
/// ```text
/// sequential   T(s, d) = Σ_i (startup_i + s t_i(d))
/// pipelined    T(s, d) = Σ_i startup_i + s max_i t_i(d)
/// ```
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, CopyTransfer, Message};
/// use commcost::models::copy_transfer::Composition;
/// use commcost::models::copy_transfer::Stage;
///
/// let pack = Stage::new("pack", 4e9, 0.0)?.with_strided_bandwidth(vec![8.0, 64.0], vec![4e9, 1e9])?;
/// let wire = Stage::new("wire", 1e9, 5e-6)?;
/// let chain = CopyTransfer::new(vec![pack, wire], Composition::Sequential, 8)?;
/// // 64 KiB contiguous: 65536 / 4e9 + 5 µs + 65536 / 1e9 = 16.384 + 5 + 65.536 µs
/// let t = chain.p2p(&Message::contiguous(65536));
/// assert!((t - 86.92e-6).abs() < 1e-12);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
///
/// # References
///
/// T. Stricker, T. Gross, "Optimizing memory system performance for communication in parallel
/// computers", ISCA 1995; lognp-log3p §5.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "CopyTransferParams", into = "CopyTransferParams")
)]
pub struct CopyTransfer {
    stages: Vec<Stage>,
    composition: Composition,
    unit_stride: u64,
}

impl CopyTransfer {
    /// A chain of stages.
    ///
    /// # Errors
    ///
    /// [`ParameterError::EmptyChain`] without stages; [`ParameterError::InChain`] around
    /// [`ParameterError::StridedCostAtUnitStride`] if a stage's strided bandwidth at a stride
    /// `<= unit_stride` differs from its contiguous bandwidth.
    pub fn new(
        stages: Vec<Stage>,
        composition: Composition,
        unit_stride: u64,
    ) -> Result<Self, ParameterError> {
        if stages.is_empty() {
            return Err(ParameterError::EmptyChain { name: "stages" });
        }
        for (i, stage) in stages.iter().enumerate() {
            stage
                .check_unit_stride(unit_stride)
                .map_err(ParameterError::in_chain("stage", i))?;
        }
        Ok(Self {
            stages,
            composition,
            unit_stride,
        })
    }

    /// The stages, in order.
    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// How the stages combine.
    pub fn composition(&self) -> Composition {
        self.composition
    }

    /// Unit stride in bytes.
    pub fn unit_stride(&self) -> u64 {
        self.unit_stride
    }

    /// Each stage's time `startup_i + s t_i(d)` for a message.
    pub fn stage_times(&self, msg: &Message) -> Vec<f64> {
        let (s, d) = (msg.bytes() as f64, msg.strided_access(self.unit_stride));
        self.stages
            .iter()
            .map(|st| st.startup + s * st.time_per_byte(d))
            .collect()
    }
}

impl CommModel for CopyTransfer {
    /// Sequential `Σ (startup_i + s t_i(d))`, pipelined `Σ startup_i + s max_i t_i(d)`.
    fn p2p(&self, msg: &Message) -> f64 {
        let (s, d) = (msg.bytes() as f64, msg.strided_access(self.unit_stride));
        match self.composition {
            Composition::Sequential => self
                .stages
                .iter()
                .map(|st| st.startup + s * st.time_per_byte(d))
                .sum(),
            Composition::Pipelined => {
                let startup: f64 = self.stages.iter().map(|st| st.startup).sum();
                let slowest = self
                    .stages
                    .iter()
                    .map(|st| st.time_per_byte(d))
                    .fold(0.0, f64::max);
                startup + s * slowest
            }
        }
    }

    /// How soon the sender can start its next message: not before this one's bytes have left
    /// it. A sequential chain performs its stages one after another on the same data path, so
    /// the next message waits for the whole chain (`Σ (startup_i + s t_i(d))`, the `p2p`); a
    /// pipelined chain accepts the next message once its slowest stage has passed this one,
    /// `max_i startup_i + s max_i t_i(d)`. Either way `k` pieces of a message never leave
    /// faster than the message itself: `p2p(s / k) + (k - 1) interval(s / k) >= p2p(s)`.
    ///
    /// ```
    /// use commcost::{CommModel, CopyTransfer, Message};
    /// use commcost::models::copy_transfer::Composition;
    /// use commcost::models::copy_transfer::Stage;
    /// // two stages of 1 µs startup at 1 GB/s and 0.5 GB/s
    /// let stages = vec![Stage::new("copy", 1e9, 1e-6)?, Stage::new("wire", 0.5e9, 1e-6)?];
    /// let sequential = CopyTransfer::new(stages.clone(), Composition::Sequential, 8)?;
    /// let pipelined = CopyTransfer::new(stages, Composition::Pipelined, 8)?;
    /// let msg = Message::contiguous(1000);
    /// assert_eq!(sequential.send_interval(&msg), sequential.p2p(&msg)); // 2 + 1 + 2 µs
    /// // max startup 1 µs + 1000 B at the slower 0.5 GB/s = 3 µs
    /// assert!((pipelined.send_interval(&msg) - 3e-6).abs() < 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn send_interval(&self, msg: &Message) -> f64 {
        match self.composition {
            Composition::Sequential => self.p2p(msg),
            Composition::Pipelined => {
                let (s, d) = (msg.bytes() as f64, msg.strided_access(self.unit_stride));
                let startup = self.stages.iter().map(|st| st.startup).fold(0.0, f64::max);
                let slowest = self
                    .stages
                    .iter()
                    .map(|st| st.time_per_byte(d))
                    .fold(0.0, f64::max);
                startup + s * slowest
            }
        }
    }

    fn piecewise(&self) -> Option<&dyn PiecewiseCost> {
        Some(self)
    }
}

impl PiecewiseCost for CopyTransfer {
    /// A contiguous message costs `Σ startup_i + s Σ_i 1/bw_i` (sequential) or
    /// `Σ startup_i + s max_i 1/bw_i` (pipelined): one line on every size.
    fn p2p_affine(&self, _bytes: u64) -> Option<crate::AffineCost> {
        let startup: f64 = self.stages.iter().map(|st| st.startup).sum();
        let rates = self.stages.iter().map(|st| st.time_per_byte(None));
        let per_byte = match self.composition {
            Composition::Sequential => rates.sum(),
            Composition::Pipelined => rates.fold(0.0, f64::max),
        };
        Some(crate::AffineCost::everywhere(startup, per_byte))
    }

    /// `I <= T` for every message: sequential `I = T`; pipelined `I = max_i startup_i + s
    /// max_i t_i(d) <= Σ startup_i + s max_i t_i(d) = T` (startups are non-negative).
    fn sender_keeps_pace(&self) -> bool {
        true
    }
}

/// `l(d) = t(d) - t_contiguous` as a one-row per-byte stride table over `strides` (bytes).
fn per_byte_extra(strides: Vec<f64>, extra: Vec<f64>) -> StrideCost {
    StrideCost::PerByte(Table2D::trusted_row(strides, extra))
}

impl From<CopyTransfer> for LogNP {
    /// lognp §5: `n` = the number of hardware transfers, each `f = s / bw_i(d)`.
    ///
    /// Sequential chains become one hop per stage: `o_i = startup_i + s / bw_i`, and
    /// `l_i = s (t_i(d) - 1/bw_i)` on the stage's strides. A pipelined chain becomes one hop whose
    /// per-byte time is the upper envelope `max_i t_i(d)`, tabulated exactly: on the union of the
    /// stages' strides plus every crossing of two stages' lines (the envelope of linear pieces is
    /// linear between those points), from the first strided stride `unit_stride + 1` on.
    fn from(m: CopyTransfer) -> Self {
        let hops = match m.composition {
            Composition::Sequential => m
                .stages
                .iter()
                .map(|st| {
                    let contiguous = 1.0 / st.contiguous_bandwidth;
                    let hop = Hop::new(SizeCost::Linear {
                        fixed: st.startup,
                        per_byte: contiguous,
                    });
                    match &st.strided_time_per_byte {
                        Some(t) => hop.with_strided(per_byte_extra(
                            t.sizes().to_vec(),
                            t.values().iter().map(|v| v - contiguous).collect(),
                        )),
                        None => hop,
                    }
                })
                .collect(),
            Composition::Pipelined => vec![pipelined_hop(&m)],
        };
        LogNP::trusted(hops, m.unit_stride)
    }
}

fn pipelined_hop(m: &CopyTransfer) -> Hop {
    let startup = m.stages.iter().map(|st| st.startup).sum();
    let contiguous = m
        .stages
        .iter()
        .map(|st| 1.0 / st.contiguous_bandwidth)
        .fold(0.0, f64::max);
    let hop = Hop::new(SizeCost::Linear {
        fixed: startup,
        per_byte: contiguous,
    });
    if m.stages.iter().all(|st| st.strided_time_per_byte.is_none()) {
        return hop;
    }
    // strided messages have integer strides >= unit + 1: tabulate from there on
    // saturating: at unit stride u64::MAX no message is strided
    let first = m.unit_stride.saturating_add(1) as f64;
    let mut grid: Vec<f64> = m
        .stages
        .iter()
        .filter_map(|st| st.strided_time_per_byte.as_ref())
        .flat_map(|t| t.sizes().iter().copied())
        .filter(|&x| x > first)
        .chain(std::iter::once(first))
        .collect();
    grid.sort_by(f64::total_cmp);
    grid.dedup();
    let envelope = |d: f64| {
        m.stages
            .iter()
            .map(|st| st.strided_time_at(d))
            .fold(0.0, f64::max)
    };
    // every stage is linear between consecutive grid points; add where two of them cross
    let mut points = grid.clone();
    for pair in grid.windows(2) {
        let (x0, x1) = (pair[0], pair[1]);
        for (i, a) in m.stages.iter().enumerate() {
            for b in &m.stages[i + 1..] {
                let d0 = a.strided_time_at(x0) - b.strided_time_at(x0);
                let d1 = a.strided_time_at(x1) - b.strided_time_at(x1);
                if (d0 < 0.0 && d1 > 0.0) || (d0 > 0.0 && d1 < 0.0) {
                    let crossing = x0 + (x1 - x0) * (d0 / (d0 - d1));
                    if crossing > x0 && crossing < x1 {
                        points.push(crossing);
                    }
                }
            }
        }
    }
    points.sort_by(f64::total_cmp);
    points.dedup();
    let extra = points.iter().map(|&d| envelope(d) - contiguous).collect();
    hop.with_strided(per_byte_extra(points, extra))
}

/// The copy-transfer model's parameters by name, for [`CopyTransfer::from_params`]; with the
/// `serde` feature the form a [`CopyTransfer`] is stored in.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct CopyTransferParams {
    /// The copies and transfers, in order.
    pub stages: Vec<Stage>,
    /// How the stages combine.
    pub composition: Composition,
    /// Unit stride in bytes: messages whose stride is at or below it pay no strided cost.
    pub unit_stride: u64,
}

impl CopyTransfer {
    /// Builds the model from its parameters by name (the form it is stored in).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn from_params(params: CopyTransferParams) -> Result<Self, ParameterError> {
        Self::new(params.stages, params.composition, params.unit_stride)
    }
}

impl TryFrom<CopyTransferParams> for CopyTransfer {
    type Error = ParameterError;
    /// As [`CopyTransfer::from_params`].
    fn try_from(params: CopyTransferParams) -> Result<Self, Self::Error> {
        Self::from_params(params)
    }
}

impl From<CopyTransfer> for CopyTransferParams {
    /// The parameters by name.
    fn from(m: CopyTransfer) -> Self {
        Self {
            stages: m.stages,
            composition: m.composition,
            unit_stride: m.unit_stride,
        }
    }
}
