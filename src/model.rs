//! The [`CommModel`] trait every model implements.

use std::fmt::Debug;
use std::sync::Arc;

use crate::Message;

/// A communication cost model: pure functions from a [`Message`] to seconds.
///
/// # Contract
///
/// Implementations are expected to be immutable parameter sets, so that one instance can be
/// shared between threads and called concurrently (`Send + Sync`), and the trait is object safe
/// (`&dyn CommModel`, `Box<dyn CommModel>`): the collectives and the selection code never name a
/// concrete model.
///
/// Every method returns a time in **seconds** that is **finite and non-negative** for every
/// message. Models whose formula is monotone (LogP, LogGP, table models over non-decreasing
/// tables) are also **non-decreasing in [`Message::bytes`]**; a [`Protocols`](crate::Protocols)
/// model is monotone only within each size range, because a real transport may get faster when
/// it switches protocol (NMPI/SCI at 12289 bytes in the presets).
///
/// Only [`p2p`](Self::p2p) is required. The other four quantities are what the collectives are
/// built from (the `collectives` module); their defaults describe a model that knows nothing but end-to-end time:
/// no CPU overhead, no gap, and a sender that can start the next message immediately.
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, LogGP, Message};
///
/// // LogGP with L = 5 µs, o = 1 µs, g = 2 µs, G = 1 ns/byte, 2 processes
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// let dynamic: &dyn CommModel = &model;
/// // 2o + L + (s - 1) G for s = 1001 bytes
/// let t = dynamic.p2p(&Message::contiguous(1001));
/// assert!((t - (2e-6 + 5e-6 + 1000.0 * 1e-9)).abs() < 1e-15);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
pub trait CommModel: Debug + Send + Sync {
    /// End-to-end time of one point-to-point message: from the moment the sender starts sending
    /// until the receiver can use the data.
    #[must_use]
    fn p2p(&self, msg: &Message) -> f64;

    /// CPU time the sender spends on the message (LogP's `o` at the sending side).
    ///
    /// Default: 0 (a model without an overhead term).
    #[must_use]
    fn send_overhead(&self, msg: &Message) -> f64 {
        let _ = msg;
        0.0
    }

    /// CPU time the receiver spends on the message (LogP's `o` at the receiving side).
    ///
    /// Default: 0.
    #[must_use]
    fn recv_overhead(&self, msg: &Message) -> f64 {
        let _ = msg;
        0.0
    }

    /// Minimum time between the starts of two consecutive sends of this message from one
    /// process (LogP `max(g, o)`, LogGP `max(o, g + (s - 1) G)`).
    ///
    /// Default: [`send_overhead`](Self::send_overhead) — the sender is busy only while it pays
    /// its own overhead.
    #[must_use]
    fn send_interval(&self, msg: &Message) -> f64 {
        self.send_overhead(msg)
    }

    /// Idle gap a sender must leave between successive messages beyond their own cost (LogP's
    /// and LogGP's `g`); the binomial broadcast of Cameron, Ge & Sun 2007 (§4.3.3) pays it between rounds.
    ///
    /// Default: 0.
    #[must_use]
    fn gap(&self, msg: &Message) -> f64 {
        let _ = msg;
        0.0
    }

    /// All five per-message quantities at once. Collectives that need several of them for the
    /// same piece call this once; a model that shares work between them (a protocol lookup)
    /// overrides it.
    ///
    /// Default: each quantity from its own method.
    #[must_use]
    fn quantities(&self, msg: &Message) -> Quantities {
        Quantities {
            p2p: self.p2p(msg),
            send_overhead: self.send_overhead(msg),
            recv_overhead: self.recv_overhead(msg),
            send_interval: self.send_interval(msg),
            gap: self.gap(msg),
        }
    }

    /// Messages larger than this many bytes use the model's **rendezvous** protocol, smaller
    /// ones its **eager** protocol, when the model describes both: a rendezvous message
    /// leaves only once its receive is posted and its send completes with the receive. Eager
    /// and rendezvous protocols: Hoefler, Lichei & Rehm, "Low-Overhead LogGP Parameter
    /// Assessment for Modern Interconnection Networks", IPDPS 2007, Sec. 3 (Open MPI/openib
    /// switches to rendezvous at about 12 KiB, Sec. 5); LogGPO's eager limit `S` (Chen, Zhai,
    /// Zhang & Zheng, Science in China F 52(10), 2009, §2). The simulator uses it with
    /// [`SimOptions::with_protocols_of`](crate::sim::SimOptions::with_protocols_of).
    ///
    /// Default: `None` (no rendezvous protocol described: every message is eager as far as
    /// the model says).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::{CommModel, LogGP, presets};
    /// assert_eq!(presets::open_mpi_openib().rendezvous_above(), Some(12288));
    /// assert_eq!(LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?.rendezvous_above(), None);
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    fn rendezvous_above(&self) -> Option<u64> {
        None
    }

    /// The model's piecewise description of its costs ([`PiecewiseCost`]): affine pieces of
    /// `p2p` and of the sender's lag, the sizes where costs may jump, and whether a sender
    /// keeps pace with the network. Collectives use it to sum rounds in closed form; every
    /// cost they compute is the same without it, only slower.
    ///
    /// Default: `None`. A model that describes itself returns `Some(self)`; a wrapper forwards
    /// its inner model's.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::{CommModel, LogGP};
    ///
    /// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
    /// let lines = model.piecewise().unwrap();
    /// assert!(lines.sender_keeps_pace());
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    fn piecewise(&self) -> Option<&dyn PiecewiseCost> {
        None
    }
}

/// Optional promises of a [`CommModel`] about the shape of its costs, reached through
/// [`CommModel::piecewise`]. The collectives use them to sum the `O(log P)` rounds of an
/// algorithm in closed form, with one call per size range instead of one model evaluation per
/// round.
///
/// Every method is a promise about the model's own [`p2p`](CommModel::p2p) and
/// [`send_interval`](CommModel::send_interval): a wrong one silently changes the costs the
/// collectives compute, so a model implements only what its formula guarantees. Each default
/// makes no promise.
pub trait PiecewiseCost {
    /// Message sizes (bytes) at which the model's costs may jump: the first size of each new
    /// protocol range. Searches over message size (crossover points of collectives) place extra
    /// probes around them, because between them the costs are continuous.
    ///
    /// Default: none (a model whose costs are continuous in size).
    fn size_breakpoints(&self) -> Vec<u64> {
        Vec::new()
    }

    /// [`p2p`](CommModel::p2p) of **contiguous** messages as an affine function of their size (or of
    /// their number of whole words), on the largest range of sizes around `bytes` where it is one
    /// (a protocol range, a segment of a measured table):
    ///
    /// ```text
    /// p2p(Message::contiguous(b)) = intercept + per_unit · ⌈b / unit⌉     for first <= b <= last
    /// ```
    ///
    /// with `first <= bytes <= last`, equal up to floating-point rounding. Collectives use it to
    /// sum the `O(log P)` rounds of a doubling or halving algorithm as a geometric series, with
    /// one call per range instead of one model evaluation per round.
    ///
    /// Default: `None` (the model makes no such promise; callers evaluate every size).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::{CommModel, LogGP, Message, PiecewiseCost, Protocols};
    ///
    /// // eager LogGP below 12289 bytes, rendezvous above
    /// let eager = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
    /// let rendezvous = LogGP::new(20e-6, 1e-6, 2e-6, 0.5e-9)?;
    /// let model = Protocols::from_starts(vec![(1, eager), (12289, rendezvous)])?;
    /// let line = model.p2p_affine(4096).unwrap();
    /// // the eager range: T(s) = 2o + L + (s - 1) G = (7 µs - G) + G s, for 1 <= s <= 12288
    /// assert_eq!((line.first, line.last), (1, 12288));
    /// assert!((line.per_unit - 1e-9).abs() < 1e-21 && line.unit == 1);
    /// let t = model.p2p(&Message::contiguous(10_000));
    /// assert!((line.at(10_000) - t).abs() < 1e-15);
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    fn p2p_affine(&self, bytes: u64) -> Option<AffineCost> {
        let _ = bytes;
        None
    }

    /// `true` only if a sender always keeps pace with the network: for **every** message,
    /// [`send_interval`](CommModel::send_interval) `<=` [`p2p`](CommModel::p2p).
    ///
    /// Collectives whose processes send in consecutive rounds space those sends by
    /// `max(T, I)` (a round cannot start before its data arrived, `T` after the previous send,
    /// nor before the sender may send again, `I` after it); a model that promises `I <= T`
    /// lets them sum `T` alone in closed form. LogGP keeps pace when `g <= 2o + L`, LogP when
    /// `max(g, o) <= 2o + L`; a published transport may not (Open MPI over InfiniBand in its
    /// rendezvous range: `g = 21.39 µs` against a one-message time that starts at `5.96 µs`,
    /// Hoefler, Lichei & Rehm, IPDPS 2007, Table 2).
    ///
    /// Default: `false` (no promise; collectives then add the lags of the rounds, from the
    /// model's lag lines ([`send_lag_affine`](Self::send_lag_affine)) with one call per size
    /// range, or by comparing `I` and `T` round by round, `O(log P)` more model calls; exact
    /// either way).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::{CommModel, LogGP, Message, PiecewiseCost};
    /// // g = 2 µs <= 2o + L = 7 µs
    /// let fast = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
    /// assert!(fast.sender_keeps_pace());
    /// // g = 9 µs > 2o + L = 3 µs: two messages cannot leave closer than 9 µs
    /// let slow = LogGP::new(1e-6, 1e-6, 9e-6, 1e-9)?;
    /// let m = Message::contiguous(1000);
    /// assert!(!slow.sender_keeps_pace() && slow.send_interval(&m) > slow.p2p(&m));
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    fn sender_keeps_pace(&self) -> bool {
        false
    }

    /// How far the sender falls behind the network on **contiguous** messages, on the largest
    /// range of sizes around `bytes` where it is affine: a line `E(b)` (an [`AffineCost`],
    /// seconds, may be negative) with
    ///
    /// ```text
    /// max(0, I(b) - T(b) - e) = max(0, E(b) - e)     for first <= b <= last and every e >= 0
    /// ```
    ///
    /// `I` being [`send_interval`](CommModel::send_interval) and `T` [`p2p`](CommModel::p2p), equal up to
    /// floating-point rounding: `E(b) = I(b) - T(b)` wherever that is positive, and `E(b) <= 0`
    /// wherever it is not. This is the lag `max(0, I - T - op)` that collectives whose
    /// processes send in consecutive rounds add per round (see
    /// [`sender_keeps_pace`](Self::sender_keeps_pace)); with a line per range they sum the lags
    /// of all rounds inside one range without a model call per round. LogGP's lag is the
    /// constant `max(0, g - 2o - L)` on every size (Alexandrov, Ionescu, Schauser & Scheiman,
    /// "LogGP", SPAA 1995: `I(s) = max(o, g + (s - 1) G)` against `T(s) = 2o + L + (s - 1) G`),
    /// LogP's `max(0, max(g, o) - 2o - L)` (`m` words sent `max(g, o)` apart against
    /// `2o + L + (m - 1) max(g, o)`). pLogP, LogGPO, log_n P and log_3 P describe theirs too
    /// (each type's documentation derives it).
    ///
    /// Default: `None` (the model makes no such promise; callers compare `I` and `T` for every
    /// round).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::{CommModel, LogGP, Message, PiecewiseCost};
    ///
    /// // g = 9 µs against 2o + L = 3 µs: a sender is 6 µs behind on every size
    /// let slow = LogGP::new(1e-6, 1e-6, 9e-6, 1e-9)?;
    /// let line = slow.send_lag_affine(4096).unwrap();
    /// assert!((line.at(4096) - 6e-6).abs() < 1e-18 && line.per_unit == 0.0);
    /// let m = Message::contiguous(4096);
    /// let lag = slow.send_interval(&m) - slow.p2p(&m);
    /// assert!((lag - line.at(4096)).abs() < 1e-18);
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    fn send_lag_affine(&self, bytes: u64) -> Option<AffineCost> {
        let _ = bytes;
        None
    }
}

/// An affine piece of a cost: `intercept + per_unit · ⌈b / unit⌉` for sizes
/// `first <= b <= last` ([`PiecewiseCost::p2p_affine`]); `unit = 1` (a line in bytes) for every model
/// but those that count whole words (LogP: `unit = w`).
///
/// # Examples
///
/// ```
/// use commcost::AffineCost;
///
/// // 1 µs + 1 ns/byte on every size, cut to 1..=4096 bytes
/// let line = AffineCost::everywhere(1e-6, 1e-9).within(1, 4096).unwrap();
/// assert!(line.contains(4096) && !line.contains(4097));
/// assert!((line.at(1000) - 2e-6).abs() < 1e-18);
/// assert_eq!(line.within(5000, 6000), None);
/// // 1 µs per started 8-byte word
/// let words = AffineCost::everywhere(0.0, 1e-6).in_units_of(8);
/// assert_eq!(words.at(17), 3e-6);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
// `repr(C)` with the two floats apart: a caller that copies the value back from the callee's
// return slot should not read two fields written by separate stores with one wide load (a
// store-forwarding stall of ~12 cycles, measured as 10 % of a collective evaluation). Hence
// the field order, which is not the natural one.
#[repr(C)]
pub struct AffineCost {
    /// Cost extrapolated to 0 bytes, seconds (may be negative: LogGP's `2o + L - G`).
    pub intercept: f64,
    /// First size (bytes) the formula holds for.
    pub first: u64,
    /// Seconds per unit (per byte when `unit = 1`).
    pub per_unit: f64,
    /// Last size (bytes) the formula holds for.
    pub last: u64,
    /// Bytes per unit, at least 1: the cost grows with `⌈b / unit⌉`.
    pub unit: u64,
}

impl AffineCost {
    /// `intercept + per_byte · bytes` on every size.
    #[inline]
    pub const fn everywhere(intercept: f64, per_byte: f64) -> Self {
        Self {
            intercept,
            per_unit: per_byte,
            first: 0,
            last: u64::MAX,
            unit: 1,
        }
    }

    /// The piece around `bytes` of `first + per_unit · (⌈b / unit⌉ - 1)` for `b >= 1`, where a
    /// 0-byte message costs one unit (`first`): the constant `first` on `0..=0` for `bytes = 0`,
    /// else `(first - per_unit) + per_unit · ⌈b / unit⌉` on `1..`. LogGP's `2o + L + (s - 1) G`
    /// (unit 1 byte), LogP's `2o + L + (m - 1) max(g, o)` (unit `w`).
    #[inline]
    pub(crate) fn first_unit_then_line(bytes: u64, first: f64, per_unit: f64, unit: u64) -> Self {
        if bytes == 0 {
            Self {
                last: 0,
                ..Self::everywhere(first, 0.0)
            }
        } else {
            Self {
                first: 1,
                ..Self::everywhere(first - per_unit, per_unit).in_units_of(unit)
            }
        }
    }

    /// The same coefficients counting whole units of `unit` bytes (`unit = 0` is taken as 1).
    #[inline]
    pub const fn in_units_of(self, unit: u64) -> Self {
        Self {
            unit: if unit == 0 { 1 } else { unit },
            ..self
        }
    }

    /// `intercept + per_unit · ⌈bytes / unit⌉`, seconds (whether or not `bytes` is in the
    /// range). A `unit` of 0 (the fields are public) is read as 1, as
    /// [`in_units_of`](Self::in_units_of) does.
    #[inline]
    pub fn at(&self, bytes: u64) -> f64 {
        let units = if self.unit <= 1 {
            bytes
        } else if self.unit.is_power_of_two() {
            // ⌈b / 2^e⌉ by a shift (e = 0: the bytes themselves)
            let e = self.unit.trailing_zeros();
            (bytes >> e) + u64::from(bytes & (self.unit - 1) != 0)
        } else {
            bytes.div_ceil(self.unit)
        };
        self.intercept + self.per_unit * units as f64
    }

    /// Whether `first <= bytes <= last`.
    #[inline]
    pub const fn contains(&self, bytes: u64) -> bool {
        self.first <= bytes && bytes <= self.last
    }

    /// The sum of two pieces on the sizes both hold for (`None` if they share none, or if both
    /// grow and count different units).
    ///
    /// ```
    /// use commcost::AffineCost;
    /// let a = AffineCost::everywhere(1.0, 0.5).within(0, 100).unwrap();
    /// let b = AffineCost::everywhere(2.0, 0.25).within(50, 200).unwrap();
    /// let sum = a.plus(b).unwrap();
    /// assert_eq!((sum.first, sum.last), (50, 100));
    /// assert_eq!(sum.at(60), 3.0 + 0.75 * 60.0);
    /// assert_eq!(a.plus(b.within(150, 200).unwrap()), None);
    /// // a constant adopts the other's unit; two growing pieces in different units do not add
    /// let words = AffineCost::everywhere(0.0, 1.0).in_units_of(8);
    /// assert_eq!(words.plus(AffineCost::everywhere(2.0, 0.0)).unwrap().at(9), 4.0);
    /// assert_eq!(words.plus(a), None);
    /// ```
    #[inline]
    pub fn plus(self, other: Self) -> Option<Self> {
        let unit = match (self.per_unit == 0.0, other.per_unit == 0.0) {
            (true, _) => other.unit,
            (_, true) => self.unit,
            _ if self.unit == other.unit => self.unit,
            _ => return None,
        };
        Self {
            intercept: self.intercept + other.intercept,
            per_unit: self.per_unit + other.per_unit,
            unit,
            ..self
        }
        .within(other.first, other.last)
    }

    /// The same formula on the part of its range inside `first..=last` (`None` if empty).
    #[inline]
    pub fn within(self, first: u64, last: u64) -> Option<Self> {
        let (first, last) = (self.first.max(first), self.last.min(last));
        (first <= last).then_some(Self {
            first,
            last,
            ..self
        })
    }
}

/// The five per-message quantities of a [`CommModel`] for one message, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantities {
    /// [`CommModel::p2p`].
    pub p2p: f64,
    /// [`CommModel::send_overhead`].
    pub send_overhead: f64,
    /// [`CommModel::recv_overhead`].
    pub recv_overhead: f64,
    /// [`CommModel::send_interval`].
    pub send_interval: f64,
    /// [`CommModel::gap`].
    pub gap: f64,
}

macro_rules! forward_comm_model {
    ($($wrapper:ty),*) => {$(
        impl<M: CommModel + ?Sized> CommModel for $wrapper {
            fn p2p(&self, msg: &Message) -> f64 {
                (**self).p2p(msg)
            }
            fn send_overhead(&self, msg: &Message) -> f64 {
                (**self).send_overhead(msg)
            }
            fn recv_overhead(&self, msg: &Message) -> f64 {
                (**self).recv_overhead(msg)
            }
            fn send_interval(&self, msg: &Message) -> f64 {
                (**self).send_interval(msg)
            }
            fn gap(&self, msg: &Message) -> f64 {
                (**self).gap(msg)
            }
            fn quantities(&self, msg: &Message) -> Quantities {
                (**self).quantities(msg)
            }
            fn rendezvous_above(&self) -> Option<u64> {
                (**self).rendezvous_above()
            }
            fn piecewise(&self) -> Option<&dyn PiecewiseCost> {
                (**self).piecewise()
            }
        }
    )*};
}

forward_comm_model!(&M, Box<M>, Arc<M>);

/// The [`PiecewiseCost`] promises of a model behind `dyn CommModel`, through
/// [`CommModel::piecewise`]; each answers as the default of [`PiecewiseCost`] (no promise)
/// when the model gives no piecewise description.
impl dyn CommModel + '_ {
    /// [`PiecewiseCost::size_breakpoints`] of the model, or none.
    pub fn size_breakpoints(&self) -> Vec<u64> {
        self.piecewise()
            .map_or_else(Vec::new, PiecewiseCost::size_breakpoints)
    }

    /// [`PiecewiseCost::p2p_affine`] of the model, or `None`.
    #[inline]
    pub fn p2p_affine(&self, bytes: u64) -> Option<AffineCost> {
        self.piecewise()?.p2p_affine(bytes)
    }

    /// [`PiecewiseCost::sender_keeps_pace`] of the model, or `false`.
    #[inline]
    pub fn sender_keeps_pace(&self) -> bool {
        self.piecewise()
            .is_some_and(PiecewiseCost::sender_keeps_pace)
    }

    /// [`PiecewiseCost::send_lag_affine`] of the model, or `None`.
    #[inline]
    pub fn send_lag_affine(&self, bytes: u64) -> Option<AffineCost> {
        self.piecewise()?.send_lag_affine(bytes)
    }
}
