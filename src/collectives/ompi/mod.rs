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
//! different size for some collectives; [`Collective::ompi_rules_size`](crate::collectives::Collective::ompi_rules_size) converts:
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
mod forced;
mod gather;
pub(crate) mod inner;
mod mpich;
mod reduce;
mod reduce_scatter;
mod scatter;
mod table;
mod tree;

pub use allgather::Allgather;
pub use allreduce::Allreduce;
pub use alltoall::Alltoall;
pub use barrier::Barrier;
pub use bcast::Bcast;
pub(crate) use fixed::fixed_rules;
pub use fixed::{fixed_algorithm, fixed_decision};
pub use forced::forced_cost;
pub use gather::Gather;
pub use reduce::Reduce;
pub use reduce_scatter::ReduceScatter;
pub use scatter::Scatter;

use std::fmt;
use std::str::FromStr;

use super::Algorithm;
use crate::collectives::{
    AlgorithmParseError, Collective, CollectiveError, Family, FamilyAlgorithm,
};
use tree::{Shape, bcast_tree, linear_fan_in, linear_fan_out, reduce_tree};

/// An algorithm of Open MPI's tuned component: what the dynamic rules file names.
///
/// # Examples
///
/// ```
/// use commcost::collectives::Collective;
/// use commcost::collectives::ompi::{OmpiAlgorithm, Reduce};
///
/// let reduce: Reduce = "in-order_binary:segment=4096".parse()?;
/// assert_eq!(Reduce::COLLECTIVE, Collective::Reduce);
/// // the rule `msg_size 6 0 4096` of a rules file
/// assert_eq!((reduce.ompi_id(), reduce.faninout(), reduce.segment_size()), (6, 0, 4096));
/// assert_eq!(reduce.ompi_name(), "in-order_binary");
/// # Ok::<(), commcost::collectives::AlgorithmParseError>(())
/// ```
pub trait OmpiAlgorithm: Algorithm + fmt::Display + FromStr<Err = AlgorithmParseError> {
    /// The collective the algorithm belongs to.
    const COLLECTIVE: Collective;

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

/// A computation generic over an Open MPI algorithm type, run by [`visit`] for the type of a
/// collective.
pub trait OmpiVisitor {
    /// What the computation returns.
    type Output;
    /// Runs the computation for algorithm type `A`.
    fn visit<A: OmpiAlgorithm + FamilyAlgorithm>(self) -> Self::Output;
}

/// Calls `visitor.visit::<A>()` with `A` the Open MPI algorithm type of `collective`: the Open
/// MPI family's one table of types ([`Family::visit`](crate::collectives::Family::visit) uses
/// it).
///
/// # Errors
///
/// [`CollectiveError::NotPriced`] for a collective without Open MPI algorithms in this crate.
pub fn visit<V: OmpiVisitor>(
    collective: Collective,
    visitor: V,
) -> Result<V::Output, CollectiveError> {
    Ok(match collective {
        Collective::Allgather => visitor.visit::<Allgather>(),
        Collective::Allreduce => visitor.visit::<Allreduce>(),
        Collective::Alltoall => visitor.visit::<Alltoall>(),
        Collective::Barrier => visitor.visit::<Barrier>(),
        Collective::Bcast => visitor.visit::<Bcast>(),
        Collective::Gather => visitor.visit::<Gather>(),
        Collective::Reduce => visitor.visit::<Reduce>(),
        Collective::ReduceScatter => visitor.visit::<ReduceScatter>(),
        Collective::Scatter => visitor.visit::<Scatter>(),
        Collective::ReduceScatterBlock | Collective::Scan => {
            return Err(CollectiveError::NotPriced {
                family: Family::Ompi,
                collective,
            });
        }
    })
}

/// Open MPI's chain fan-out limit (`MAXTREEFANOUT` in `coll_base_topo.h`).
pub const MAX_TREE_FANOUT: u64 = 32;

/// Segment sizes offered as candidates below a message of `m` bytes: 0 (unsegmented) and
/// `2^k`, `10 <= k <= 20`, below `m`.
pub(crate) fn segment_candidates(m: u64) -> impl Iterator<Item = u64> {
    std::iter::once(0).chain((10..=20).map(|k| 1u64 << k).filter(move |&s| s < m))
}

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
        let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9).unwrap();
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
}
