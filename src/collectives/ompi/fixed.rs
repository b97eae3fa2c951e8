//! Open MPI 4.1.4's fixed decisions as data (see [`fixed_decision`]).

use super::{Collective, OmpiAlgorithm};
use crate::collectives::AlgorithmParseError;

/// A fixed-decision table: `(from P, [(from bytes, algorithm ID)])`, both lists increasing.
type Table = &'static [(u64, &'static [(u64, u32)])];

/// Open MPI 4.1.4's fixed decision for `collective` on `processes` processes and a message of
/// `bytes` bytes in the [`Problem`](crate::collectives::Problem) convention (the per-process
/// block for allgather, alltoall, gather and scatter): the algorithm ID Open MPI runs (its
/// segment size and fan-out are 0).
///
/// Open MPI 4.1.4's fixed decisions are the algorithm its tuned component runs when no rules file
/// (or a rule with algorithm `0`) decides.
///
/// `coll_tuned_decision_fixed.c` of Open MPI 4.1.4 (`ompi/mca/coll/tuned/`, the decision
/// functions `ompi_coll_tuned_<collective>_intra_dec_fixed`) chooses from the communicator size
/// `P` and a message size, with thresholds found by measurement on the Open MPI team's
/// machines. The crate holds those thresholds as data: per collective, a list
/// of communicator-size blocks (`from P`, in increasing order) and in each a list of rules
/// (`from bytes`, algorithm ID); the decision is the last block whose `P` is at most the
/// communicator size and in it the last rule whose size is at most the message size — exactly
/// how Open MPI reads a rules file, so the tables can be written out as one
/// ([`crate::export::ompi_fixed_rules`]) and checked against the real library
/// (`scripts/ompi_rules_check.sh --run-with none`, which traces the algorithm every call runs).
///
/// Every decision passes segment size 0 and fan-out 0 to the algorithm: segmented algorithms
/// run unsegmented, and a chain's fan-out 0 is raised to 1 by `ompi_coll_base_topo_build_chain`
/// (a pipeline). The k-nomial broadcast uses the MCA default radix 4.
///
/// # Message sizes
///
/// The fixed decisions look sizes up in the crate's [`Problem`](crate::collectives::Problem)
/// convention, not the rules file's: `type size × count` for bcast, allreduce and reduce,
/// `type size × Σ recvcounts` for reduce_scatter, and the **per-process block**
/// `type size × sendcount` for allgather, alltoall, gather and scatter (where the rules file
/// uses `× P`). Barrier depends on `P` only.
///
/// The crate holds no fixed decision for scan and reduce_scatter_block (no algorithms of
/// Open MPI's family price them): their decision is 0.
///
/// # Operators
///
/// allreduce, reduce and reduce_scatter decide differently for non-commutative operators
/// (reduce_scatter always runs its non-overlapping algorithm then); `commutative` selects the
/// table. Predefined operators such as `MPI_SUM` are commutative.
///
/// # Examples
///
/// ```
/// use commcost::collectives::Collective;
/// use commcost::collectives::ompi::fixed_decision;
///
/// // `ompi_coll_tuned_bcast_intra_dec_fixed`: fewer than 4 processes, 32 KiB <= m < 128 KiB:
/// // binary tree (5)
/// assert_eq!(fixed_decision(Collective::Bcast, 2, 65536, true), 5);
/// // allreduce on 8-15 processes from 8 KiB: Rabenseifner (6); non-commutative: recursive
/// // doubling (3) below 1 MiB
/// assert_eq!(fixed_decision(Collective::Allreduce, 8, 8192, true), 6);
/// assert_eq!(fixed_decision(Collective::Allreduce, 8, 8192, false), 3);
/// ```
pub fn fixed_decision(
    collective: Collective,
    processes: u64,
    bytes: u64,
    commutative: bool,
) -> u32 {
    lookup(table(collective, commutative), processes, bytes)
}

/// The algorithm of [`fixed_decision`] as the crate's variant of it, to be priced like any
/// other: unsegmented, a chain with fan-out 1 (what Open MPI's fan-out 0 becomes), the
/// k-nomial broadcast with radix 4.
///
/// # Errors
///
/// None for Open MPI 4.1.4's tables (every ID they name is an algorithm of the collective; a
/// test checks all of them); the `Result` is that of parsing the ID.
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::{Bcast, fixed_algorithm};
///
/// let a: Bcast = fixed_algorithm(4, 2_000_000, true)?;
/// assert_eq!(a, Bcast::Chain { segment: 0, fanout: 1 });
/// # Ok::<(), commcost::collectives::AlgorithmParseError>(())
/// ```
pub fn fixed_algorithm<A: OmpiAlgorithm>(
    processes: u64,
    bytes: u64,
    commutative: bool,
) -> Result<A, AlgorithmParseError> {
    let id = fixed_decision(A::COLLECTIVE, processes, bytes, commutative);
    let chain = matches!(A::COLLECTIVE, Collective::Bcast | Collective::Reduce) && id == 2;
    if chain {
        format!("{id}:segment=0,fanout=1").parse()
    } else {
        id.to_string().parse()
    }
}

/// [`fixed_algorithm`] for a commutative operator where the crate itself asks (the inner calls
/// of Open MPI's composed algorithms, [`super::inner`]): Open MPI 4.1.4's tables name only
/// algorithms of the crate (`every_decision_is_an_algorithm_of_the_crate` parses every ID).
pub(crate) fn fixed<A: OmpiAlgorithm>(processes: u64, bytes: u64) -> A {
    fixed_algorithm(processes, bytes, true)
        .unwrap_or_else(|e| unreachable!("a fixed decision the crate cannot parse: {e}"))
}

/// The fixed decision as rules: for each communicator size in `processes`, the message sizes
/// (in the [`Problem`](crate::collectives::Problem) convention) from which each algorithm ID
/// applies, first size 0, consecutive IDs distinct.
pub(crate) fn fixed_rules(
    collective: Collective,
    processes: u64,
    commutative: bool,
) -> &'static [(u64, u32)] {
    block(table(collective, commutative), processes)
}

fn table(collective: Collective, commutative: bool) -> Table {
    match (collective, commutative) {
        (Collective::Allgather, _) => ALLGATHER,
        (Collective::Allreduce, true) => ALLREDUCE,
        (Collective::Allreduce, false) => ALLREDUCE_NONCOMMUTATIVE,
        (Collective::Alltoall, _) => ALLTOALL,
        (Collective::Barrier, _) => BARRIER,
        (Collective::Bcast, _) => BCAST,
        (Collective::Gather, _) => GATHER,
        (Collective::Reduce, true) => REDUCE,
        (Collective::Reduce, false) => REDUCE_NONCOMMUTATIVE,
        (Collective::ReduceScatter, true) => REDUCE_SCATTER,
        (Collective::ReduceScatter, false) => REDUCE_SCATTER_NONCOMMUTATIVE,
        (Collective::Scatter, _) => SCATTER,
        // no algorithms of these in the crate's Open MPI family: ID 0, "the library decides"
        (Collective::ReduceScatterBlock | Collective::Scan, _) => UNKNOWN,
    }
}

/// The table of a collective whose fixed decision the crate does not hold: ID 0 everywhere.
const UNKNOWN: Table = &[(0, &[(0, 0)])];

/// The last block whose communicator size is at most `processes` (the first for 0).
fn block(table: Table, processes: u64) -> &'static [(u64, u32)] {
    let i = table.partition_point(|&(p, _)| p <= processes);
    table[i.saturating_sub(1)].1
}

fn lookup(table: Table, processes: u64, bytes: u64) -> u32 {
    let rules = block(table, processes);
    let i = rules.partition_point(|&(s, _)| s <= bytes);
    rules[i.saturating_sub(1)].1
}

// The thresholds of `coll_tuned_decision_fixed.c`, Open MPI 4.1.4 (`if (communicator_size < N)`
// starts a block at N; `if (total_dsize < S)` a rule at S; `communicator_size == 2` is the block
// of P = 2 alone).

const ALLREDUCE: Table = &[
    (
        1,
        &[
            (0, 4),
            (8, 3),
            (4096, 4),
            (8192, 3),
            (16384, 4),
            (65536, 5),
            (262144, 6),
        ],
    ),
    (4, &[(0, 4), (16, 3), (8192, 6)]),
    (8, &[(0, 3), (8192, 6)]),
    (16, &[(0, 5), (64, 3), (4096, 6)]),
    (32, &[(0, 5), (128, 6)]),
    (64, &[(0, 3), (262144, 6)]),
    (128, &[(0, 2), (131072, 3), (262144, 6)]),
    (256, &[(0, 2), (4096, 6)]),
    (512, &[(0, 2), (2048, 3), (16384, 6)]),
    (2048, &[(0, 2), (2048, 5), (4096, 3), (16384, 6)]),
    (4096, &[(0, 2), (2048, 5), (16384, 3), (32768, 6)]),
];
const ALLREDUCE_NONCOMMUTATIVE: Table = &[
    (1, &[(0, 3), (131072, 1)]),
    (4, &[(0, 3)]),
    (8, &[(0, 3), (1048576, 2)]),
    (16, &[(0, 3)]),
    (128, &[(0, 2), (131072, 3), (524288, 2)]),
    (256, &[(0, 2), (4096, 3), (524288, 2)]),
    (512, &[(0, 2), (2048, 3)]),
];
const ALLTOALL: Table = &[
    (
        1,
        &[
            (0, 4),
            (8192, 1),
            (16384, 4),
            (65536, 1),
            (524288, 2),
            (1048576, 1),
        ],
    ),
    (
        2,
        &[
            (0, 2),
            (2, 5),
            (4, 2),
            (16, 5),
            (64, 2),
            (256, 5),
            (4096, 2),
            (32768, 4),
            (262144, 5),
            (1048576, 2),
        ],
    ),
    (
        3,
        &[
            (0, 4),
            (8192, 1),
            (16384, 4),
            (65536, 1),
            (524288, 2),
            (1048576, 1),
        ],
    ),
    (8, &[(0, 4), (262144, 1)]),
    (
        16,
        &[
            (0, 4),
            (4, 3),
            (512, 4),
            (8192, 1),
            (32768, 4),
            (262144, 1),
            (524288, 4),
        ],
    ),
    (32, &[(0, 3), (512, 1), (524288, 4)]),
    (64, &[(0, 3), (1024, 1), (2048, 4), (4096, 1), (262144, 2)]),
    (128, &[(0, 3), (1024, 4), (2048, 1), (262144, 2)]),
    (256, &[(0, 3), (1024, 4), (8192, 1), (32768, 2)]),
    (
        512,
        &[
            (0, 3),
            (512, 4),
            (8192, 1),
            (16384, 4),
            (131072, 1),
            (262144, 2),
        ],
    ),
    (
        1024,
        &[
            (0, 3),
            (512, 4),
            (1024, 1),
            (2048, 4),
            (16384, 1),
            (262144, 4),
        ],
    ),
    (
        2048,
        &[(0, 3), (1024, 4), (4096, 1), (8192, 4), (131072, 1)],
    ),
    (
        4096,
        &[
            (0, 3),
            (2048, 4),
            (8192, 1),
            (16384, 4),
            (32768, 1),
            (65536, 4),
        ],
    ),
];
const BARRIER: Table = &[
    (1, &[(0, 3)]),
    (4, &[(0, 1)]),
    (8, &[(0, 3)]),
    (64, &[(0, 4)]),
    (256, &[(0, 6)]),
    (512, &[(0, 4)]),
    (1024, &[(0, 6)]),
    (4096, &[(0, 4)]),
];
const BCAST: Table = &[
    (
        1,
        &[
            (0, 3),
            (32, 5),
            (256, 3),
            (512, 7),
            (1024, 1),
            (32768, 5),
            (131072, 2),
            (262144, 1),
            (524288, 6),
            (1048576, 5),
        ],
    ),
    (
        4,
        &[
            (0, 5),
            (64, 6),
            (128, 5),
            (2048, 6),
            (8192, 1),
            (1048576, 2),
        ],
    ),
    (
        8,
        &[(0, 7), (8, 5), (64, 7), (4096, 5), (16384, 6), (32768, 1)],
    ),
    (16, &[(0, 7), (4096, 6), (1048576, 8)]),
    (32, &[(0, 6), (2048, 7)]),
    (64, &[(0, 7)]),
    (128, &[(0, 6), (2, 5), (16384, 1), (32768, 5), (65536, 7)]),
    (256, &[(0, 7), (16384, 4), (32768, 7)]),
    (1024, &[(0, 7), (524288, 8)]),
    (2048, &[(0, 7), (262144, 8)]),
    (4096, &[(0, 7), (8192, 5), (16384, 7), (262144, 8)]),
];
const REDUCE: Table = &[
    (
        1,
        &[
            (0, 7),
            (8, 4),
            (16, 3),
            (32, 1),
            (262144, 3),
            (524288, 2),
            (1048576, 3),
        ],
    ),
    (
        4,
        &[
            (0, 4),
            (4096, 2),
            (65536, 5),
            (262144, 1),
            (524288, 5),
            (1048576, 1),
        ],
    ),
    (8, &[(0, 4), (8192, 5)]),
    (16, &[(0, 4), (4096, 5)]),
    (32, &[(0, 5)]),
    (256, &[(0, 5), (8192, 6), (16384, 5)]),
    (512, &[(0, 5)]),
    (2048, &[(0, 5), (512, 6), (1024, 5), (8192, 6), (16384, 5)]),
    (
        4096,
        &[
            (0, 5),
            (16, 6),
            (32, 5),
            (1024, 6),
            (2048, 5),
            (8192, 6),
            (16384, 5),
        ],
    ),
];
const REDUCE_NONCOMMUTATIVE: Table = &[
    (1, &[(0, 6), (8, 1)]),
    (4, &[(0, 1)]),
    (8, &[(0, 6), (1024, 1), (8192, 6), (16384, 1), (262144, 6)]),
    (16, &[(0, 6)]),
    (128, &[(0, 6), (512, 1), (1024, 6)]),
    (256, &[(0, 6)]),
];
const REDUCE_SCATTER: Table = &[
    (1, &[(0, 3), (65536, 4), (131072, 3)]),
    (4, &[(0, 1), (8, 2), (262144, 3)]),
    (8, &[(0, 2), (262144, 3)]),
    (32, &[(0, 1), (64, 2), (2048, 4), (524288, 3)]),
    (64, &[(0, 1), (256, 2), (512, 4), (2048, 2), (4096, 4)]),
    (128, &[(0, 1), (256, 2), (512, 4)]),
    (256, &[(0, 1), (256, 2), (1024, 4)]),
    (512, &[(0, 1), (512, 2), (2048, 4), (8192, 2), (16384, 4)]),
    (1024, &[(0, 1), (512, 2), (4096, 4), (16384, 2), (32768, 4)]),
    (2048, &[(0, 1), (512, 2), (4096, 4)]),
    (4096, &[(0, 1), (1024, 2), (8192, 4)]),
];
const REDUCE_SCATTER_NONCOMMUTATIVE: Table = &[(1, &[(0, 1)])];
const ALLGATHER: Table = &[
    (1, &[(0, 3)]),
    (2, &[(0, 6)]),
    (3, &[(0, 3)]),
    (32, &[(0, 3), (1024, 5), (65536, 4)]),
    (64, &[(0, 3), (512, 5), (65536, 4)]),
    (
        128,
        &[(0, 3), (512, 5), (131072, 4), (524288, 5), (1048576, 4)],
    ),
    (
        256,
        &[
            (0, 3),
            (32, 2),
            (128, 3),
            (1024, 5),
            (131072, 4),
            (524288, 5),
            (1048576, 4),
        ],
    ),
    (512, &[(0, 3), (64, 2), (256, 3), (2048, 5)]),
    (
        1024,
        &[
            (0, 3),
            (4, 2),
            (8, 3),
            (16, 2),
            (32, 3),
            (256, 2),
            (512, 3),
            (4096, 5),
        ],
    ),
    (2048, &[(0, 2), (32, 3), (128, 2), (512, 3), (4096, 5)]),
    (
        4096,
        &[(0, 3), (2, 2), (8, 3), (16, 2), (512, 3), (4096, 5)],
    ),
];
const GATHER: Table = &[
    (
        1,
        &[(0, 3), (2, 1), (4, 2), (32768, 1), (65536, 2), (131072, 3)],
    ),
    (4, &[(0, 2), (1024, 1), (8192, 2), (32768, 1), (262144, 3)]),
    (8, &[(0, 2)]),
    (256, &[(0, 2), (2048, 1), (8192, 2)]),
    (512, &[(0, 2)]),
];
const SCATTER: Table = &[
    (1, &[(0, 3), (2, 1), (131072, 3), (262144, 1)]),
    (
        4,
        &[
            (0, 2),
            (2048, 1),
            (4096, 2),
            (8192, 1),
            (32768, 3),
            (1048576, 1),
        ],
    ),
    (8, &[(0, 2), (16384, 3), (1048576, 1)]),
    (16, &[(0, 2), (16384, 1), (32768, 3)]),
    (32, &[(0, 2), (512, 3), (8192, 2), (16384, 3)]),
    (64, &[(0, 2), (512, 3)]),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives::Family;
    use crate::collectives::ompi::{
        Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Reduce, ReduceScatter, Scatter,
    };

    /// Every block starts at size 0, sizes and comm sizes increase, IDs are in the
    /// collective's range and consecutive rules differ.
    #[test]
    fn tables_are_well_formed() {
        for c in Family::Ompi.collectives() {
            for commutative in [true, false] {
                let t = table(c, commutative);
                assert_eq!(t[0].0, 1, "{c}");
                assert!(t.windows(2).all(|w| w[0].0 < w[1].0), "{c}");
                for (_, rules) in t {
                    assert_eq!(rules[0].0, 0, "{c}");
                    assert!(
                        rules
                            .windows(2)
                            .all(|w| w[0].0 < w[1].0 && w[0].1 != w[1].1)
                    );
                    assert!(
                        rules
                            .iter()
                            .all(|&(_, a)| (1..=c.ompi_max_algorithm_id()).contains(&a))
                    );
                }
            }
        }
    }

    fn every_id_parses<A: OmpiAlgorithm>() {
        for commutative in [true, false] {
            for &(p, rules) in table(A::COLLECTIVE, commutative) {
                for &(s, id) in rules {
                    let a: A = fixed_algorithm(p, s, commutative).unwrap();
                    assert_eq!(a.ompi_id(), id);
                    assert_eq!(a.segment_size(), 0);
                }
            }
        }
    }

    #[test]
    fn every_decision_is_an_algorithm_of_the_crate() {
        every_id_parses::<Allgather>();
        every_id_parses::<Allreduce>();
        every_id_parses::<Alltoall>();
        every_id_parses::<Barrier>();
        every_id_parses::<Bcast>();
        every_id_parses::<Gather>();
        every_id_parses::<Reduce>();
        every_id_parses::<ReduceScatter>();
        every_id_parses::<Scatter>();
    }

    /// Decisions read off `coll_tuned_decision_fixed.c` of Open MPI 4.1.4 by hand (the
    /// branches quoted), independently of the transcription script.
    #[test]
    fn decisions_from_the_source() {
        use Collective::*;
        let cases: &[(Collective, u64, u64, bool, u32)] = &[
            // bcast: `communicator_size < 4`, `total_dsize < 32` -> 3; `< 1024` -> 7; else 5
            (Bcast, 2, 31, true, 3),
            (Bcast, 3, 1023, true, 7),
            (Bcast, 2, 1 << 20, true, 5),
            // bcast: `< 8`, `total_dsize < 1048576` -> 1, else 2
            (Bcast, 4, 1 << 19, true, 1),
            (Bcast, 7, 1 << 20, true, 2),
            // bcast: `< 16`: `< 8` -> 7, `< 64` -> 5
            (Bcast, 8, 7, true, 7),
            (Bcast, 8, 8, true, 5),
            // allreduce commutative `< 8`: `< 16` -> 4, `< 8192` -> 3, else 6
            (Allreduce, 4, 15, true, 4),
            (Allreduce, 4, 16, true, 3),
            (Allreduce, 5, 8192, true, 6),
            // allreduce non-commutative `< 4`: `< 131072` -> 3, else 1
            (Allreduce, 2, 131071, false, 3),
            (Allreduce, 2, 131072, false, 1),
            // alltoall `communicator_size == 2`: `< 2` -> 2, `< 4` -> 5
            (Alltoall, 2, 1, true, 2),
            (Alltoall, 2, 3, true, 5),
            // alltoall `< 8`: `< 8192` -> 4, `< 16384` -> 1
            (Alltoall, 4, 8191, true, 4),
            (Alltoall, 4, 8192, true, 1),
            // barrier: `< 4` -> 3, `< 8` -> 1, `< 64` -> 3
            (Barrier, 2, 0, true, 3),
            (Barrier, 4, 0, true, 1),
            (Barrier, 8, 0, true, 3),
            // allgather: `== 2` -> 6, `< 32` -> 3
            (Allgather, 2, 1 << 20, true, 6),
            (Allgather, 8, 1 << 20, true, 3),
            // gather `< 8`: `< 1024` -> 2, `< 8192` -> 1, `< 32768` -> 2, `< 262144` -> 1, else 3
            (Gather, 4, 1023, true, 2),
            (Gather, 4, 1024, true, 1),
            (Gather, 4, 262144, true, 3),
            // scatter `< 8`: `< 2048` -> 2, `< 4096` -> 1
            (Scatter, 4, 2047, true, 2),
            (Scatter, 4, 2048, true, 1),
            // reduce commutative `< 8`: `< 4096` -> 4, `< 65536` -> 2
            (Reduce, 4, 4095, true, 4),
            (Reduce, 4, 4096, true, 2),
            // reduce_scatter non-commutative: always 1
            (ReduceScatter, 64, 1 << 20, false, 1),
        ];
        for &(c, p, s, commutative, want) in cases {
            assert_eq!(
                fixed_decision(c, p, s, commutative),
                want,
                "{c} P={p} m={s}"
            );
        }
    }
}
