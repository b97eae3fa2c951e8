//! Hierarchical collectives: a collective composed of collectives on sub-communicators — the
//! ranks of each node, and the node leaders (the lowest rank of each node) — as the classic
//! two-level compositions and Open MPI 4.1's `han` component run them ([`Hierarchical`]),
//! written out as one schedule ([`Hierarchical::schedule`]) and priced by simulation on a
//! two-level platform ([`cost_hierarchical`]).
//!
//! Each sub-communicator's call is the schedule of the algorithm its library runs there (Open
//! MPI's tuned fixed decision for its size, or libnbc's choice for `han`'s leaders), its ranks
//! renamed to the global ones. A rank starts a call's operations once its part of each call the
//! composition orders before it has finished (its last operations there); ranks of different
//! nodes proceed independently, joined only by the messages.

use std::fmt;
use std::str::FromStr;

use super::{
    Dependency, NodeMap, OpId, OpKind, Schedule, ScheduleBuilder, SimError, SimLimits, SimOptions,
    Simulator, ToSchedule, TwoLevel,
};
use crate::collectives::ompi::{self, OmpiAlgorithm, fixed_algorithm};
use crate::collectives::{Bcast, Collective, CollectiveError, Gather, Problem, Reduce, Scatter};
use crate::{CommModel, Message};

/// A hierarchical composition of a collective.
///
/// | collective | [`Leaders`](Self::Leaders) | [`Han`](Self::Han) (per segment, pipelined) |
/// |---|---|---|
/// | bcast | leaders' bcast, then each node's bcast | leaders' ibcast, then each node's bcast |
/// | reduce | each node's reduce, then the leaders' | each node's reduce, then the leaders' ireduce |
/// | allreduce | node reduce, leaders' allreduce, node bcast | node reduce, leaders' ireduce and ibcast, node bcast |
/// | gather | node gather (`m`), leaders' gather (`k m`) | the same, leaders' igather linear |
/// | scatter | leaders' scatter (`k m`), node scatter (`m`) | the same, leaders' iscatter linear |
/// | allgather | node gather, leaders' allgather (`k m`), node bcast (`P m`) | — |
///
/// (`k` ranks per node; gather, scatter and allgather need every node to hold the same number
/// of ranks.) A node's calls run Open MPI 4.1.4's tuned fixed decision for the node's size
/// ([`fixed_algorithm`]); [`Leaders`](Self::Leaders)' leader calls run it for the number of
/// nodes. `han`'s leader calls are libnbc's (Open MPI 4.1, `ompi/mca/coll/libnbc`,
/// `nbc_ibcast.c`, `nbc_ireduce.c`): ibcast linear on at most 4 leaders, else binomial below
/// 64 KiB, else a chain of 8 KiB fragments below 512 KiB and 32 KiB fragments above; ireduce a
/// chain of 8 KiB fragments on at most 4 leaders from 64 KiB (commutative operator), else
/// binomial; igather and iscatter linear.
///
/// `han` cuts bcast, reduce and allreduce into segments of `segment` bytes
/// (`coll_han_<coll>_segsize`, 64 KiB by default) and pipelines them as its tasks do
/// (`coll_han_bcast.c`, `coll_han_reduce.c`, `coll_han_allreduce.c`): a leader posts segment
/// `i + 1`'s leader call once segment `i`'s has finished and segment `i - 1`'s node call too;
/// a segment's node call follows its leader call (bcast) or precedes it (reduce).
///
/// Open MPI runs `han` when its priority is above tuned's (`--mca coll_han_priority 100`); a
/// rules file cannot ask for it (its rules choose among tuned's algorithms only).
///
/// # Examples
///
/// ```
/// use commcost::sim::Hierarchical;
///
/// assert_eq!("han".parse::<Hierarchical>()?, Hierarchical::HAN);
/// assert_eq!(Hierarchical::Han { segment: 8192 }.to_string(), "han:segment=8192");
/// assert_eq!("leaders".parse::<Hierarchical>()?, Hierarchical::Leaders);
/// # Ok::<(), commcost::sim::SimError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hierarchical {
    /// The classic two-level composition through the node leaders, unsegmented, every call
    /// Open MPI's tuned fixed decision for its sub-communicator.
    Leaders,
    /// Open MPI 4.1's `han` with its default modules (libnbc between leaders, tuned inside a
    /// node), segments of `segment` bytes.
    Han {
        /// `coll_han_<coll>_segsize`, bytes (`> 0`).
        segment: u64,
    },
}

impl Hierarchical {
    /// `han` with Open MPI 4.1's default segment size, 64 KiB.
    pub const HAN: Self = Self::Han { segment: 65536 };

    /// Both compositions, `han` with its default segment.
    pub const ALL: [Self; 2] = [Self::Leaders, Self::HAN];

    /// The collectives this composition prices.
    pub fn collectives(self) -> &'static [Collective] {
        match self {
            Self::Leaders => &[
                Collective::Bcast,
                Collective::Reduce,
                Collective::Allreduce,
                Collective::Gather,
                Collective::Scatter,
                Collective::Allgather,
            ],
            Self::Han { .. } => &[
                Collective::Bcast,
                Collective::Reduce,
                Collective::Allreduce,
                Collective::Gather,
                Collective::Scatter,
            ],
        }
    }

    /// The schedule of `collective` composed this way for `problem` on the ranks of `nodes`
    /// (root rank 0, a leader: the lowest rank of its node).
    ///
    /// # Errors
    ///
    /// [`SimError::InvalidOption`]: `nodes` for a map of another size than
    /// `problem.processes`, or (gather, scatter, allgather) nodes of unequal sizes;
    /// `collective` for one the composition does not price; `segment` for a zero segment.
    /// [`SimError::TooLarge`] beyond [`MAX_OPERATIONS`](super::MAX_OPERATIONS) operations, and
    /// the errors of the calls' schedules.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::{Collective, Problem};
    /// use commcost::sim::{Hierarchical, NodeMap};
    /// use commcost::Message;
    ///
    /// // 2 nodes of 2 ranks: 0 → 2 between the leaders, then 0 → 1 and 2 → 3
    /// let s = Hierarchical::Leaders.schedule(Collective::Bcast, &NodeMap::block(2, 2)?,
    ///     &Problem::new(4, Message::contiguous(8)))?;
    /// assert_eq!(s.len(), 6);
    /// # Ok::<(), commcost::sim::SimError>(())
    /// ```
    pub fn schedule(
        self,
        collective: Collective,
        nodes: &NodeMap,
        problem: &Problem,
    ) -> Result<Schedule, SimError> {
        self.schedule_within(collective, nodes, problem, super::MAX_OPERATIONS)
    }

    fn schedule_within(
        self,
        collective: Collective,
        nodes: &NodeMap,
        problem: &Problem,
        max_operations: u64,
    ) -> Result<Schedule, SimError> {
        if !self.collectives().contains(&collective) {
            return Err(SimError::InvalidOption {
                name: "collective",
                message: "the hierarchical composition does not price this collective",
            });
        }
        let mut plan = Plan::new(nodes, problem, max_operations)?;
        let m = problem.message.bytes();
        match self {
            Self::Leaders => plan.leaders(collective, m)?,
            Self::Han { segment } => plan.han(collective, m, segment)?,
        }
        plan.compose()
    }
}

impl fmt::Display for Hierarchical {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Leaders => f.write_str("leaders"),
            Self::Han { segment } => write!(f, "han:segment={segment}"),
        }
    }
}

impl FromStr for Hierarchical {
    type Err = SimError;

    /// `leaders`, `han` (64 KiB segments) or `han:segment=N`.
    fn from_str(s: &str) -> Result<Self, SimError> {
        let bad = SimError::InvalidOption {
            name: "hierarchical",
            message: "expected `leaders`, `han` or `han:segment=BYTES` (BYTES > 0)",
        };
        match s.trim() {
            "leaders" => Ok(Self::Leaders),
            "han" => Ok(Self::HAN),
            other => {
                let segment = other
                    .strip_prefix("han:segment=")
                    .and_then(|v| v.parse::<u64>().ok())
                    .filter(|&v| v > 0)
                    .ok_or(bad)?;
                Ok(Self::Han { segment })
            }
        }
    }
}

/// The time of `collective` composed as `hierarchy` on the two-level platform: its schedule
/// ([`Hierarchical::schedule`]) simulated with `intra` inside a node and `platform.inter`
/// between nodes, a node's ranks sharing its link ([`Simulator::simulate_two_level`]). The
/// messages and the operator only: `problem.local` (copies, per-call costs) is not added.
///
/// # Errors
///
/// As [`Hierarchical::schedule`]; [`SimError::TooLarge`] beyond `limits`.
///
/// # Examples
///
/// A broadcast of 8 bytes on 2 nodes of 2 ranks (consecutive ranks on a node). Inside a node
/// LogGP `L = 0.5`, `o = 0.1` µs; between nodes `L = 10`, `o = 1` µs. Through the leaders:
/// 0 → 2 arrives at `1 + 10 + 1 = 12` µs, then 2 → 3 inside node 1 at `12 + 0.7 = 12.7` µs
/// (0 → 1 is done at `1 + 0.7` µs). Open MPI's flat binomial tree sends 0 → 2 and 1 → 3 across
/// the link: 14.1 µs (see [`cost_on_nodes_in`](super::cost_on_nodes_in)).
///
/// ```
/// use commcost::collectives::{Collective, Problem};
/// use commcost::sim::{Hierarchical, NodeMap, SimLimits, SimOptions, TwoLevel, cost_hierarchical};
/// use commcost::{LogGP, Message};
///
/// let shm = LogGP::new(0.5e-6, 0.1e-6, 0.2e-6, 0.0)?;
/// let net = LogGP::new(10e-6, 1e-6, 2e-6, 0.0)?;
/// let nodes = NodeMap::block(2, 2)?;
/// let platform = TwoLevel { nodes: &nodes, inter: &net, inter_rendezvous_above: None };
/// let t = cost_hierarchical(&shm, platform, Collective::Bcast, Hierarchical::Leaders,
///     &Problem::new(4, Message::contiguous(8)), SimLimits::default(), &SimOptions::default())?;
/// assert!((t - 12.7e-6).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn cost_hierarchical(
    intra: &dyn CommModel,
    platform: TwoLevel<'_>,
    collective: Collective,
    hierarchy: Hierarchical,
    problem: &Problem,
    limits: SimLimits,
    options: &SimOptions,
) -> Result<f64, SimError> {
    if problem.processes > limits.max_processes {
        return Err(SimError::TooLarge {
            what: "processes to simulate",
            count: problem.processes,
            limit: limits.max_processes,
        });
    }
    let max = limits.max_operations.min(super::MAX_OPERATIONS);
    let s = hierarchy.schedule_within(collective, platform.nodes, problem, max)?;
    Ok(Simulator::new()
        .simulate_two_level(&s, intra, platform, options)?
        .time(options.finish))
}

impl Hierarchical {
    /// The closed form of [`Leaders`](Self::Leaders): the sum over its steps of the slowest
    /// call's closed form (`intra` inside a node, `inter` between the leaders), each call Open
    /// MPI's fixed decision for its communicator. It equals the simulation
    /// ([`cost_hierarchical`]) where each call's closed form is exact, the node links are not
    /// shared (one leader per node sends) and every group of a step starts together — nodes of
    /// equal size, and in a broadcast a leaf of the leaders' tree the last to receive; elsewhere it
    /// is an estimate, and the simulation the price. Microseconds on any platform: it prices
    /// one call per distinct node size, never a schedule.
    ///
    /// # Errors
    ///
    /// [`SimError::InvalidOption`] (`hierarchical`) for `han`, whose pipelined segments have no
    /// closed form; otherwise as [`Hierarchical::schedule`] (but never too large).
    ///
    /// # Examples
    ///
    /// The broadcast of [`cost_hierarchical`]'s example: `T_net + T_shm = 12 + 0.7` µs.
    ///
    /// ```
    /// use commcost::collectives::{Collective, Problem};
    /// use commcost::sim::{Hierarchical, NodeMap};
    /// use commcost::{LogGP, Message};
    ///
    /// let shm = LogGP::new(0.5e-6, 0.1e-6, 0.2e-6, 0.0)?;
    /// let net = LogGP::new(10e-6, 1e-6, 2e-6, 0.0)?;
    /// let t = Hierarchical::Leaders.closed_form(Collective::Bcast, &shm, &net,
    ///     &NodeMap::block(2, 2)?, &Problem::new(4, Message::contiguous(8)))?;
    /// assert!((t - 12.7e-6).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn closed_form(
        self,
        collective: Collective,
        intra: &dyn CommModel,
        inter: &dyn CommModel,
        nodes: &NodeMap,
        problem: &Problem,
    ) -> Result<f64, SimError> {
        if self != Self::Leaders {
            return Err(SimError::InvalidOption {
                name: "hierarchical",
                message: "han pipelines its segments: no closed form, simulate it (cost_hierarchical)",
            });
        }
        if !self.collectives().contains(&collective) {
            return Err(SimError::InvalidOption {
                name: "collective",
                message: "the hierarchical composition does not price this collective",
            });
        }
        if u64::from(nodes.ranks()) != problem.processes {
            return Err(SimError::InvalidOption {
                name: "nodes",
                message: "the node map holds another number of ranks than the problem's processes",
            });
        }
        // the distinct node sizes
        let mut sizes = vec![0u64; nodes.nodes() as usize];
        for &n in nodes.as_slice() {
            sizes[n as usize] += 1;
        }
        sizes.sort_unstable();
        sizes.dedup();
        let k = match collective {
            Collective::Gather | Collective::Scatter | Collective::Allgather => {
                if sizes.len() > 1 {
                    return Err(SimError::InvalidOption {
                        name: "nodes",
                        message: "a hierarchical gather, scatter or allgather needs every node to hold the same number of ranks",
                    });
                }
                sizes.first().copied().unwrap_or(1)
            }
            _ => 1,
        };
        let leaders = u64::from(nodes.nodes());
        let m = problem.message.bytes();
        let mut total = 0.0;
        for (level, call, bytes) in leaders_steps(collective, m, k, problem.processes) {
            let (groups, model): (&[u64], &dyn CommModel) = match level {
                Level::Nodes => (&sizes, intra),
                Level::Leaders => (std::slice::from_ref(&leaders), inter),
            };
            let mut slowest = 0.0f64;
            for &g in groups.iter().filter(|&&g| g >= 2) {
                let sub = Problem {
                    processes: g,
                    ..problem.with_bytes(bytes)
                };
                slowest = slowest.max(call.cost(model, &sub)?);
            }
            total += slowest;
        }
        Ok(total)
    }
}

/// Which ranks a step's calls run on.
#[derive(Clone, Copy)]
enum Level {
    /// Every node's ranks (one call per node of two ranks or more).
    Nodes,
    /// The node leaders (one call, if there are two nodes or more).
    Leaders,
}

/// What a call runs: the algorithm for its sub-communicator's problem.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Call {
    TunedBcast,
    TunedReduce,
    TunedAllreduce,
    TunedGather,
    TunedScatter,
    TunedAllgather,
    NbcBcast,
    NbcReduce,
    NbcGather,
    NbcScatter,
}

impl Call {
    /// The call's schedule on `problem` (a sub-communicator's).
    fn schedule(self, problem: &Problem) -> Result<Schedule, SimError> {
        let (p, b) = (problem.processes, problem.message.bytes());
        match self {
            Self::TunedBcast => tuned::<ompi::Bcast>(problem),
            Self::TunedReduce => tuned::<ompi::Reduce>(problem),
            Self::TunedAllreduce => tuned::<ompi::Allreduce>(problem),
            Self::TunedGather => tuned::<ompi::Gather>(problem),
            Self::TunedScatter => tuned::<ompi::Scatter>(problem),
            Self::TunedAllgather => tuned::<ompi::Allgather>(problem),
            // nbc_ibcast.c
            Self::NbcBcast => match (p, b) {
                (..=4, _) => Bcast::Linear.schedule(problem),
                (_, ..65536) => Bcast::Binomial.schedule(problem),
                (_, ..524288) => Bcast::Pipelined { segment: 8192 }.schedule(problem),
                _ => Bcast::Pipelined { segment: 32768 }.schedule(problem),
            },
            // nbc_ireduce.c: `p > 4 || size * count < 65536` binomial, else a chain of
            // 16384 / 2-byte fragments
            Self::NbcReduce => {
                if p > 4 || b < 65536 {
                    Reduce::Binomial.schedule(problem)
                } else {
                    ompi::Reduce::Pipeline { segment: 8192 }.schedule(problem)
                }
            }
            Self::NbcGather => Gather::Linear.schedule(problem),
            Self::NbcScatter => Scatter::Linear.schedule(problem),
        }
    }
}

impl Call {
    /// The closed form of a tuned call (the only calls of [`Hierarchical::Leaders`]).
    fn cost(self, model: &dyn CommModel, problem: &Problem) -> Result<f64, SimError> {
        fn fixed<A: OmpiAlgorithm>(
            model: &dyn CommModel,
            problem: &Problem,
        ) -> Result<f64, SimError> {
            let a: A = fixed_algorithm(problem.processes, problem.message.bytes(), true)
                .map_err(CollectiveError::from)?;
            Ok(a.cost(model, problem)?)
        }
        match self {
            Self::TunedBcast => fixed::<ompi::Bcast>(model, problem),
            Self::TunedReduce => fixed::<ompi::Reduce>(model, problem),
            Self::TunedAllreduce => fixed::<ompi::Allreduce>(model, problem),
            Self::TunedGather => fixed::<ompi::Gather>(model, problem),
            Self::TunedScatter => fixed::<ompi::Scatter>(model, problem),
            Self::TunedAllgather => fixed::<ompi::Allgather>(model, problem),
            // libnbc's calls are han's only
            _ => Err(SimError::InvalidOption {
                name: "hierarchical",
                message: "han pipelines its segments: no closed form, simulate it (cost_hierarchical)",
            }),
        }
    }
}

/// The schedule of Open MPI's fixed decision for `problem`.
fn tuned<A: OmpiAlgorithm + ToSchedule>(problem: &Problem) -> Result<Schedule, SimError> {
    let a: A = fixed_algorithm(problem.processes, problem.message.bytes(), true)
        .map_err(CollectiveError::from)?;
    a.schedule(problem)
}

/// One step of a composition: calls on disjoint groups, run at once.
struct Step {
    /// `(schedule in the pool, group)`.
    calls: Vec<(usize, usize)>,
    /// The steps whose part at a rank finishes before this step's part at that rank starts.
    after: Vec<usize>,
}

/// A composition being planned: the groups, the distinct call schedules, the steps.
struct Plan<'a> {
    problem: &'a Problem,
    /// Node `n`'s ranks (ascending) at `n`; the leaders (ascending) last.
    groups: Vec<Vec<u64>>,
    /// `(call, group size, bytes, schedule)`.
    pool: Vec<(Call, u64, u64, Schedule)>,
    steps: Vec<Step>,
    /// The operations the steps hold so far.
    operations: u64,
    max_operations: u64,
}

impl<'a> Plan<'a> {
    fn new(nodes: &NodeMap, problem: &'a Problem, max_operations: u64) -> Result<Self, SimError> {
        if u64::from(nodes.ranks()) != problem.processes {
            return Err(SimError::InvalidOption {
                name: "nodes",
                message: "the node map holds another number of ranks than the problem's processes",
            });
        }
        let mut groups = vec![Vec::new(); nodes.nodes() as usize + 1];
        for (r, &n) in nodes.as_slice().iter().enumerate() {
            groups[n as usize].push(r as u64);
        }
        let leaders = groups[..groups.len() - 1]
            .iter()
            .filter_map(|g| g.first().copied())
            .collect::<Vec<_>>();
        // nodes are numbered in any order; the leaders' communicator is ordered by rank, so
        // rank 0 (the root) is its rank 0
        let mut leaders = leaders;
        leaders.sort_unstable();
        if let Some(last) = groups.last_mut() {
            *last = leaders;
        }
        Ok(Self {
            problem,
            groups,
            pool: Vec::new(),
            steps: Vec::new(),
            operations: 0,
            max_operations,
        })
    }

    fn leaders_group(&self) -> usize {
        self.groups.len() - 1
    }

    /// The ranks per node, if every node holds the same number.
    fn uniform(&self) -> Result<u64, SimError> {
        let nodes = &self.groups[..self.leaders_group()];
        let k = nodes.first().map_or(0, Vec::len);
        if nodes.iter().any(|g| g.len() != k) {
            return Err(SimError::InvalidOption {
                name: "nodes",
                message: "a hierarchical gather, scatter or allgather needs every node to hold the same number of ranks",
            });
        }
        Ok(k as u64)
    }

    /// Adds a step: `call` of `bytes` bytes on every group of `level` with two ranks or more,
    /// after the steps `after`. Returns its index.
    fn step(
        &mut self,
        level: Level,
        call: Call,
        bytes: u64,
        after: &[Option<usize>],
    ) -> Result<usize, SimError> {
        let groups: Vec<usize> = match level {
            Level::Nodes => (0..self.leaders_group()).collect(),
            Level::Leaders => vec![self.leaders_group()],
        };
        let mut calls = Vec::new();
        for g in groups {
            let size = self.groups[g].len() as u64;
            if size < 2 {
                continue;
            }
            let index = match self
                .pool
                .iter()
                .position(|(c, s, b, _)| *c == call && *s == size && *b == bytes)
            {
                Some(i) => i,
                None => {
                    let problem = Problem {
                        processes: size,
                        ..self.problem.with_bytes(bytes)
                    };
                    let s = call.schedule(&problem)?;
                    self.pool.push((call, size, bytes, s));
                    self.pool.len() - 1
                }
            };
            self.operations = self
                .operations
                .saturating_add(self.pool[index].3.len() as u64);
            if self.operations > self.max_operations {
                return Err(SimError::TooLarge {
                    what: "operations to simulate",
                    count: self.operations,
                    limit: self.max_operations,
                });
            }
            calls.push((index, g));
        }
        self.steps.push(Step {
            calls,
            after: after.iter().flatten().copied().collect(),
        });
        Ok(self.steps.len() - 1)
    }

    /// The classic two-level composition: its steps one after the other.
    fn leaders(&mut self, collective: Collective, m: u64) -> Result<(), SimError> {
        let k = match collective {
            Collective::Gather | Collective::Scatter | Collective::Allgather => self.uniform()?,
            _ => 1,
        };
        let mut previous = None;
        for (level, call, bytes) in leaders_steps(collective, m, k, self.problem.processes) {
            previous = Some(self.step(level, call, bytes, &[previous])?);
        }
        Ok(())
    }

    /// Open MPI 4.1's `han`.
    fn han(&mut self, collective: Collective, m: u64, segment: u64) -> Result<(), SimError> {
        use {Call::*, Level::*};
        if segment == 0 {
            return Err(SimError::InvalidOption {
                name: "segment",
                message: "han's segment size must be at least 1 byte",
            });
        }
        let q = m.div_ceil(segment).max(1);
        // every segment adds at least 2 operations
        if q.saturating_mul(2) > self.max_operations {
            return Err(SimError::TooLarge {
                what: "operations to simulate",
                count: q.saturating_mul(2),
                limit: self.max_operations,
            });
        }
        let seg = |i: u64| {
            if i + 1 < q {
                segment
            } else {
                m - segment * (q - 1)
            }
        };
        let at = |v: &Vec<usize>, i: u64, back: u64| i.checked_sub(back).map(|j| v[j as usize]);
        let (mut up, mut low, mut up2, mut low2) = (vec![], vec![], vec![], vec![]);
        match collective {
            Collective::Bcast => {
                for i in 0..q {
                    let u =
                        self.step(Leaders, NbcBcast, seg(i), &[at(&up, i, 1), at(&low, i, 2)])?;
                    up.push(u);
                    let l = self.step(Nodes, TunedBcast, seg(i), &[Some(u), at(&low, i, 1)])?;
                    low.push(l);
                }
            }
            Collective::Reduce => {
                for i in 0..q {
                    let l =
                        self.step(Nodes, TunedReduce, seg(i), &[at(&low, i, 1), at(&up, i, 2)])?;
                    low.push(l);
                    let u = self.step(Leaders, NbcReduce, seg(i), &[Some(l), at(&up, i, 1)])?;
                    up.push(u);
                }
            }
            Collective::Allreduce => {
                for i in 0..q {
                    let l = self.step(Nodes, TunedReduce, seg(i), &[at(&low, i, 1)])?;
                    low.push(l);
                    let u = self.step(Leaders, NbcReduce, seg(i), &[Some(l), at(&up, i, 1)])?;
                    up.push(u);
                    let u2 = self.step(Leaders, NbcBcast, seg(i), &[Some(u), at(&up2, i, 1)])?;
                    up2.push(u2);
                    let l2 = self.step(Nodes, TunedBcast, seg(i), &[Some(u2), at(&low2, i, 1)])?;
                    low2.push(l2);
                }
            }
            Collective::Gather => {
                let k = self.uniform()?;
                let a = self.step(Nodes, TunedGather, m, &[])?;
                self.step(Leaders, NbcGather, m.saturating_mul(k), &[Some(a)])?;
            }
            _ => {
                // scatter (the only other collective `han` prices)
                let k = self.uniform()?;
                let a = self.step(Leaders, NbcScatter, m.saturating_mul(k), &[])?;
                self.step(Nodes, TunedScatter, m, &[Some(a)])?;
            }
        }
        Ok(())
    }

    /// The composed schedule: every step's calls copied with their ranks renamed, each rank's
    /// first operations of a step requiring its last operations of the steps before it (of the
    /// latest step it took part in, along each `after` chain).
    fn compose(self) -> Result<Schedule, SimError> {
        let mut b = ScheduleBuilder::new(self.problem.processes);
        // at most 2^22 operations reserved up front (the arrays grow within the budget)
        let reserved = self.operations.min(1 << 22) as usize;
        b.reserve(reserved, reserved * 2);
        // per step, the last operations of each rank, sorted by rank
        let mut sinks: Vec<Vec<(u64, OpId)>> = Vec::with_capacity(self.steps.len());
        for step in &self.steps {
            let mut own: Vec<(u64, OpId)> = Vec::new();
            for &(index, g) in &step.calls {
                let s = &self.pool[index].3;
                let group = &self.groups[g];
                let base = b.len() as u32;
                let n = s.len();
                let global = |r: Option<u64>| r.and_then(|r| group.get(r as usize).copied());
                for i in 0..n {
                    let op = OpId(i as u32);
                    let rank = global(s.rank(op)).unwrap_or(u64::MAX);
                    let tag = s.tag(op).unwrap_or(0);
                    match s.kind(op) {
                        Some(OpKind::Send) => {
                            let peer = global(s.peer(op)).unwrap_or(u64::MAX);
                            b.send_message(
                                rank,
                                peer,
                                tag,
                                s.message(op).unwrap_or(Message::contiguous(0)),
                            );
                        }
                        Some(OpKind::Recv) => {
                            let peer = global(s.peer(op)).unwrap_or(u64::MAX);
                            b.recv_message(
                                rank,
                                peer,
                                tag,
                                s.message(op).unwrap_or(Message::contiguous(0)),
                            );
                        }
                        _ => {
                            b.calc(rank, s.calc_seconds(op).unwrap_or(0.0));
                        }
                    }
                }
                let mut entry = vec![true; n];
                let mut sink = vec![true; n];
                for (i, last) in sink.iter_mut().enumerate() {
                    for (d, kind) in s.dependents(OpId(i as u32)) {
                        b.depend(OpId(base + d.0), OpId(base + i as u32), kind);
                        entry[d.index()] = false;
                        *last = false;
                    }
                }
                for i in 0..n {
                    let rank = global(s.rank(OpId(i as u32))).unwrap_or(u64::MAX);
                    let op = OpId(base + i as u32);
                    if entry[i] {
                        for &a in &step.after {
                            for &(_, before) in at_rank(&sinks[a], rank) {
                                b.depend(op, before, Dependency::Requires);
                            }
                        }
                    }
                    if sink[i] {
                        own.push((rank, op));
                    }
                }
            }
            own.sort_unstable_by_key(|&(r, op)| (r, op.0));
            // a rank that takes no part in this step carries the sinks of the steps before it
            let mut inherited: Vec<(u64, OpId)> = step
                .after
                .iter()
                .flat_map(|&a| sinks[a].iter().copied())
                .filter(|&(r, _)| at_rank(&own, r).is_empty())
                .collect();
            own.append(&mut inherited);
            own.sort_unstable_by_key(|&(r, op)| (r, op.0));
            own.dedup();
            sinks.push(own);
        }
        b.build()
    }
}

/// The steps of [`Hierarchical::Leaders`] for `collective` of `m` bytes on `p` ranks, `k` to a
/// node (used by gather, scatter and allgather only): `(level, call, bytes)`, in order.
fn leaders_steps(collective: Collective, m: u64, k: u64, p: u64) -> Vec<(Level, Call, u64)> {
    use {Call::*, Level::*};
    let km = m.saturating_mul(k);
    match collective {
        Collective::Bcast => vec![(Leaders, TunedBcast, m), (Nodes, TunedBcast, m)],
        Collective::Reduce => vec![(Nodes, TunedReduce, m), (Leaders, TunedReduce, m)],
        Collective::Allreduce => vec![
            (Nodes, TunedReduce, m),
            (Leaders, TunedAllreduce, m),
            (Nodes, TunedBcast, m),
        ],
        Collective::Gather => vec![(Nodes, TunedGather, m), (Leaders, TunedGather, km)],
        Collective::Scatter => vec![(Leaders, TunedScatter, km), (Nodes, TunedScatter, m)],
        // allgather (the only other collective `Leaders` prices)
        _ => vec![
            (Nodes, TunedGather, m),
            (Leaders, TunedAllgather, km),
            (Nodes, TunedBcast, m.saturating_mul(p)),
        ],
    }
}

/// The entries of `sorted` (sorted by rank) at rank `r`.
fn at_rank(sorted: &[(u64, OpId)], r: u64) -> &[(u64, OpId)] {
    let start = sorted.partition_point(|&(x, _)| x < r);
    let end = sorted.partition_point(|&(x, _)| x <= r);
    &sorted[start..end]
}
