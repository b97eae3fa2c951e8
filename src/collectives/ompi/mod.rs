//! Open MPI's `coll_tuned` algorithms (Open MPI 4.1), priced on any [`CommModel`](crate::CommModel).
//!
//! One enum per collective — [`Bcast`], [`Allreduce`], [`Reduce`], [`Allgather`],
//! [`Alltoall`], [`Barrier`], [`ReduceScatter`], [`Gather`], [`Scatter`] — whose variants are
//! the algorithms of Open MPI's tuned component with their numeric IDs
//! ([`OmpiAlgorithm::ompi_id`], the numbers of `--mca coll_tuned_<coll>_algorithm N` and of the
//! dynamic rules file), their segment size and fan-out where Open MPI has them, and the
//! fallbacks Open MPI takes internally (a ring allreduce on fewer elements than processes runs
//! recursive doubling; the variant prices what really runs). Every enum implements
//! [`Algorithm`], so [`rank`](super::rank), [`best`](super::best),
//! [`crossover`](super::crossover) and [`DecisionTable`](super::DecisionTable) work on them, and
//! [`Display`](fmt::Display) / [`FromStr`] with kebab-case names
//! (`binomial`, `chain:segment=65536,fanout=4`; Open MPI's own `split_binary_tree` spelling
//! parses too).
//!
//! # Message sizes
//!
//! [`Problem::message`](super::Problem) keeps the meaning of the rest of the collectives module:
//! the broadcast buffer, the vector of a reduction, each process's block of an allgather,
//! gather or scatter, each pairwise block of an all-to-all, and for a reduce-scatter the whole
//! reduced vector (`type size × Σ recvcounts`). Open MPI's rules file looks a collective up by a
//! different size for some collectives; [`OmpiCollective::rules_size`] converts:
//!
//! | collective | rules-file message size |
//! |---|---|
//! | bcast, allreduce, reduce | `type size × count` = `m` |
//! | allgather, alltoall, gather, scatter | `type size × count × P` = `m P` |
//! | reduce_scatter | `type size × Σ recvcounts` = `m` |
//! | barrier | 0 |
//!
//! Open MPI decides its internal fallbacks on element counts; the crate knows bytes only, so the
//! fallbacks are priced for 1-byte elements (`MPI_BYTE`, `MPI_CHAR`). For a datatype of `e`
//! bytes they happen at `e` times the sizes given below.
//!
//! # Segmented trees
//!
//! Open MPI's segmented broadcasts and reductions (`coll_base_bcast.c`,
//! `coll_base_reduce.c`: one generic routine over a tree from `coll_base_topo.c`) send a message
//! of `m` bytes as `q = ⌈m / s⌉` segments of `s` bytes (`s = m` when the segment size is 0 or
//! at least `m`). Following the segmented-tree analysis of J. Pješivac-Grbović, T. Angskun,
//! G. Bosilca, G. E. Fagg, E. Gabriel, J. J. Dongarra, "Performance analysis of MPI collective
//! operations", Cluster Computing 10(2), 2007, with the trait's per-message quantities:
//!
//! ```text
//! broadcast  T = max over paths (a T(s) + b I(s)) + (q - 1) max(k_root I(s), k_in I(s), or(s) + k_in os(s))
//! reduce     T = max over paths (a (T(s) + op(s)) + b max(I(s), or(s) + op(s)))   (b: later siblings)
//!                + (q - 1) max(k_root max(I(s), or(s) + op(s)), k_in (or(s) + op(s)) + os(s), k_in I(s), I(s))
//! ```
//!
//! A path is the way of the first segment to one process: `a` hops, and `b` sends its parents
//! made to earlier siblings before it (a parent sends a segment to its children in order).
//! `k_root` is the root's number of children and `k_in` the largest number of children of an
//! inner process: their sends bound the rate at which segments follow each other. The paths
//! that can be the slowest are computed in closed form for each tree:
//!
//! * chain of fan-out `f` (`P - 1 <= f` chains cut to `P - 1`): the last of the
//!   `mark = (P-1) mod f` long chains (all `f` when `f` divides `P - 1`), `(⌈(P-1)/f⌉, mark - 1)`,
//!   and the last chain `(len_last, f - 1)`; pipeline = chain of fan-out 1;
//! * binary tree (level order, children `i + 2^l`, `i + 2^(l+1)`): depth `d = ⌊log2 P⌋`; the
//!   node at position `x` of level `l` is reached with `(l, popcount x)`, so the slowest are
//!   `(d, max popcount of 0..=P-2^d)` and `(d - 1, d - 1)`;
//! * binomial tree (`index ^ mask`, largest subtree first): process `v` is reached with
//!   `(popcount v, top bit of v - popcount v + 1)`; the slowest are among `(1, h-1)`,
//!   `(k, h-k)` for the most bits `k` below `P` with top bit `h - 1`, and `(h-1, 0)`;
//! * k-nomial tree of radix `r` (children from the largest subtree down): a digit DP over the
//!   `⌈log_r P⌉` base-`r` digits of `P - 1` finds the slowest process, counting only the
//!   children below `P` as Open MPI lists them.
//!
//! Every segment is priced at `s` bytes (the shorter last segment is not singled out).
//! A reduction absorbs a parent's children in list order, so there a child's data waits for
//! its *later* siblings: the reduce trees count the waits after ([`Reduce`]).
//!
//! # Simulation
//!
//! Every algorithm here also writes out the schedule Open MPI runs
//! ([`ToSchedule`](crate::sim::ToSchedule)); each closed form's documentation says how it
//! relates to the simulation of that schedule (exact, an upper bound, or within a measured
//! factor), and [`rank_simulated`](crate::sim::rank_simulated) ranks the candidates with the
//! simulated makespan wherever the closed form is not exact.
//!
//! # Candidates
//!
//! [`Algorithm::candidates`] offers each algorithm with segment
//! sizes 0 (unsegmented) and `2^k` bytes, `10 <= k <= 20`, below the message, and the chain
//! with fan-outs 2, 4 and 8 — the ranges Open MPI's own fixed decisions use. The k-nomial
//! broadcast is offered with radix 4 only, Open MPI's default: the rules file cannot set the
//! radix (`coll_tuned_bcast_algorithm_knomial_radix`). Algorithms that only run on 2
//! processes are offered only at `P = 2`; `linear_sync` all-to-all (its request limit is an MCA
//! parameter, not a rules-file field) and `linear_nb` scatter (priced as `basic_linear`) are not
//! offered.
//!
//! # MPICH
//!
//! Where MPICH runs the same pattern, [`MpichAlgorithm`](super::MpichAlgorithm) gives its
//! name: bcast `binomial` (unsegmented), `scatter_recursive_doubling_allgather` (8),
//! `scatter_ring_allgather` (9); allreduce `recursive_doubling`, `ring`,
//! `reduce_scatter_allgather` (Rabenseifner); reduce `binomial`, `reduce_scatter_gather`;
//! allgather `brucks`, `recursive_doubling`, `ring`; alltoall `pairwise`, `brucks`; barrier
//! `k_dissemination` (Bruck); reduce_scatter `recursive_halving`; gather and scatter
//! `binomial`.
//!
//! # References
//!
//! Open MPI 4.1 sources `ompi/mca/coll/base/coll_base_{bcast,allreduce,reduce,allgather,
//! alltoall,barrier,reduce_scatter,gather,scatter,topo}.c` and
//! `ompi/mca/coll/tuned/coll_tuned_*_decision.c`; R. Thakur, R. Rabenseifner, W. Gropp,
//! "Optimization of collective communication operations in MPICH", IJHPCA 19(1), 2005;
//! Pješivac-Grbović et al., Cluster Computing 10(2), 2007.

mod allgather;
mod allreduce;
mod alltoall;
mod barrier;
mod bcast;
mod fixed;
mod gather;
mod reduce;
mod reduce_scatter;
mod scatter;

pub use allgather::Allgather;
pub use allreduce::Allreduce;
pub use alltoall::Alltoall;
pub use barrier::Barrier;
pub use bcast::Bcast;
pub(crate) use fixed::fixed_rules;
pub use fixed::{fixed_algorithm, fixed_decision};
pub use gather::Gather;
pub use reduce::Reduce;
pub use reduce_scatter::ReduceScatter;
pub use scatter::Scatter;

use std::fmt;
use std::str::FromStr;

use super::Algorithm;
use super::eval::Pieces;
use crate::error::AlgorithmParseError;
use crate::util::bits::{ceil_log2, floor_log2};

/// The collectives of Open MPI's tuned component that this crate prices, with their IDs in the
/// dynamic rules file.
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::OmpiCollective;
///
/// let c: OmpiCollective = "reduce_scatter".parse()?;
/// assert_eq!((c, c.id(), c.to_string()), (OmpiCollective::ReduceScatter, 12, "reduce-scatter".into()));
/// assert_eq!(c.max_algorithm_id(), 4);
/// # Ok::<(), commcost::AlgorithmParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "kebab-case", deny_unknown_fields)
)]
pub enum OmpiCollective {
    /// `MPI_Allgather`, ID 0.
    Allgather,
    /// `MPI_Allreduce`, ID 2.
    Allreduce,
    /// `MPI_Alltoall`, ID 3.
    Alltoall,
    /// `MPI_Barrier`, ID 6.
    Barrier,
    /// `MPI_Bcast`, ID 7.
    Bcast,
    /// `MPI_Gather`, ID 9.
    Gather,
    /// `MPI_Reduce`, ID 11.
    Reduce,
    /// `MPI_Reduce_scatter`, ID 12.
    ReduceScatter,
    /// `MPI_Scatter`, ID 15.
    Scatter,
}

impl OmpiCollective {
    /// Every collective, in the order of their IDs.
    pub const ALL: &'static [OmpiCollective] = &[
        Self::Allgather,
        Self::Allreduce,
        Self::Alltoall,
        Self::Barrier,
        Self::Bcast,
        Self::Gather,
        Self::Reduce,
        Self::ReduceScatter,
        Self::Scatter,
    ];

    /// The collective's ID in Open MPI's rules file (`COLLTYPE_T` in `coll_base_functions.h`).
    ///
    /// ```
    /// use commcost::collectives::ompi::OmpiCollective;
    /// assert_eq!(OmpiCollective::Bcast.id(), 7);
    /// assert_eq!(OmpiCollective::ReduceScatter.id(), 12);
    /// ```
    pub const fn id(self) -> u32 {
        match self {
            Self::Allgather => 0,
            Self::Allreduce => 2,
            Self::Alltoall => 3,
            Self::Barrier => 6,
            Self::Bcast => 7,
            Self::Gather => 9,
            Self::Reduce => 11,
            Self::ReduceScatter => 12,
            Self::Scatter => 15,
        }
    }

    /// Open MPI's name of the collective (`allgather`, `reduce_scatter`, ...).
    pub const fn ompi_name(self) -> &'static str {
        match self {
            Self::Allgather => "allgather",
            Self::Allreduce => "allreduce",
            Self::Alltoall => "alltoall",
            Self::Barrier => "barrier",
            Self::Bcast => "bcast",
            Self::Gather => "gather",
            Self::Reduce => "reduce",
            Self::ReduceScatter => "reduce_scatter",
            Self::Scatter => "scatter",
        }
    }

    /// The largest algorithm ID Open MPI 4.1.4 accepts for the collective (IDs start at 1; 0
    /// means "use the fixed decision").
    pub const fn max_algorithm_id(self) -> u32 {
        match self {
            Self::Allgather | Self::Allreduce | Self::Barrier => 6,
            Self::Alltoall => 5,
            Self::Bcast => 9,
            Self::Reduce => 7,
            Self::ReduceScatter => 4,
            Self::Gather | Self::Scatter => 3,
        }
    }

    /// The message size Open MPI looks the collective up by in the rules file, for a problem
    /// message of `bytes` bytes on `processes` processes (see the [module docs](self)):
    /// `m P` for allgather, alltoall, gather and scatter, 0 for barrier, else `m` (saturating).
    ///
    /// ```
    /// use commcost::collectives::ompi::OmpiCollective;
    /// assert_eq!(OmpiCollective::Allgather.rules_size(1024, 8), 8192);
    /// assert_eq!(OmpiCollective::Bcast.rules_size(1024, 8), 1024);
    /// assert_eq!(OmpiCollective::Barrier.rules_size(1024, 8), 0);
    /// ```
    pub const fn rules_size(self, bytes: u64, processes: u64) -> u64 {
        match self {
            Self::Allgather | Self::Alltoall | Self::Gather | Self::Scatter => {
                bytes.saturating_mul(processes)
            }
            Self::Barrier => 0,
            Self::Allreduce | Self::Bcast | Self::Reduce | Self::ReduceScatter => bytes,
        }
    }

    /// The problem message (bytes) that a rules-file message size stands for on `processes`
    /// processes: the inverse of [`rules_size`](Self::rules_size), rounded down (`⌊S / P⌋` for
    /// the collectives looked up by their total size; `P = 0` is taken as 1).
    ///
    /// ```
    /// use commcost::collectives::ompi::OmpiCollective;
    /// assert_eq!(OmpiCollective::Alltoall.problem_bytes(8192, 8), 1024);
    /// assert_eq!(OmpiCollective::Allreduce.problem_bytes(8192, 8), 8192);
    /// ```
    pub const fn problem_bytes(self, rules_size: u64, processes: u64) -> u64 {
        let p = if processes == 0 { 1 } else { processes };
        match self {
            Self::Allgather | Self::Alltoall | Self::Gather | Self::Scatter => rules_size / p,
            Self::Barrier => 0,
            Self::Allreduce | Self::Bcast | Self::Reduce | Self::ReduceScatter => rules_size,
        }
    }
}

impl fmt::Display for OmpiCollective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.ompi_name().replace('_', "-"))
    }
}

impl FromStr for OmpiCollective {
    type Err = AlgorithmParseError;

    /// Kebab-case or Open MPI's names (`reduce-scatter`, `reduce_scatter`), or the ID.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = normalise(s);
        Self::ALL
            .iter()
            .copied()
            .find(|c| c.to_string() == wanted || c.id().to_string() == wanted)
            .ok_or_else(|| AlgorithmParseError::Unknown {
                collective: "collective",
                name: s.to_string(),
                known: Self::ALL
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// An algorithm of Open MPI's tuned component: what the dynamic rules file names.
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::{OmpiAlgorithm, OmpiCollective, Reduce};
///
/// let reduce: Reduce = "in-order_binary:segment=4096".parse()?;
/// assert_eq!(Reduce::COLLECTIVE, OmpiCollective::Reduce);
/// // the rule `msg_size 6 0 4096` of a rules file
/// assert_eq!((reduce.ompi_id(), reduce.faninout(), reduce.segment_size()), (6, 0, 4096));
/// assert_eq!(reduce.ompi_name(), "in-order_binary");
/// # Ok::<(), commcost::AlgorithmParseError>(())
/// ```
pub trait OmpiAlgorithm: Algorithm + fmt::Display + FromStr<Err = AlgorithmParseError> {
    /// The collective the algorithm belongs to.
    const COLLECTIVE: OmpiCollective;

    /// Open MPI's numeric ID of the algorithm (1-based, as in `coll_tuned_<coll>_algorithm`).
    fn ompi_id(&self) -> u32;

    /// Open MPI's name of the algorithm, as `ompi_info` lists it (`split_binary_tree`).
    fn ompi_name(&self) -> &'static str;

    /// The rules file's `faninout` field: the chain fan-out where the algorithm has one, else 0.
    fn faninout(&self) -> u64 {
        0
    }

    /// The rules file's `segsize` field, bytes (0 = unsegmented).
    fn segment_size(&self) -> u64 {
        0
    }

    /// The local work on the algorithm's critical path for `processes` processes and a
    /// problem message of `bytes` bytes: the copies (`sbuf` into `rbuf`, blocks into and out
    /// of temporary buffers, Bruck's rotations) and the temporary buffers allocated per call,
    /// read from Open MPI 4.1.4's `coll_base_*.c` (contiguous data, root 0, commutative
    /// operator); [`Algorithm::cost`] adds their price
    /// ([`LocalWork::price`](crate::collectives::LocalWork::price)) to the messages' and the
    /// operator's. The operator's bytes are in the closed forms already.
    ///
    /// | collective | copies (count × bytes) and temporary buffers |
    /// |---|---|
    /// | bcast, barrier | none |
    /// | allreduce | basic linear: 1 buffer; nonoverlapping: 2 buffers (the binomial reduce's root); recursive doubling: 2 × m, 1 buffer; ring, segmented ring: 1 × m, 2 buffers (1 at P = 2; recursive doubling's below P bytes); Rabenseifner: 1 × m, 5 buffers (basic linear's below the largest power of two ≤ P) |
    /// | reduce (root) | linear: 1 buffer; chain, pipeline, binary, binomial: 1 receive buffer, 2 when the root has more than one child or segments; in-order binary: 3 buffers; Rabenseifner: 1 × m, 5 buffers |
    /// | reduce_scatter | non-overlapping: 1 × m/P, 2 buffers; recursive halving, butterfly: 1 × m + 1 × m/P, 3 buffers; ring: 1 × m + 1 × m/P, 4 buffers |
    /// | allgather | own block 1 × m; Bruck (and recursive doubling when P is not a power of two): rank 1's 2 × m + 2 × (P-1) m, 1 buffer |
    /// | alltoall | own block 1 × m; modified Bruck: 2 × P m + (Σ_{i<P} popcount i) × m, 3 buffers |
    /// | gather | root's block 1 × m; binomial (P > 2): 2 × m, 1 buffer (a child's copy into its P m buffer) |
    /// | scatter | root's block 1 × m; binomial: ⌈log2 P⌉ × m (every process on the way copies its block before forwarding), ⌈log2 P⌉ - 1 buffers |
    ///
    /// Not counted: copies inside the transport (eager and shared-memory fragments), the
    /// request objects of the point-to-point layer, derived datatypes Bruck's all-to-all
    /// creates.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::ompi::{Alltoall, OmpiAlgorithm};
    ///
    /// // modified Bruck on 4 processes: two rotations of 4 m, popcount(1) + popcount(2)
    /// // + popcount(3) = 4 block copies; tmpbuf and two index arrays
    /// let work = Alltoall::ModifiedBruck.local_work(4, 1000);
    /// assert_eq!(work.bytes(), 2 * 4000 + 4 * 1000);
    /// assert_eq!(work.buffers(), 3);
    /// ```
    fn local_work(&self, processes: u64, bytes: u64) -> crate::collectives::Copies {
        let _ = (processes, bytes);
        crate::collectives::Copies::none()
    }
}

/// Lower case, `_` and spaces as `-`.
pub(crate) fn normalise(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '_' | ' ' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// Parses the name of an algorithm without parameters, or its 1-based Open MPI ID, against
/// `names` (in ID order) and `all` (the algorithms in the same order).
pub(crate) fn parse_plain<T: Copy>(
    s: &str,
    collective: &'static str,
    names: &'static [&'static str],
    all: &[T],
) -> Result<T, AlgorithmParseError> {
    let p = ParsedName::parse(s)?;
    let a = names
        .iter()
        .position(|n| *n == p.name)
        .or_else(|| {
            p.name
                .parse::<usize>()
                .ok()
                .and_then(|id| id.checked_sub(1))
        })
        .and_then(|i| all.get(i).copied())
        .ok_or_else(|| p.unknown(collective, names))?;
    p.finish()?;
    Ok(a)
}

/// An algorithm written as `name` or `name:key=value,key=value`.
pub(crate) struct ParsedName {
    /// The normalised name.
    pub(crate) name: String,
    original: String,
    params: Vec<(String, u64)>,
}

impl ParsedName {
    /// Splits and checks the syntax (numbers, no repeated keys).
    pub(crate) fn parse(s: &str) -> Result<Self, AlgorithmParseError> {
        let (name, rest) = match s.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (s, None),
        };
        let bad = |detail: String| AlgorithmParseError::Parameter {
            algorithm: s.to_string(),
            detail,
        };
        let mut params: Vec<(String, u64)> = Vec::new();
        if let Some(rest) = rest {
            for item in rest.split(',').filter(|i| !i.trim().is_empty()) {
                let (key, value) = item
                    .split_once('=')
                    .ok_or_else(|| bad(format!("`{item}` is not key=value")))?;
                let key = normalise(key);
                let value: u64 = value
                    .trim()
                    .parse()
                    .map_err(|_| bad(format!("`{key}` = `{value}` is not an unsigned integer")))?;
                if params.iter().any(|(k, _)| *k == key) {
                    return Err(bad(format!("`{key}` given twice")));
                }
                params.push((key, value));
            }
        }
        Ok(Self {
            name: normalise(name),
            original: s.to_string(),
            params,
        })
    }

    /// Removes and returns parameter `key`.
    pub(crate) fn take(&mut self, key: &str) -> Option<u64> {
        let i = self.params.iter().position(|(k, _)| k == key)?;
        Some(self.params.remove(i).1)
    }

    /// Removes parameter `key`, which must be present.
    pub(crate) fn require(&mut self, key: &str) -> Result<u64, AlgorithmParseError> {
        self.take(key)
            .ok_or_else(|| AlgorithmParseError::Parameter {
                algorithm: self.original.clone(),
                detail: format!("missing parameter `{key}`"),
            })
    }

    /// Fails on parameters left over (unknown to the algorithm).
    pub(crate) fn finish(self) -> Result<(), AlgorithmParseError> {
        match self.params.first() {
            None => Ok(()),
            Some((k, _)) => Err(AlgorithmParseError::Parameter {
                algorithm: self.original,
                detail: format!("unknown parameter `{k}`"),
            }),
        }
    }

    /// The error for a name no algorithm has.
    pub(crate) fn unknown(&self, collective: &'static str, known: &[&str]) -> AlgorithmParseError {
        AlgorithmParseError::Unknown {
            collective,
            name: self.original.clone(),
            known: known.join(", "),
        }
    }
}

/// Open MPI's chain fan-out limit (`MAXTREEFANOUT` in `coll_base_topo.h`).
pub const MAX_TREE_FANOUT: u64 = 32;

/// Segment sizes offered as candidates below a message of `m` bytes: 0 (unsegmented) and
/// `2^k`, `10 <= k <= 20`, below `m`.
pub(crate) fn segment_candidates(m: u64) -> impl Iterator<Item = u64> {
    std::iter::once(0).chain((10..=20).map(|k| 1u64 << k).filter(move |&s| s < m))
}

/// The way of the first segment to one process: `hops` point-to-point times and `waits` sends
/// its parents made to earlier siblings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Path {
    hops: u64,
    waits: u64,
}

/// A tree's slowest first-segment paths and its fan-outs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    /// Up to three candidate paths (the slowest of them is the one that counts).
    Paths {
        paths: [Path; 3],
        root_children: u64,
        inner_children: u64,
    },
    /// A k-nomial tree, searched digit by digit.
    Knomial { radix: u64, processes: u64 },
    /// An in-order binary tree for a reduction, walked over its subtree sizes.
    InOrder { processes: u64 },
}

/// Largest popcount of the integers `0..=n`: `n`'s own, or one less than its bit length.
fn max_popcount_upto(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        u64::from(n.count_ones()).max(u64::from(64 - n.leading_zeros()) - 1)
    }
}

impl Shape {
    /// Open MPI's chain (`ompi_coll_base_topo_build_chain`): `fanout` chains (clamped to
    /// `1..=32`, as Open MPI does, and to `P - 1`), `P >= 2`.
    pub(crate) fn chain(fanout: u64, p: u64) -> Self {
        let f = fanout.clamp(1, MAX_TREE_FANOUT).min(p - 1).max(1);
        let len = (p - 1).div_ceil(f);
        // the first `mark = (P - 1) mod f` chains are the long ones (all when f divides P - 1):
        // the last long chain waits for mark - 1 earlier heads, the last chain for f - 1
        let (mark, last) = if (p - 1).is_multiple_of(f) {
            (f, len)
        } else {
            ((p - 1) % f, len - 1)
        };
        let path = |hops, waits| Path { hops, waits };
        Self::Paths {
            paths: [path(len, mark - 1), path(last, f - 1), path(0, 0)],
            root_children: f,
            inner_children: u64::from(len > 1),
        }
    }

    /// Open MPI's level-order binary tree (`ompi_coll_base_topo_build_tree(2, ..)`), `P >= 2`.
    pub(crate) fn binary(p: u64) -> Self {
        let d = u64::from(floor_log2(p));
        let last_position = p - (1u64 << d);
        let path = |hops, waits| Path { hops, waits };
        Self::Paths {
            paths: [
                path(d, max_popcount_upto(last_position)),
                path(d - 1, d - 1),
                path(0, 0),
            ],
            root_children: (p - 1).min(2),
            // node 1's children are 3 and 5
            inner_children: u64::from(p > 3) + u64::from(p > 5),
        }
    }

    /// Open MPI's binomial tree (`ompi_coll_base_topo_build_bmtree`), `P >= 2`.
    pub(crate) fn binomial(p: u64) -> Self {
        let h = u64::from(ceil_log2(p));
        let n = p - 1;
        // most set bits of a v <= n with top bit h - 1: n's own, or the top bit and all bits
        // below n's second-highest set bit
        let below_top = n ^ (1u64 << (h - 1));
        let k_max = if below_top == 0 {
            1
        } else {
            u64::from(n.count_ones()).max(u64::from(63 - below_top.leading_zeros()) + 1)
        };
        let path = |hops, waits| Path { hops, waits };
        Self::Paths {
            paths: [path(1, h - 1), path(k_max, h - k_max), path(h - 1, 0)],
            root_children: h,
            // node 1's children 1 ^ 2^j, j >= 1, below P
            inner_children: if p <= 3 {
                0
            } else {
                u64::from(ceil_log2(p - 1)) - 1
            },
        }
    }

    /// Open MPI's in-order binary tree (`ompi_coll_base_topo_build_in_order_bintree`) for a
    /// reduction, `P >= 2`: walked over subtree sizes ([`in_order_fan_in`]).
    pub(crate) fn in_order_fan_in(p: u64) -> Self {
        Self::InOrder { processes: p }
    }

    /// The chain of [`chain`](Self::chain) for a reduction: a parent absorbs its children in
    /// list order, so a child's data waits for its *later* siblings; the first chain is a
    /// long one and waits for the `f - 1` others: `(⌈(P-1)/f⌉, f - 1)`.
    pub(crate) fn chain_fan_in(fanout: u64, p: u64) -> Self {
        let Self::Paths {
            root_children,
            inner_children,
            ..
        } = Self::chain(fanout, p)
        else {
            return Self::chain(fanout, p);
        };
        let f = root_children;
        let len = (p - 1).div_ceil(f);
        let path = |hops, waits| Path { hops, waits };
        Self::Paths {
            paths: [path(len, f - 1), path(0, 0), path(0, 0)],
            root_children,
            inner_children,
        }
    }

    /// The binary tree of [`binary`](Self::binary) for a reduction (children absorbed in list
    /// order, a first child waits for its sibling): position `x` of level `l` waits at each
    /// hop into it as a first child whose sibling exists. Levels above `d = ⌊log2 P⌋` are
    /// full, so the slowest are position 0 of level `d`, `(d, d - 1 + [2^(d-1) <= P - 2^d])`,
    /// and of level `d - 1`, `(d - 1, d - 1)`.
    pub(crate) fn binary_fan_in(p: u64) -> Self {
        let d = u64::from(floor_log2(p));
        let last_position = p - (1u64 << d);
        let path = |hops, waits| Path { hops, waits };
        let sibling = u64::from(d >= 1 && (1u64 << (d - 1)) <= last_position);
        Self::Paths {
            paths: [path(d, (d - 1) + sibling), path(d - 1, d - 1), path(0, 0)],
            root_children: (p - 1).min(2),
            inner_children: u64::from(p > 3) + u64::from(p > 5),
        }
    }

    /// The binomial tree of [`binomial`](Self::binomial) for a reduction: Open MPI lists a
    /// process's children from the largest subtree down, and a reduction absorbs them in
    /// that order, so the data of child `u + 2^b` waits for its later siblings `u + 2^j < P`,
    /// `j > b`: `t - 1 - b` of them, plus one when `u < P - 2^t` (`t` the top bit of `P - 1`).
    /// The slowest path takes every bit below `t` from the lowest up (and bit `t` too when
    /// `P = 2^(t+1)`): `k` hops and `Σ_{b<t} (t-1-b) + #{i < t : 2^i - 1 < P - 2^t}` waits.
    pub(crate) fn binomial_fan_in(p: u64) -> Self {
        let Self::Paths {
            root_children,
            inner_children,
            ..
        } = Self::binomial(p)
        else {
            return Self::binomial(p);
        };
        let t = u64::from(floor_log2(p - 1));
        let rest = p - (1u64 << t);
        let cut = (0..t).filter(|&i| (1u64 << i) - 1 < rest).count() as u64;
        let hops = t + u64::from(p.is_power_of_two());
        let waits = t * t.saturating_sub(1) / 2 + cut;
        let path = |hops, waits| Path { hops, waits };
        Self::Paths {
            paths: [path(hops, waits), path(0, 0), path(0, 0)],
            root_children,
            inner_children,
        }
    }

    /// Open MPI's k-nomial tree (`ompi_coll_base_topo_build_kmtree`), `radix >= 2`, `P >= 2`.
    pub(crate) fn knomial(radix: u64, p: u64) -> Self {
        Self::Knomial {
            radix,
            processes: p,
        }
    }

    /// `(root_children, inner_children)`.
    fn fanouts(&self) -> (u64, u64) {
        match *self {
            Self::Paths {
                root_children,
                inner_children,
                ..
            } => (root_children, inner_children),
            // the root's children (P - 2, and ⌊P/2⌋ - 1 for P >= 3); an inner process has the
            // most under the right child, root of the larger subtree (⌊P/2⌋ processes; a
            // subtree of s >= 3 processes has two children at its root, of 2 one)
            Self::InOrder { processes: p } => (
                (p - 1).min(2),
                match if p >= 3 { p / 2 } else { 0 } {
                    0 | 1 => 0,
                    2 => 1,
                    _ => 2,
                },
            ),
            Self::Knomial { radix, processes } => {
                // N = P - 1 has d digits, the top one N_{d-1} >= 1. The root's children are
                // c r^j < P: r - 1 for each j < d - 1 (N >= r^(j+1)) and N_{d-1} at j = d - 1.
                // Those of r^(d-1) are r^(d-1) + c r^j < P, j < d - 1: with N' = N - r^(d-1)
                // of k digits, r - 1 for each j < k - 1 and N'_{k-1} at j = k - 1 (if < d - 1).
                let (digits, d) = base_digits(radix, processes.saturating_sub(1));
                if d == 0 {
                    return (0, 0);
                }
                let r1 = radix - 1;
                let root = r1
                    .saturating_mul(d as u64 - 1)
                    .saturating_add(digits[d - 1]);
                let mut reduced = digits;
                reduced[d - 1] -= 1;
                let k = reduced[..d]
                    .iter()
                    .rposition(|&x| x != 0)
                    .map_or(0, |i| i + 1);
                let inner = if k == 0 {
                    0
                } else {
                    let whole = r1.saturating_mul((k as u64 - 1).min(d as u64 - 1));
                    let partial = if k - 1 < d - 1 { reduced[k - 1] } else { 0 };
                    whole.saturating_add(partial)
                };
                (root, inner)
            }
        }
    }

    /// The time the slowest process gets the first segment: `max (a hop + b wait)`.
    fn first_arrival(&self, hop: f64, wait: f64) -> f64 {
        match *self {
            Self::Paths { paths, .. } => paths
                .iter()
                .map(|p| p.hops as f64 * hop + p.waits as f64 * wait)
                .fold(0.0, f64::max),
            Self::Knomial { radix, processes } => knomial_arrival(radix, processes, hop, wait),
            Self::InOrder { processes } => in_order_fan_in(processes, hop, wait, &mut Vec::new()),
        }
    }
}

/// The slowest contribution to the root of Open MPI's in-order binary tree of `n` processes in
/// a reduction: the root `n - 1` has the left child `n - 2` over the `n - 1 - R` processes
/// above the right subtree, and for `n >= 3` the right child `R - 1` over `R = ⌊n/2⌋`; it
/// absorbs the left child first, so the left one waits for its sibling:
/// `F(n) = max(F(n - 1 - R) + hop + [R > 0] wait, F(R) + hop)`, `F(1) = 0`. Subtree sizes
/// halve, and each level holds at most a few distinct ones: `O(log n)` with `memo`.
fn in_order_fan_in(n: u64, hop: f64, wait: f64, memo: &mut Vec<(u64, f64)>) -> f64 {
    if n <= 1 {
        return 0.0;
    }
    if let Some(&(_, v)) = memo.iter().find(|(k, _)| *k == n) {
        return v;
    }
    let right = if n >= 3 { n / 2 } else { 0 };
    let left = n - 1 - right;
    let mut v = in_order_fan_in(left, hop, wait, memo) + hop;
    if right > 0 {
        v = (v + wait).max(in_order_fan_in(right, hop, wait, memo) + hop);
    }
    memo.push((n, v));
    v
}

/// The base-`radix` digits of `n`, lowest first, and how many there are (`⌈log_r (n + 1)⌉`,
/// at most 64; `radix >= 2`): shifts and masks for a power-of-two radix.
fn base_digits(radix: u64, n: u64) -> ([u64; 64], usize) {
    let mut digits = [0u64; 64];
    let mut d = 0;
    let mut rest = n;
    let radix = radix.max(2);
    let shift = radix.is_power_of_two().then(|| radix.trailing_zeros());
    while rest > 0 && d < digits.len() {
        match shift {
            Some(s) => {
                digits[d] = rest & (radix - 1);
                rest = rest.checked_shr(s).unwrap_or(0);
            }
            None => {
                digits[d] = rest % radix;
                rest /= radix;
            }
        }
        d += 1;
    }
    (digits, d)
}

/// `⌈log_r P⌉`: the number of powers `1, r, r², …` below `P` (at most 64).
#[cfg(test)]
fn knomial_digits(radix: u64, p: u64) -> u32 {
    let mut digits = 0;
    let mut power = 1u64;
    while power < p {
        digits += 1;
        power = power.saturating_mul(radix);
        if power == u64::MAX {
            break;
        }
    }
    digits
}

/// The slowest first-segment arrival in a k-nomial tree, exactly as Open MPI builds it.
///
/// Process `v` with base-`r` digits (`d` of them; `N = P - 1`) is reached from the root through
/// its non-zero digits, highest first: ancestor `u_i` adds digit `c_i` at position `j_i`. A
/// parent whose lowest non-zero digit is at `e` (the root: `e = d`) lists its children from the
/// largest subtree down — for `j' = e-1, …, 0` and `c' = 1, …, r-1` the child `u + c' r^j'`
/// when it is below `P` — so child `(j, c)` waits for `Σ_{j<j'<e} cnt(u, j') + c - 1` earlier
/// siblings, with `cnt(u, j') = r - 1` when `u`'s digits above `e` are below `N`'s, and
/// `min(r - 1, ⌊(N mod r^e) / r^j'⌋)` when they equal them. Only the digits `N_j`, `N_j - 1`,
/// `r - 1` and 0 can be best (a larger digit only adds waits), so a digit walk from the top
/// keeps three latest arrivals:
///
/// * the prefix equal to `N`'s (its digits between `e` and `j` are 0, so its children wait
///   only for their own `c - 1` siblings);
/// * a parent equal to `N`'s prefix, the prefix below it (a 0 where `N` has its first non-zero
///   digit `k < e`): `Σ_{j<j'<e} cnt = N_k + (r-1)(k-1) - (r-1) j`;
/// * a parent below `N`'s prefix: `Σ_{j<j'<e} cnt = (r-1)(e-1) - (r-1) j`.
///
/// In the last two the waits are `A - (r-1) j` with `A` fixed when the state is entered, so
/// the states of every `e` merge into one maximum of `arrival + A · wait`: `O(d)`, one pass
/// over the digits of `N`.
fn knomial_arrival(radix: u64, p: u64, hop: f64, wait: f64) -> f64 {
    let (digits, d) = base_digits(radix, p.saturating_sub(1));
    let r1 = radix.saturating_sub(1) as f64;
    let r2 = radix.saturating_sub(2) as f64;
    let raise = |acc: Option<f64>, x: f64| Some(acc.map_or(x, |a| a.max(x)));
    let mut answer: f64 = 0.0;
    // the node N's prefix reaches, and the merged maxima of `arrival + A · wait`
    let mut equal = 0.0;
    let mut parent_equal: Option<f64> = None;
    let mut below: Option<f64> = None;
    for j in (0..d).rev() {
        let nj = digits[j];
        let jf = j as f64;
        // a digit 0 keeps every state; a non-zero digit under a parent-equal or a smaller
        // parent is best as r - 1, a child of a smaller parent at level j
        let mut next_parent_equal = parent_equal;
        let mut next_below = below;
        for acc in [parent_equal, below].into_iter().flatten() {
            let arrival = acc + hop + (r2 - r1 * jf) * wait;
            answer = answer.max(arrival);
            next_below = raise(next_below, arrival + r1 * (jf - 1.0) * wait);
        }
        if nj >= 1 {
            let base = equal + hop;
            if nj >= 2 {
                let arrival = base + (nj - 2) as f64 * wait;
                answer = answer.max(arrival);
                next_below = raise(next_below, arrival + r1 * (jf - 1.0) * wait);
            }
            // a 0 where N has its first non-zero digit below the parent: k = j
            next_parent_equal = raise(
                next_parent_equal,
                equal + (nj as f64 + r1 * (jf - 1.0)) * wait,
            );
            equal = base + (nj - 1) as f64 * wait;
            answer = answer.max(equal);
        }
        parent_equal = next_parent_equal;
        below = next_below;
    }
    answer
}

/// A segmented broadcast over `shape` (module docs, "Segmented trees").
pub(super) fn bcast_tree(pieces: &mut Pieces<'_>, m: u64, segment: u64, shape: &Shape) -> f64 {
    let s = if segment == 0 || segment >= m {
        m
    } else {
        segment
    };
    let q = if s == 0 { 1 } else { m.div_ceil(s) };
    let t = pieces.quantities(s);
    let (root_k, inner_k) = shape.fanouts();
    let first = shape.first_arrival(t.p2p, t.send_interval);
    let step = (root_k as f64 * t.send_interval)
        .max(inner_k as f64 * t.send_interval)
        .max(t.recv_overhead + inner_k as f64 * t.send_overhead);
    first + (q - 1) as f64 * step
}

/// A segmented reduction over `shape` (module docs, "Segmented trees").
pub(super) fn reduce_tree(pieces: &mut Pieces<'_>, m: u64, segment: u64, shape: &Shape) -> f64 {
    let s = if segment == 0 || segment >= m {
        m
    } else {
        segment
    };
    let q = if s == 0 { 1 } else { m.div_ceil(s) };
    let t = pieces.quantities(s);
    let op = pieces.op(s);
    let (root_k, inner_k) = shape.fanouts();
    let absorb = t.recv_overhead + op;
    let first = shape.first_arrival(t.p2p + op, t.send_interval.max(absorb));
    // per segment a parent's receiving NIC takes its k children's segments, I apart, while
    // its CPU absorbs them (and an inner process sends the result up)
    let step = (root_k as f64 * absorb.max(t.send_interval))
        .max(inner_k as f64 * absorb + t.send_overhead)
        .max(inner_k as f64 * t.send_interval)
        .max(t.send_interval);
    first + (q - 1) as f64 * step
}

/// `(P - 1)` linear receptions at a root: `T(m) + (P - 2) max(I(m), or(m))`.
pub(super) fn linear_fan_in(pieces: &mut Pieces<'_>, m: u64, p: u64) -> f64 {
    let t = pieces.quantities(m);
    t.p2p + (p - 2) as f64 * t.send_interval.max(t.recv_overhead)
}

/// `(P - 1)` linear sends from a root: `T(m) + (P - 2) I(m)`.
pub(super) fn linear_fan_out(pieces: &mut Pieces<'_>, m: u64, p: u64) -> f64 {
    pieces.p2p(m) + (p - 2) as f64 * pieces.interval(m)
}

/// Implements `Display` and `FromStr` from the enum's `ParsedName`-based `parse` and `write`.
macro_rules! display_from_str {
    ($ty:ty) => {
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.write(f)
            }
        }
        impl std::str::FromStr for $ty {
            type Err = crate::error::AlgorithmParseError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::parse(s)
            }
        }
    };
}
pub(crate) use display_from_str;

#[cfg(test)]
mod tests {
    use super::*;

    /// Local work is added to the messages' cost exactly as priced: Bruck's all-to-all on 4
    /// processes copies 2 x 4 m + 4 m (its source: two rotations of the P blocks, one block per
    /// set bit of steps 1, 2, 3) and allocates 3 buffers; a broadcast copies nothing.
    #[test]
    fn local_work_is_added_to_the_messages() {
        use crate::collectives::{CopyCost, LocalWork, Problem};
        use crate::{LogGP, Message};
        let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9, 4).unwrap();
        let local = LocalWork::new(CopyCost::new(0.0, &[(0, 1e-10)]).unwrap(), 1e-6).unwrap();
        let free = Problem::new(4, Message::contiguous(1000));
        let priced = free.with_local(local);
        let a = Alltoall::ModifiedBruck;
        let extra = a.cost(&model, &priced).unwrap() - a.cost(&model, &free).unwrap();
        assert!(
            (extra - (12_000.0 * 1e-10 + 3.0 * 1e-6)).abs() < 1e-12,
            "{extra}"
        );
        for b in [Bcast::BasicLinear, Bcast::Binomial { segment: 0 }] {
            assert_eq!(
                b.cost(&model, &priced).unwrap().to_bits(),
                b.cost(&model, &free).unwrap().to_bits()
            );
        }
        // scatter's binomial tree on 8 processes: 3 block copies on the way, 2 buffers
        let s = Scatter::Binomial;
        let extra = s
            .cost(
                &model,
                &Problem::new(8, Message::contiguous(1000)).with_local(local),
            )
            .unwrap()
            - s.cost(&model, &Problem::new(8, Message::contiguous(1000)))
                .unwrap();
        assert!((extra - (3000.0 * 1e-10 + 2e-6)).abs() < 1e-12, "{extra}");
    }

    /// Brute force: the k-nomial tree built as Open MPI builds it, arrival times by walking it.
    fn knomial_brute(r: u64, p: u64, hop: f64, wait: f64) -> f64 {
        let d = knomial_digits(r, p);
        let mut arrival = vec![0.0f64; p as usize];
        // parents before children: process in increasing vrank order (a parent is smaller)
        for v in 0..p {
            // children of v: masks from r^(e-1) down, e = lowest non-zero digit position of v
            let mut e = d;
            let mut m = 1u64;
            for j in 0..d {
                if v % (m * r) != 0 {
                    e = j;
                    break;
                }
                m *= r;
            }
            let mut index = 0u64;
            for j in (0..e).rev() {
                for c in 1..r {
                    // as Open MPI: a child beyond P is not in the list
                    let child = v + c * r.pow(j);
                    if child < p {
                        arrival[child as usize] = arrival[v as usize] + hop + index as f64 * wait;
                        index += 1;
                    }
                }
            }
        }
        arrival.into_iter().fold(0.0, f64::max)
    }

    #[test]
    fn knomial_dp_matches_the_walk_on_powers_of_the_radix() {
        for r in 2..6u64 {
            for d in 1..5u32 {
                let p = r.pow(d);
                for (hop, wait) in [(1.0, 0.1), (1.0, 0.9), (0.2, 1.0)] {
                    let a = knomial_arrival(r, p, hop, wait);
                    let b = knomial_brute(r, p, hop, wait);
                    assert!((a - b).abs() < 1e-9, "r {r} p {p}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn knomial_fanouts_count_the_children_open_mpi_lists() {
        for r in 2..9u64 {
            for p in 2..400u64 {
                let d = knomial_digits(r, p);
                // children of v whose lowest non-zero digit is at e: v + c r^j < P, j < e
                let count = |v: u64, e: u32| {
                    (0..e)
                        .flat_map(|j| (1..r).map(move |c| v + c * r.pow(j)))
                        .filter(|&child| child < p)
                        .count() as u64
                };
                let root = count(0, d);
                let inner = count(r.pow(d - 1), d - 1);
                assert_eq!(Shape::knomial(r, p).fanouts(), (root, inner), "r {r} p {p}");
            }
        }
    }

    #[test]
    fn knomial_dp_matches_the_walk_on_every_size() {
        for r in 2..7u64 {
            for p in 2..300u64 {
                for (hop, wait) in [(1.0, 0.1), (1.0, 0.9), (0.2, 1.0), (1.0, 0.0)] {
                    let a = knomial_arrival(r, p, hop, wait);
                    let b = knomial_brute(r, p, hop, wait);
                    assert!((a - b).abs() < 1e-9, "r {r} p {p}: {a} vs {b}");
                }
            }
        }
    }

    /// Brute force over Open MPI's trees as `coll_base_topo.c` builds them.
    fn paths_brute(children: impl Fn(u64) -> Vec<u64>, p: u64, hop: f64, wait: f64) -> f64 {
        let mut arrival = vec![f64::NAN; p as usize];
        arrival[0] = 0.0;
        let mut stack = vec![0u64];
        while let Some(v) = stack.pop() {
            for (i, c) in children(v).into_iter().enumerate() {
                arrival[c as usize] = arrival[v as usize] + hop + i as f64 * wait;
                stack.push(c);
            }
        }
        arrival.into_iter().fold(0.0, f64::max)
    }

    #[test]
    fn binomial_and_binary_paths_match_the_trees() {
        for p in 2..300u64 {
            let bm = |v: u64| {
                let mut mask = if v == 0 { 1 } else { v.next_power_of_two() };
                if v.is_power_of_two() {
                    mask = v << 1;
                }
                let mut out = vec![];
                while mask < p {
                    let remote = v ^ mask;
                    if remote >= p {
                        break;
                    }
                    out.push(remote);
                    mask <<= 1;
                }
                out
            };
            let bin = |v: u64| {
                let level = 63 - (v + 1).leading_zeros();
                let delta = 1u64 << level;
                [v + delta, v + 2 * delta]
                    .into_iter()
                    .filter(|&c| c < p)
                    .collect::<Vec<_>>()
            };
            for (hop, wait) in [(1.0, 0.1), (1.0, 0.9), (0.2, 1.0)] {
                let closed = Shape::binomial(p).first_arrival(hop, wait);
                let brute = paths_brute(bm, p, hop, wait);
                assert!(
                    (closed - brute).abs() < 1e-9,
                    "binomial p {p}: {closed} vs {brute}"
                );
                let closed = Shape::binary(p).first_arrival(hop, wait);
                let brute = paths_brute(bin, p, hop, wait);
                assert!(
                    (closed - brute).abs() < 1e-9,
                    "binary p {p}: {closed} vs {brute}"
                );
            }
        }
    }

    /// `coll_base_topo.c`'s chain: `f` chains, the first `(P - 1) mod f` one longer.
    fn chain_children(f: u64, p: u64) -> impl Fn(u64) -> Vec<u64> {
        let f = f.clamp(1, MAX_TREE_FANOUT).min(p - 1).max(1);
        let n = p - 1;
        let (len, mark) = if n.is_multiple_of(f) {
            (n / f, f + 1)
        } else {
            (n / f + 1, n % f)
        };
        let mut heads = vec![];
        let mut ends = vec![];
        let mut head = 1;
        for i in 0..f {
            let l = if i < mark { len } else { len - 1 };
            if l > 0 {
                heads.push(head);
                ends.push(head + l - 1);
                head += l;
            }
        }
        move |v| {
            if v == 0 {
                heads.clone()
            } else if ends.contains(&v) || v + 1 >= p {
                vec![]
            } else {
                vec![v + 1]
            }
        }
    }

    /// Brute force of a reduction over a tree whose parents absorb children in list order:
    /// `F(v) = max_i F(c_i) + hop + (k - 1 - i) wait`.
    fn fan_in_brute(children: impl Fn(u64) -> Vec<u64>, v: u64, hop: f64, wait: f64) -> f64 {
        fn walk(children: &dyn Fn(u64) -> Vec<u64>, v: u64, hop: f64, wait: f64) -> f64 {
            let kids = children(v);
            let k = kids.len();
            kids.iter()
                .enumerate()
                .map(|(i, &c)| walk(children, c, hop, wait) + hop + (k - 1 - i) as f64 * wait)
                .fold(0.0, f64::max)
        }
        walk(&children, v, hop, wait)
    }

    /// `coll_base_topo.c`'s in-order binary tree, children of `rank` (signed, as Open MPI).
    fn in_order_children(p: u64) -> impl Fn(u64) -> Vec<u64> {
        move |rank| {
            let (mut size, mut me, mut parent, mut delta) =
                (p as i64, rank as i64, p as i64 - 1, 0);
            loop {
                let rightsize = size >> 1;
                let l = if size > 1 { parent - 1 } else { -1 };
                let r = if l > 0 { rightsize - 1 } else { -1 };
                if me == parent {
                    return [l, r]
                        .into_iter()
                        .filter(|&c| c >= 0)
                        .map(|c| (c + delta) as u64)
                        .collect();
                }
                if me > r {
                    size = size - rightsize - 1;
                    delta += rightsize;
                    me -= rightsize;
                    parent = size - 1;
                } else {
                    size = rightsize;
                    parent = r;
                }
            }
        }
    }

    #[test]
    fn in_order_fan_in_matches_the_tree() {
        for p in 2..400u64 {
            for (hop, wait) in [(1.0, 0.1), (1.0, 0.9), (0.2, 1.0), (1.0, 0.0)] {
                let closed = Shape::in_order_fan_in(p).first_arrival(hop, wait);
                let brute = fan_in_brute(in_order_children(p), p - 1, hop, wait);
                assert!((closed - brute).abs() < 1e-9, "p {p}: {closed} vs {brute}");
            }
            // the fan-outs: the root's, and the most of any other process
            let kids = in_order_children(p);
            let root = kids(p - 1).len() as u64;
            let inner = (0..p - 1).map(|v| kids(v).len() as u64).max().unwrap_or(0);
            assert_eq!(Shape::in_order_fan_in(p).fanouts(), (root, inner), "p {p}");
        }
    }

    #[test]
    fn chain_paths_match_the_chain() {
        for p in 2..120u64 {
            for f in [1, 2, 3, 4, 5, 8, 40] {
                for (hop, wait) in [(1.0, 0.1), (1.0, 0.9), (0.2, 1.0)] {
                    let closed = Shape::chain(f, p).first_arrival(hop, wait);
                    let brute = paths_brute(chain_children(f, p), p, hop, wait);
                    assert!((closed - brute).abs() < 1e-9, "chain f {f} p {p}");
                    let closed = Shape::chain_fan_in(f, p).first_arrival(hop, wait);
                    let brute = fan_in_brute(chain_children(f, p), 0, hop, wait);
                    assert!((closed - brute).abs() < 1e-9, "chain fan-in f {f} p {p}");
                }
            }
        }
    }

    #[test]
    fn fan_in_paths_match_the_trees() {
        for p in 2..300u64 {
            let bm = move |v: u64| {
                let mut mask = if v == 0 { 1 } else { v.next_power_of_two() };
                if v.is_power_of_two() {
                    mask = v << 1;
                }
                let mut out = vec![];
                while mask < p {
                    let remote = v ^ mask;
                    if remote >= p {
                        break;
                    }
                    out.push(remote);
                    mask <<= 1;
                }
                out
            };
            let bin = move |v: u64| {
                let level = 63 - (v + 1).leading_zeros();
                let delta = 1u64 << level;
                [v + delta, v + 2 * delta]
                    .into_iter()
                    .filter(|&c| c < p)
                    .collect::<Vec<_>>()
            };
            // hop >= wait: the slowest path takes every hop it can
            for (hop, wait) in [(1.0, 0.1), (1.0, 0.9), (1.0, 1.0)] {
                let closed = Shape::binomial_fan_in(p).first_arrival(hop, wait);
                let brute = fan_in_brute(bm, 0, hop, wait);
                assert!(
                    (closed - brute).abs() < 1e-9,
                    "binomial p {p}: {closed} vs {brute}"
                );
                let closed = Shape::binary_fan_in(p).first_arrival(hop, wait);
                let brute = fan_in_brute(bin, 0, hop, wait);
                assert!(
                    (closed - brute).abs() < 1e-9,
                    "binary p {p}: {closed} vs {brute}"
                );
            }
        }
    }
}

/// MPICH's names of the Open MPI algorithms that MPICH also runs
/// ([`MpichAlgorithm`](super::MpichAlgorithm)): the same communication pattern under MPICH's
/// `MPIR_CVAR_<COLL>_INTRA_ALGORITHM` name. Segmented variants map only unsegmented.
mod mpich {
    use super::{
        Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Reduce, ReduceScatter, Scatter,
    };
    use crate::collectives::MpichAlgorithm;

    macro_rules! mpich {
        ($ty:ident, $coll:literal, $prefix:literal, |$a:ident| $body:expr) => {
            impl MpichAlgorithm for $ty {
                const MPICH_COLLECTIVE: &'static str = $coll;
                const MPICH_PREFIX: &'static str = $prefix;
                fn mpich_name(&self) -> Option<&'static str> {
                    let $a = *self;
                    $body
                }
            }
        };
    }

    mpich!(Bcast, "bcast", "Bcast", |a| match a {
        Bcast::Binomial { segment: 0 } => Some("binomial"),
        Bcast::ScatterAllgather => Some("scatter_recursive_doubling_allgather"),
        Bcast::ScatterAllgatherRing => Some("scatter_ring_allgather"),
        _ => None,
    });
    mpich!(Allreduce, "allreduce", "Allreduce", |a| match a {
        Allreduce::RecursiveDoubling => Some("recursive_doubling"),
        Allreduce::Ring => Some("ring"),
        Allreduce::Rabenseifner => Some("reduce_scatter_allgather"),
        _ => None,
    });
    mpich!(Reduce, "reduce", "Reduce", |a| match a {
        Reduce::Binomial { segment: 0 } => Some("binomial"),
        Reduce::Rabenseifner => Some("reduce_scatter_gather"),
        _ => None,
    });
    mpich!(Allgather, "allgather", "Allgather", |a| match a {
        Allgather::Bruck => Some("brucks"),
        Allgather::RecursiveDoubling => Some("recursive_doubling"),
        Allgather::Ring => Some("ring"),
        _ => None,
    });
    mpich!(Alltoall, "alltoall", "Alltoall", |a| match a {
        Alltoall::Pairwise => Some("pairwise"),
        Alltoall::ModifiedBruck => Some("brucks"),
        _ => None,
    });
    mpich!(Barrier, "barrier", "Barrier", |a| match a {
        Barrier::Bruck => Some("k_dissemination"),
        _ => None,
    });
    mpich!(
        ReduceScatter,
        "reduce_scatter",
        "Reduce_scatter",
        |a| match a {
            ReduceScatter::RecursiveHalving => Some("recursive_halving"),
            _ => None,
        }
    );
    mpich!(Gather, "gather", "Gather", |a| match a {
        Gather::Binomial => Some("binomial"),
        _ => None,
    });
    mpich!(Scatter, "scatter", "Scatter", |a| match a {
        Scatter::Binomial => Some("binomial"),
        _ => None,
    });
}
