//! log_3 P (Cameron, Ge & Sun): log_n P with three hops — source middleware, network,
//! destination middleware.

use super::lognp::{Hop, LogNP, SizeCost, StrideCost};
use crate::error::ParameterError;
use crate::table::Table1D;
use crate::table::Table2D;
use crate::{CommModel, Message, PiecewiseCost};

/// The three named components of a log_3 P prediction, for "which part dominates" analysis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Log3PBreakdown {
    /// `o_mw(s)`: middleware overhead, source and target together.
    pub middleware_overhead: f64,
    /// `l_mw(s, d)`: middleware latency of strided data, source and target together.
    pub middleware_latency: f64,
    /// `o_net(s)`: network (interconnect) cost.
    pub network_overhead: f64,
}

impl Log3PBreakdown {
    /// `o_mw + l_mw + o_net`.
    pub fn total(&self) -> f64 {
        self.middleware_overhead + self.middleware_latency + self.network_overhead
    }

    /// `o_mw + l_mw`: everything the middleware costs.
    pub fn middleware(&self) -> f64 {
        self.middleware_overhead + self.middleware_latency
    }
}

/// The log_3 P model: log_n P with three hops — source middleware (with the memory
/// hierarchy), interconnect, target middleware.
///
/// # Formula
///
/// lognp eq. (5)-(6):
///
/// ```text
/// T = o_mw(s) + l_mw(s, d) + o_net(s)        o_mw = o_0 + o_2,  l_mw = l_0 + l_2,  o_net = o_1
/// ```
///
/// with `l_1 = 0` and a symmetric split: each middleware side carries `o_mw / 2` and `l_mw / 2`.
/// The send and receive overheads are therefore `(o_mw + l_mw) / 2`, which makes the generic
/// linear broadcast `p2p + (P - 2) · interval` equal the paper's `P (o_mw/2 + l_mw/2) + o_net`.
/// `l_mw` is read only for strided messages ([`Message::strided_access`]).
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, Message, presets};
///
/// // Titan (IA-64 + Myrinet), 16 KiB at 1 KiB stride: 29 + 420 + 131 = 580 µs, as measured
/// let titan = presets::titan_log3p();
/// let msg = Message::vector(2048, 8, 1024)?;
/// assert!((titan.p2p(&msg) - 580e-6).abs() < 1e-12);
/// # Ok::<(), commcost::MessageError>(())
/// ```
///
/// # References
///
/// Cameron, Ge & Sun 2007 (see [`LogNP`]), §2.2 and §4.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "Log3PParams", into = "Log3PParams")
)]
pub struct Log3P {
    middleware_overhead: Table1D,
    middleware_latency: Table2D,
    network_overhead: Table1D,
    unit_stride: u64,
}

impl Log3P {
    /// Builds log_3 P from measured `o_mw(s)`, `l_mw(s, d)` and `o_net(s)` (seconds).
    ///
    /// # Errors
    ///
    /// [`ParameterError::NegativeCost`] for a negative entry;
    /// [`ParameterError::StridedCostAtUnitStride`] if `l_mw` is not 0 at strides
    /// `<= unit_stride`.
    pub fn new(
        middleware_overhead: Table1D,
        middleware_latency: Table2D,
        network_overhead: Table1D,
        unit_stride: u64,
    ) -> Result<Self, ParameterError> {
        middleware_overhead.check_non_negative("middleware_overhead")?;
        middleware_latency.check_strided_cost("middleware_latency", unit_stride)?;
        network_overhead.check_non_negative("network_overhead")?;
        Ok(Self {
            middleware_overhead,
            middleware_latency,
            network_overhead,
            unit_stride,
        })
    }

    /// Single-point log_3 P: constants measured at one size `size` and one stride `stride`
    /// (which must exceed `unit_stride`); every size and stride then gets these values.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), plus [`ParameterError::NonFiniteEntry`] for non-finite values.
    pub fn from_constants(
        middleware_overhead: f64,
        middleware_latency: f64,
        network_overhead: f64,
        size: u64,
        stride: u64,
        unit_stride: u64,
    ) -> Result<Self, ParameterError> {
        let s = size as f64;
        Self::new(
            Table1D::new(vec![s], vec![middleware_overhead])?,
            Table2D::new(vec![s], vec![stride as f64], vec![vec![middleware_latency]])?,
            Table1D::new(vec![s], vec![network_overhead])?,
            unit_stride,
        )
    }

    /// [`from_constants`](Self::from_constants) for values the crate knows to be valid
    /// (embedded presets); a unit test re-validates every use.
    pub(crate) fn trusted_constants(
        middleware_overhead: f64,
        middleware_latency: f64,
        network_overhead: f64,
        size: u64,
        stride: u64,
        unit_stride: u64,
    ) -> Self {
        let s = size as f64;
        Self {
            middleware_overhead: Table1D::trusted_point(s, middleware_overhead),
            middleware_latency: Table2D::trusted_point(s, stride as f64, middleware_latency),
            network_overhead: Table1D::trusted_point(s, network_overhead),
            unit_stride,
        }
    }

    /// `o_mw(s)`.
    pub fn middleware_overhead(&self) -> &Table1D {
        &self.middleware_overhead
    }

    /// `l_mw(s, d)`.
    pub fn middleware_latency(&self) -> &Table2D {
        &self.middleware_latency
    }

    /// `o_net(s)`.
    pub fn network_overhead(&self) -> &Table1D {
        &self.network_overhead
    }

    /// Unit stride in bytes.
    pub fn unit_stride(&self) -> u64 {
        self.unit_stride
    }

    fn latency_at(&self, size: f64, stride: Option<u64>) -> f64 {
        stride.map_or(0.0, |d| {
            self.middleware_latency.eval(size, d as f64).max(0.0)
        })
    }

    /// The three components of the prediction for `msg`.
    pub fn breakdown(&self, msg: &Message) -> Log3PBreakdown {
        let s = msg.bytes() as f64;
        Log3PBreakdown {
            middleware_overhead: self.middleware_overhead.eval(s).max(0.0),
            middleware_latency: self.latency_at(s, msg.strided_access(self.unit_stride)),
            network_overhead: self.network_overhead.eval(s).max(0.0),
        }
    }

    /// Predicted send-to-self half round trip, `T00(s, d) = o_mw + l_mw + T_mem(s)` (lognp §4.1),
    /// with `memory_time` the measured memory-copy time `T_mem(s)`.
    pub fn send_to_self(&self, msg: &Message, memory_time: f64) -> f64 {
        self.breakdown(msg).middleware() + memory_time
    }

    /// The smallest message size (bytes) at which the middleware cost `o_mw(s) + l_mw(s, d)`
    /// exceeds the network cost `o_net(s)` for strided messages at stride `stride`, searched over
    /// the sizes the tables span (`None` if it never does there). Right of it, messages are
    /// middleware-bound (lognp §4.2).
    ///
    /// Exact for the piecewise-linear tables: the difference is linear between consecutive
    /// breakpoints of the three tables, so each segment's root is solved directly.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::Log3P;
    /// use commcost::table::Table1D;
    /// use commcost::table::Table2D;
    ///
    /// // o_mw = 10 + s/1000 µs, l_mw = s/500 µs at stride 64, o_net = 20.001 + s/1000 µs:
    /// // 10 + 0.001 s + 0.002 s > 20.001 + 0.001 s  ⇔  s > 5000.5
    /// let t = |a: f64, b: f64| Table1D::new(vec![0.0, 1e5], vec![a, a + 1e5 * b]).unwrap();
    /// let l = Table2D::new(vec![0.0, 1e5], vec![64.0], vec![vec![0.0], vec![200.0e-6]])?;
    /// let m = Log3P::new(t(10e-6, 1e-9), l, t(20.001e-6, 1e-9), 8)?;
    /// assert_eq!(m.middleware_crossover(64), Some(5001));
    /// assert_eq!(m.middleware_crossover(8), None); // unit stride: no l_mw, never
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    pub fn middleware_crossover(&self, stride: u64) -> Option<u64> {
        // a strided message at this stride pays l_mw iff the stride exceeds the unit
        // (Message::strided_access)
        let strided = (stride > self.unit_stride).then_some(stride);
        let difference = |s: f64| {
            self.middleware_overhead.eval(s).max(0.0) + self.latency_at(s, strided)
                - self.network_overhead.eval(s).max(0.0)
        };
        let mut points: Vec<f64> = self
            .middleware_overhead
            .sizes()
            .iter()
            .chain(self.middleware_latency.sizes())
            .chain(self.network_overhead.sizes())
            .copied()
            .filter(|s| *s >= 0.0)
            .collect();
        points.sort_by(f64::total_cmp);
        points.dedup();
        let first = *points.first()?;
        // the smallest integer size above a point where the difference becomes positive
        let smallest_above = |x: f64| {
            let candidate = x.ceil();
            let candidate = if difference(candidate) > 0.0 {
                candidate
            } else {
                candidate + 1.0
            };
            candidate as u64
        };
        if difference(first.ceil()) > 0.0 {
            return Some(first.ceil() as u64);
        }
        for pair in points.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let (da, db) = (difference(a), difference(b));
            if db > 0.0 {
                // da <= 0 < db: the root of the linear segment
                let root = a + (b - a) * (-da / (db - da));
                return Some(smallest_above(root).min(b.ceil() as u64));
            }
        }
        None
    }
}

impl CommModel for Log3P {
    /// `o_mw + l_mw + o_net`.
    fn p2p(&self, msg: &Message) -> f64 {
        self.breakdown(msg).total()
    }

    /// `(o_mw + l_mw) / 2`.
    fn send_overhead(&self, msg: &Message) -> f64 {
        self.breakdown(msg).middleware() / 2.0
    }

    /// `(o_mw + l_mw) / 2`.
    fn recv_overhead(&self, msg: &Message) -> f64 {
        self.breakdown(msg).middleware() / 2.0
    }

    fn piecewise(&self) -> Option<&dyn PiecewiseCost> {
        Some(self)
    }
}

impl PiecewiseCost for Log3P {
    /// Always: the interval is the send overhead `(o_mw + l_mw) / 2` (the trait's default), at
    /// most `T = o_mw + l_mw + o_net` with every term non-negative (Cameron, Ge & Sun, IEEE TC
    /// 2007, eq. (5)-(6)); halving and adding non-negative numbers keep that order in floating
    /// point.
    fn sender_keeps_pace(&self) -> bool {
        true
    }

    /// The constant 0 on every size: the lag `I - T = -(o_mw + l_mw) / 2 - o_net` is never
    /// positive, and a line `<= 0` wherever `I - T` is `<= 0` is all the contract asks there.
    fn send_lag_affine(&self, _bytes: u64) -> Option<crate::AffineCost> {
        Some(crate::AffineCost::everywhere(0.0, 0.0))
    }

    /// A contiguous message pays `o_mw(s) + o_net(s)` (no strided latency): the sum of the two
    /// tables' segments, where both stay non-negative.
    fn p2p_affine(&self, bytes: u64) -> Option<crate::AffineCost> {
        self.middleware_overhead
            .non_negative_affine_piece(bytes)?
            .plus(self.network_overhead.non_negative_affine_piece(bytes)?)
    }
}

impl From<Log3P> for LogNP {
    /// Hops: `(o_mw/2, l_mw/2)`, `(o_net, 0)`, `(o_mw/2, l_mw/2)` (lognp §2.2). Halving is exact
    /// in binary floating point, so the conversion predicts the same times.
    fn from(m: Log3P) -> Self {
        let middleware = Hop::new(SizeCost::Table(m.middleware_overhead.scaled(0.5)))
            .with_strided(StrideCost::Table(m.middleware_latency.scaled(0.5)));
        Self {
            hops: vec![
                middleware.clone(),
                Hop::new(SizeCost::Table(m.network_overhead)),
                middleware,
            ],
            unit_stride: m.unit_stride,
        }
    }
}

/// A single-point log_3 P measurement by name, for [`Log3P::from_point`]: the three constants
/// and where they were measured.
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, Log3P, Message};
/// use commcost::models::log3p::Log3PPoint;
/// // the Titan point of Cameron, Ge & Sun (IEEE TC 2007), §4.1, in µs
/// let titan = Log3P::from_point_micros(Log3PPoint {
///     middleware_overhead: 29.0,
///     middleware_latency: 420.0,
///     network_overhead: 131.0,
///     size: 16 * 1024,
///     stride: 1024,
///     unit_stride: 8,
/// })?;
/// let msg = Message::vector(2048, 8, 1024)?;
/// assert!((titan.p2p(&msg) - 580e-6).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Log3PPoint {
    /// `o_mw`: middleware overhead.
    pub middleware_overhead: f64,
    /// `l_mw`: middleware (strided-data) latency.
    pub middleware_latency: f64,
    /// `o_net`: network overhead.
    pub network_overhead: f64,
    /// Message size the constants were measured at (bytes).
    pub size: u64,
    /// Stride they were measured at (bytes, above `unit_stride`).
    pub stride: u64,
    /// Unit stride (bytes, usually the element size).
    pub unit_stride: u64,
}

impl Log3P {
    /// [`from_constants`](Self::from_constants) with named fields, times in seconds.
    ///
    /// # Errors
    ///
    /// As [`from_constants`](Self::from_constants).
    pub fn from_point(point: Log3PPoint) -> Result<Self, ParameterError> {
        Self::from_constants(
            point.middleware_overhead,
            point.middleware_latency,
            point.network_overhead,
            point.size,
            point.stride,
            point.unit_stride,
        )
    }

    /// [`from_point`](Self::from_point) with the times in microseconds, as the paper prints
    /// them.
    ///
    /// # Errors
    ///
    /// As [`from_constants`](Self::from_constants).
    pub fn from_point_micros(point: Log3PPoint) -> Result<Self, ParameterError> {
        Self::from_point(Log3PPoint {
            middleware_overhead: point.middleware_overhead * 1e-6,
            middleware_latency: point.middleware_latency * 1e-6,
            network_overhead: point.network_overhead * 1e-6,
            ..point
        })
    }
}

/// log_3 P's parameters by name, for [`Log3P::from_params`]; with the `serde` feature the form a
/// [`Log3P`] is stored in.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct Log3PParams {
    /// `o_mw(s)`: middleware overhead by size, seconds.
    pub middleware_overhead: Table1D,
    /// `l_mw(s, d)`: additional middleware latency of strided data by size and stride, seconds.
    pub middleware_latency: Table2D,
    /// `o_net(s)`: network overhead by size, seconds.
    pub network_overhead: Table1D,
    /// Unit stride in bytes: messages whose stride is at or below it pay no strided cost.
    pub unit_stride: u64,
}

impl Log3P {
    /// Builds the model from its parameters by name (the form it is stored in).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn from_params(params: Log3PParams) -> Result<Self, ParameterError> {
        Self::new(
            params.middleware_overhead,
            params.middleware_latency,
            params.network_overhead,
            params.unit_stride,
        )
    }
}

impl TryFrom<Log3PParams> for Log3P {
    type Error = ParameterError;
    /// As [`Log3P::from_params`].
    fn try_from(params: Log3PParams) -> Result<Self, Self::Error> {
        Self::from_params(params)
    }
}

impl From<Log3P> for Log3PParams {
    /// The parameters by name.
    fn from(m: Log3P) -> Self {
        Self {
            middleware_overhead: m.middleware_overhead,
            middleware_latency: m.middleware_latency,
            network_overhead: m.network_overhead,
            unit_stride: m.unit_stride,
        }
    }
}
