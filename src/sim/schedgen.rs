//! Schedgen's communication patterns as schedules ([`SchedgenPattern`]).

use std::str::FromStr;

use super::build::sized_builder;
use super::op::OpId;
use super::schedule::Schedule;
use crate::collectives::{AlgorithmParseError, CollectiveError};
use crate::sim::SimError;
use crate::util::bits::ceil_log2;

/// A communication pattern of Schedgen (its `-p` names), as the schedule LogGOPSim's Schedgen
/// (`src/Schedgen/schedgen.cpp` in the `spcl/LogGOPSim` repository; T. Hoefler, T. Schneider,
/// A. Lumsdaine, "LogGOPSim — Simulating Large-Scale Applications in the LogGOPS Model",
/// HPDC/LSAP 2010) writes for `schedgen -p PATTERN -s P -d BYTES` (root 0, no `--nb`): the same
/// operations, peers, sizes, tags and dependencies, in the same order, so that
/// [`write_goal`](super::write_goal) of a pattern's schedule and Schedgen's own file are read
/// into the same schedule by [`parse_goal`](super::parse_goal). `commcost goal PATTERN` writes
/// them.
///
/// Each pattern is written rank by rank, as Schedgen writes it: operation `i` of rank `r` is
/// Schedgen's label `l<i+1>` of rank `r`, and every `requires` Schedgen writes is a
/// [`Dependency::Requires`](super::Dependency::Requires) here, repeated ones included (the
/// binomial broadcast repeats the dependency of a rank's sends on its receive once per round).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchedgenPattern {
    /// `binomialtreebcast`: in round `k` (of `⌈log2 P⌉`) rank `r < 2^k` sends `bytes` to
    /// `r + 2^k` (if it exists) and rank `2^k <= r < 2^(k+1)` receives from `r - 2^k`; every send
    /// after a rank's receive requires it.
    BinomialTreeBcast,
    /// `dissemination`: in round `k` (while `2^k < P`) every rank sends `bytes` to
    /// `r + 2^k mod P`, then receives from `r - 2^k mod P`; each send but the first requires
    /// the previous receive.
    Dissemination,
    /// `allreduce_ring`: `2 (P - 1)` steps (reduce-scatter, then allgather), each a send of
    /// `⌊bytes / P⌋` bytes to `r + 1 mod P` and a receive from `r - 1 mod P`; each send but the
    /// first requires the previous receive.
    AllreduceRing,
    /// `allreduce_recdoub`: `log2 P` steps of recursive halving (exchange with `r xor 2^k`,
    /// `bytes / 2^(k+1)` bytes, integer division), then `log2 P` of recursive doubling back
    /// (the sizes doubling again); each send but the first requires the previous receive. `P`
    /// must be a power of two (Schedgen names ranks beyond `P` otherwise).
    AllreduceRecdoub,
}

impl SchedgenPattern {
    /// Every pattern, in the order of [`name`](Self::name)s listed by errors.
    pub const ALL: [Self; 4] = [
        Self::BinomialTreeBcast,
        Self::Dissemination,
        Self::AllreduceRing,
        Self::AllreduceRecdoub,
    ];

    /// Schedgen's name of the pattern (its `-p` value).
    pub fn name(self) -> &'static str {
        match self {
            Self::BinomialTreeBcast => "binomialtreebcast",
            Self::Dissemination => "dissemination",
            Self::AllreduceRing => "allreduce_ring",
            Self::AllreduceRecdoub => "allreduce_recdoub",
        }
    }

    /// The number of operations of the pattern on `procs` ranks (`u128`: no overflow).
    pub fn operations(self, procs: u64) -> u128 {
        let p = u128::from(procs);
        match self {
            // every rank but the root receives once, and every receive has its send
            Self::BinomialTreeBcast => 2 * p.saturating_sub(1),
            Self::Dissemination => 2 * p * u128::from(ceil_log2(procs)),
            Self::AllreduceRing => 4 * p * p.saturating_sub(1),
            Self::AllreduceRecdoub => 4 * p * u128::from(ceil_log2(procs)),
        }
    }

    /// The pattern's schedule on `procs` ranks with `bytes` bytes per basic step, as
    /// Schedgen writes it (see [`SchedgenPattern`]).
    ///
    /// # Errors
    ///
    /// [`CollectiveError::NoProcesses`] (as [`SimError::Collective`]) for `procs = 0`,
    /// [`CollectiveError::NotApplicable`] for `allreduce_recdoub` on a `procs` that is not a
    /// power of two, [`SimError::TooLarge`] beyond
    /// [`MAX_BUILT_OPERATIONS`](super::MAX_BUILT_OPERATIONS) operations or
    /// [`MAX_RANKS`](super::MAX_RANKS) ranks, [`SimError::MemoryBudget`] beyond the memory
    /// budget ([`schedule_within`](Self::schedule_within)).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::sim::{OpId, OpKind, SchedgenPattern, parse_goal, write_goal};
    ///
    /// let s = SchedgenPattern::AllreduceRing.schedule(4, 1024)?;
    /// assert_eq!(s.len(), 4 * 4 * 3);
    /// // a ring of 256-byte chunks
    /// assert!((0..s.len()).all(|i| s.message(OpId(i as u32)).unwrap().bytes() == 256));
    /// // what `schedgen -p allreduce_ring -s 4 -d 1024` writes, read back
    /// let back = parse_goal(&write_goal(&s, 1e-9)?, 1e-9)?;
    /// assert_eq!(back.kind(OpId(0)), Some(OpKind::Send));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn schedule(self, procs: u64, bytes: u64) -> Result<Schedule, SimError> {
        if procs == 0 {
            return Err(CollectiveError::NoProcesses.into());
        }
        if self == Self::AllreduceRecdoub && !procs.is_power_of_two() {
            return Err(CollectiveError::NotApplicable {
                algorithm: "allreduce_recdoub",
                processes: procs,
                requirement: "a power of two",
            }
            .into());
        }
        let ops = self.operations(procs);
        let limit = super::MAX_BUILT_OPERATIONS;
        if ops > u128::from(limit) {
            return Err(SimError::TooLarge {
                what: "operations",
                count: u64::try_from(ops).unwrap_or(u64::MAX),
                limit,
            });
        }
        // at most `limit` operations: fits u64, and per rank below it
        let per_rank = (ops as u64).div_ceil(procs);
        let mut b = sized_builder(procs, per_rank)?;
        for r in 0..procs {
            match self {
                Self::BinomialTreeBcast => {
                    let (mut send, mut recv) = (None::<OpId>, None::<OpId>);
                    for k in 0..ceil_log2(procs) {
                        let step = 1u64 << k;
                        if r < step && r + step < procs {
                            send = Some(b.send(r, r + step, 0, bytes));
                        }
                        if let (Some(s), Some(v)) = (send, recv) {
                            b.requires(s, v);
                        }
                        if r >= step && r < step << 1 {
                            recv = Some(b.recv(r, r - step, 0, bytes));
                        }
                    }
                }
                Self::Dissemination => {
                    let mut recv = None;
                    let mut dist = 1u64;
                    while dist < procs {
                        let send = b.send(r, (r + dist) % procs, 0, bytes);
                        if let Some(v) = recv {
                            b.requires(send, v);
                        }
                        recv = Some(b.recv(r, (r + procs - dist) % procs, 0, bytes));
                        dist <<= 1;
                    }
                }
                Self::AllreduceRing => {
                    let chunk = bytes / procs;
                    let (to, from) = ((r + 1) % procs, (r + procs - 1) % procs);
                    let mut recv = None;
                    for _ in 0..2 * (procs - 1) {
                        let send = b.send(r, to, 0, chunk);
                        if let Some(v) = recv {
                            b.requires(send, v);
                        }
                        recv = Some(b.recv(r, from, 0, chunk));
                    }
                }
                Self::AllreduceRecdoub => {
                    let steps = ceil_log2(procs);
                    let mut size = bytes;
                    let mut recv = None;
                    let mut exchange = |b: &mut super::ScheduleBuilder, peer: u64, size: u64| {
                        let send = b.send(r, peer, 0, size);
                        if let Some(v) = recv {
                            b.requires(send, v);
                        }
                        recv = Some(b.recv(r, peer, 0, size));
                    };
                    for k in 0..steps {
                        size /= 2;
                        exchange(&mut b, r ^ (1 << k), size);
                    }
                    for k in (0..steps).rev() {
                        exchange(&mut b, r ^ (1 << k), size);
                        size = size.saturating_mul(2);
                    }
                }
            }
        }
        b.build()
    }

    /// [`schedule`](Self::schedule) within a memory budget of `max_memory` bytes (see
    /// [`stored_schedule_memory`](super::stored_schedule_memory)).
    ///
    /// # Errors
    ///
    /// As [`schedule`](Self::schedule); [`SimError::MemoryBudget`] when the schedule and its
    /// simulation would need more than `max_memory` bytes.
    pub fn schedule_within(
        self,
        procs: u64,
        bytes: u64,
        max_memory: u64,
    ) -> Result<Schedule, SimError> {
        super::memory::with_budget(max_memory, || self.schedule(procs, bytes))
    }
}

impl std::fmt::Display for SchedgenPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SchedgenPattern {
    type Err = AlgorithmParseError;

    /// Schedgen's `-p` name (`binomialtreebcast`, `dissemination`, `allreduce_ring`,
    /// `allreduce_recdoub`), any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| AlgorithmParseError::Unknown {
                collective: "Schedgen pattern",
                name: s.to_string(),
                known: Self::ALL.map(Self::name).join(", "),
            })
    }
}
