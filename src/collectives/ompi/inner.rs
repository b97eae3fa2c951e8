//! The collectives Open MPI 4.1.4's composed algorithms call, and the algorithms that run them.
//!
//! Three of the tuned component's algorithms are other collectives called one after the other
//! through the communicator's collective table (`comm->c_coll->coll_<collective>`), that is
//! through the tuned module's own entry points rather than a fixed algorithm
//! (`ompi/mca/coll/base/`):
//!
//! | algorithm | Open MPI function | inner calls (root 0) and the size each decides on |
//! |---|---|---|
//! | allgather 1 `linear` | `coll_base_allgather.c`: `ompi_coll_base_allgather_intra_basic_linear` | `coll_gather` (block `m`), then `coll_bcast` of `rcount × P` elements (`P m`) |
//! | allreduce 2 `nonoverlapping` | `coll_base_allreduce.c`: `ompi_coll_base_allreduce_intra_nonoverlapping` | `coll_reduce` (`m`), then `coll_bcast` (`m`) |
//! | reduce_scatter 1 `non-overlapping` | `coll_base_reduce_scatter.c`: `ompi_coll_base_reduce_scatter_intra_nonoverlapping` | `coll_reduce` of `Σ rcounts` (`m`), then `coll_scatterv` |
//!
//! With only the outer collective's algorithm forced (`coll_tuned_use_dynamic_rules 1`,
//! `coll_tuned_<collective>_algorithm`) and no rules file, the inner collective's
//! `ompi_coll_tuned_<collective>_intra_dec_dynamic` (`coll_tuned_decision_dynamic.c`) finds
//! neither file rules nor a forced algorithm and calls `ompi_coll_tuned_<collective>_intra_dec_fixed`
//! (`coll_tuned_decision_fixed.c`); without dynamic rules the module calls the fixed decision
//! directly. So each inner call runs [`fixed_algorithm`](super::fixed_algorithm) for its own
//! size: the gather decides on `type size × rcount` (the block, the crate's size of a gather),
//! the broadcasts and reductions on `type size × count`. The operator is taken as commutative,
//! as everywhere in the crate's Open MPI family. The tuned component has no `scatterv`
//! (`coll_tuned_module.c` leaves it `NULL`): the basic component's
//! `mca_coll_basic_scatterv_intra` (`coll_basic_scatterv.c`) runs it, a blocking send from the
//! root to each rank in rank order. A rank starts its second call when its first has returned.
//! Each inner call is priced as its algorithm is, its local work and call cost
//! ([`Problem::local`](crate::collectives::Problem::local)) included; the composed algorithm
//! adds the local work it declares
//! ([`OmpiAlgorithm::local_work`](super::OmpiAlgorithm::local_work)) and its own call cost.
//!
//! Every other algorithm calls point-to-point operations or other `ompi_coll_base_*` functions
//! directly: allreduce 1 `basic_linear` runs `ompi_coll_base_reduce_intra_basic_linear` and
//! `ompi_coll_base_bcast_intra_basic_linear`, and the fallbacks (Rabenseifner to basic linear,
//! a ring to recursive doubling, recursive doubling to Bruck, …) name their base function.

use super::fixed::fixed;
use super::{Bcast, Gather, Reduce};

/// Allgather 1 (`ompi_coll_base_allgather_intra_basic_linear`) on `p` processes, blocks of
/// `m` bytes: the gather of the blocks to rank 0 and the broadcast of the `P m` bytes gathered,
/// each as its fixed decision picks it.
pub(crate) fn allgather_linear(p: u64, m: u64) -> (Gather, Bcast) {
    (fixed(p, m), fixed(p, m.saturating_mul(p)))
}

/// Allreduce 2 (`ompi_coll_base_allreduce_intra_nonoverlapping`) on `p` processes, a vector of
/// `m` bytes: the reduce to rank 0 and the broadcast from it, each as its fixed decision picks
/// it.
pub(crate) fn allreduce_nonoverlapping(p: u64, m: u64) -> (Reduce, Bcast) {
    (fixed(p, m), fixed(p, m))
}

/// Reduce-scatter 1 (`ompi_coll_base_reduce_scatter_intra_nonoverlapping`) on `p` processes, a
/// vector of `m` bytes: the reduce of the whole vector to rank 0 as its fixed decision picks it
/// (the basic component's linear `scatterv` follows).
pub(crate) fn reduce_scatter_nonoverlapping(p: u64, m: u64) -> Reduce {
    fixed(p, m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives::ompi::{Allgather, Allreduce, ReduceScatter};
    use crate::collectives::{Algorithm, Problem};
    use crate::{CommModel, LogGP, Message};

    /// The inner calls' algorithms as `coll_tuned_decision_fixed.c` of Open MPI 4.1.4 picks
    /// them (the branches quoted).
    #[test]
    fn inner_calls_follow_the_fixed_decisions() {
        // P = 8, 4 KiB blocks: gather `communicator_size < 256` -> 2; the bcast of 32 KiB,
        // `communicator_size < 16`, not `total_dsize < 32768` -> 1 (the root sends 7 times)
        assert_eq!(
            allgather_linear(8, 4096),
            (Gather::Binomial, Bcast::BasicLinear)
        );
        // 2 KiB blocks: the bcast of 16 KiB, `total_dsize < 32768` -> 6
        assert_eq!(
            allgather_linear(8, 2048),
            (Gather::Binomial, Bcast::Binomial { segment: 0 })
        );
        // P = 4, 2 KiB blocks: gather `communicator_size < 8`, `total_dsize < 8192` -> 1; the
        // bcast of 8 KiB, `total_dsize < 1048576` -> 1
        assert_eq!(
            allgather_linear(4, 2048),
            (Gather::BasicLinear, Bcast::BasicLinear)
        );
        // allreduce, P = 8, 8 KiB: reduce `communicator_size < 16`, not `total_dsize < 8192`
        // -> 5; bcast `total_dsize < 16384` -> 5
        assert_eq!(
            allreduce_nonoverlapping(8, 8192),
            (
                Reduce::Binomial { segment: 0 },
                Bcast::BinaryTree { segment: 0 }
            )
        );
        // reduce_scatter, P = 4, 16 KiB: reduce `communicator_size < 8`, `total_dsize < 65536`
        // -> 2, a chain of fan-out 0 built as 1
        assert_eq!(
            reduce_scatter_nonoverlapping(4, 16384),
            Reduce::Chain {
                segment: 0,
                fanout: 1
            }
        );
    }

    /// Each composed algorithm costs its calls: the gather and the broadcast of `P m` bytes,
    /// the reduce and the broadcast, the reduce and `P - 1` sends of `m / P` bytes.
    #[test]
    fn a_composed_algorithm_costs_its_calls() {
        let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9).unwrap();
        let problem = Problem::new(8, Message::contiguous(4096));
        let linear = Allgather::Linear.cost(&model, &problem).unwrap();
        let calls = Gather::Binomial.cost(&model, &problem).unwrap()
            + Bcast::BasicLinear
                .cost(&model, &problem.with_bytes(8 * 4096))
                .unwrap();
        assert_eq!(linear.to_bits(), calls.to_bits());
        let problem = Problem::new(8, Message::contiguous(8192));
        let nonoverlapping = Allreduce::Nonoverlapping.cost(&model, &problem).unwrap();
        let calls = Reduce::Binomial { segment: 0 }
            .cost(&model, &problem)
            .unwrap()
            + Bcast::BinaryTree { segment: 0 }
                .cost(&model, &problem)
                .unwrap();
        assert_eq!(nonoverlapping.to_bits(), calls.to_bits());
        let problem = Problem::new(4, Message::contiguous(16384));
        let scatter = ReduceScatter::NonOverlapping
            .cost(&model, &problem)
            .unwrap();
        let reduce = Reduce::Chain {
            segment: 0,
            fanout: 1,
        }
        .cost(&model, &problem)
        .unwrap();
        // T(m/P) + (P - 2) I(m/P)
        let block = problem.piece(4096);
        let sends = model.p2p(&block) + 2.0 * model.send_interval(&block);
        assert!(
            (scatter - reduce - sends).abs() < 1e-15,
            "{scatter} {reduce} {sends}"
        );
    }
}
