//! Open MPI's algorithms priced on a toy model, each against a hand calculation.
//!
//! The toy model has round numbers so that every expected value below is worked out by hand
//! in its comment: `T(s) = 10 + 0.01 s`, `I(s) = 3 + 0.01 s`, `g = 2`, `os = 1`, `or = 1.5`,
//! and the operator `op(s) = 0.5 + 0.001 s`. It does not describe itself as affine, so every
//! round is evaluated one by one.

use approx::assert_relative_eq;
use commcost::collectives::CollectiveError;
use commcost::collectives::ompi::{
    Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, OmpiAlgorithm, Reduce, ReduceScatter,
    Scatter,
};
use commcost::collectives::{Algorithm, Operator, Problem};
use commcost::collectives::{Collective, Family};
use commcost::{CommModel, Message};

#[derive(Debug)]
struct Toy;

impl CommModel for Toy {
    fn p2p(&self, msg: &Message) -> f64 {
        10.0 + 0.01 * msg.bytes() as f64
    }
    fn send_interval(&self, msg: &Message) -> f64 {
        3.0 + 0.01 * msg.bytes() as f64
    }
    fn gap(&self, _: &Message) -> f64 {
        2.0
    }
    fn send_overhead(&self, _: &Message) -> f64 {
        1.0
    }
    fn recv_overhead(&self, _: &Message) -> f64 {
        1.5
    }
}

fn cost<A: Algorithm>(a: A, p: u64, m: u64) -> f64 {
    let op = Operator::new(0.5, 0.001).unwrap();
    a.cost(
        &Toy,
        &Problem::new(p, Message::contiguous(m)).with_operator(op),
    )
    .unwrap()
}

#[test]
fn bcast_hand_calculations() {
    // T(1000) + 6 I(1000) = 20 + 6 * 13
    assert_relative_eq!(
        cost(Bcast::BasicLinear, 8, 1000),
        98.0,
        max_relative = 1e-12
    );
    // a chain of 7 links, one segment: 7 T(1000)
    assert_relative_eq!(
        cost(Bcast::Pipeline { segment: 0 }, 8, 1000),
        140.0,
        max_relative = 1e-12
    );
    // P = 4, 4 segments of 250: first 3 T(250) = 37.5, then 3 steps of
    // max(I(250), or + os) = max(5.5, 2.5) = 5.5: 37.5 + 16.5
    assert_relative_eq!(
        cost(Bcast::Pipeline { segment: 250 }, 4, 1000),
        54.0,
        max_relative = 1e-12
    );
    // 2 chains of 4 and 3 processes: max(4 T, I + 3 T) = max(80, 13 + 60)
    let chain = Bcast::Chain {
        segment: 0,
        fanout: 2,
    };
    assert_relative_eq!(cost(chain, 8, 1000), 80.0, max_relative = 1e-12);
    // 9 processes, fan-out 3: Open MPI makes the first 8 mod 3 = 2 chains long (1-2-3, 4-5-6,
    // 7-8); the second long chain's head is the root's second send: T + I + 2 T = 73
    // (> 3 T = 60 of the first, 2 I + 2 T = 66 of the last)
    let chain = Bcast::Chain {
        segment: 0,
        fanout: 3,
    };
    assert_relative_eq!(cost(chain, 9, 1000), 73.0, max_relative = 1e-12);
    // 3 chains of 3, 2, 2 processes, 2 segments of 500 (T = 15, I = 8):
    // first max(3 T, 2 I + 2 T) = max(45, 46) = 46; one more step, the root's 3 I = 24
    let chain = Bcast::Chain {
        segment: 500,
        fanout: 3,
    };
    assert_relative_eq!(cost(chain, 8, 1000), 70.0, max_relative = 1e-12);
    // binary tree of 8: node 6 = 0 -> 2 -> 6, both second children: 2 T + 2 I = 66 (> 3 T)
    assert_relative_eq!(
        cost(Bcast::BinaryTree { segment: 0 }, 8, 1000),
        66.0,
        max_relative = 1e-12
    );
    // binomial of 8, largest subtree first: node 7 = 0 -> 1 -> 3 -> 7, 3 T = 60
    assert_relative_eq!(
        cost(Bcast::Binomial { segment: 0 }, 8, 1000),
        60.0,
        max_relative = 1e-12
    );
    // binomial of 6: node 5 = 0 -> 1 -> 5, second child of 1: 2 T + I = 53
    assert_relative_eq!(
        cost(Bcast::Binomial { segment: 0 }, 6, 1000),
        53.0,
        max_relative = 1e-12
    );
    // 4-nomial of 16: root children 4, 8, 12, 1, 2, 3; node 15 = 0 -> 12 (third) -> 15
    // (third): 2 T + 4 I = 40 + 52
    let knomial = Bcast::Knomial {
        segment: 0,
        radix: 4,
    };
    assert_relative_eq!(cost(knomial, 16, 1000), 92.0, max_relative = 1e-12);
    // 4-nomial of 8: root children 4, 1, 2, 3 (8 and 12 are beyond P); node 7 = 0 -> 4 (first)
    // -> 7 (third of 5, 6, 7): 2 T + 2 I = 66, more than node 3's T + 3 I = 59
    assert_relative_eq!(cost(knomial, 8, 1000), 66.0, max_relative = 1e-12);
    // halves of 500 down the binary tree of 8: max(3 T(500), 2 T + 2 I) = max(45, 46),
    // then the exchange T(500) = 15
    let split = Bcast::SplitBinaryTree { segment: 0 };
    assert_relative_eq!(cost(split, 8, 1000), 61.0, max_relative = 1e-12);
    // 1 byte cannot be split: Open MPI runs the pipeline, 7 T(1)
    assert_relative_eq!(cost(split, 8, 1), 70.07, max_relative = 1e-12);
    // P = 4, c = 250: binomial scatter T(250) + T(500) + g = 29.5; ring 3 T(250) = 37.5
    assert_relative_eq!(
        cost(Bcast::ScatterAllgatherRing, 4, 1000),
        67.0,
        max_relative = 1e-12
    );
    // recursive doubling instead: T(250) + T(500) = 27.5
    assert_relative_eq!(
        cost(Bcast::ScatterAllgather, 4, 1000),
        57.0,
        max_relative = 1e-12
    );
    // 3 bytes on 4 processes: Open MPI falls back to basic linear, T(3) + 2 I(3)
    assert_relative_eq!(
        cost(Bcast::ScatterAllgather, 4, 3),
        16.09,
        max_relative = 1e-12
    );
}

#[test]
fn allreduce_hand_calculations() {
    // linear reduce 20 + 6 max(13, 1.5) + 7 op(1000) = 98 + 10.5, linear bcast 98
    assert_relative_eq!(
        cost(Allreduce::BasicLinear, 8, 1000),
        206.5,
        max_relative = 1e-12
    );
    // the fixed decisions' reduce and bcast for 1000 B on 8 (coll_tuned_decision_fixed.c:
    // binary reduce, 4-nomial bcast). The binary tree of 8 (0: 1 2, 1: 3 5, 2: 4 6, 3: 7),
    // hop T + op = 21.5, a later sibling max(I, or + op) = 13: rank 7's path 0 <- 1 <- 3 <- 7
    // with later siblings 2 and 5, 3 * 21.5 + 2 * 13 = 90.5; the 4-nomial bcast 66 (as in
    // bcast_hand_calculations): 156.5
    assert_relative_eq!(
        cost(Allreduce::Nonoverlapping, 8, 1000),
        156.5,
        max_relative = 1e-12
    );
    // 3 (T + op) = 3 * 21.5
    assert_relative_eq!(
        cost(Allreduce::RecursiveDoubling, 8, 1000),
        64.5,
        max_relative = 1e-12
    );
    // P = 6: 2 (T + op) + (2 T + op) = 43 + 41.5
    assert_relative_eq!(
        cost(Allreduce::RecursiveDoubling, 6, 1000),
        84.5,
        max_relative = 1e-12
    );
    // c = 125: 7 (2 T(125) + op(125)) = 7 (22.5 + 0.625)
    assert_relative_eq!(
        cost(Allreduce::Ring, 8, 1000),
        161.875,
        max_relative = 1e-12
    );
    // 4 bytes < 8 processes: recursive doubling, 3 (T(4) + op(4)) = 3 (10.04 + 0.504)
    assert_relative_eq!(cost(Allreduce::Ring, 8, 4), 31.632, max_relative = 1e-12);
    // P s = 400: ⌊1000 / 400⌋ = 2 phases (the rest 200 is not > 200); c = 125 in pieces of
    // ⌈125 / 2⌉ = 63: 7 (2 (T(63) + op(63)) + T(125)) = 7 (2 * 11.193 + 11.25)
    let segmented = Allreduce::SegmentedRing { segment: 50 };
    assert_relative_eq!(cost(segmented, 8, 1000), 235.452, max_relative = 1e-12);
    // P s = 320: 3 phases (the rest 40 is not > 160), pieces of 42:
    // 7 (3 (10.42 + 0.542) + 11.25)
    let segmented = Allreduce::SegmentedRing { segment: 40 };
    assert_relative_eq!(cost(segmented, 8, 1000), 308.952, max_relative = 1e-12);
    // P s = 264: 3 phases and the rest 208 >= 8 and > 132 adds one: 4 phases, pieces of
    // ⌈125 / 4⌉ = 32: 7 (4 (10.32 + 0.532) + 11.25)
    let segmented = Allreduce::SegmentedRing { segment: 33 };
    assert_relative_eq!(cost(segmented, 8, 1000), 382.606, max_relative = 1e-12);
    // 1000 < 8 * 200: the plain ring
    let segmented = Allreduce::SegmentedRing { segment: 200 };
    assert_relative_eq!(cost(segmented, 8, 1000), 161.875, max_relative = 1e-12);
    // halves 500, 250, 125 twice: 2 (15 + 12.5 + 11.25) + 3 * 0.5 + 0.001 * 875
    assert_relative_eq!(
        cost(Allreduce::Rabenseifner, 8, 1000),
        79.875,
        max_relative = 1e-12
    );
    // P = 6: halves exchanged 2 T(500) + op(500) = 31; halves 500, 250 twice = 55 and ops
    // 2 * 0.5 + 0.75; the result back T(1000) = 20: 31 + 56.75 + 20
    assert_relative_eq!(
        cost(Allreduce::Rabenseifner, 6, 1000),
        107.75,
        max_relative = 1e-12
    );
    // 4 bytes < 8: basic linear, (10.04 + 6 * 3.04) + 7 * 0.504 + (10.04 + 6 * 3.04)
    assert_relative_eq!(
        cost(Allreduce::Rabenseifner, 8, 4),
        60.088,
        max_relative = 1e-12
    );
}

#[test]
fn reduce_hand_calculations() {
    // 20 + 6 max(13, 1.5) + 7 * 1.5
    assert_relative_eq!(cost(Reduce::Linear, 8, 1000), 108.5, max_relative = 1e-12);
    // the in-order binomial tree of 8 Open MPI's reduce runs (coll_base_topo.c's drawing:
    // 0: 1 2 4, 2: 3, 4: 5 6, 6: 7), children absorbed in that order, hop T + op = 21.5, a
    // later sibling max(I, or + op) = 13: F(6) = 21.5, F(4) = max(21.5 + 13, F(6) + 21.5) = 43,
    // F(2) = 21.5, F(0) = max(21.5 + 2 * 13, F(2) + 21.5 + 13, F(4) + 21.5) = 64.5
    assert_relative_eq!(
        cost(Reduce::Binomial { segment: 0 }, 8, 1000),
        64.5,
        max_relative = 1e-12
    );
    // P = 4, 4 segments of 250: hop T(250) + op(250) = 13.25, 3 hops = 39.75; step
    // max(or + op, or + op + os, I) = max(2.25, 3.25, 5.5) = 5.5, 3 more: 39.75 + 16.5
    assert_relative_eq!(
        cost(Reduce::Pipeline { segment: 250 }, 4, 1000),
        56.25,
        max_relative = 1e-12
    );
    // in-order binomial of 4 (0: 1 2, 2: 3), 4 segments of 250: hop T(250) + op(250) = 13.25,
    // a later sibling max(I(250), or + op(250)) = max(5.5, 2.25) = 5.5: F(2) = 13.25, F(0) =
    // max(13.25 + 5.5, F(2) + 13.25) = 26.5; per segment the root's NIC takes 2 segments 5.5
    // apart: step max(2 * 5.5, 1 * 2.25 + 1, 5.5) = 11, 3 more: 26.5 + 33
    assert_relative_eq!(
        cost(Reduce::Binomial { segment: 250 }, 4, 1000),
        59.5,
        max_relative = 1e-12
    );
    // the chain of fan-out 3 on 6 processes (0: 1 3 5, 1: 2, 3: 4): the first chain waits for
    // both later heads, 2 * 21.5 + 2 * 13 = 69
    assert_relative_eq!(
        cost(
            Reduce::Chain {
                segment: 0,
                fanout: 3
            },
            6,
            1000
        ),
        69.0,
        max_relative = 1e-12
    );
    // in-order binary of 8 as Open MPI builds it (7: 6 3, 6: 5 4, 3: 2 1, 1: 0; the left child
    // absorbed first waits for the right one), hop 21.5, wait 13: F(2) = 21.5,
    // F(3) = F(1) + 21.5 + 13 = 34.5, F(4) = max(F(1) + 21.5 + 13, F(2) + 21.5) = 43,
    // F(8) = max(F(3) + 21.5 + 13, F(4) + 21.5) = max(69, 64.5) = 69; then rank 7 sends the
    // result to the root, 0 (ompi_coll_base_reduce_intra_in_order_binary): + T(1000) = 20
    let in_order = Reduce::InOrderBinary { segment: 0 };
    assert_relative_eq!(cost(in_order, 8, 1000), 89.0, max_relative = 1e-12);
    // as the allreduce's halving rounds: 79.875
    assert_relative_eq!(
        cost(Reduce::Rabenseifner, 8, 1000),
        79.875,
        max_relative = 1e-12
    );
    // P = 6: fold by exchanging halves 2 T(500) + op(500) = 31, halves 500, 250 twice = 55,
    // ops 2 * 0.5 + 0.75
    assert_relative_eq!(
        cost(Reduce::Rabenseifner, 6, 1000),
        87.75,
        max_relative = 1e-12
    );
}

#[test]
fn allgather_hand_calculations() {
    assert_relative_eq!(cost(Allgather::Ring, 8, 100), 77.0, max_relative = 1e-12); // 7 * 11
    // T(100) + 3 T(200) = 11 + 36
    assert_relative_eq!(
        cost(Allgather::Neighbor, 8, 100),
        47.0,
        max_relative = 1e-12
    );
    // odd P: the ring, 6 * 11
    assert_relative_eq!(
        cost(Allgather::Neighbor, 7, 100),
        66.0,
        max_relative = 1e-12
    );
    // 11 + 12 + 14
    assert_relative_eq!(
        cost(Allgather::RecursiveDoubling, 8, 100),
        37.0,
        max_relative = 1e-12
    );
    // P = 6 runs Bruck: blocks 1, 2, 2: 11 + 12 + 12
    assert_relative_eq!(
        cost(Allgather::RecursiveDoubling, 6, 100),
        35.0,
        max_relative = 1e-12
    );
    // the fixed decisions' gather and bcast of 800 B on 8: the binomial gather 41 (as in
    // reduce_scatter_gather_scatter_hand_calculations), the 4-nomial bcast (root: 4 1 2 3,
    // 4: 5 6 7): rank 7 at 2 T(800) + 2 I(800) = 36 + 22 (rank 3 at T + 3 I = 51): 99
    assert_relative_eq!(cost(Allgather::Linear, 8, 100), 99.0, max_relative = 1e-12);
    assert_relative_eq!(cost(Allgather::TwoProc, 2, 100), 11.0, max_relative = 1e-12);
    let three = Problem::new(3, Message::contiguous(100));
    assert!(matches!(
        Allgather::TwoProc.cost(&Toy, &three),
        Err(CollectiveError::NotApplicable { processes: 3, .. })
    ));
}

#[test]
fn alltoall_barrier_hand_calculations() {
    assert_relative_eq!(cost(Alltoall::Linear, 8, 100), 35.0, max_relative = 1e-12); // 11 + 6 * 4
    assert_relative_eq!(cost(Alltoall::Pairwise, 8, 100), 77.0, max_relative = 1e-12);
    // P = 8: 4 blocks in each of 3 rounds, 3 T(400)
    assert_relative_eq!(
        cost(Alltoall::ModifiedBruck, 8, 100),
        42.0,
        max_relative = 1e-12
    );
    // 3 batches of 3 requests: 3 (11 + 2 * 4)
    let sync = Alltoall::LinearSync { max_requests: 3 };
    assert_relative_eq!(cost(sync, 8, 100), 57.0, max_relative = 1e-12);
    // T(0) = 10, I(0) = 3: 2 * 10 + 6 (3 + 3)
    assert_relative_eq!(cost(Barrier::Linear, 8, 0), 56.0, max_relative = 1e-12);
    assert_relative_eq!(cost(Barrier::DoubleRing, 8, 0), 160.0, max_relative = 1e-12);
    assert_relative_eq!(
        cost(Barrier::RecursiveDoubling, 8, 0),
        30.0,
        max_relative = 1e-12
    );
    // 2 rounds + fold in and out
    assert_relative_eq!(
        cost(Barrier::RecursiveDoubling, 6, 0),
        40.0,
        max_relative = 1e-12
    );
    assert_relative_eq!(cost(Barrier::Bruck, 6, 0), 30.0, max_relative = 1e-12);
    assert_relative_eq!(cost(Barrier::Tree, 8, 0), 60.0, max_relative = 1e-12);
    assert_relative_eq!(cost(Barrier::TwoProc, 2, 0), 10.0, max_relative = 1e-12);
}

#[test]
fn reduce_scatter_gather_scatter_hand_calculations() {
    // c = 1000: 7 (20 + 1.5)
    assert_relative_eq!(
        cost(ReduceScatter::Ring, 8, 8000),
        150.5,
        max_relative = 1e-12
    );
    // halves 4000, 2000, 1000: 50 + 30 + 20, ops 3 * 0.5 + 7
    assert_relative_eq!(
        cost(ReduceScatter::RecursiveHalving, 8, 8000),
        108.5,
        max_relative = 1e-12
    );
    // the fixed decision's reduce of 8000 B on 8, the binary tree (rank 7's path, as in
    // allreduce_hand_calculations): 3 (90 + 8.5) + 2 max(83, 10) = 461.5; the linear scatterv
    // 20 + 6 * 13 = 98
    assert_relative_eq!(
        cost(ReduceScatter::NonOverlapping, 8, 8000),
        559.5,
        max_relative = 1e-12
    );
    assert_relative_eq!(
        cost(Gather::BasicLinear, 8, 100),
        35.0,
        max_relative = 1e-12
    );
    // 11 + 12 + 14 + 2 * 2
    assert_relative_eq!(cost(Gather::Binomial, 8, 100), 41.0, max_relative = 1e-12);
    // 7 (T(0) + T(40)) + T(60) = 7 * 20.4 + 10.6
    let sync = Gather::LinearSync { segment: 40 };
    assert_relative_eq!(cost(sync, 8, 100), 153.4, max_relative = 1e-12);
    assert_relative_eq!(
        cost(Scatter::BasicLinear, 8, 100),
        35.0,
        max_relative = 1e-12
    );
    assert_relative_eq!(cost(Scatter::Binomial, 8, 100), 41.0, max_relative = 1e-12);
}

/// Every candidate of every collective at `P = 1` costs 0 and at `P = 0` is an error.
#[test]
fn trivial_communicators() {
    fn check<A: OmpiAlgorithm>() {
        let one = Problem::new(1, Message::contiguous(4096));
        let zero = Problem::new(0, Message::contiguous(4096));
        for a in A::candidates(&Toy, &Problem::new(2, Message::contiguous(4096))) {
            approx::assert_abs_diff_eq!(a.cost(&Toy, &one).unwrap(), 0.0);
            assert_eq!(
                a.cost(&Toy, &zero),
                Err(CollectiveError::NoProcesses),
                "{a}"
            );
        }
    }
    check::<Bcast>();
    check::<Allreduce>();
    check::<Reduce>();
    check::<Allgather>();
    check::<Alltoall>();
    check::<Barrier>();
    check::<ReduceScatter>();
    check::<Gather>();
    check::<Scatter>();
}

/// Huge communicators and messages: finite costs, no panic, bounded work.
#[test]
fn extreme_inputs_stay_finite() {
    fn check<A: OmpiAlgorithm>() {
        for p in [2, 3, 1 << 20, (1 << 32) + 1, u64::MAX] {
            for m in [0, 1, 1 << 40, u64::MAX] {
                let problem = Problem::new(p, Message::contiguous(m));
                for a in A::candidates(&Toy, &problem) {
                    let c = a.cost(&Toy, &problem).unwrap();
                    assert!(c.is_finite() && c >= 0.0, "{a} P {p} m {m}: {c}");
                }
            }
        }
    }
    check::<Bcast>();
    check::<Allreduce>();
    check::<Reduce>();
    check::<Allgather>();
    check::<Alltoall>();
    check::<Barrier>();
    check::<ReduceScatter>();
    check::<Gather>();
    check::<Scatter>();
    let radix_one = Bcast::Knomial {
        segment: 0,
        radix: 1,
    };
    assert!(matches!(
        radix_one.cost(&Toy, &Problem::new(4, Message::contiguous(8))),
        Err(CollectiveError::InvalidParameter { name: "radix", .. })
    ));
}

/// IDs and names as `ompi_info --param coll tuned --level 9` lists them for Open MPI 4.1.4.
#[test]
fn ids_and_names_match_ompi_info() {
    fn names<A: OmpiAlgorithm>(all: &[A]) -> Vec<(u32, &'static str)> {
        all.iter().map(|a| (a.ompi_id(), a.ompi_name())).collect()
    }
    let s = 0;
    assert_eq!(
        names(&[
            Bcast::BasicLinear,
            Bcast::Chain {
                segment: s,
                fanout: 4
            },
            Bcast::Pipeline { segment: s },
            Bcast::SplitBinaryTree { segment: s },
            Bcast::BinaryTree { segment: s },
            Bcast::Binomial { segment: s },
            Bcast::Knomial {
                segment: s,
                radix: 4
            },
            Bcast::ScatterAllgather,
            Bcast::ScatterAllgatherRing,
        ]),
        [
            (1, "basic_linear"),
            (2, "chain"),
            (3, "pipeline"),
            (4, "split_binary_tree"),
            (5, "binary_tree"),
            (6, "binomial"),
            (7, "knomial"),
            (8, "scatter_allgather"),
            (9, "scatter_allgather_ring"),
        ]
    );
    assert_eq!(
        names(&[
            Allreduce::BasicLinear,
            Allreduce::Nonoverlapping,
            Allreduce::RecursiveDoubling,
            Allreduce::Ring,
            Allreduce::SegmentedRing { segment: s },
            Allreduce::Rabenseifner,
        ]),
        [
            (1, "basic_linear"),
            (2, "nonoverlapping"),
            (3, "recursive_doubling"),
            (4, "ring"),
            (5, "segmented_ring"),
            (6, "rabenseifner"),
        ]
    );
    assert_eq!(
        names(&[
            Reduce::Linear,
            Reduce::Chain {
                segment: s,
                fanout: 4
            },
            Reduce::Pipeline { segment: s },
            Reduce::Binary { segment: s },
            Reduce::Binomial { segment: s },
            Reduce::InOrderBinary { segment: s },
            Reduce::Rabenseifner,
        ]),
        [
            (1, "linear"),
            (2, "chain"),
            (3, "pipeline"),
            (4, "binary"),
            (5, "binomial"),
            (6, "in-order_binary"),
            (7, "rabenseifner"),
        ]
    );
    assert_eq!(
        names(Allgather::ALL),
        [
            (1, "linear"),
            (2, "bruck"),
            (3, "recursive_doubling"),
            (4, "ring"),
            (5, "neighbor"),
            (6, "two_proc"),
        ]
    );
    assert_eq!(
        names(&[
            Alltoall::Linear,
            Alltoall::Pairwise,
            Alltoall::ModifiedBruck,
            Alltoall::LinearSync { max_requests: 0 },
            Alltoall::TwoProc,
        ]),
        [
            (1, "linear"),
            (2, "pairwise"),
            (3, "modified_bruck"),
            (4, "linear_sync"),
            (5, "two_proc"),
        ]
    );
    assert_eq!(
        names(Barrier::ALL),
        [
            (1, "linear"),
            (2, "double_ring"),
            (3, "recursive_doubling"),
            (4, "bruck"),
            (5, "two_proc"),
            (6, "tree"),
        ]
    );
    assert_eq!(
        names(ReduceScatter::ALL),
        [
            (1, "non-overlapping"),
            (2, "recursive_halving"),
            (3, "ring"),
            (4, "butterfly"),
        ]
    );
    assert_eq!(
        names(&[
            Gather::BasicLinear,
            Gather::Binomial,
            Gather::LinearSync { segment: s }
        ]),
        [(1, "basic_linear"), (2, "binomial"), (3, "linear_sync")]
    );
    assert_eq!(
        names(Scatter::ALL),
        [(1, "basic_linear"), (2, "binomial"), (3, "linear_nb")]
    );
    let ids: Vec<u32> = Family::Ompi
        .collectives()
        .iter()
        .map(|c| c.ompi_id())
        .collect();
    assert_eq!(ids, [0, 2, 3, 6, 7, 9, 11, 12, 15]);
}

/// `Display` then `FromStr` gives the algorithm back; Open MPI's spelling and the ID parse too.
#[test]
fn names_round_trip() {
    fn check<A: OmpiAlgorithm>(m: u64) {
        let problem = Problem::new(2, Message::contiguous(m));
        for a in A::candidates(&Toy, &problem) {
            let text = a.to_string();
            assert_eq!(text.parse::<A>().unwrap(), a, "{text}");
            assert!(
                !text.contains('_') && !text.contains(' '),
                "{text} is not kebab-case"
            );
            // Open MPI's name and the ID, with the parameters of the kebab form
            let params = text
                .split_once(':')
                .map(|(_, p)| format!(":{p}"))
                .unwrap_or_default();
            let by_name: A = format!("{}{params}", a.ompi_name()).parse().unwrap();
            let by_id: A = format!("{}{params}", a.ompi_id()).parse().unwrap();
            assert_eq!((by_name, by_id), (a, a), "{text}");
        }
        assert!("no-such-algorithm".parse::<A>().is_err());
    }
    check::<Bcast>(1 << 20);
    check::<Allreduce>(1 << 20);
    check::<Reduce>(1 << 20);
    check::<Allgather>(1 << 20);
    check::<Alltoall>(1 << 20);
    check::<Barrier>(0);
    check::<ReduceScatter>(1 << 20);
    check::<Gather>(1 << 20);
    check::<Scatter>(1 << 20);
    // defaults: Open MPI's chain fan-out and k-nomial radix are 4, segments 0
    assert_eq!(
        "chain".parse::<Bcast>().unwrap(),
        Bcast::Chain {
            segment: 0,
            fanout: 4
        }
    );
    assert_eq!(
        "knomial".parse::<Bcast>().unwrap(),
        Bcast::Knomial {
            segment: 0,
            radix: 4
        }
    );
    assert!("chain:segment=x".parse::<Bcast>().is_err());
    assert!("chain:segment=1,segment=2".parse::<Bcast>().is_err());
    assert!("ring:segment=1".parse::<Allreduce>().is_err());
    for c in Family::Ompi.collectives() {
        assert_eq!(c.to_string().parse::<Collective>().unwrap(), c);
        assert_eq!(c.name().parse::<Collective>().unwrap(), c);
    }
}

/// Rules-file sizes: `m P` for the collectives with a per-process block.
#[test]
fn rules_file_message_sizes() {
    use Collective as C;
    for (c, expected) in [
        (C::Allgather, 8000),
        (C::Alltoall, 8000),
        (C::Gather, 8000),
        (C::Scatter, 8000),
        (C::Bcast, 1000),
        (C::Allreduce, 1000),
        (C::Reduce, 1000),
        (C::ReduceScatter, 1000),
        (C::Barrier, 0),
    ] {
        assert_eq!(c.ompi_rules_size(1000, 8), expected, "{c}");
        if c != C::Barrier {
            assert_eq!(c.ompi_problem_bytes(expected, 8), 1000, "{c}");
        }
    }
    assert_eq!(C::Alltoall.ompi_rules_size(u64::MAX, 8), u64::MAX);
}

/// The ranking works on the Open MPI enums (the crate's `best` over their candidates).
#[test]
fn best_picks_a_candidate() {
    let problem = Problem::new(64, Message::contiguous(1 << 22));
    let (a, c) = commcost::collectives::best::<Bcast>(&Toy, &problem).unwrap();
    let all = Bcast::candidates(&Toy, &problem);
    assert!(all.contains(&a));
    for other in all {
        assert!(other.cost(&Toy, &problem).unwrap() >= c);
    }
}

/// MPICH's names where MPICH runs the same pattern, spelled as in MPICH's `generic.json`.
#[test]
fn mpich_names_of_the_open_mpi_algorithms() {
    use commcost::collectives::MpichAlgorithm;
    assert_eq!(
        Bcast::ScatterAllgather.mpich_function().as_deref(),
        Some("MPIR_Bcast_intra_scatter_recursive_doubling_allgather")
    );
    assert_eq!(
        Bcast::ScatterAllgatherRing.mpich_function().as_deref(),
        Some("MPIR_Bcast_intra_scatter_ring_allgather")
    );
    assert_eq!(
        Bcast::Binomial { segment: 0 }.mpich_name(),
        Some("binomial")
    );
    assert_eq!(Bcast::Binomial { segment: 1024 }.mpich_name(), None);
    assert_eq!(
        Reduce::Rabenseifner.mpich_function().as_deref(),
        Some("MPIR_Reduce_intra_reduce_scatter_gather")
    );
    assert_eq!(
        ReduceScatter::RecursiveHalving.mpich_function().as_deref(),
        Some("MPIR_Reduce_scatter_intra_recursive_halving")
    );
    assert_eq!(
        Allreduce::Rabenseifner.mpich_name(),
        Some("reduce_scatter_allgather")
    );
    assert_eq!(Alltoall::ModifiedBruck.mpich_name(), Some("brucks"));
    assert_eq!(Allgather::Neighbor.mpich_name(), None);
}
