//! Collectives: the papers' closed forms, hand-counted rounds, selection and crossover.
//!
//! Hand computations use LogGP with L = 5, o = 1, g = 3 µs, G = 0.01 µs/byte, so
//! `p2p(s) = 7 + 0.01 (s - 1)` µs (7 for s <= 1), `interval(s) = max(1, 3 + 0.01 (s - 1))`,
//! `gap = 3`, overheads 1. Handy values: p2p(8) = 7.07, p2p(1024) = 17.23, p2p(2048) = 27.47,
//! p2p(4096) = 47.95, p2p(8192) = 88.91; interval(1024) = 13.23.

use crate::common;

use commcost::collectives::CollectiveError;
use commcost::collectives::{
    Algorithm, Allgather, Allreduce, Alltoall, Barrier, Bcast, DecisionTable, Gather, Operator,
    Problem, Reduce, Scan, Scatter, best, crossover, rank,
};
use commcost::{CommModel, LogGP, Message, Protocols, presets};
use common::{HAND_RELATIVE, US, assert_rel};
use proptest::prelude::*;

fn hand_model() -> LogGP {
    LogGP::new(5.0 * US, 1.0 * US, 3.0 * US, 0.01 * US).unwrap()
}

fn cost<A: Algorithm>(a: A, p: u64, bytes: u64) -> f64 {
    a.cost(&hand_model(), &Problem::new(p, Message::contiguous(bytes)))
        .unwrap()
}

fn cost_op<A: Algorithm>(a: A, p: u64, bytes: u64, op: Operator) -> f64 {
    let problem = Problem::new(p, Message::contiguous(bytes)).with_operator(op);
    a.cost(&hand_model(), &problem).unwrap()
}

#[test]
fn seed_closed_forms_loggp() {
    // message of k + 1 = 1001 bytes: 2o + L + (P-1) G k + (P-2) g and h (2o + L + kG) + (h-1) g
    let (o, l, g, big_g, k) = (1.0, 5.0, 3.0, 0.01, 1000.0);
    for p in 2u64..=40 {
        let pf = p as f64;
        let h = (p as f64).log2().ceil();
        let linear = 2.0 * o + l + (pf - 1.0) * big_g * k + (pf - 2.0) * g;
        let tree = h * (2.0 * o + l + k * big_g) + (h - 1.0) * g;
        assert_rel(cost(Bcast::Linear, p, 1001), linear * US, HAND_RELATIVE);
        assert_rel(cost(Bcast::Binomial, p, 1001), tree * US, HAND_RELATIVE);
    }
    // numbers: P = 8: linear 2 + 5 + 70 + 18 = 95 µs, tree 3 · 17 + 2 · 3 = 57 µs
    assert_rel(cost(Bcast::Linear, 8, 1001), 95.0 * US, HAND_RELATIVE);
    assert_rel(cost(Bcast::Binomial, 8, 1001), 57.0 * US, HAND_RELATIVE);
}

#[test]
fn seed_closed_forms_log3p() {
    // Titan, 16 KiB at 1 KiB stride: linear P (o_mw/2 + l_mw/2) + o_net, tree h (o_mw + l_mw + o_net)
    let titan = presets::titan_log3p();
    let msg = Message::vector(2048, 8, 1024).unwrap();
    for p in 2u64..=40 {
        let h = (p as f64).log2().ceil();
        let problem = Problem::new(p, msg);
        let linear = p as f64 * (29.0 / 2.0 + 420.0 / 2.0) + 131.0;
        let tree = h * (29.0 + 420.0 + 131.0);
        assert_rel(
            Bcast::Linear.cost(&titan, &problem).unwrap(),
            linear * US,
            HAND_RELATIVE,
        );
        assert_rel(
            Bcast::Binomial.cost(&titan, &problem).unwrap(),
            tree * US,
            HAND_RELATIVE,
        );
    }
    // P = 8: 8 · 224.5 + 131 = 1927 µs; 3 · 580 = 1740 µs
    let problem = Problem::new(8, msg);
    assert_rel(
        Bcast::Linear.cost(&titan, &problem).unwrap(),
        1927.0 * US,
        HAND_RELATIVE,
    );
    assert_rel(
        Bcast::Binomial.cost(&titan, &problem).unwrap(),
        1740.0 * US,
        HAND_RELATIVE,
    );
}

#[test]
fn broadcast_rounds_by_hand() {
    // scatter-allgather, P = 4, m = 4096, chunks of 1024: scatter rounds of 2048 and 1024 bytes
    // (27.47 + 17.23), one gap between them (3), ring allgather 3 · 17.23 = 51.69: 99.39 µs
    assert_rel(
        cost(Bcast::ScatterAllgather, 4, 4096),
        99.39 * US,
        HAND_RELATIVE,
    );
    // pipelined, P = 4, 1024-byte segments, q = 4: 3 · 17.23 + 3 · max(13.23, 1 + 1) = 91.38 µs
    assert_rel(
        cost(Bcast::Pipelined { segment: 1024 }, 4, 4096),
        91.38 * US,
        HAND_RELATIVE,
    );
}

#[test]
fn reductions_and_scans_by_hand() {
    let per_call = Operator::new(0.5 * US, 0.0).unwrap();
    let per_byte = Operator::new(0.0, 0.001 * US).unwrap();
    // scan, P = 8, 8 bytes: step 7.07 + 0.5 = 7.57; chain 7 steps = 52.99, doubling 3 = 22.71
    assert_rel(
        cost_op(Scan::LinearChain, 8, 8, per_call),
        52.99 * US,
        HAND_RELATIVE,
    );
    assert_rel(
        cost_op(Scan::RecursiveDoubling, 8, 8, per_call),
        22.71 * US,
        HAND_RELATIVE,
    );
    // reduce, P = 8, 1024 B, op 1.024: 3 · (17.23 + 1.024) + 2 · 3 = 60.762
    assert_rel(
        cost_op(Reduce::Binomial, 8, 1024, per_byte),
        60.762 * US,
        HAND_RELATIVE,
    );
    // allreduce, P = 8, 8192 B:
    // recursive doubling 3 · (88.91 + 8.192) = 291.306
    assert_rel(
        cost_op(Allreduce::RecursiveDoubling, 8, 8192, per_byte),
        291.306 * US,
        HAND_RELATIVE,
    );
    // ring, blocks of 1024: 7 · (2 · 17.23 + 1.024) = 248.388
    assert_rel(
        cost_op(Allreduce::Ring, 8, 8192, per_byte),
        248.388 * US,
        HAND_RELATIVE,
    );
    // Rabenseifner: halves of 4096, 2048, 1024:
    // (2 · 47.95 + 4.096) + (2 · 27.47 + 2.048) + (2 · 17.23 + 1.024) = 192.468
    assert_rel(
        cost_op(Allreduce::Rabenseifner, 8, 8192, per_byte),
        192.468 * US,
        HAND_RELATIVE,
    );
    // non-power of two, P = 6: 2 doubling rounds + fold-in and result-out: 4 · 88.91 + 3 · 8.192
    assert_rel(
        cost_op(Allreduce::RecursiveDoubling, 6, 8192, per_byte),
        (4.0 * 88.91 + 3.0 * 8.192) * US,
        HAND_RELATIVE,
    );
}

#[test]
fn gathers_and_exchanges_by_hand() {
    // allgather, P = 8, 1024 B each: ring 7 · 17.23 = 120.61;
    // recursive doubling and Bruck: 1024, 2048, 4096 B = 17.23 + 27.47 + 47.95 = 92.65
    assert_rel(cost(Allgather::Ring, 8, 1024), 120.61 * US, HAND_RELATIVE);
    assert_rel(
        cost(Allgather::RecursiveDoubling, 8, 1024),
        92.65 * US,
        HAND_RELATIVE,
    );
    assert_rel(cost(Allgather::Bruck, 8, 1024), 92.65 * US, HAND_RELATIVE);
    // Bruck with P = 5: rounds of min(1, 4), min(2, 3), min(4, 1) blocks: 17.23 + 27.47 + 17.23
    assert_rel(cost(Allgather::Bruck, 5, 1024), 61.93 * US, HAND_RELATIVE);
    // gather / scatter, P = 8, 1024 B: linear 17.23 + 6 · 13.23 = 96.61;
    // binomial blocks of 1, 2, 4: 92.65 + 2 · 3 = 98.65
    assert_rel(cost(Gather::Linear, 8, 1024), 96.61 * US, HAND_RELATIVE);
    assert_rel(cost(Gather::Binomial, 8, 1024), 98.65 * US, HAND_RELATIVE);
    assert_rel(cost(Scatter::Linear, 8, 1024), 96.61 * US, HAND_RELATIVE);
    assert_rel(cost(Scatter::Binomial, 8, 1024), 98.65 * US, HAND_RELATIVE);
    // barrier, P = 8: 3 rounds of empty messages, 3 · 7 = 21
    assert_rel(
        cost(Barrier::Dissemination, 8, 1024),
        21.0 * US,
        HAND_RELATIVE,
    );
    // alltoall, P = 8, 1024 B per pair: pairwise 7 · 17.23 = 120.61;
    // Bruck: every round forwards 4 of the 8 blocks: 3 · 47.95 = 143.85
    assert_rel(
        cost(Alltoall::PairwiseExchange, 8, 1024),
        120.61 * US,
        HAND_RELATIVE,
    );
    assert_rel(cost(Alltoall::Bruck, 8, 1024), 143.85 * US, HAND_RELATIVE);
}

#[test]
fn one_process_costs_nothing_and_zero_is_an_error() {
    let m = hand_model();
    let one = Problem::new(1, Message::contiguous(4096));
    let none = Problem::new(0, Message::contiguous(4096));
    for a in [
        Bcast::Linear,
        Bcast::ScatterAllgather,
        Bcast::Pipelined { segment: 64 },
    ] {
        assert_eq!(a.cost(&m, &one).unwrap().to_bits(), 0f64.to_bits());
        assert_eq!(a.cost(&m, &none), Err(CollectiveError::NoProcesses));
    }
    assert_eq!(
        Bcast::Pipelined { segment: 0 }.cost(&m, &one),
        Err(CollectiveError::ZeroSegment)
    );
    assert_eq!(
        Allreduce::Ring.cost(&m, &none),
        Err(CollectiveError::NoProcesses)
    );
    assert!(Operator::new(-1.0, 0.0).is_err());
    assert!(rank::<Bcast>(&m, &none).is_err());
}

#[test]
fn evaluation_is_fast_for_huge_communicators() {
    // O(log P): P = 2^32 evaluates (and is finite) for every collective
    let m = hand_model();
    let problem = Problem::new(1 << 32, Message::contiguous(1 << 20));
    for c in [
        Bcast::Binomial.cost(&m, &problem),
        Bcast::ScatterAllgather.cost(&m, &problem),
        Allreduce::Rabenseifner.cost(&m, &problem),
        Allgather::RecursiveDoubling.cost(&m, &problem),
        Alltoall::Bruck.cost(&m, &problem),
    ] {
        assert!(c.unwrap().is_finite());
    }
}

/// A crossover that happens only inside a one-byte protocol range: the probes placed around
/// the model's breakpoints find it where a geometric grid alone would not.
#[test]
fn crossover_finds_a_flip_inside_a_narrow_protocol_range() {
    // range A: g = 10 µs, so linear (p2p + 2 g) loses to binomial (2 p2p + g) at P = 4;
    // range B (exactly 5000 bytes): g = 0, linear 7 + 2 = 9 µs beats binomial 14 µs
    let a = LogGP::new(5e-6, 1e-6, 10e-6, 0.0).unwrap();
    let b = LogGP::new(5e-6, 1e-6, 0.0, 0.0).unwrap();
    let model = Protocols::from_starts(vec![(1, a.clone()), (5000, b), (5001, a)]).unwrap();
    let problem = Problem::new(4, Message::contiguous(1));
    let found = crossover(
        &model,
        Bcast::Binomial,
        Bcast::Linear,
        &problem,
        1..=1 << 20,
    );
    assert_eq!(found, Ok(Some(5000)));
}

#[test]
fn decision_table_matches_best_at_grid_points() {
    let openib = presets::open_mpi_openib();
    let processes = [4u64, 16, 64, 1024];
    let sizes = [8u64, 512, 4096, 12288, 12289, 1 << 16, 1 << 20, 1 << 22];
    let template = Problem::new(1, Message::contiguous(1));
    let table = DecisionTable::<Allreduce>::build(&openib, &processes, &sizes, &template).unwrap();
    for &p in &processes {
        for &s in &sizes {
            let expected = best::<Allreduce>(&openib, &template.with_bytes(s).with_processes(p));
            assert_eq!(table.lookup(p, s), expected.unwrap().0);
            // between grid points: the point at or below (12288 + 1 is a grid point itself)
            if !sizes.contains(&(s + 1)) {
                assert_eq!(table.lookup(p + 1, s + 1), table.lookup(p, s));
            }
        }
    }
    assert!(DecisionTable::<Allreduce>::build(&openib, &[], &sizes, &template).is_err());
    assert!(DecisionTable::<Allreduce>::build(&openib, &[4, 4], &sizes, &template).is_err());
}

trait WithProcesses {
    fn with_processes(self, p: u64) -> Self;
}

impl WithProcesses for Problem {
    fn with_processes(mut self, p: u64) -> Self {
        self.processes = p;
        self
    }
}

fn loggp() -> impl Strategy<Value = LogGP> {
    (0.0..1e-4f64, 0.0..1e-5f64, 0.0..1e-5f64, 0.0..1e-8f64)
        .prop_map(|(l, o, g, big_g)| LogGP::new(l, o, g, big_g).unwrap())
}

/// Costs of every algorithm that is monotone in `P` (see each algorithm's docs).
fn monotone_in_p(model: &dyn CommModel, problem: &Problem) -> Vec<f64> {
    let op = |a: &dyn Fn() -> Result<f64, CollectiveError>| a().unwrap();
    vec![
        op(&|| Bcast::Linear.cost(model, problem)),
        op(&|| Bcast::Binomial.cost(model, problem)),
        op(&|| Bcast::Pipelined { segment: 4096 }.cost(model, problem)),
        op(&|| Scan::LinearChain.cost(model, problem)),
        op(&|| Scan::RecursiveDoubling.cost(model, problem)),
        op(&|| Reduce::Binomial.cost(model, problem)),
        op(&|| Allgather::Ring.cost(model, problem)),
        op(&|| Allgather::Bruck.cost(model, problem)),
        op(&|| Gather::Linear.cost(model, problem)),
        op(&|| Gather::Binomial.cost(model, problem)),
        op(&|| Scatter::Linear.cost(model, problem)),
        op(&|| Scatter::Binomial.cost(model, problem)),
        op(&|| Barrier::Dissemination.cost(model, problem)),
        op(&|| Alltoall::PairwiseExchange.cost(model, problem)),
        op(&|| Alltoall::Bruck.cost(model, problem)),
    ]
}

/// Costs of every algorithm (all are monotone in the message size).
fn all_costs(model: &dyn CommModel, problem: &Problem) -> Vec<f64> {
    let mut costs = monotone_in_p(model, problem);
    costs.push(Bcast::ScatterAllgather.cost(model, problem).unwrap());
    for a in Allreduce::ALL {
        costs.push(a.cost(model, problem).unwrap());
    }
    costs.push(Allgather::RecursiveDoubling.cost(model, problem).unwrap());
    costs
}

proptest! {
    #[test]
    fn costs_are_non_negative_and_monotone_in_size(
        m in loggp(), p in 1u64..300, a in 0u64..1 << 22, b in 0u64..1 << 22, per_byte in 0.0..1e-9f64
    ) {
        let op = Operator::new(1e-7, per_byte).unwrap();
        let (small, large) = (a.min(b), a.max(b));
        let problem = |s| Problem::new(p, Message::contiguous(s)).with_operator(op);
        let cs = all_costs(&m, &problem(small));
        let cl = all_costs(&m, &problem(large));
        for (x, y) in cs.iter().zip(&cl) {
            prop_assert!(x.is_finite() && *x >= 0.0);
            prop_assert!(y >= x, "{x} at {small} B > {y} at {large} B");
        }
    }

    #[test]
    fn costs_are_monotone_in_processes(m in loggp(), p in 1u64..3000, q in 1u64..3000, s in 0u64..1 << 22) {
        let (few, many) = (p.min(q), p.max(q));
        let a = monotone_in_p(&m, &Problem::new(few, Message::contiguous(s)));
        let b = monotone_in_p(&m, &Problem::new(many, Message::contiguous(s)));
        for (x, y) in a.iter().zip(&b) {
            prop_assert!(y >= x, "{x} with {few} > {y} with {many}");
        }
    }

    /// `best` and `rank` return the minimum of the individually computed costs.
    #[test]
    fn selection_is_the_minimum(m in loggp(), p in 1u64..5000, s in 0u64..1 << 22) {
        let problem = Problem::new(p, Message::contiguous(s));
        let individual: Vec<f64> = Bcast::candidates(&m, &problem)
            .iter()
            .map(|a| a.cost(&m, &problem).unwrap())
            .collect();
        let minimum = individual.iter().copied().fold(f64::INFINITY, f64::min);
        let (_, c) = best::<Bcast>(&m, &problem).unwrap();
        prop_assert_eq!(c.to_bits(), minimum.to_bits());
        let ranked = rank::<Allreduce>(&m, &problem).unwrap();
        prop_assert!(ranked.windows(2).all(|w| w[0].1 <= w[1].1));
        let min_allreduce = Allreduce::ALL
            .iter()
            .map(|a| a.cost(&m, &problem).unwrap())
            .fold(f64::INFINITY, f64::min);
        prop_assert_eq!(ranked[0].1.to_bits(), min_allreduce.to_bits());
    }

    /// The crossover found really changes the ranking: same as at the start just below it,
    /// different at it.
    #[test]
    fn crossover_changes_the_ranking(m in loggp(), p in 2u64..2000, start in 1u64..4096) {
        let problem = Problem::new(p, Message::contiguous(1));
        let (a, b) = (Allreduce::RecursiveDoubling, Allreduce::Ring);
        if let Some(at) = crossover(&m, a, b, &problem, start..=1 << 24).unwrap() {
            let faster = |s: u64| {
                let q = problem.with_bytes(s);
                a.cost(&m, &q).unwrap() < b.cost(&m, &q).unwrap()
            };
            prop_assert!(at > start);
            prop_assert_eq!(faster(at - 1), faster(start));
            prop_assert_ne!(faster(at), faster(start));
        }
    }
}
