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

mod allgather;
mod allreduce;
mod alltoall;
mod barrier;
mod bcast;
mod fold;
mod gather;
mod ompi;
mod reduce;
mod scan;
mod scatter;
mod shapes;
mod writer;

use crate::collectives::CollectiveError;
use crate::collectives::Problem;
#[cfg(doc)]
use crate::collectives::{
    Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Reduce, Scan, Scatter,
};
use crate::sim::SimError;
use crate::sim::builder::ScheduleBuilder;
use crate::sim::schedule::Schedule;

/// A collective algorithm that can write out its message schedule.
///
/// Schedules (root 0, `h = ⌈log2 P⌉`, `h' = ⌊log2 P⌋`, `p' = 2^h'`, `m` the problem's bytes):
///
/// * [`Bcast::Linear`], [`Scatter::Linear`]: the root posts `P - 1` sends (ranks `1..P` in
///   order) in one step; [`Gather::Linear`]: every rank sends, the root posts `P - 1` receives.
/// * [`Bcast::Binomial`]: rank `r > 0` receives from `r - lowbit(r)`, then sends to
///   `r + 2^j` for `2^j < lowbit(r)` (root: `2^j < 2^h`), largest subtree first (MPICH).
/// * [`Scatter::Binomial`], [`Gather::Binomial`], [`Reduce::Binomial`]: the same tree; a scatter
///   edge into child `c` carries `m · min(lowbit(c), P - c)` bytes, largest first; a gather
///   edge the same blocks upwards, smallest subtree first; a reduce edge `m` bytes, each
///   receive followed by `op(m)`.
/// * [`Bcast::ScatterAllgather`]: the binomial scatter of `⌈m/P⌉`-byte blocks, then `P - 1`
///   ring steps (send right, receive left).
/// * [`Bcast::Pipelined`]: a chain `0 → 1 → … → P-1` of `q = ⌈m/segment⌉` segments of
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
/// use commcost::collectives::{Bcast, Problem};
/// use commcost::sim::ToSchedule;
/// use commcost::Message;
///
/// let s = Bcast::Binomial.schedule(&Problem::new(8, Message::contiguous(64)))?;
/// // 7 sends and 7 receives
/// assert_eq!(s.len(), 14);
/// # Ok::<(), commcost::sim::SimError>(())
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
    /// use commcost::collectives::{Bcast, Problem};
    /// use commcost::sim::ToSchedule;
    /// use commcost::Message;
    /// use commcost::sim::SimError;
    ///
    /// let problem = Problem::new(1 << 16, Message::contiguous(8));
    /// assert!(Bcast::Linear.schedule_within(&problem, 1 << 30).is_ok());
    /// assert!(matches!(
    ///     Bcast::Linear.schedule_within(&problem, 1 << 20),
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

#[cfg(test)]
mod tests {
    use super::allreduce::{recursive_doubling_allreduce, recursive_doubling_allreduce_stored};
    use super::fold::{fold, unfold};
    use super::*;
    use crate::Message;
    use crate::collectives::{Allreduce, Bcast, Operator};
    use crate::sim::op::OpId;
    use crate::sim::{SimOptions, simulate};
    use crate::util::bits::{ceil_log2, floor_log2, lowbit};

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
                        Bcast::Binomial.schedule(&problem).unwrap()
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
