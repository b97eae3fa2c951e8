//! GOAL written and read back, operation by operation: every schedule the crate's builders
//! write (every textbook and Open MPI algorithm, several process counts and sizes, with an
//! operator) goes through `write_goal` and `parse_goal` and must come back with the same
//! operations (kind, rank, peer, tag, bytes, calc time to the written unit) and the same
//! dependencies; and Schedgen's own files (`tests/fixtures/loggopsim/goal/`, written by
//! LogGOPSim's Schedgen, see the NOTE there) must read into the schedules
//! `SchedgenPattern` builds.

use std::path::Path;

use commcost::Message;
use commcost::collectives::{self, Operator, Problem, ompi};
use commcost::sim::SimError;
use commcost::sim::{
    Dependency, OpId, OpKind, SchedgenPattern, Schedule, ToSchedule, parse_goal, write_goal,
    write_goal_to,
};

/// The calc unit of the written text, seconds.
const UNIT: f64 = 1e-9;

/// One operation as GOAL holds it: kind, peer, tag, bytes, calc time in whole units.
type Op = (OpKind, Option<u64>, Option<u32>, Option<u64>, Option<u64>);

/// Per rank, its operations in order (ids), and each operation's position in its rank.
fn by_rank(s: &Schedule) -> (Vec<Vec<OpId>>, Vec<usize>) {
    let mut ranks = vec![Vec::new(); s.ranks() as usize];
    let mut position = vec![0; s.len()];
    for (i, at) in position.iter_mut().enumerate() {
        let op = OpId(i as u32);
        let r = s.rank(op).expect("rank") as usize;
        *at = ranks[r].len();
        ranks[r].push(op);
    }
    (ranks, position)
}

fn op(s: &Schedule, id: OpId) -> Op {
    let kind = s.kind(id).expect("kind");
    let calc = (kind == OpKind::Calc).then(|| {
        let seconds = s.calc_seconds(id).expect("calc");
        (seconds / UNIT).round() as u64
    });
    (
        kind,
        s.peer(id),
        s.tag(id),
        s.message(id).map(|m| m.bytes()),
        calc,
    )
}

/// The dependents of `id` as (position in the rank, kind), sorted (a repeated dependency
/// stays repeated).
fn dependents(s: &Schedule, id: OpId, position: &[usize]) -> Vec<(usize, bool)> {
    let mut d: Vec<(usize, bool)> = s
        .dependents(id)
        .map(|(d, k)| (position[d.index()], k == Dependency::Irequires))
        .collect();
    d.sort_unstable();
    d
}

/// Asserts that `a` and `b` hold the same operations per rank, in the same order, with the
/// same dependencies.
fn assert_same(a: &Schedule, b: &Schedule, what: &str) {
    assert_eq!(a.ranks(), b.ranks(), "{what}: ranks");
    assert_eq!(a.len(), b.len(), "{what}: operations");
    assert_eq!(a.dependencies(), b.dependencies(), "{what}: dependencies");
    let ((ra, pa), (rb, pb)) = (by_rank(a), by_rank(b));
    for (r, (ops_a, ops_b)) in ra.iter().zip(&rb).enumerate() {
        assert_eq!(ops_a.len(), ops_b.len(), "{what}: rank {r}: operations");
        for (k, (&x, &y)) in ops_a.iter().zip(ops_b).enumerate() {
            assert_eq!(op(a, x), op(b, y), "{what}: rank {r}, operation {k}");
            assert_eq!(
                dependents(a, x, &pa),
                dependents(b, y, &pb),
                "{what}: rank {r}, dependents of operation {k}"
            );
        }
    }
}

fn round_trip(s: &Schedule, what: &str) {
    let text = write_goal(s, UNIT).unwrap();
    let mut streamed = Vec::new();
    write_goal_to(s, UNIT, &mut streamed).expect("write to a Vec");
    assert_eq!(streamed, text.as_bytes(), "{what}: write_goal_to");
    let back = parse_goal(&text, UNIT).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_same(s, &back, what);
}

fn each<A: ToSchedule + std::fmt::Debug>(all: &[A], problem: &Problem, count: &mut usize) {
    for a in all {
        match a.schedule(problem) {
            Ok(s) => {
                round_trip(&s, &format!("{a:?}, P = {}", problem.processes));
                *count += 1;
            }
            // an algorithm for fixed process counts (Open MPI's two-process ones)
            Err(SimError::Collective(_)) => {}
            Err(e) => panic!("{a:?}, P = {}: {e}", problem.processes),
        }
    }
}

/// Segmented algorithms with a segment small enough to split the sizes below.
const SEGMENT: u64 = 256;

/// Open MPI's algorithms with parameters (as `ompi_info` lists them; segmented ones with
/// [`SEGMENT`]).
fn ompi_bcast() -> Vec<ompi::Bcast> {
    use ompi::Bcast::*;
    let segment = SEGMENT;
    vec![
        BasicLinear,
        Chain { segment, fanout: 4 },
        Pipeline { segment },
        SplitBinaryTree { segment },
        BinaryTree { segment },
        Binomial { segment },
        Knomial { segment, radix: 4 },
        ScatterAllgather,
        ScatterAllgatherRing,
    ]
}

fn ompi_allreduce() -> Vec<ompi::Allreduce> {
    use ompi::Allreduce::*;
    vec![
        BasicLinear,
        Nonoverlapping,
        RecursiveDoubling,
        Ring,
        SegmentedRing { segment: SEGMENT },
        Rabenseifner,
    ]
}

fn ompi_reduce() -> Vec<ompi::Reduce> {
    use ompi::Reduce::*;
    let segment = SEGMENT;
    vec![
        Linear,
        Chain { segment, fanout: 4 },
        Pipeline { segment },
        Binary { segment },
        Binomial { segment },
        InOrderBinary { segment },
        Rabenseifner,
    ]
}

fn ompi_alltoall() -> Vec<ompi::Alltoall> {
    use ompi::Alltoall::*;
    vec![
        Linear,
        Pairwise,
        ModifiedBruck,
        LinearSync { max_requests: 0 },
        LinearSync { max_requests: 2 },
        TwoProc,
    ]
}

fn ompi_gather() -> Vec<ompi::Gather> {
    use ompi::Gather::*;
    vec![BasicLinear, Binomial, LinearSync { segment: SEGMENT }]
}

#[test]
fn every_builder_round_trips_operation_by_operation() {
    let operator = Operator::new(1.5e-6, 0.25e-9).unwrap();
    let mut count = 0;
    for p in [1u64, 2, 3, 5, 8, 13, 16] {
        for bytes in [0u64, 1, 1000, 65_536] {
            let problem = Problem::new(p, Message::contiguous(bytes)).with_operator(operator);
            each(
                &[
                    collectives::Bcast::Linear,
                    collectives::Bcast::Binomial,
                    collectives::Bcast::ScatterAllgather,
                    collectives::Bcast::Pipelined { segment: SEGMENT },
                ],
                &problem,
                &mut count,
            );
            each(collectives::Scan::ALL, &problem, &mut count);
            each(collectives::Reduce::ALL, &problem, &mut count);
            each(collectives::Allreduce::ALL, &problem, &mut count);
            each(collectives::Allgather::ALL, &problem, &mut count);
            each(collectives::Gather::ALL, &problem, &mut count);
            each(collectives::Scatter::ALL, &problem, &mut count);
            each(collectives::Barrier::ALL, &problem, &mut count);
            each(collectives::Alltoall::ALL, &problem, &mut count);
            each(ompi::Allgather::ALL, &problem, &mut count);
            each(&ompi_allreduce(), &problem, &mut count);
            each(&ompi_alltoall(), &problem, &mut count);
            each(ompi::Barrier::ALL, &problem, &mut count);
            each(&ompi_bcast(), &problem, &mut count);
            each(&ompi_gather(), &problem, &mut count);
            each(&ompi_reduce(), &problem, &mut count);
            each(ompi::ReduceScatter::ALL, &problem, &mut count);
            each(ompi::Scatter::ALL, &problem, &mut count);
        }
    }
    // every algorithm of every collective, at several sizes: the count is not a hard figure
    // but must show that the lists were not empty
    assert!(count > 500, "{count} schedules");
}

#[test]
fn schedgen_patterns_round_trip() {
    for pattern in SchedgenPattern::ALL {
        for p in [1u64, 2, 4, 7, 16, 33] {
            match pattern.schedule(p, 4096) {
                Ok(s) => round_trip(&s, &format!("{pattern}, P = {p}")),
                Err(_) => assert!(
                    pattern == SchedgenPattern::AllreduceRecdoub && !p.is_power_of_two(),
                    "{pattern}, P = {p}"
                ),
            }
        }
    }
}

/// Schedgen's own output (the fixtures) and the pattern's schedule: the same operations and
/// dependencies, in the same order.
#[test]
fn schedgen_files_are_the_patterns() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loggopsim/goal");
    let cases: &[(SchedgenPattern, &[(u64, u64)])] = &[
        (
            SchedgenPattern::BinomialTreeBcast,
            &[
                (4, 8),
                (7, 8),
                (8, 8),
                (16, 8),
                (33, 8),
                (4, 4096),
                (7, 4096),
                (33, 4096),
            ],
        ),
        (
            SchedgenPattern::Dissemination,
            &[(7, 1), (8, 1), (16, 1), (33, 1)],
        ),
        (SchedgenPattern::AllreduceRecdoub, &[(8, 64), (16, 64)]),
        (SchedgenPattern::AllreduceRing, &[(4, 1024), (7, 1024)]),
    ];
    for (pattern, sizes) in cases {
        for &(p, d) in *sizes {
            let path = dir.join(format!("{pattern}_p{p}_d{d}.goal"));
            let text = std::fs::read_to_string(&path).expect("fixture");
            let schedgen = parse_goal(&text, UNIT).expect("Schedgen's file");
            let ours = pattern.schedule(p, d).expect("pattern");
            assert_same(&schedgen, &ours, &format!("{}", path.display()));
        }
    }
}

#[test]
fn schedgen_pattern_errors() {
    use commcost::collectives::CollectiveError;
    assert!(matches!(
        SchedgenPattern::AllreduceRing.schedule(0, 8),
        Err(SimError::Collective(CollectiveError::NoProcesses))
    ));
    assert!(matches!(
        SchedgenPattern::AllreduceRecdoub.schedule(12, 8),
        Err(SimError::Collective(CollectiveError::NotApplicable { .. }))
    ));
    // 4 P (P - 1) operations: beyond the builders' limit long before memory is touched
    assert!(matches!(
        SchedgenPattern::AllreduceRing.schedule(1 << 24, 8),
        Err(SimError::TooLarge { .. })
    ));
    assert!(matches!(
        SchedgenPattern::AllreduceRing.schedule_within(1024, 1 << 20, 1 << 20),
        Err(SimError::MemoryBudget { .. })
    ));
    assert!("binomialtreebcast".parse::<SchedgenPattern>().is_ok());
    assert!("ALLREDUCE_RING".parse::<SchedgenPattern>().is_ok());
    assert!("ring".parse::<SchedgenPattern>().is_err());
}
