//! Errors of the simulator: schedules that cannot be built or simulated, GOAL text that cannot
//! be read.

use thiserror::Error;

use crate::collectives::CollectiveError;

/// A schedule that cannot be built or simulated ([`sim`](crate::sim)).
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SimError {
    /// A schedule of 0 ranks.
    #[error("a schedule needs at least one rank, got 0")]
    NoRanks,
    /// A rank (of an operation, or its peer) outside `0..ranks`.
    #[error("{what} = {rank} is outside 0..{ranks}")]
    RankOutOfRange {
        /// Which field (`"rank"`, `"peer"`).
        what: &'static str,
        /// The rejected rank.
        rank: u64,
        /// The schedule's number of ranks.
        ranks: u64,
    },
    /// A dependency that names an operation that does not exist.
    #[error("dependency of operation {op} on operation {on}: only {ops} operations exist")]
    UnknownOperation {
        /// The dependent operation.
        op: u64,
        /// The operation it depends on.
        on: u64,
        /// Number of operations.
        ops: u64,
    },
    /// A dependency between operations of two different ranks (GOAL dependencies are local).
    #[error("operation {op} (rank {rank}) depends on operation {on} of rank {other_rank}")]
    CrossRankDependency {
        /// The dependent operation.
        op: u64,
        /// Its rank.
        rank: u64,
        /// The operation it depends on.
        on: u64,
        /// That operation's rank.
        other_rank: u64,
    },
    /// The dependencies of a rank form a cycle through this operation.
    #[error("the dependencies of rank {rank} form a cycle through operation {op}")]
    Cycle {
        /// The rank.
        rank: u64,
        /// An operation on the cycle.
        op: u64,
    },
    /// A send or receive without a partner: matching by `(source, destination, tag)` in the
    /// order of the operation lists found no counterpart.
    #[error("{kind} {op} of rank {rank} (peer {peer}, tag {tag}) has no matching {missing}")]
    Unmatched {
        /// `"send"` or `"recv"`.
        kind: &'static str,
        /// The operation.
        op: u64,
        /// Its rank.
        rank: u64,
        /// Its peer.
        peer: u64,
        /// Its tag.
        tag: u64,
        /// `"recv"` or `"send"`.
        missing: &'static str,
    },
    /// A send and the receive it matched disagree on the size.
    #[error("send {send} ({send_bytes} bytes) matched recv {recv} of {recv_bytes} bytes")]
    SizeMismatch {
        /// The send.
        send: u64,
        /// Its bytes.
        send_bytes: u64,
        /// The receive.
        recv: u64,
        /// Its bytes.
        recv_bytes: u64,
    },
    /// An invalid time or cost (negative, NaN or infinite).
    #[error("`{name}` = {value} is invalid: it must be finite and >= 0")]
    InvalidTime {
        /// Which quantity.
        name: &'static str,
        /// The rejected value.
        value: f64,
    },
    /// A time above the simulator's bound for it (so that no sum of times overflows).
    #[error("`{name}` = {value:e} s is above the {limit:e} s accepted")]
    TimeTooLarge {
        /// Which quantity.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// The bound, seconds.
        limit: f64,
    },
    /// More operations than the simulator indexes (`u32`).
    #[error("{what}: {count} exceeds the limit of {limit}")]
    TooLarge {
        /// What is counted.
        what: &'static str,
        /// How many were requested.
        count: u64,
        /// The limit.
        limit: u64,
    },
    /// Operations that never ran: their dependencies and messages wait on each other across
    /// ranks (e.g. two ranks that each receive before they send, in rendezvous mode).
    #[error("deadlock: {stuck} operations never ran, first operation {op} of rank {rank}")]
    Deadlock {
        /// Number of operations that never completed.
        stuck: u64,
        /// The first of them.
        op: u64,
        /// Its rank.
        rank: u64,
    },
    /// A simulation option out of its range ([`SimOptions`](crate::sim::SimOptions)).
    #[error("option `{name}`: {message}")]
    InvalidOption {
        /// The option's field name.
        name: &'static str,
        /// What is wrong.
        message: &'static str,
    },
    /// A collective problem the builder cannot express.
    #[error(transparent)]
    Collective(#[from] CollectiveError),
    /// The schedule and its simulation would need more memory than the budget allows
    /// ([`sim::DEFAULT_MAX_MEMORY`](crate::sim::DEFAULT_MAX_MEMORY) unless set otherwise);
    /// nothing of that size was allocated.
    #[error(
        "the schedule and its simulation need about {needed} bytes ({:.1} GiB), more than the \
         memory budget of {budget} bytes ({:.1} GiB); raise it with --max-memory on the \
         command line, `max_memory` in the library",
        *needed as f64 / f64::from(1u32 << 30),
        *budget as f64 / f64::from(1u32 << 30)
    )]
    MemoryBudget {
        /// The bytes the schedule and its simulation would need (an upper bound).
        needed: u64,
        /// The budget, bytes.
        budget: u64,
    },
}

/// A GOAL schedule text that cannot be read ([`sim::parse_goal`](crate::sim::parse_goal)).
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum GoalError {
    /// A syntax error.
    #[error("line {line}: {message}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// What was expected and what was found.
        message: String,
    },
    /// A construct of the format this reader does not simulate (wildcard source or tag).
    #[error("line {line}: unsupported: {message}")]
    Unsupported {
        /// 1-based line number.
        line: usize,
        /// What is not supported.
        message: String,
    },
    /// The dependencies of a rank form a cycle through the operation at this line.
    #[error("line {line}: the dependencies of rank {rank} form a cycle through {}", if label.is_empty() { "this operation".to_string() } else { format!("`{label}`") })]
    Cycle {
        /// The rank.
        rank: u64,
        /// 1-based line of an operation on the cycle.
        line: usize,
        /// Its label (empty if it has none).
        label: String,
    },
    /// A send or receive of the text without a partner ([`SimError::Unmatched`]): matching by
    /// `(source, destination, tag)` in the order of the text found no counterpart.
    #[error(
        "line {line}: {kind}{} of rank {rank} (peer {peer}, tag {tag}) has no matching {missing}",
        labelled(label)
    )]
    Unmatched {
        /// 1-based line of the operation.
        line: usize,
        /// Its label (empty if it has none).
        label: String,
        /// `"send"` or `"recv"`.
        kind: &'static str,
        /// Its rank.
        rank: u64,
        /// Its peer.
        peer: u64,
        /// Its tag.
        tag: u64,
        /// `"recv"` or `"send"`.
        missing: &'static str,
    },
    /// A send and the receive it matched disagree on the size ([`SimError::SizeMismatch`]).
    #[error(
        "line {line}: send{} of rank {rank} ({bytes} bytes) matched the recv{} of rank \
         {recv_rank} at line {recv_line}, of {recv_bytes} bytes",
        labelled(label),
        labelled(recv_label)
    )]
    SizeMismatch {
        /// 1-based line of the send.
        line: usize,
        /// Its label (empty if it has none).
        label: String,
        /// Its rank.
        rank: u64,
        /// Its bytes.
        bytes: u64,
        /// 1-based line of the receive.
        recv_line: usize,
        /// Its label (empty if it has none).
        recv_label: String,
        /// Its rank.
        recv_rank: u64,
        /// Its bytes.
        recv_bytes: u64,
    },
    /// The parsed schedule fails validation otherwise.
    #[error("{0}")]
    Schedule(#[from] SimError),
    /// The file cannot be read ([`read_goal_file`](crate::sim::read_goal_file)).
    #[error("{0}")]
    File(#[from] crate::error::FileError),
}

/// ` `label`` (cut to its first 40 characters), or nothing for an operation without a label.
fn labelled(label: &str) -> String {
    if label.is_empty() {
        String::new()
    } else {
        format!(" `{}`", crate::sim::goal::echo(label))
    }
}
