//! Schedules of the collective algorithms the crate prices, for any number of processes.
//!
//! Each rank's operations are written as a program of blocking steps: a step is one MPI call —
//! a send, a receive, a send-receive pair, a set of non-blocking calls completed together, or
//! the operator applied to received data — and every operation of a step `requires` every
//! operation of the rank's previous step. Root is rank 0. Message sizes are those of the
//! closed forms in [`collectives`](crate::collectives) (pieces keep the problem's layout,
//! [`Problem::piece`]); the structure of each schedule is described on [`ToSchedule`].
//!
//! Operations are numbered rank by rank (rank 0's program, then rank 1's, …), except in the
//! recursive-doubling allreduce, which is written round by round (every rank's step of round
//! 0, then of round 1, …), and the binomial broadcast, written message by message with the
//! receivers grouped by depth and lowest set bit (the ranks that receive at one time on a
//! homogeneous model; each rank's operations keep their order): their schedules need no
//! reordering for the simulator, and the operations of one round, or of one time, lie together
//! in memory.

use super::builder::ScheduleBuilder;
use super::implicit::RecursiveDoublingAllreduce;
use super::layout::Operations;
use super::op::{KIND_CALC, KIND_RECV, KIND_SEND, OpId};
use super::schedule::Schedule;
use crate::collectives::{
    Allgather, Allreduce, Alltoall, Barrier, Broadcast, Gather, Problem, Reduce, Scan, Scatter,
};
use crate::error::{CollectiveError, SimError};

/// A collective algorithm that can write out its message schedule.
///
/// Schedules (root 0, `h = ⌈log2 P⌉`, `h' = ⌊log2 P⌋`, `p' = 2^h'`, `m` the problem's bytes):
///
/// * [`Broadcast::Linear`], [`Scatter::Linear`]: the root posts `P - 1` sends (ranks `1..P` in
///   order) in one step; [`Gather::Linear`]: every rank sends, the root posts `P - 1` receives.
/// * [`Broadcast::Binomial`]: rank `r > 0` receives from `r - lowbit(r)`, then sends to
///   `r + 2^j` for `2^j < lowbit(r)` (root: `2^j < 2^h`), largest subtree first (MPICH).
/// * [`Scatter::Binomial`], [`Gather::Binomial`], [`Reduce::Binomial`]: the same tree; a scatter
///   edge into child `c` carries `m · min(lowbit(c), P - c)` bytes, largest first; a gather
///   edge the same blocks upwards, smallest subtree first; a reduce edge `m` bytes, each
///   receive followed by `op(m)`.
/// * [`Broadcast::ScatterAllgather`]: the binomial scatter of `⌈m/P⌉`-byte blocks, then `P - 1`
///   ring steps (send right, receive left).
/// * [`Broadcast::Pipelined`]: a chain `0 → 1 → … → P-1` of `q = ⌈m/segment⌉` segments of
///   `min(segment, m)` bytes each (the closed form's size for every segment); an inner rank
///   receives segment `j`, forwards it, and only then posts the receive of segment `j + 1`.
/// * [`Scan::LinearChain`]: receive from `r - 1`, `op(m)`, send to `r + 1`;
///   [`Scan::RecursiveDoubling`]: in round `k`, send to `r + 2^k`, receive from `r - 2^k`,
///   `op(m)`.
/// * [`Allreduce::RecursiveDoubling`], [`Allreduce::Rabenseifner`],
///   [`Allgather::RecursiveDoubling`]: for `P` not a power of two, the `2(P - p')` lowest ranks
///   pair up, the even one hands its data to the odd one and gets the result back at the end
///   (MPICH); the `p'` remaining ranks exchange with `newrank XOR 2^k`. Sizes: `m` per round
///   (recursive doubling), `⌈m/2^k⌉` in halving round `k` and again in the matching doubling
///   round (Rabenseifner), `m ⌈P/p'⌉ 2^k` in round `k` then `P m` back (allgather).
/// * [`Allreduce::Ring`]: `P - 1` reduce-scatter steps (send right, receive left,
///   `op(⌈m/P⌉)`), then `P - 1` allgather steps of `⌈m/P⌉` bytes.
/// * [`Allgather::Ring`]: `P - 1` steps of `m` bytes; [`Allgather::Bruck`]: round `k` sends
///   `m · min(2^k, P - 2^k)` bytes to `r - 2^k`, receives from `r + 2^k` (mod `P`).
/// * [`Barrier::Dissemination`]: round `k` sends 0 bytes to `r + 2^k`, receives from `r - 2^k`.
/// * [`Alltoall::PairwiseExchange`]: step `k = 1..P` sends `m` to `r + k`, receives from `r - k`;
///   [`Alltoall::Bruck`]: round `k` sends the `n_k` blocks whose index has bit `k` set
///   (`m n_k` bytes) to `r + 2^k`, receives from `r - 2^k`.
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Broadcast, Problem};
/// use commcost::sim::ToSchedule;
/// use commcost::Message;
///
/// let s = Broadcast::Binomial.schedule(&Problem::new(8, Message::contiguous(64)))?;
/// // 7 sends and 7 receives
/// assert_eq!(s.len(), 14);
/// # Ok::<(), commcost::SimError>(())
/// ```
pub trait ToSchedule {
    /// The schedule of this algorithm for `problem`.
    ///
    /// # Errors
    ///
    /// [`SimError::Collective`] for `P = 0` or a zero pipeline segment, [`SimError::TooLarge`]
    /// when the schedule would exceed the simulator's limits (more than
    /// [`MAX_RANKS`](super::MAX_RANKS) = 2^24 processes or
    /// [`MAX_OPERATIONS`](super::MAX_OPERATIONS) operations).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError>;

    /// [`schedule`](Self::schedule) within a memory budget of `max_memory` bytes instead of
    /// [`DEFAULT_MAX_MEMORY`](super::DEFAULT_MAX_MEMORY): a schedule that, with its
    /// simulation, would need more ([`stored_schedule_memory`](super::stored_schedule_memory))
    /// is [`SimError::MemoryBudget`] before its arrays grow beyond the budget.
    ///
    /// # Errors
    ///
    /// As [`schedule`](Self::schedule), and [`SimError::MemoryBudget`].
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::{Broadcast, Problem};
    /// use commcost::sim::ToSchedule;
    /// use commcost::{Message, SimError};
    ///
    /// let problem = Problem::new(1 << 16, Message::contiguous(8));
    /// assert!(Broadcast::Linear.schedule_within(&problem, 1 << 30).is_ok());
    /// assert!(matches!(
    ///     Broadcast::Linear.schedule_within(&problem, 1 << 20),
    ///     Err(SimError::MemoryBudget { .. })
    /// ));
    /// ```
    fn schedule_within(&self, problem: &Problem, max_memory: u64) -> Result<Schedule, SimError> {
        super::memory::with_budget(max_memory, || self.schedule(problem))
    }
}

/// The schedule of `algorithm` for `problem` ([`ToSchedule::schedule`]).
///
/// # Errors
///
/// As [`ToSchedule::schedule`].
pub fn collective_schedule<A: ToSchedule>(
    algorithm: &A,
    problem: &Problem,
) -> Result<Schedule, SimError> {
    algorithm.schedule(problem)
}

use crate::util::bits::blocks_with_bit;
pub(super) use crate::util::bits::{ceil_log2, floor_log2, lowbit};

/// The largest number of operations the collective schedule builders ([`ToSchedule`], for the
/// textbook and Open MPI algorithms) write: `2^27` (about 4 GB of schedule and simulation
/// state at ~30 bytes per operation). Larger schedules are [`SimError::TooLarge`] before
/// anything is allocated, rather than a process the allocator aborts; a recursive-doubling
/// allreduce at `P = 2^20` has 42 M operations, a ring allreduce outgrows the limit from
/// `P ≈ 5800`.
pub const MAX_BUILT_OPERATIONS: u64 = 1 << 27;

/// Operations reserved up front at most (the arrays grow beyond).
const RESERVE_LIMIT: u64 = 1 << 22;

/// `P = 0` or more than [`MAX_RANKS`](super::schedule::MAX_RANKS) processes are refused
/// before any tree is built.
pub(super) fn check_ranks(p: u64) -> Result<(), SimError> {
    if p == 0 {
        return Err(CollectiveError::NoProcesses.into());
    }
    if p > super::schedule::MAX_RANKS {
        return Err(SimError::TooLarge {
            what: "ranks",
            count: p,
            limit: super::schedule::MAX_RANKS,
        });
    }
    super::memory::check(
        super::memory::stored_schedule_memory(0, 0, 0, p),
        super::memory::current_budget(),
    )
}

/// Checks `P` and refuses more than [`MAX_BUILT_OPERATIONS`] operations in all (`p` ranks of
/// about `ops_per_rank` operations each, an upper bound); returns that estimate.
fn check_size(p: u64, ops_per_rank: u64) -> Result<u64, SimError> {
    check_ranks(p)?;
    let ops = p.saturating_mul(ops_per_rank.max(1));
    if ops > MAX_BUILT_OPERATIONS {
        return Err(SimError::TooLarge {
            what: "operations",
            count: ops,
            limit: MAX_BUILT_OPERATIONS,
        });
    }
    Ok(ops)
}

/// A builder for `p` ranks of about `ops_per_rank` operations each (an upper bound): `P` is
/// checked, more than [`MAX_BUILT_OPERATIONS`] operations in all are refused, and room for at
/// most [`RESERVE_LIMIT`] operations is reserved up front (the arrays grow beyond).
pub(super) fn sized_builder(p: u64, ops_per_rank: u64) -> Result<ScheduleBuilder, SimError> {
    let ops = check_size(p, ops_per_rank)?;
    let mut b = ScheduleBuilder::new(p);
    // the ranks alone (and the builders' per-rank bookkeeping) within the budget
    b.check_fits()?;
    let reserved = ops.min(RESERVE_LIMIT) as usize;
    b.reserve(reserved, reserved * 2);
    Ok(b)
}

/// A schedule under construction, written rank by rank as programs of blocking steps.
struct Writer<'a> {
    b: ScheduleBuilder,
    problem: &'a Problem,
    rank: u64,
    /// The operations of the rank's previous step (consecutive indices).
    prev: std::ops::Range<OpId>,
    /// The operations of the step being written (consecutive indices).
    step: std::ops::Range<OpId>,
    /// Per rank, the operations of its last step, when the ranks' programs are written
    /// interleaved ([`at`](Self::at)).
    prevs: Vec<std::ops::Range<OpId>>,
}

impl<'a> Writer<'a> {
    /// Checks `P` and the estimated size (`ops_per_rank` operations per rank) and starts.
    fn new(problem: &'a Problem, ops_per_rank: u64) -> Result<Self, SimError> {
        Ok(Self {
            b: sized_builder(problem.processes, ops_per_rank)?,
            problem,
            rank: 0,
            prev: OpId(0)..OpId(0),
            step: OpId(0)..OpId(0),
            prevs: Vec::new(),
        })
    }

    /// Like [`new`](Self::new), for a builder that writes the ranks' programs interleaved,
    /// round by round ([`at`](Self::at)): the schedule keeps that order.
    fn interleaved(problem: &'a Problem, ops_per_rank: u64) -> Result<Self, SimError> {
        let mut w = Self::new(problem, ops_per_rank)?;
        w.b.keep_order();
        w.prevs = vec![OpId(0)..OpId(0); problem.processes as usize];
        Ok(w)
    }

    /// Continues the program of rank `r` where it was left (interleaved writing): the current
    /// step ends.
    fn at(&mut self, r: u64) {
        self.end_step();
        if let Some(slot) = self.prevs.get_mut(self.rank as usize) {
            *slot = self.prev.clone();
        }
        self.rank = r;
        self.prev = self
            .prevs
            .get(r as usize)
            .cloned()
            .unwrap_or(OpId(0)..OpId(0));
    }

    fn m(&self) -> u64 {
        self.problem.message.bytes()
    }

    /// Starts the program of rank `r`.
    fn rank(&mut self, r: u64) {
        self.flush();
        self.rank = r;
        self.prev = OpId(0)..OpId(0);
        self.step = OpId(0)..OpId(0);
    }

    /// The dependencies of the step being written: each of its operations requires every
    /// operation of the previous step, stored once for the step.
    fn flush(&mut self) {
        self.b.requires_all(self.step.clone(), self.prev.clone());
    }

    /// Adds `op` to the step being written. The operations of a step are created one after
    /// another (every caller makes each just before adding it), so the step is a range.
    fn add(&mut self, op: OpId) {
        if self.step.is_empty() {
            self.step = op..op;
        }
        self.step.end = OpId(op.0.saturating_add(1));
    }

    /// Ends the current step: the next step's operations require all of its operations.
    fn end_step(&mut self) {
        if !self.step.is_empty() {
            self.flush();
            self.prev = self.step.clone();
            self.step = OpId(0)..OpId(0);
        }
    }

    fn send(&mut self, peer: u64, tag: u32, bytes: u64) {
        let msg = self.problem.piece(bytes);
        let op = self.b.send_message(self.rank, peer, tag, msg);
        self.add(op);
    }

    fn recv(&mut self, peer: u64, tag: u32, bytes: u64) {
        let msg = self.problem.piece(bytes);
        let op = self.b.recv_message(self.rank, peer, tag, msg);
        self.add(op);
    }

    /// A blocking send.
    fn send_step(&mut self, peer: u64, tag: u32, bytes: u64) {
        self.send(peer, tag, bytes);
        self.end_step();
    }

    /// A blocking receive.
    fn recv_step(&mut self, peer: u64, tag: u32, bytes: u64) {
        self.recv(peer, tag, bytes);
        self.end_step();
    }

    /// A send-receive.
    fn sendrecv(&mut self, to: u64, from: u64, tag: u32, send_bytes: u64, recv_bytes: u64) {
        self.send(to, tag, send_bytes);
        self.recv(from, tag, recv_bytes);
        self.end_step();
    }

    /// The operator on `bytes` bytes (nothing when it costs nothing).
    fn op(&mut self, bytes: u64) {
        let cost = self.problem.operator.cost(bytes);
        if cost > 0.0 {
            let op = self.b.calc(self.rank, cost);
            self.add(op);
            self.end_step();
        }
    }

    fn finish(mut self) -> Result<Schedule, SimError> {
        self.flush();
        self.b.build()
    }
}

impl ToSchedule for Broadcast {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        match *self {
            Self::Linear => linear_out(problem, problem.message.bytes()),
            Self::Binomial => {
                // the programs of `binomial_down`, written by the receiving rank's class: rank
                // `c > 0` receives from `c - lowbit(c)`; on a homogeneous model every hop costs
                // the same, so a rank's receive time depends only on its depth (the number of
                // set bits, `k`) and the position of its lowest set bit `b` — ranks of one class
                // receive together. Classes are written by depth, then by descending `b`, so a
                // parent's receive precedes its sends and its sends keep their order
                // (descending masks); the events of one time then lie together in memory
                let mut w = Writer::interleaved(problem, 2)?;
                let m = w.m();
                let h = ceil_log2(p) as usize;
                let class = |c: u64| {
                    (c.count_ones() as usize - 1) * h + (h - 1) - c.trailing_zeros() as usize
                };
                let mut start = vec![0u32; h * h + 1];
                for c in 1..p {
                    start[class(c) + 1] += 1;
                }
                for i in 0..h * h {
                    start[i + 1] += start[i];
                }
                let mut order = vec![0u32; p.saturating_sub(1) as usize];
                for c in 1..p {
                    let slot = &mut start[class(c)];
                    order[*slot as usize] = c as u32;
                    *slot += 1;
                }
                for c in order {
                    let c = u64::from(c);
                    let parent = c - lowbit(c);
                    w.at(parent);
                    w.send_step(c, 0, m);
                    w.at(c);
                    w.recv_step(parent, 0, m);
                }
                w.finish()
            }
            Self::ScatterAllgather => {
                let mut w = Writer::new(problem, 2 + 2 * p.saturating_sub(1))?;
                let c = w.m().div_ceil(p);
                for r in 0..p {
                    w.rank(r);
                    binomial_down(&mut w, r, p, |child| c * lowbit(child).min(p - child));
                    ring(&mut w, r, p, c, 1, false);
                }
                w.finish()
            }
            Self::Pipelined { segment } => {
                if segment == 0 {
                    return Err(CollectiveError::ZeroSegment.into());
                }
                let m = problem.message.bytes();
                let s = segment.min(m);
                let q = m.div_ceil(segment).max(1);
                let mut w = Writer::new(problem, q.saturating_mul(2))?;
                for r in 0..p {
                    w.rank(r);
                    // an inner rank alternates: receive segment j, forward it, then post the
                    // receive of segment j + 1; the root and the last rank only send or receive
                    let mut last_send: Option<OpId> = None;
                    for _ in 0..q {
                        let recv = (r > 0).then(|| {
                            let op = w.b.recv_message(r, r - 1, 0, problem.piece(s));
                            if let Some(prev) = last_send {
                                w.b.requires(op, prev);
                            }
                            op
                        });
                        if r + 1 < p {
                            let op = w.b.send_message(r, r + 1, 0, problem.piece(s));
                            if let Some(rv) = recv {
                                w.b.requires(op, rv);
                            }
                            last_send = Some(op);
                        }
                    }
                }
                w.finish()
            }
        }
    }
}

/// The root sends `bytes` to ranks `1..P` in one step; the others receive.
fn linear_out(problem: &Problem, bytes: u64) -> Result<Schedule, SimError> {
    let p = problem.processes;
    let mut w = Writer::new(problem, 2)?;
    for r in 0..p {
        w.rank(r);
        if r == 0 {
            for peer in 1..p {
                w.send(peer, 0, bytes);
            }
            w.end_step();
        } else {
            w.recv_step(0, 0, bytes);
        }
    }
    w.finish()
}

/// Binomial tree downwards (broadcast, scatter): receive from the parent, then send to each
/// child, largest subtree first; `bytes(child)` is the size of the edge into `child`.
fn binomial_down(w: &mut Writer<'_>, r: u64, p: u64, bytes: impl Fn(u64) -> u64) {
    let top = if r == 0 {
        1u64 << ceil_log2(p)
    } else {
        w.recv_step(r - lowbit(r), 0, bytes(r));
        lowbit(r)
    };
    let mut mask = top >> 1;
    while mask > 0 {
        let child = r + mask;
        if child < p {
            w.send_step(child, 0, bytes(child));
        }
        mask >>= 1;
    }
}

/// Binomial tree upwards (gather, reduce): receive from each child, smallest subtree first,
/// each receive followed by `op(m)` when `reduce`; then send to the parent.
fn binomial_up(w: &mut Writer<'_>, r: u64, p: u64, bytes: impl Fn(u64) -> u64, reduce: bool) {
    let top = if r == 0 {
        1u64 << ceil_log2(p)
    } else {
        lowbit(r)
    };
    let mut mask = 1;
    while mask < top {
        let child = r + mask;
        if child < p {
            w.recv_step(child, 0, bytes(child));
            if reduce {
                let m = w.m();
                w.op(m);
            }
        }
        mask <<= 1;
    }
    if r > 0 {
        w.send_step(r - lowbit(r), 0, bytes(r));
    }
}

/// `P - 1` ring steps of `bytes`: send to the right, receive from the left, then `op(bytes)`
/// when `reduce`.
fn ring(w: &mut Writer<'_>, r: u64, p: u64, bytes: u64, tag: u32, reduce: bool) {
    let right = (r + 1) % p;
    let left = (r + p - 1) % p;
    for _ in 1..p {
        w.sendrecv(right, left, tag, bytes, bytes);
        if reduce {
            w.op(bytes);
        }
    }
}

impl ToSchedule for Scan {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        match self {
            Self::LinearChain => {
                let mut w = Writer::new(problem, 3)?;
                let m = w.m();
                for r in 0..p {
                    w.rank(r);
                    if r > 0 {
                        w.recv_step(r - 1, 0, m);
                        w.op(m);
                    }
                    if r + 1 < p {
                        w.send_step(r + 1, 0, m);
                    }
                }
                w.finish()
            }
            Self::RecursiveDoubling => {
                let h = ceil_log2(p);
                let mut w = Writer::new(problem, 3 * u64::from(h))?;
                let m = w.m();
                for r in 0..p {
                    w.rank(r);
                    for k in 0..h {
                        let d = 1u64 << k;
                        if r + d < p {
                            w.send(r + d, k, m);
                        }
                        let receives = r >= d;
                        if receives {
                            w.recv(r - d, k, m);
                        }
                        w.end_step();
                        if receives {
                            w.op(m);
                        }
                    }
                }
                w.finish()
            }
        }
    }
}

impl ToSchedule for Reduce {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let mut w = Writer::new(problem, 3)?;
        let m = w.m();
        for r in 0..p {
            w.rank(r);
            binomial_up(&mut w, r, p, |_| m, true);
        }
        w.finish()
    }
}

/// The folding of MPICH's recursive algorithms for `P` not a power of two: `(rem, p')` with
/// `P = p' + rem`, and `newrank` of rank `r` (`None` for the even ranks below `2 rem`, which
/// hand their data over and wait).
pub(super) fn fold(p: u64, r: u64) -> (u64, u64, Option<u64>) {
    let pp = 1u64 << floor_log2(p);
    let rem = p - pp;
    let new = if r < 2 * rem {
        (r % 2 == 1).then_some(r / 2)
    } else {
        Some(r - rem)
    };
    (rem, pp, new)
}

/// The real rank of `newrank`.
pub(super) fn unfold(rem: u64, new: u64) -> u64 {
    if new < rem { 2 * new + 1 } else { new + rem }
}

impl ToSchedule for Allreduce {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let hp = floor_log2(p);
        let per_rank = match self {
            Self::Ring => 6 * p.saturating_sub(1),
            _ => 6 * u64::from(hp) + 4,
        };
        if *self == Self::RecursiveDoubling {
            return recursive_doubling_allreduce(problem, per_rank);
        }
        let mut w = Writer::new(problem, per_rank)?;
        let m = w.m();
        for r in 0..p {
            w.rank(r);
            match self {
                Self::Ring => {
                    let c = m.div_ceil(p);
                    ring(&mut w, r, p, c, 1, true);
                    ring(&mut w, r, p, c, 2, false);
                }
                // written by recursive_doubling_allreduce
                Self::RecursiveDoubling => {}
                Self::Rabenseifner => {
                    let (rem, pp, new) = fold(p, r);
                    if r < 2 * rem && r % 2 == 0 {
                        w.send_step(r + 1, 0, m);
                        w.recv_step(r + 1, 3, m);
                        continue;
                    }
                    if r < 2 * rem {
                        w.recv_step(r - 1, 0, m);
                        w.op(m);
                    }
                    let new = new.unwrap_or(0);
                    // recursive halving: round k exchanges ⌈m/2^k⌉ with newrank ^ p'/2^k
                    for k in 1..=hp {
                        let piece = m.div_ceil(1 << k);
                        let partner = unfold(rem, new ^ (pp >> k));
                        w.sendrecv(partner, partner, 1, piece, piece);
                        w.op(piece);
                    }
                    // recursive doubling back, the same pieces in reverse
                    for k in (1..=hp).rev() {
                        let piece = m.div_ceil(1 << k);
                        let partner = unfold(rem, new ^ (pp >> k));
                        w.sendrecv(partner, partner, 2, piece, piece);
                    }
                    if r < 2 * rem {
                        w.send_step(r - 1, 3, m);
                    }
                }
            }
        }
        w.finish()
    }
}

/// The recursive-doubling allreduce: the even ranks below `2 rem` hand their data to the odd
/// ones, which reduce; the `p'` remaining ranks exchange with `newrank XOR 2^k` and reduce in
/// round `k`; the result goes back to the even ranks. Each rank's program is that of the
/// per-rank description on [`ToSchedule`]. For `P >= 2` the schedule is computed from this
/// structure rather than stored ([`RecursiveDoublingAllreduce`]), with the operations
/// numbered as [`recursive_doubling_allreduce_stored`] writes them.
fn recursive_doubling_allreduce(problem: &Problem, per_rank: u64) -> Result<Schedule, SimError> {
    let p = problem.processes;
    check_size(p, per_rank)?;
    let m = problem.message.bytes();
    let cost = problem.operator.cost(m);
    if !(cost >= 0.0 && cost.is_finite()) {
        return Err(SimError::InvalidTime {
            name: "calc seconds",
            value: cost,
        });
    }
    match RecursiveDoublingAllreduce::new(p, cost > 0.0) {
        Some(layout) => Ok(Schedule::computed(
            p,
            Operations::RecursiveDoublingAllreduce(layout),
            RecursiveDoublingAllreduce::signatures([KIND_SEND, KIND_RECV, KIND_CALC]),
            vec![problem.piece(m)],
            (cost > 0.0).then_some(cost).into_iter().collect(),
        )),
        None => recursive_doubling_allreduce_stored(problem, per_rank),
    }
}

/// The recursive-doubling allreduce stored operation by operation, written round by round
/// (every rank's step of one round together).
fn recursive_doubling_allreduce_stored(
    problem: &Problem,
    per_rank: u64,
) -> Result<Schedule, SimError> {
    let p = problem.processes;
    let mut w = Writer::interleaved(problem, per_rank)?;
    let m = w.m();
    let (rem, _, _) = fold(p, 0);
    for r in 0..2 * rem {
        w.at(r);
        if r % 2 == 0 {
            w.send_step(r + 1, 0, m);
        } else {
            w.recv_step(r - 1, 0, m);
            w.op(m);
        }
    }
    // the result goes back with the last round, so that the operations that end the
    // schedule keep the ranks' order among themselves
    let hp = floor_log2(p);
    for k in 0..hp {
        let last = k + 1 == hp;
        for r in 0..p {
            match fold(p, r).2 {
                Some(new) => {
                    w.at(r);
                    let partner = unfold(rem, new ^ (1 << k));
                    w.sendrecv(partner, partner, 1, m, m);
                    w.op(m);
                    if last && r < 2 * rem {
                        w.send_step(r - 1, 3, m);
                    }
                }
                None if last => {
                    w.at(r);
                    w.recv_step(r + 1, 3, m);
                }
                None => {}
            }
        }
    }
    w.finish()
}

impl ToSchedule for Allgather {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let h = ceil_log2(p);
        let per_rank = match self {
            Self::Ring => 2 * p.saturating_sub(1),
            _ => 2 * u64::from(h) + 2,
        };
        let mut w = Writer::new(problem, per_rank)?;
        let m = w.m();
        for r in 0..p {
            w.rank(r);
            match self {
                Self::Ring => ring(&mut w, r, p, m, 0, false),
                Self::RecursiveDoubling => {
                    let (rem, pp, new) = fold(p, r);
                    let total = m.saturating_mul(p);
                    if r < 2 * rem && r % 2 == 0 {
                        w.send_step(r + 1, 0, m);
                        w.recv_step(r + 1, 3, total);
                        continue;
                    }
                    if r < 2 * rem {
                        w.recv_step(r - 1, 0, m);
                    }
                    let new = new.unwrap_or(0);
                    let c = m.saturating_mul(p.div_ceil(pp));
                    for k in 0..floor_log2(p) {
                        let partner = unfold(rem, new ^ (1 << k));
                        let piece = c.saturating_mul(1 << k);
                        w.sendrecv(partner, partner, 1, piece, piece);
                    }
                    if r < 2 * rem {
                        w.send_step(r - 1, 3, total);
                    }
                }
                Self::Bruck => {
                    for k in 0..h {
                        let d = 1u64 << k;
                        let piece = m.saturating_mul(d.min(p - d));
                        w.sendrecv((r + p - d) % p, (r + d) % p, k, piece, piece);
                    }
                }
            }
        }
        w.finish()
    }
}

impl ToSchedule for Gather {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let mut w = Writer::new(problem, 2)?;
        let m = w.m();
        for r in 0..p {
            w.rank(r);
            match self {
                Self::Linear => {
                    if r == 0 {
                        for peer in 1..p {
                            w.recv(peer, 0, m);
                        }
                        w.end_step();
                    } else {
                        w.send_step(0, 0, m);
                    }
                }
                Self::Binomial => binomial_up(
                    &mut w,
                    r,
                    p,
                    |c| m.saturating_mul(lowbit(c).min(p - c)),
                    false,
                ),
            }
        }
        w.finish()
    }
}

impl ToSchedule for Scatter {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let m = problem.message.bytes();
        match self {
            Self::Linear => linear_out(problem, m),
            Self::Binomial => {
                let mut w = Writer::new(problem, 2)?;
                for r in 0..p {
                    w.rank(r);
                    binomial_down(&mut w, r, p, |c| m.saturating_mul(lowbit(c).min(p - c)));
                }
                w.finish()
            }
        }
    }
}

impl ToSchedule for Barrier {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let h = ceil_log2(p);
        let mut w = Writer::new(problem, 2 * u64::from(h))?;
        for r in 0..p {
            w.rank(r);
            for k in 0..h {
                let d = 1u64 << k;
                w.sendrecv((r + d) % p, (r + p - d) % p, k, 0, 0);
            }
        }
        w.finish()
    }
}

impl ToSchedule for Alltoall {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let h = ceil_log2(p);
        let per_rank = match self {
            Self::PairwiseExchange => 2 * p.saturating_sub(1),
            Self::Bruck => 2 * u64::from(h),
        };
        let mut w = Writer::new(problem, per_rank)?;
        let m = w.m();
        for r in 0..p {
            w.rank(r);
            match self {
                Self::PairwiseExchange => {
                    for k in 1..p {
                        w.sendrecv((r + k) % p, (r + p - k) % p, 0, m, m);
                    }
                }
                Self::Bruck => {
                    for k in 0..h {
                        let d = 1u64 << k;
                        let piece = m.saturating_mul(blocks_with_bit(p, k));
                        w.sendrecv((r + d) % p, (r + p - d) % p, k, piece, piece);
                    }
                }
            }
        }
        w.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::collectives::Operator;
    use crate::sim::{SimOptions, simulate};

    /// Rank `r`'s program as blocking steps, each `(kind, peer, tag)` with `kind` 0 send, 1
    /// receive, 2 operator: the rank-by-rank description of the two round-by-round builders.
    fn program(allreduce: bool, p: u64, r: u64) -> Vec<Vec<(u8, u64, u32)>> {
        let mut steps = Vec::new();
        if allreduce {
            let (rem, _, new) = fold(p, r);
            if r < 2 * rem && r.is_multiple_of(2) {
                return vec![vec![(0, r + 1, 0)], vec![(1, r + 1, 3)]];
            }
            if r < 2 * rem {
                steps.extend([vec![(1, r - 1, 0)], vec![(2, 0, 0)]]);
            }
            for k in 0..floor_log2(p) {
                let partner = unfold(rem, new.unwrap_or(0) ^ (1 << k));
                steps.extend([vec![(0, partner, 1), (1, partner, 1)], vec![(2, 0, 0)]]);
            }
            if r < 2 * rem {
                steps.push(vec![(0, r - 1, 3)]);
            }
        } else {
            let top = if r == 0 {
                1u64 << ceil_log2(p)
            } else {
                steps.push(vec![(1, r - lowbit(r), 0)]);
                lowbit(r)
            };
            let mut mask = top >> 1;
            while mask > 0 {
                if r + mask < p {
                    steps.push(vec![(0, r + mask, 0)]);
                }
                mask >>= 1;
            }
        }
        steps
    }

    /// The computed recursive-doubling allreduce is the stored one (the oracle, written round
    /// by round through `ScheduleBuilder`): every accessor of every operation, the dependency
    /// count, and the simulation bit for bit — makespan, finish times, events, timeline,
    /// critical path, with noise and with rendezvous (operation numbers are the same, so the
    /// noise draws are too).
    #[test]
    fn computed_allreduce_is_the_stored_one() {
        use crate::sim::{Dependency, Noise};
        let openib = crate::presets::open_mpi_openib();
        let tcp = crate::presets::mpich2_tcp();
        let operator = Operator::new(1e-7, 1e-10).unwrap();
        let sizes: Vec<u64> = (2..=40)
            .chain([63, 64, 65, 96, 127, 128, 129, 200])
            .collect();
        for p in sizes {
            for (m, with_operator) in [(8u64, false), (8, true), (100_000, true)] {
                let mut problem = Problem::new(p, Message::contiguous(m));
                if with_operator {
                    problem = problem.with_operator(operator);
                }
                let per_rank = 6 * u64::from(floor_log2(p)) + 4;
                let computed = recursive_doubling_allreduce(&problem, per_rank).unwrap();
                let stored = recursive_doubling_allreduce_stored(&problem, per_rank).unwrap();
                assert!(computed.operations().is_computed());
                assert!(!stored.operations().is_computed());
                let what = format!("P {p}, m {m}, operator {with_operator}");
                assert_eq!(computed.len(), stored.len(), "{what}");
                assert_eq!(computed.dependencies(), stored.dependencies(), "{what}");
                assert_eq!(computed.ranks(), stored.ranks(), "{what}");
                for i in 0..=stored.len() as u32 {
                    let op = OpId(i);
                    let deps = |s: &Schedule| s.dependents(op).collect::<Vec<(OpId, Dependency)>>();
                    assert_eq!(computed.kind(op), stored.kind(op), "{what}, op {i}");
                    assert_eq!(computed.rank(op), stored.rank(op), "{what}, op {i}");
                    assert_eq!(computed.peer(op), stored.peer(op), "{what}, op {i}");
                    assert_eq!(computed.tag(op), stored.tag(op), "{what}, op {i}");
                    assert_eq!(computed.message(op), stored.message(op), "{what}, op {i}");
                    assert_eq!(
                        computed.calc_seconds(op).map(f64::to_bits),
                        stored.calc_seconds(op).map(f64::to_bits),
                        "{what}, op {i}"
                    );
                    assert_eq!(computed.partner(op), stored.partner(op), "{what}, op {i}");
                    assert_eq!(deps(&computed), deps(&stored), "{what}, op {i}");
                }
                for (model, options) in [
                    (
                        &openib,
                        SimOptions {
                            timeline: true,
                            critical_path: true,
                            ..SimOptions::default()
                        },
                    ),
                    (
                        &tcp,
                        SimOptions {
                            critical_path: true,
                            rendezvous_above: Some(1000),
                            noise: Some(Noise::exponential(7, 2e-7).unwrap()),
                            ..SimOptions::default()
                        },
                    ),
                ] {
                    let x = simulate(&computed, model, &options).unwrap();
                    let y = simulate(&stored, model, &options).unwrap();
                    assert_eq!(x, y, "{what}");
                    assert_eq!(x.makespan.to_bits(), y.makespan.to_bits(), "{what}");
                }
            }
        }
    }

    /// The recursive-doubling allreduce and the binomial broadcast, written round by round or
    /// by receiver class, simulate exactly (makespan, finish times, events, timeline in each
    /// rank's order) as their programs written rank by rank with one `requires` per pair (the
    /// oracle).
    #[test]
    fn round_by_round_schedules_simulate_as_rank_by_rank() {
        let model = crate::presets::open_mpi_openib();
        let operator = Operator::new(1e-7, 1e-10).unwrap();
        let options = SimOptions {
            timeline: true,
            ..SimOptions::default()
        };
        for p in [1u64, 2, 3, 5, 6, 8, 13, 16, 33] {
            for (m, with_operator) in [(8u64, false), (1000, true), (100_000, false)] {
                let mut problem = Problem::new(p, Message::contiguous(m));
                if with_operator {
                    problem = problem.with_operator(operator);
                }
                for allreduce in [true, false] {
                    let built = if allreduce {
                        Allreduce::RecursiveDoubling.schedule(&problem).unwrap()
                    } else {
                        Broadcast::Binomial.schedule(&problem).unwrap()
                    };
                    let mut b = ScheduleBuilder::new(p);
                    for r in 0..p {
                        let mut prev: Vec<OpId> = Vec::new();
                        for step in program(allreduce, p, r) {
                            let mut ops = Vec::new();
                            for (kind, peer, tag) in step {
                                let op = match kind {
                                    0 => b.send(r, peer, tag, m),
                                    1 => b.recv(r, peer, tag, m),
                                    _ if with_operator => b.calc(r, operator.cost(m)),
                                    _ => continue,
                                };
                                for &d in &prev {
                                    b.requires(op, d);
                                }
                                ops.push(op);
                            }
                            if !ops.is_empty() {
                                prev = ops;
                            }
                        }
                    }
                    let oracle = b.build().unwrap();
                    assert_eq!(built.len(), oracle.len());
                    assert_eq!(built.dependencies(), oracle.dependencies());
                    let x = simulate(&built, &model, &options).unwrap();
                    let y = simulate(&oracle, &model, &options).unwrap();
                    let what = format!("allreduce {allreduce}, P {p}, m {m}");
                    assert_eq!(x.makespan.to_bits(), y.makespan.to_bits(), "{what}");
                    assert_eq!(x.rank_finish, y.rank_finish, "{what}");
                    assert_eq!(x.events, y.events, "{what}");
                    // each rank's operations in order: (kind, peer, start, end)
                    let per_rank = |s: &Schedule, run: &crate::sim::SimResult| {
                        let (starts, ends) =
                            (run.starts.clone().unwrap(), run.ends.clone().unwrap());
                        let mut out = vec![Vec::new(); p as usize];
                        for i in 0..s.len() {
                            let op = OpId(i as u32);
                            out[s.rank(op).unwrap() as usize].push((
                                s.kind(op),
                                s.peer(op),
                                starts[i].to_bits(),
                                ends[i].to_bits(),
                            ));
                        }
                        out
                    };
                    assert_eq!(per_rank(&built, &x), per_rank(&oracle, &y), "{what}");
                }
            }
        }
    }

    #[test]
    fn fold_pairs_the_extra_ranks() {
        for p in 1..100u64 {
            let (rem, pp, _) = fold(p, 0);
            assert_eq!(rem + pp, p);
            let mut news: Vec<u64> = (0..p).filter_map(|r| fold(p, r).2).collect();
            news.sort_unstable();
            assert_eq!(news, (0..pp).collect::<Vec<_>>());
            for r in 0..p {
                if let Some(n) = fold(p, r).2 {
                    assert_eq!(unfold(rem, n), r);
                }
            }
        }
    }
}
