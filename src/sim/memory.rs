//! The simulator's memory budget: what a schedule and its simulation need, computed before
//! anything is allocated, so that a schedule too large for the machine is an error
//! ([`SimError::MemoryBudget`]) instead of a process the allocator aborts.
//!
//! The estimate is an upper bound of the heap a schedule needs from its first operation to
//! the end of its simulation with every option on (timeline, critical path):
//!
//! ```text
//! bytes = operations × bytes per operation (of the layout)
//!       + dependency entries × BYTES_PER_DEPENDENCY_ENTRY + dependencies × BYTES_PER_DEPENDENCY
//!       + ranks × BYTES_PER_RANK + distinct values × BYTES_PER_DISTINCT_VALUE
//! ```
//!
//! * [`ScheduleBuilder`](super::ScheduleBuilder) checks it each time one of its arrays is
//!   about to grow (so the check sees the capacity the allocation asks for), the collective
//!   builders ([`ToSchedule`](super::ToSchedule)) and [`parse_goal`](super::parse_goal)
//!   through it; the GOAL reader adds the labels of the rank block it is reading.
//! * [`Simulator`](super::Simulator) checks the schedule's own arrays plus its state before
//!   it allocates that state.
//!
//! The default budget is [`DEFAULT_MAX_MEMORY`] (2 GiB);
//! [`ToSchedule::schedule_within`](super::ToSchedule::schedule_within),
//! [`ScheduleBuilder::set_max_memory`](super::ScheduleBuilder::set_max_memory),
//! [`parse_goal_within`](super::parse_goal_within) and
//! [`Simulator::set_max_memory`](super::Simulator::set_max_memory) set another
//! (`commcost simulate --max-memory`).

use std::cell::Cell;

use crate::sim::SimError;

/// The memory budget used unless another is given: 2 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 2 << 30;

/// Bytes per operation of a stored schedule's own arrays, from the first operation added to
/// the end of its simulation: the builder's arrays (kind and message, rank, peer: 12 bytes,
/// up to twice that while they grow, and a copy of them while a GOAL text's halves are
/// joined), then the schedule's (kind and message, rank, partner, order, successor offsets,
/// roots: 24 bytes; while messages are matched and, at the same time, the successor lists
/// made, 25 more: each send and receive in its source's bucket with its destination and tag,
/// the peers, the order's inverse, which operations have a dependency).
pub const SCHEDULE_BYTES_PER_OPERATION: u64 = 64;

/// Bytes per operation of a simulation's state: the operation's state (12 bytes), its end and
/// the operation that held it back (12 bytes, for the critical path), its share of the event
/// queue and of the lists of ready operations (16 bytes).
pub const SIMULATION_BYTES_PER_OPERATION: u64 = 40;

/// Bytes per operation of a simulation's timeline (start and end in operation order, 24 bytes
/// while they are gathered), when it is kept.
pub const TIMELINE_BYTES_PER_OPERATION: u64 = 24;

/// Bytes per operation of a stored schedule and its simulation with every option on:
/// [`SCHEDULE_BYTES_PER_OPERATION`] + [`SIMULATION_BYTES_PER_OPERATION`] +
/// [`TIMELINE_BYTES_PER_OPERATION`] = 128. (A computed schedule, the recursive-doubling
/// allreduce, stores nothing per operation: its simulation needs 40 bytes per operation, 64
/// with the timeline.)
pub const STORED_BYTES_PER_OPERATION: u64 =
    SCHEDULE_BYTES_PER_OPERATION + SIMULATION_BYTES_PER_OPERATION + TIMELINE_BYTES_PER_OPERATION;

/// Bytes per dependency (`a requires b`): its entry in the schedule's successor lists.
pub const BYTES_PER_DEPENDENCY: u64 = 4;

/// Bytes per entry of a builder's dependency list (a single dependency, or half of a group of
/// [`requires_all`](super::ScheduleBuilder::requires_all)): 8 bytes, up to twice that while
/// the list grows.
pub const BYTES_PER_DEPENDENCY_ENTRY: u64 = 16;

/// Bytes per distinct value a schedule interns: a (kind, tag, message) signature, a message
/// (with the simulation's quantities of it) or a calc time, in its table and its index. A
/// collective's schedule has a few; a GOAL file may give each operation its own tag, size
/// and calc time.
pub const BYTES_PER_DISTINCT_VALUE: u64 = 160;

/// Bytes per rank of a simulation: the rank's resources (CPU, sending and receiving NIC,
/// finish: 32 bytes), the operations holding them (12 bytes, for the critical path), its
/// finish time in rank order and its number (12 bytes), rounded up.
pub const SIMULATION_BYTES_PER_RANK: u64 = 64;

/// Bytes per rank of a schedule and its simulation: [`SIMULATION_BYTES_PER_RANK`], the
/// schedule's rank numbering, the matching's buckets and a builder's per-rank bookkeeping
/// (trees, the previous step of each rank): 160.
pub const BYTES_PER_RANK: u64 = 160;

thread_local! {
    /// The budget of the builders created on this thread (set for the duration of
    /// [`ToSchedule::schedule_within`](super::ToSchedule::schedule_within)).
    static BUDGET: Cell<u64> = const { Cell::new(DEFAULT_MAX_MEMORY) };
}

/// The budget a new builder starts with on this thread.
pub(crate) fn current_budget() -> u64 {
    BUDGET.with(Cell::get)
}

/// Runs `f` with `bytes` as the budget of the builders it creates, then restores the previous
/// budget.
pub(crate) fn with_budget<T>(bytes: u64, f: impl FnOnce() -> T) -> T {
    let previous = BUDGET.with(|b| b.replace(bytes));
    let out = f();
    BUDGET.with(|b| b.set(previous));
    out
}

/// The memory a stored schedule of `operations` operations, `dependencies` dependencies held
/// in `entries` builder entries, and `ranks` ranks needs from building to the end of its
/// simulation, bytes (saturating at `u64::MAX`).
///
/// # Examples
///
/// ```
/// use commcost::sim::{BYTES_PER_RANK, STORED_BYTES_PER_OPERATION, stored_schedule_memory};
///
/// // a linear broadcast from rank 0 to 2^20 ranks: 2 (2^20 - 1) operations, no dependencies
/// let ops = 2 * ((1u64 << 20) - 1);
/// assert_eq!(
///     stored_schedule_memory(ops, 0, 0, 1 << 20),
///     ops * STORED_BYTES_PER_OPERATION + (1 << 20) * BYTES_PER_RANK
/// );
/// ```
#[must_use]
pub fn stored_schedule_memory(operations: u64, dependencies: u64, entries: u64, ranks: u64) -> u64 {
    let total = u128::from(operations) * u128::from(STORED_BYTES_PER_OPERATION)
        + u128::from(dependencies) * u128::from(BYTES_PER_DEPENDENCY)
        + u128::from(entries) * u128::from(BYTES_PER_DEPENDENCY_ENTRY)
        + u128::from(ranks) * u128::from(BYTES_PER_RANK);
    u64::try_from(total).unwrap_or(u64::MAX)
}

/// The memory a simulation needs on top of the schedule's own arrays, for `operations`
/// operations of `ranks` ranks, with or without the timeline, bytes (saturating):
/// [`SIMULATION_BYTES_PER_OPERATION`] (+ [`TIMELINE_BYTES_PER_OPERATION`]) per operation and
/// [`SIMULATION_BYTES_PER_RANK`] per rank.
///
/// # Examples
///
/// ```
/// use commcost::sim::simulation_memory;
///
/// // the recursive-doubling allreduce at P = 2^20: 42 million operations, about 1.7 GB
/// assert_eq!(simulation_memory(41_943_040, 1 << 20, false), 41_943_040 * 40 + (1 << 20) * 64);
/// ```
#[must_use]
pub fn simulation_memory(operations: u64, ranks: u64, timeline: bool) -> u64 {
    let per_op = SIMULATION_BYTES_PER_OPERATION
        + if timeline {
            TIMELINE_BYTES_PER_OPERATION
        } else {
            0
        };
    let total = u128::from(operations) * u128::from(per_op)
        + u128::from(ranks) * u128::from(SIMULATION_BYTES_PER_RANK);
    u64::try_from(total).unwrap_or(u64::MAX)
}

/// `Ok` when `needed <= budget`, else [`SimError::MemoryBudget`].
pub(crate) fn check(needed: u64, budget: u64) -> Result<(), SimError> {
    if needed > budget {
        Err(SimError::MemoryBudget { needed, budget })
    } else {
        Ok(())
    }
}
