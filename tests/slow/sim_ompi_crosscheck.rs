//! Cross-check of Open MPI's `coll_tuned` closed forms (`commcost::collectives::ompi`) against
//! a simulation of the schedules Open MPI 4.1's `coll_base_*.c` run (`commcost::sim`).
//!
//! The simulator (LogGOPS semantics) and the closed forms are two independent formulations of
//! the same algorithms. For every algorithm and every model kind of `tests/slow/sim_crosscheck.rs`
//! (plus a LogGP sender slower than the network and the published Open MPI/openib transport,
//! where `CommModel::sender_keeps_pace` is false), this file asserts the relation the closed
//! form's documentation states:
//!
//! * **exact** (1e-9 relative): the linear broadcast and scatters, the unsegmented trees and
//!   the segmented chain, binomial and k-nomial broadcasts, Bruck/ring/neighbor/recursive-doubling
//!   allgathers (on every model, also with rounds of growing size on openib), pairwise and
//!   Bruck all-to-all, the Bruck, two-proc and double-ring barriers, the linear gather, the
//!   unsegmented in-order binary reduce; the recursive-doubling, ring and segmented-ring
//!   allreduce, the recursive-halving,
//!   butterfly and ring reduce-scatter, the recursive-doubling and tree barriers when `P` is a
//!   power of two;
//! * **closed − (h − 1) g**: the binomial gather and scatter and the scatter of the
//!   scatter-allgather broadcasts at powers of two (the closed form's LogGP gap between tree
//!   rounds; the simulation spaces a sender's messages by its interval only);
//! * **upper bound** (simulated ≤ closed): the same forms at other `P` (processes without work
//!   in a round run ahead), the linear reduce and allreduce (the operator overlaps receptions),
//!   Rabenseifner's reduce and allreduce, the split-binary-tree broadcast, the unsegmented
//!   chain, binary and binomial reduce;
//! * **within a documented factor**: the other segmented reduction trees, the linear and
//!   linear-sync all-to-all, the linear-sync gather, the scatter-allgather broadcast at other
//!   `P`, and the cases listed on each closed form;
//! * **as its two calls**: the linear allgather and the non-overlapping allreduce and
//!   reduce-scatter, each the sum of the calls Open MPI's fixed decisions pick ([`then`]).
//!
//! `cargo test` runs `P = 1 … 64` exhaustively (3 and 1000 B, three model kinds), every model kind on
//! `P <= 9` and 16, 31, 32, 33 at four sizes, and three random `P` up to 2^12. With
//! `COMMCOST_SIM_LONG=1` (best with `--release`): every model kind for `P = 1 … 64` (also at
//! 20000 B), and twelve
//! random `P` up to 2^16. `COMMCOST_SIM_REPORT=1` prints the measured range of simulated /
//! closed per algorithm instead of asserting the factors.

use crate::common;

use std::collections::BTreeMap;

use commcost::collectives::ompi::{
    Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, OmpiAlgorithm, Reduce, ReduceScatter,
    Scatter, fixed_algorithm,
};
use commcost::collectives::{Algorithm, Operator, Problem};
use commcost::sim::{ExactClosedForm, SimOptions, ToSchedule, simulate};
use commcost::{CommModel, LogGP, LogP, Message, presets};
use common::SplitMix64;

const REL: f64 = 1e-9;

/// Every model kind of the textbook cross-check, and two whose senders do not keep pace.
fn models() -> Vec<(&'static str, Box<dyn CommModel>)> {
    let mut models = common::model_kinds();
    models.push((
        "slow sender",
        Box::new(LogGP::new(1e-6, 1e-6, 9e-6, 1e-8).unwrap()),
    ));
    models.push(("openib", Box::new(presets::open_mpi_openib())));
    models
}

/// Whether the model's sender keeps pace with the network (the last two models do not).
fn slow(model: &str) -> bool {
    matches!(model, "slow sender" | "openib")
}

/// How the simulation relates to the closed form.
#[derive(Debug, Clone, Copy)]
enum Expect {
    Exact,
    /// `sim = closed - (h - 1) g(bytes)`, and `- (h - 1) g(second)` when there is a second.
    MinusGaps(u64, Option<u64>),
    UpperBound,
    /// `lo <= sim / closed <= hi`.
    Within(f64, f64),
}

fn ceil_log2(p: u64) -> u32 {
    if p <= 1 {
        0
    } else {
        64 - (p - 1).leading_zeros()
    }
}

/// The documented relation of algorithm `name` (see the module docs and each closed form).
/// The factors of `Within` are the measured ranges of this file's grid, rounded outwards.
fn expectation(name: &str, model: &str, p: u64, m: u64) -> Expect {
    use Expect::*;
    let pow2 = p.is_power_of_two();
    let slow = slow(model);
    if p == 1 {
        return Exact;
    }
    let tree_gaps = |bytes: u64| {
        // a slow sender spaces the tree's rounds by its interval, more than the gap
        if slow {
            UpperBound
        } else {
            MinusGaps(bytes, None)
        }
    };
    match name {
        // the composed algorithms: their two calls, one after the other
        "allgather/linear" => {
            let (gather, bcast): (Gather, Bcast) = (fixed(p, m), fixed(p, m.saturating_mul(p)));
            then(
                expectation(&inner("gather", gather), model, p, m),
                expectation(&inner("bcast", bcast), model, p, m.saturating_mul(p)),
            )
        }
        "allreduce/nonoverlapping" => {
            let (reduce, bcast): (Reduce, Bcast) = (fixed(p, m), fixed(p, m));
            then(
                expectation(&inner("reduce", reduce), model, p, m),
                expectation(&inner("bcast", bcast), model, p, m),
            )
        }
        // the linear scatterv after the reduce is exact
        "reduce-scatter/non-overlapping" => {
            expectation(&inner("reduce", fixed::<Reduce>(p, m)), model, p, m)
        }
        "bcast/basic-linear"
        | "bcast/chain"
        | "bcast/chain-seg"
        | "bcast/pipeline"
        | "bcast/binary-tree"
        | "bcast/binomial"
        | "bcast/binomial-seg"
        | "bcast/knomial"
        | "bcast/knomial-seg"
        | "allgather/bruck"
        | "allgather/recursive-doubling"
        | "allgather/ring"
        | "allgather/neighbor"
        | "allgather/two-proc"
        | "alltoall/pairwise"
        | "alltoall/modified-bruck"
        | "alltoall/two-proc"
        | "barrier/linear"
        | "barrier/double-ring"
        | "barrier/bruck"
        | "barrier/two-proc"
        | "reduce-scatter/ring"
        | "gather/basic-linear"
        | "scatter/basic-linear"
        | "scatter/linear-nb" => Exact,
        "allreduce/recursive-doubling"
        | "allreduce/ring"
        | "allreduce/segmented-ring"
        | "reduce-scatter/recursive-halving"
        | "reduce-scatter/butterfly"
        | "barrier/recursive-doubling"
        | "barrier/tree" => {
            if pow2 {
                Exact
            } else {
                UpperBound
            }
        }
        "gather/binomial" | "scatter/binomial" if slow => Within(0.5, 1.3),
        "gather/binomial" | "scatter/binomial" => {
            if pow2 {
                tree_gaps(m)
            } else {
                UpperBound
            }
        }
        "bcast/scatter-allgather-ring" => {
            if m < p {
                Exact
            } else if pow2 {
                tree_gaps(m.div_ceil(p))
            } else {
                UpperBound
            }
        }
        "bcast/scatter-allgather" => {
            if m < p {
                Exact
            } else if pow2 && !slow {
                tree_gaps(m.div_ceil(p))
            } else {
                Within(0.7, 1.45)
            }
        }
        "allreduce/basic-linear" | "reduce/linear" => UpperBound,
        "allreduce/rabenseifner" if slow => Within(0.95, 1.15),
        "reduce/rabenseifner" if slow => Within(0.95, 1.35),
        "allreduce/rabenseifner" | "reduce/rabenseifner" => UpperBound,
        "bcast/split-binary-tree" if slow => Within(0.9, 2.0),
        "bcast/split-binary-tree" => UpperBound,
        "bcast/pipeline-seg" | "bcast/binary-tree-seg" | "reduce/pipeline-seg" => Within(1.0, 1.1),
        "reduce/in-order-binary" => Exact,
        "reduce/chain" | "reduce/binary" | "reduce/binomial" => UpperBound,
        "reduce/binomial-seg" => Within(0.8, 1.1),
        "reduce/in-order-binary-seg" => Within(0.85, 1.15),
        "reduce/chain-seg" => Within(0.75, 1.07),
        "reduce/binary-seg" => Within(0.6, 1.15),
        "alltoall/linear" => Within(1.0, 2.0),
        "alltoall/linear-sync" => Within(0.65, 1.7),
        "gather/linear-sync" => Within(0.6, 2.0),
        other => panic!("no expectation for {other}"),
    }
}

/// The algorithm Open MPI's fixed decision picks for an inner call of a composed algorithm.
fn fixed<A: OmpiAlgorithm>(p: u64, bytes: u64) -> A {
    fixed_algorithm(p, bytes, true).unwrap()
}

/// The name [`expectation`] knows an inner call's algorithm by (always unsegmented; the
/// unsegmented pipeline reduce is the chain of fan-out 1).
fn inner(collective: &str, algorithm: impl Algorithm) -> String {
    let name = match algorithm.name() {
        "pipeline" if collective == "reduce" => "chain",
        other => other,
    };
    format!("{collective}/{name}")
}

/// The relation of two calls made one after the other, from each one's: the simulated and the
/// closed-form times add up.
fn then(a: Expect, b: Expect) -> Expect {
    use Expect::*;
    match (a, b) {
        (Exact, x) | (x, Exact) => match x {
            Within(lo, hi) => Within(lo.min(1.0), hi.max(1.0)),
            other => other,
        },
        (MinusGaps(x, None), MinusGaps(y, None)) => MinusGaps(x, Some(y)),
        (Within(lo, hi), Within(lo2, hi2)) => Within(lo.min(lo2), hi.max(hi2)),
        (Within(_, hi), _) | (_, Within(_, hi)) => Within(0.0, hi.max(1.0)),
        _ => UpperBound,
    }
}

/// Measured `sim / closed` ranges, per algorithm and model group.
type Report = BTreeMap<(String, &'static str), (f64, f64)>;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= REL * a.abs().max(b.abs()) + 1e-300
}

type Models<'a> = [(&'a str, Box<dyn CommModel>)];

/// Builds the schedule once and checks it on every model.
#[track_caller]
fn check<A: Algorithm + ToSchedule + ExactClosedForm>(
    alg: A,
    name: &str,
    models: &Models<'_>,
    problem: &Problem,
    report: &mut Report,
) {
    let p = problem.processes;
    let m = problem.message.bytes();
    let schedule = alg.schedule(problem).unwrap();
    let reporting = std::env::var_os("COMMCOST_SIM_REPORT").is_some();
    for (mname, model) in models {
        let model = model.as_ref();
        let closed = alg.cost(model, problem).unwrap();
        let sim = simulate(&schedule, model, &SimOptions::default())
            .unwrap()
            .makespan;
        let what = format!(
            "{name} ({}) on {mname}, P = {p}, m = {m}: simulated {sim:e}, closed form {closed:e}",
            alg.label(),
        );
        let ratio = if closed == 0.0 && sim == 0.0 {
            1.0
        } else {
            sim / closed
        };
        let group = if slow(mname) { "slow" } else { "pace" };
        let e = report
            .entry((name.to_string(), group))
            .or_insert((f64::MAX, f64::MIN));
        e.0 = e.0.min(ratio);
        e.1 = e.1.max(ratio);
        // what rank_simulated trusts must hold: a closed form it calls exact is exact
        if alg.closed_form_exact(model, problem) {
            assert!(close(sim, closed), "{what}: ExactClosedForm says exact");
        }
        match expectation(name, mname, p, m) {
            Expect::Exact => assert!(reporting || close(sim, closed), "{what}"),
            Expect::MinusGaps(bytes, second) => {
                let gap = |b: u64| f64::from(ceil_log2(p) - 1) * model.gap(&problem.piece(b));
                let gaps = gap(bytes) + second.map_or(0.0, gap);
                assert!(
                    reporting || close(sim, closed - gaps),
                    "{what}, expected closed - {gaps:e}"
                );
            }
            Expect::UpperBound => {
                assert!(
                    reporting || sim <= closed * (1.0 + REL),
                    "{what}: not a bound"
                )
            }
            Expect::Within(lo, hi) => {
                if !reporting {
                    assert!(
                        sim >= lo * closed * (1.0 - REL) && sim <= hi * closed * (1.0 + REL),
                        "{what}: ratio {ratio} outside [{lo}, {hi}]"
                    );
                }
            }
        }
    }
}

/// Every Open MPI algorithm on one problem; `segment` for the segmented variants.
fn check_all(models: &Models<'_>, problem: &Problem, segment: u64, report: &mut Report) {
    let p = problem.processes;
    macro_rules! c {
        ($name:literal, $alg:expr) => {
            check($alg, $name, models, problem, report)
        };
    }
    c!("bcast/basic-linear", Bcast::BasicLinear);
    c!(
        "bcast/chain",
        Bcast::Chain {
            segment: 0,
            fanout: 4
        }
    );
    c!("bcast/chain-seg", Bcast::Chain { segment, fanout: 3 });
    c!("bcast/pipeline", Bcast::Pipeline { segment: 0 });
    c!("bcast/pipeline-seg", Bcast::Pipeline { segment });
    c!(
        "bcast/split-binary-tree",
        Bcast::SplitBinaryTree { segment: 0 }
    );
    c!("bcast/binary-tree", Bcast::BinaryTree { segment: 0 });
    c!("bcast/binary-tree-seg", Bcast::BinaryTree { segment });
    c!("bcast/binomial", Bcast::Binomial { segment: 0 });
    c!("bcast/binomial-seg", Bcast::Binomial { segment });
    c!(
        "bcast/knomial",
        Bcast::Knomial {
            segment: 0,
            radix: 4
        }
    );
    c!("bcast/knomial-seg", Bcast::Knomial { segment, radix: 3 });
    c!("bcast/scatter-allgather", Bcast::ScatterAllgather);
    c!("bcast/scatter-allgather-ring", Bcast::ScatterAllgatherRing);
    c!("allreduce/basic-linear", Allreduce::BasicLinear);
    c!("allreduce/nonoverlapping", Allreduce::Nonoverlapping);
    c!("allreduce/recursive-doubling", Allreduce::RecursiveDoubling);
    c!("allreduce/ring", Allreduce::Ring);
    c!(
        "allreduce/segmented-ring",
        Allreduce::SegmentedRing {
            segment: (segment / 8).max(1)
        }
    );
    c!("allreduce/rabenseifner", Allreduce::Rabenseifner);
    c!("reduce/linear", Reduce::Linear);
    c!(
        "reduce/chain",
        Reduce::Chain {
            segment: 0,
            fanout: 4
        }
    );
    c!("reduce/chain-seg", Reduce::Chain { segment, fanout: 3 });
    c!("reduce/pipeline-seg", Reduce::Pipeline { segment });
    c!("reduce/binary", Reduce::Binary { segment: 0 });
    c!("reduce/binary-seg", Reduce::Binary { segment });
    c!("reduce/binomial", Reduce::Binomial { segment: 0 });
    c!("reduce/binomial-seg", Reduce::Binomial { segment });
    c!(
        "reduce/in-order-binary",
        Reduce::InOrderBinary { segment: 0 }
    );
    c!(
        "reduce/in-order-binary-seg",
        Reduce::InOrderBinary { segment }
    );
    c!("reduce/rabenseifner", Reduce::Rabenseifner);
    c!("allgather/linear", Allgather::Linear);
    c!("allgather/bruck", Allgather::Bruck);
    c!("allgather/recursive-doubling", Allgather::RecursiveDoubling);
    c!("allgather/ring", Allgather::Ring);
    c!("allgather/neighbor", Allgather::Neighbor);
    c!("alltoall/linear", Alltoall::Linear);
    c!("alltoall/pairwise", Alltoall::Pairwise);
    c!("alltoall/modified-bruck", Alltoall::ModifiedBruck);
    c!(
        "alltoall/linear-sync",
        Alltoall::LinearSync { max_requests: 3 }
    );
    c!("barrier/linear", Barrier::Linear);
    c!("barrier/double-ring", Barrier::DoubleRing);
    c!("barrier/recursive-doubling", Barrier::RecursiveDoubling);
    c!("barrier/bruck", Barrier::Bruck);
    c!("barrier/tree", Barrier::Tree);
    c!(
        "reduce-scatter/non-overlapping",
        ReduceScatter::NonOverlapping
    );
    c!(
        "reduce-scatter/recursive-halving",
        ReduceScatter::RecursiveHalving
    );
    c!("reduce-scatter/ring", ReduceScatter::Ring);
    c!("reduce-scatter/butterfly", ReduceScatter::Butterfly);
    c!("gather/basic-linear", Gather::BasicLinear);
    c!("gather/binomial", Gather::Binomial);
    c!("gather/linear-sync", Gather::LinearSync { segment });
    c!("scatter/basic-linear", Scatter::BasicLinear);
    c!("scatter/binomial", Scatter::Binomial);
    c!("scatter/linear-nb", Scatter::LinearNb);
    if p <= 2 {
        c!("allgather/two-proc", Allgather::TwoProc);
        c!("alltoall/two-proc", Alltoall::TwoProc);
        c!("barrier/two-proc", Barrier::TwoProc);
    }
}

fn operator() -> Operator {
    Operator::new(1e-7, 1e-10).unwrap()
}

fn print_report(title: &str, report: &Report) {
    if std::env::var_os("COMMCOST_SIM_REPORT").is_some() {
        println!("== {title}");
        for ((name, group), (lo, hi)) in report {
            println!("{name:36} {group} [{lo:.4}, {hi:.4}]");
        }
    }
}

#[test]
fn every_algorithm_p_1_to_64() {
    // three model kinds (every kind with COMMCOST_SIM_LONG): the others run in other_sizes
    let long = std::env::var_os("COMMCOST_SIM_LONG").is_some();
    let models: Vec<_> = models()
        .into_iter()
        .filter(|(name, _)| long || matches!(*name, "loggp" | "protocols" | "openib"))
        .collect();
    // 3 bytes: below P, Open MPI's fallbacks (linear broadcast, recursive doubling)
    let sizes: &[(u64, u64)] = if long {
        &[(3, 1), (1000, 128), (20_000, 4096)]
    } else {
        &[(3, 1), (1000, 128)]
    };
    let mut report = Report::new();
    for p in 1..=64u64 {
        for &(m, segment) in sizes {
            let problem = Problem::new(p, Message::contiguous(m)).with_operator(operator());
            check_all(&models, &problem, segment, &mut report);
        }
    }
    print_report("P 1..64", &report);
}

#[test]
fn other_sizes() {
    let models = models();
    let mut report = Report::new();
    for p in (1..=9u64).chain([16, 31, 32, 33]) {
        for m in [0u64, 3, 20_000, 1024 * p] {
            let problem = Problem::new(p, Message::contiguous(m)).with_operator(operator());
            check_all(&models, &problem, 4096, &mut report);
        }
    }
    print_report("other sizes", &report);
}

#[test]
fn random_process_counts() {
    let long = std::env::var_os("COMMCOST_SIM_LONG").is_some();
    let (max_log, samples) = if long { (16, 12) } else { (12, 3) };
    let mut rng = SplitMix64(0x0e11_0b1d);
    let all = models();
    let mut report = Report::new();
    for _ in 0..samples {
        let p = rng.int(65, 1 << max_log);
        let pick = rng.int(0, all.len() as u64 - 1) as usize;
        let models = &all[pick..=pick];
        let m = rng.int(p, 1 << 16);
        let problem = Problem::new(p, Message::contiguous(m)).with_operator(operator());
        let segment = (m / 3).max(1);
        macro_rules! c {
            ($name:literal, $alg:expr) => {
                check($alg, $name, models, &problem, &mut report)
            };
        }
        // the O(P log P) schedules
        c!("bcast/binomial", Bcast::Binomial { segment: 0 });
        c!("bcast/binomial-seg", Bcast::Binomial { segment });
        c!("bcast/knomial-seg", Bcast::Knomial { segment, radix: 4 });
        c!("bcast/binary-tree", Bcast::BinaryTree { segment: 0 });
        c!("bcast/chain-seg", Bcast::Chain { segment, fanout: 4 });
        c!("bcast/scatter-allgather", Bcast::ScatterAllgather);
        c!("allreduce/recursive-doubling", Allreduce::RecursiveDoubling);
        c!("allreduce/rabenseifner", Allreduce::Rabenseifner);
        c!("reduce/binomial", Reduce::Binomial { segment: 0 });
        c!("reduce/rabenseifner", Reduce::Rabenseifner);
        c!("allgather/bruck", Allgather::Bruck);
        c!("alltoall/modified-bruck", Alltoall::ModifiedBruck);
        c!("barrier/bruck", Barrier::Bruck);
        c!("barrier/recursive-doubling", Barrier::RecursiveDoubling);
        c!("barrier/tree", Barrier::Tree);
        c!(
            "reduce-scatter/recursive-halving",
            ReduceScatter::RecursiveHalving
        );
        c!("gather/binomial", Gather::Binomial);
        c!("scatter/binomial", Scatter::Binomial);
    }
    print_report("random P", &report);
}

/// `rank_simulated` against hand calculations: Open MPI's gathers on 3 processes, LogGP with
/// `L = 3`, `o = 1`, `g = 4` µs, `G = 0` (so `T = 2o + L = 5`, `I = g = 4` µs), 1 byte.
/// The linear gather: both messages arrive at 5 µs, the second is received `max(I, o)` later:
/// 9 µs, its exact closed form. The binomial gather runs the same messages (rank 2 has no
/// child at P = 3): 9 µs simulated, where its closed form `T + T + g = 14` µs adds a round and
/// a gap. The closed-form ranking puts it second at 14; the simulated ranking at 9.
#[test]
fn rank_simulated_gather_at_three_processes() {
    use commcost::collectives::rank;
    use commcost::sim::{CostSource, SimLimits, rank_simulated};
    let model = LogGP::new(3e-6, 1e-6, 4e-6, 0.0).unwrap();
    let problem = Problem::new(3, Message::contiguous(1));
    let closed = rank::<Gather>(&model, &problem).unwrap();
    assert_eq!(closed[0].0, Gather::BasicLinear);
    assert_eq!(closed[1].0, Gather::Binomial);
    approx::assert_relative_eq!(closed[1].1, 14e-6, max_relative = 1e-12);
    let ranking = rank_simulated::<Gather>(&model, &problem, SimLimits::default()).unwrap();
    let linear = ranking
        .iter()
        .find(|e| e.algorithm == Gather::BasicLinear)
        .unwrap();
    let binomial = ranking
        .iter()
        .find(|e| e.algorithm == Gather::Binomial)
        .unwrap();
    assert_eq!(linear.source, CostSource::ClosedForm);
    approx::assert_relative_eq!(linear.cost, 9e-6, max_relative = 1e-12);
    assert_eq!(binomial.source, CostSource::Simulated);
    approx::assert_relative_eq!(binomial.cost, 9e-6, max_relative = 1e-12);
    approx::assert_relative_eq!(binomial.closed_form, 14e-6, max_relative = 1e-12);
    // ties keep the candidates' order
    assert_eq!(ranking[0].algorithm, Gather::BasicLinear);
    assert_eq!(ranking[1].algorithm, Gather::Binomial);
    // beyond the limits, every entry is its closed form
    let none = SimLimits {
        max_processes: 2,
        ..SimLimits::default()
    };
    let ranking = rank_simulated::<Gather>(&model, &problem, none).unwrap();
    assert!(ranking.iter().all(|e| e.source == CostSource::ClosedForm));
    assert!(
        ranking
            .iter()
            .zip(&closed)
            .all(|(e, c)| e.algorithm == c.0 && e.cost.to_bits() == c.1.to_bits())
    );
}

/// The recursive-doubling barrier on 5 processes, by hand (LogP, `o = 1`, `L = 3`, `g = 2`
/// µs: `T = 5`, `I = 2`): rank 4 hands over to rank 0 (received at 5); rank 0 then exchanges
/// with 1 (its receive completes at 5 + max(o, g) = 7, the message had arrived) and with 2
/// (sends at 7; 2's message, sent at 5 after its round with 3, completes at 10), and releases
/// rank 4 at 10 + T = 15; rank 3 gets rank 1's second-round message, sent at 10, at 15. The
/// simulation is 15 µs where the closed form charges the lock-step `(h' + 2) T = 20` µs; the
/// Bruck barrier's `h T = 15` µs is exact.
#[test]
fn rank_simulated_barrier_at_five_processes() {
    use commcost::sim::{CostSource, SimLimits, rank_simulated};
    let model = LogP::new(3e-6, 1e-6, 2e-6, 8).unwrap();
    let problem = Problem::new(5, Message::contiguous(0));
    let ranking = rank_simulated::<Barrier>(&model, &problem, SimLimits::default()).unwrap();
    let find = |a: Barrier| ranking.iter().find(|e| e.algorithm == a).unwrap();
    let rd = find(Barrier::RecursiveDoubling);
    assert_eq!(rd.source, CostSource::Simulated);
    approx::assert_relative_eq!(rd.cost, 15e-6, max_relative = 1e-12);
    approx::assert_relative_eq!(rd.closed_form, 20e-6, max_relative = 1e-12);
    let bruck = find(Barrier::Bruck);
    assert_eq!(bruck.source, CostSource::ClosedForm);
    approx::assert_relative_eq!(bruck.cost, 15e-6, max_relative = 1e-12);
    // every entry is the simulated makespan or an exact closed form: sorted, none above its
    // closed form here (the barriers' inexact forms are bounds)
    assert!(ranking.windows(2).all(|w| w[0].cost <= w[1].cost));
    assert!(
        ranking
            .iter()
            .all(|e| e.cost <= e.closed_form * (1.0 + 1e-12))
    );
}

/// Large communicators: the `O(P log P)` schedules build at `P = 2^16`; the quadratic ones
/// beyond the simulator's operation limit are refused with `TooLarge`, not built.
#[test]
fn large_communicators_build_or_are_refused() {
    use commcost::sim::SimError;
    let problem = Problem::new(1 << 16, Message::contiguous(1 << 16));
    let s = ReduceScatter::RecursiveHalving.schedule(&problem).unwrap();
    assert!(s.len() < 1 << 22);
    let s = Bcast::Knomial {
        segment: 0,
        radix: 4,
    }
    .schedule(&problem)
    .unwrap();
    assert_eq!(s.len(), 2 * ((1 << 16) - 1));
    for result in [
        ReduceScatter::Ring.schedule(&problem),
        Alltoall::Pairwise.schedule(&problem),
        Bcast::ScatterAllgatherRing.schedule(&problem),
    ] {
        assert!(
            matches!(result, Err(SimError::TooLarge { .. })),
            "{result:?}"
        );
    }
}

/// Out-of-range problems are errors, never panics or huge allocations.
#[test]
fn invalid_problems_are_errors() {
    use commcost::collectives::CollectiveError;
    use commcost::sim::SimError;
    let huge = Problem::new(1 << 40, Message::contiguous(8));
    let none = Problem::new(0, Message::contiguous(8));
    for problem in [huge, none] {
        for r in [
            Bcast::Chain {
                segment: 1,
                fanout: 4,
            }
            .schedule(&problem),
            Reduce::InOrderBinary { segment: 0 }.schedule(&problem),
            Allreduce::Rabenseifner.schedule(&problem),
            Barrier::Tree.schedule(&problem),
            Gather::LinearSync { segment: 1 }.schedule(&problem),
        ] {
            assert!(
                matches!(
                    r,
                    Err(SimError::TooLarge { .. })
                        | Err(SimError::Collective(CollectiveError::NoProcesses))
                ),
                "{r:?}"
            );
        }
    }
    // a k-nomial radix below 2 and two-proc algorithms beyond 2 processes
    let p = Problem::new(8, Message::contiguous(8));
    assert!(
        Bcast::Knomial {
            segment: 0,
            radix: 1
        }
        .schedule(&p)
        .is_err()
    );
    assert!(Allgather::TwoProc.schedule(&p).is_err());
    // a segment of 1 byte on a large message: refused as too large, not built
    let big = Problem::new(1 << 10, Message::contiguous(1 << 40));
    let r = Bcast::Binomial { segment: 1 }.schedule(&big);
    assert!(matches!(r, Err(SimError::TooLarge { .. })), "{r:?}");
}

/// `ExactClosedForm` of the crate's own algorithms agrees with their simulation wherever it
/// says exact (the relations of `tests/slow/sim_crosscheck.rs`), on every model kind here.
#[test]
fn textbook_exactness_claims_hold() {
    use commcost::collectives::{
        Allgather as Ag, Allreduce as Ar, Alltoall as Aa, Barrier as Ba, Bcast as Bc, Gather as Ga,
        Reduce as Re, Scan, Scatter as Sc,
    };
    fn claim<A: Algorithm + ToSchedule + ExactClosedForm>(
        alg: A,
        models: &Models<'_>,
        problem: &Problem,
    ) {
        let schedule = alg.schedule(problem).unwrap();
        for (name, model) in models {
            if alg.closed_form_exact(model.as_ref(), problem) {
                let closed = alg.cost(model.as_ref(), problem).unwrap();
                let sim = simulate(&schedule, model.as_ref(), &SimOptions::default())
                    .unwrap()
                    .makespan;
                assert!(
                    close(sim, closed),
                    "{alg:?} on {name}, P = {}: {sim:e} vs {closed:e}",
                    problem.processes
                );
            }
        }
    }
    let models = models();
    for p in (1..=12u64).chain([16, 17, 31, 32]) {
        let problem = Problem::new(p, Message::contiguous(1000)).with_operator(operator());
        for a in [
            Bc::Linear,
            Bc::Binomial,
            Bc::ScatterAllgather,
            Bc::Pipelined { segment: 300 },
        ] {
            claim(a, &models, &problem);
        }
        Scan::ALL.iter().for_each(|&a| claim(a, &models, &problem));
        Re::ALL.iter().for_each(|&a| claim(a, &models, &problem));
        Ar::ALL.iter().for_each(|&a| claim(a, &models, &problem));
        Ag::ALL.iter().for_each(|&a| claim(a, &models, &problem));
        Ga::ALL.iter().for_each(|&a| claim(a, &models, &problem));
        Sc::ALL.iter().for_each(|&a| claim(a, &models, &problem));
        Ba::ALL.iter().for_each(|&a| claim(a, &models, &problem));
        Aa::ALL.iter().for_each(|&a| claim(a, &models, &problem));
    }
}

/// Rounds of changing size where the sender is slower than the network at some sizes only:
/// Open MPI/openib and NMPI/SCI (Hoefler, Lichei & Rehm, IPDPS 2007, Table 2: the interval
/// exceeds the time more in the rendezvous range) and two LogGP ranges the other way round
/// (`g = 9` µs below 4097 bytes, 2 µs above; `L = 3`, `o = 1` µs, `G = 1 ns/B`), at sizes whose
/// doubling or halving pieces cross the switch, `P = 1 … 64`. The allgathers' rounds grow, the
/// reduce-scatters' shrink, the modified Bruck's do not grow: each relation of `expectation`
/// holds (the allgathers and the modified Bruck exact, the halving reduce-scatters exact at
/// powers of two), and every `ExactClosedForm` claim.
#[test]
fn rounds_of_changing_size() {
    let two_ranges = commcost::Protocols::from_starts(vec![
        (1, LogGP::new(3e-6, 1e-6, 9e-6, 1e-9).unwrap()),
        (4097, LogGP::new(3e-6, 1e-6, 2e-6, 1e-9).unwrap()),
    ])
    .unwrap();
    let models: Vec<(&str, Box<dyn CommModel>)> = vec![
        ("openib", Box::new(presets::open_mpi_openib())),
        ("nmpi/sci", Box::new(presets::nmpi_sci())),
        ("slow small", Box::new(two_ranges)),
    ];
    let mut report = Report::new();
    for p in 1..=64u64 {
        for m in [1000u64, 3000, 6145, 12289, 50_000] {
            let problem = Problem::new(p, Message::contiguous(m)).with_operator(operator());
            macro_rules! c {
                ($name:literal, $alg:expr) => {
                    check($alg, $name, &models, &problem, &mut report)
                };
            }
            c!("allgather/bruck", Allgather::Bruck);
            c!("allgather/recursive-doubling", Allgather::RecursiveDoubling);
            c!("allgather/neighbor", Allgather::Neighbor);
            c!("alltoall/modified-bruck", Alltoall::ModifiedBruck);
            c!(
                "reduce-scatter/recursive-halving",
                ReduceScatter::RecursiveHalving
            );
            c!("reduce-scatter/butterfly", ReduceScatter::Butterfly);
        }
    }
    print_report("rounds of changing size", &report);
}
