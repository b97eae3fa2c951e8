//! Collectives built on the [`CommModel`] trait: the standard MPI algorithm families, their
//! costs, and algorithm selection.
//!
//! Every cost here is computed from the five per-message quantities of the trait — `p2p`,
//! `send_interval`, `gap`, `send_overhead`, `recv_overhead` — so it works for any model, and no
//! function here names a concrete model. Costs are in seconds; `P = 1` costs 0 and `P = 0` is
//! [`CollectiveError::NoProcesses`]. All evaluations are `O(1)` or `O(log P)`; for contiguous
//! messages on a model that describes itself as affine within size ranges
//! ([`PiecewiseCost::p2p_affine`](crate::PiecewiseCost::p2p_affine)), the `O(log P)` rounds are summed in closed form with one model
//! call per range.
//!
//! Round structures follow R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective
//! communication operations in MPICH", IJHPCA 19(1), 2005; the broadcast forms reproduce the
//! closed forms for LogGP and log_3 P of K. W. Cameron, R. Ge, X.-H. Sun, "log_n P and log_3 P:
//! accurate analytical models of point-to-point communication in distributed systems", IEEE
//! Transactions on Computers 56(3), 2007, Sec. 4.3.3, exactly:
//!
//! ```text
//! linear broadcast   T = p2p + (P - 2) interval
//! binomial broadcast T = h p2p + (h - 1) gap,          h = ⌈log2 P⌉
//! ```
//!
//! A process that sends in consecutive rounds (rings, recursive doubling, Bruck, dissemination,
//! Rabenseifner, pairwise exchange) cannot start a round's send before its data arrived, `T`
//! after its previous send (plus the operator), nor before it may send again, `I` after it: its
//! rounds are spaced `max(T + op, I)`, and every such form adds the lag `max(0, I - T - op)` to
//! its rounds of `T`. A model that promises `I <= T` ([`PiecewiseCost::sender_keeps_pace`](crate::PiecewiseCost::sender_keeps_pace)) skips
//! that comparison; one that describes the lag as a line per size range
//! ([`PiecewiseCost::send_lag_affine`](crate::PiecewiseCost::send_lag_affine): LogGP's `g - 2o - L`, LogP's `max(g, o) - 2o - L`, LogGPO's
//! `G - L`, pLogP's `o_s(m) - g(m) - L` per table segment) has the
//! lags of all rounds inside a range summed with one model call; LogGOPS simulation of every
//! schedule (`commcost::sim`) agrees. Where consecutive rounds carry pieces of different sizes
//! (Bruck, recursive doubling and halving, Rabenseifner, neighbor exchange), the receiver's NIC
//! also takes each piece in for its own interval after the previous one: round `k + 1` starts
//! `max(0, w_k, I(x_{k+1}) - T(x_{k+1}) - op_k)` after round `k`'s data arrived, `w_k` the
//! sender's own wait (the lag of round 0, then `max(0, min(E_{k+1} - op_{k+1}, w_k + op_k -
//! op_{k+1}))`); with one lag for all sizes this is the sum of lags.
//!
//! Algorithms are values — one enum per collective ([`Bcast`], [`Scan`], [`Reduce`],
//! [`Allreduce`], [`Allgather`], [`Gather`], [`Scatter`], [`Barrier`], [`Alltoall`]) implementing
//! [`Algorithm`] — so a caller can store, compare and rank choices ([`rank`], [`best`],
//! [`crossover`], [`DecisionTable`]).
//!
//! # Which time a cost is
//!
//! A closed form ([`Algorithm::cost`]) is the time from the call, all processes entering
//! together, until the **last** process completes: what a benchmark's maximum over ranks
//! measures (OSU's "Max Latency" with `-f`). A process that returns early — the root of a
//! broadcast, a leaf of a reduction — is not seen. The simulator gives each process's own
//! completion ([`SimResult::rank_finish`](crate::sim::SimResult::rank_finish)), their mean
//! ([`SimResult::mean_finish`](crate::sim::SimResult::mean_finish): OSU's "Avg Latency", the
//! number OSU prints without `-f`) and their maximum
//! ([`SimResult::makespan`](crate::sim::SimResult::makespan)); [`rank_simulated`](crate::sim::rank_simulated)
//! ranks by the makespan, or by the mean with
//! [`SimOptions::finish`](crate::sim::SimOptions::finish) set to
//! [`Finish::Mean`](crate::sim::Finish::Mean).
//!
//! Message sizes: `problem.message` is the message of the collective as MPI counts it — the
//! broadcast buffer, each process's contribution to a reduction, gather or allgather, each
//! pairwise block of an all-to-all. Pieces of it (`m / P`, `m / 2^k`) keep its layout
//! ([`Problem::piece`]).
//!
//! # Collectives and families
//!
//! [`Collective`] names the MPI operation (its MPI name, Open MPI's rules-file ID and lookup
//! size); [`Family`] the algorithm set that prices it — the textbook one, Open MPI's
//! ([`ompi`]) or MPICH's ([`Mpich`]). [`rank_in`], [`best_in`] and [`cost_in`] rank and price
//! a (family, collective) pair without naming its algorithm type; [`Family::visit`] runs any
//! generic computation on that type, and `sim::visit` one that also needs its schedule.
//!
//! # Which library runs what
//!
//! The enums above are the textbook families of Thakur, Rabenseifner & Gropp (2005), which is
//! what MPICH runs; [`MpichAlgorithm`] gives MPICH's name of each where MPICH has it
//! (`MPIR_CVAR_<COLL>_INTRA_ALGORITHM`, e.g. `recursive_doubling`, `reduce_scatter_allgather`,
//! `scatter_ring_allgather`). [`ompi`] holds Open MPI's tuned component's own algorithm set with
//! its numeric IDs, segment sizes and fan-outs. Every algorithm prints and parses as a
//! kebab-case name ([`Display`](std::fmt::Display) / [`FromStr`](std::str::FromStr):
//! `recursive-doubling`, `pipelined:segment=8192`, `chain:segment=65536,fanout=4`), and
//! [`crate::export`] turns the model's choices into the tuning files the libraries read.
//!
//! # The model's `processors` parameter
//!
//! Some models carry a processor count (LogP's and LogGP's `P`). The collectives do not use it
//! as a default: every [`Problem`] names its communicator size explicitly. The trait
//! [`CommModel`] has no processor count (most models — tables, protocol ranges, log_n P — have
//! none), collectives never name a concrete model, and the communicator a collective runs on is
//! usually a part of the machine the model was calibrated on — a decision table ranges over
//! many communicator sizes with one model. To price a collective on the whole machine, pass its
//! process count to `Problem::new`.
//!
//! # What the collectives assume of a model
//!
//! The models of this crate validate their parameters, so their quantities are finite and
//! non-negative for every message, and their costs are then finite and non-negative for every
//! problem. A custom [`CommModel`] is trusted less: whatever it returns, no collective, ranking,
//! search or export panics or loops beyond its `O(log P)` (or, for a search, `O(log size)`)
//! bound. What the costs mean rests on these assumptions:
//!
//! * the five quantities are finite and non-negative seconds; NaN, ±inf or negative values
//!   flow through the sums unchanged (garbage in, garbage out) and [`rank`] orders NaN last
//!   ([`f64::total_cmp`]);
//! * a [`PiecewiseCost::p2p_affine`](crate::PiecewiseCost::p2p_affine) piece is used only when `first <= bytes <= last` for the
//!   size asked about (else the size is evaluated with `p2p`), and then for every size in its
//!   range; a `unit` of 0 is read as 1 byte, as [`AffineCost::at`](crate::AffineCost::at)
//!   does. A piece whose line is not the model's `p2p` on its range changes the costs, not
//!   the control flow;
//! * the model is pure: the same message gives the same quantities (evaluations are cached
//!   within one cost).

mod calls;
mod collective;
mod error;
mod eval;
mod family;
mod local;
pub mod ompi;
mod parse;
mod select;
mod textbook;

pub use calls::{CallCost, CallCosts};
pub use collective::Collective;
pub use error::{AlgorithmParseError, CollectiveError};
pub use family::{
    AlgorithmVisitor, Choice, Family, FamilyAlgorithm, Mpich, OmpiSetting, best_in, cost_in,
    rank_in,
};
pub use local::{Copies, CopyCost, LocalWork, MAX_COPY_CLASSES};
pub use select::{DecisionTable, SwitchPoint, best, crossover, rank};
pub use textbook::{
    Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, MpichAlgorithm, Reduce, Scan, Scatter,
};

use crate::{CommModel, Message};

/// The cost of applying a reduction or scan operator to the data of one step.
///
/// # Formula
///
/// ```text
/// op(bytes) = per_call + per_byte · bytes
/// ```
///
/// With the `serde` feature it (de)serialises as `{"per_call": .., "per_byte": ..}`; loading
/// goes through [`Operator::new`] (negative or non-finite costs are errors) and rejects unknown
/// fields.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "RawOperator"))]
pub struct Operator {
    per_call: f64,
    per_byte: f64,
}

/// Private fields, no public form: loading re-runs [`Operator::new`]'s validation.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOperator {
    per_call: f64,
    per_byte: f64,
}

#[cfg(feature = "serde")]
impl TryFrom<RawOperator> for Operator {
    type Error = CollectiveError;

    fn try_from(raw: RawOperator) -> Result<Self, Self::Error> {
        Self::new(raw.per_call, raw.per_byte)
    }
}

impl Operator {
    /// An operator that costs nothing (a broadcast-like collective).
    pub const FREE: Self = Self {
        per_call: 0.0,
        per_byte: 0.0,
    };

    /// An operator costing `per_call` seconds per application plus `per_byte` seconds per byte.
    ///
    /// # Errors
    ///
    /// [`CollectiveError::InvalidOperator`] for negative or non-finite costs.
    pub fn new(per_call: f64, per_byte: f64) -> Result<Self, CollectiveError> {
        for (name, value) in [("per_call", per_call), ("per_byte", per_byte)] {
            if !(value >= 0.0 && value.is_finite()) {
                return Err(CollectiveError::InvalidOperator { name, value });
            }
        }
        Ok(Self { per_call, per_byte })
    }

    /// `op(bytes)`, seconds.
    pub fn cost(&self, bytes: u64) -> f64 {
        self.per_call + self.per_byte * bytes as f64
    }

    /// `Σ op(b_i)` over `calls` applications to `bytes = Σ b_i` bytes in all:
    /// `calls · per_call + per_byte · bytes`.
    pub(crate) fn total(&self, calls: u64, bytes: u64) -> f64 {
        calls as f64 * self.per_call + self.per_byte * bytes as f64
    }
}

/// A collective problem: how many processes, what message, what operator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Problem {
    /// `P`, the communicator size.
    pub processes: u64,
    /// The collective's message (see the [module docs](self) for what it means per collective).
    pub message: Message,
    /// The operator of reductions and scans ([`Operator::FREE`] otherwise).
    pub operator: Operator,
    /// The prices of copies and temporary buffers ([`LocalWork::FREE`] by default: the
    /// algorithms that price local work — Open MPI's, [`ompi`] — then cost their messages
    /// and operator only).
    pub local: LocalWork,
}

impl Problem {
    /// A problem without an operator.
    pub fn new(processes: u64, message: Message) -> Self {
        Self {
            processes,
            message,
            operator: Operator::FREE,
            local: LocalWork::FREE,
        }
    }

    /// The same problem with local-work prices.
    pub fn with_local(mut self, local: LocalWork) -> Self {
        self.local = local;
        self
    }

    /// The same problem with an operator.
    pub fn with_operator(mut self, operator: Operator) -> Self {
        self.operator = operator;
        self
    }

    /// The same problem with a message of `bytes` bytes in the same layout.
    pub fn with_bytes(mut self, bytes: u64) -> Self {
        self.message = self.piece(bytes);
        self
    }

    /// A message of `bytes` bytes in the layout of the problem's message: contiguous stays
    /// contiguous; a vector keeps its block length and stride with `⌈bytes / block⌉` blocks
    /// (a contiguous message if that layout would overflow).
    pub fn piece(&self, bytes: u64) -> Message {
        let m = &self.message;
        if m.is_contiguous() || m.block_len() == 0 {
            return Message::contiguous(bytes);
        }
        Message::vector(bytes.div_ceil(m.block_len()), m.block_len(), m.stride())
            .map(|v| v.with_offset(m.offset()))
            .unwrap_or(Message::contiguous(bytes))
    }

    fn check(&self) -> Result<(), CollectiveError> {
        if self.processes == 0 {
            Err(CollectiveError::NoProcesses)
        } else {
            Ok(())
        }
    }
}

/// A collective algorithm: a value that prices itself for a model and a problem.
pub trait Algorithm: Copy + std::fmt::Debug + PartialEq + Send + Sync + 'static {
    /// The algorithm's name, e.g. `"binomial"`.
    fn name(&self) -> &'static str;

    /// The name with the algorithm's parameters, for reports (e.g. `"pipelined, 8192 B
    /// segments"`). Default: the name.
    fn label(&self) -> String {
        self.name().to_string()
    }

    /// Predicted time of the collective, seconds.
    ///
    /// # Errors
    ///
    /// [`CollectiveError::NoProcesses`] for `P = 0`; algorithm-specific errors (a zero
    /// pipeline segment).
    fn cost(&self, model: &dyn CommModel, problem: &Problem) -> Result<f64, CollectiveError>;

    /// The algorithms to rank for a problem (a pipelined algorithm with its best segment).
    fn candidates(model: &dyn CommModel, problem: &Problem) -> Vec<Self>;

    /// The largest factor by which a piece of this collective can be larger or smaller than the
    /// problem's message, for placing search probes around the model's breakpoints: the
    /// collective's internal messages have sizes `m · f` with `1/P <= f <= P`.
    fn size_factors(problem: &Problem) -> Vec<f64> {
        let p = problem.processes.max(1) as f64;
        let mut factors = vec![1.0, p, 1.0 / p];
        let mut f = 2.0;
        while f < p {
            factors.push(f);
            factors.push(1.0 / f);
            f *= 2.0;
        }
        factors
    }
}
