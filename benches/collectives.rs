//! Collective cost evaluation, ranking and decision tables on the Open MPI / openib preset.
//!
//! `cargo bench -p commcost-benches --bench collectives`; figures and targets in docs/PERFORMANCE.md.

use std::hint::black_box;
use std::time::Duration;

use commcost::collectives::Collective;
use commcost::collectives::ompi::{self};
use commcost::collectives::{
    Algorithm, Allgather, Allreduce, Alltoall, Barrier, Bcast, DecisionTable, Gather, Operator,
    Problem, Reduce, Scan, Scatter, rank,
};
use commcost::models::loggpo::Mechanism;
use commcost::models::loggpo::Progress;
use commcost::table::Table1D;
use commcost::{CommModel, LogGP, LogGpo, LogNP, LogP, Message, PLogP, export, presets};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

fn evaluation(c: &mut Criterion) {
    let model = presets::open_mpi_openib();
    let model: &dyn CommModel = &model;
    let mut group = c.benchmark_group("evaluate");
    for p in [4u64, 1 << 10, 1 << 20, 1 << 32] {
        let problem = Problem::new(p, Message::contiguous(64 * 1024));
        group.bench_with_input(
            BenchmarkId::new("broadcast_binomial", p),
            &problem,
            |b, pr| b.iter(|| Bcast::Binomial.cost(black_box(model), black_box(pr))),
        );
        group.bench_with_input(
            BenchmarkId::new("broadcast_scatter_allgather", p),
            &problem,
            |b, pr| b.iter(|| Bcast::ScatterAllgather.cost(black_box(model), black_box(pr))),
        );
        group.bench_with_input(
            BenchmarkId::new("allreduce_rabenseifner", p),
            &problem,
            |b, pr| b.iter(|| Allreduce::Rabenseifner.cost(black_box(model), black_box(pr))),
        );
        group.bench_with_input(BenchmarkId::new("alltoall_bruck", p), &problem, |b, pr| {
            b.iter(|| Alltoall::Bruck.cost(black_box(model), black_box(pr)))
        });
    }
    group.finish();
}

/// Every algorithm of every collective at P = 2^32 (64 KiB messages), on the openib preset and
/// on LogP.
fn evaluation_every_algorithm(c: &mut Criterion) {
    let openib = presets::open_mpi_openib();
    // LogP counts whole 8-byte words: its lines are in words (AffineCost::unit = 8)
    let logp = LogP::new(5e-6, 1e-6, 2e-6, 8).unwrap();
    for (label, model) in [("openib", &openib as &dyn CommModel), ("logp", &logp)] {
        every_algorithm(c, label, model);
    }
}

fn every_algorithm(c: &mut Criterion, label: &str, model: &dyn CommModel) {
    fn each<A: Algorithm>(
        group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        collective: &str,
        model: &dyn CommModel,
        problem: &Problem,
    ) {
        for algorithm in A::candidates(model, problem) {
            let id = format!("{collective}/{}", algorithm.name().replace(' ', "_"));
            group.bench_function(id, |b| {
                b.iter(|| algorithm.cost(black_box(model), black_box(problem)))
            });
        }
    }
    let problem = Problem::new(1 << 32, Message::contiguous(64 * 1024))
        .with_operator(Operator::new(1e-7, 1e-10).unwrap());
    let mut group = c.benchmark_group(format!("evaluate_p2^32_{label}"));
    each::<Bcast>(&mut group, "broadcast", model, &problem);
    each::<Scan>(&mut group, "scan", model, &problem);
    each::<Reduce>(&mut group, "reduce", model, &problem);
    each::<Allreduce>(&mut group, "allreduce", model, &problem);
    each::<Allgather>(&mut group, "allgather", model, &problem);
    each::<Gather>(&mut group, "gather", model, &problem);
    each::<Scatter>(&mut group, "scatter", model, &problem);
    each::<Barrier>(&mut group, "barrier", model, &problem);
    each::<Alltoall>(&mut group, "alltoall", model, &problem);
    group.finish();
}

/// Every algorithm of every collective at P = 2^32 (64 KiB messages) on the models whose lag
/// the collectives had to compare round by round before they described it (pLogP, LogGPO,
/// log_n P, log_3 P).
fn evaluation_software_models(c: &mut Criterion) {
    // L = 5 µs; g(m) = 2 µs + 1 ns/B up to 64 KiB, 0.5 ns/B beyond; o_s(m) below g(m)
    let plogp = PLogP::new(
        5e-6,
        Table1D::new(vec![0.0, 65536.0], vec![1e-6, 33.768e-6]).unwrap(),
        Table1D::constant(1e-6).unwrap(),
        Table1D::new(
            vec![0.0, 65536.0, 1048576.0],
            vec![2e-6, 67.536e-6, 559.056e-6],
        )
        .unwrap(),
        2,
    )
    .unwrap();
    let loggpo = LogGpo::new(
        5e-6,
        1e-9,
        16384,
        Progress::Independent,
        Mechanism::T,
        Mechanism::Rta,
        2e-6,
        Table1D::linear(1e-6, 0.1e-9).unwrap(),
        Table1D::linear(0.0, 0.5e-9).unwrap(),
    )
    .unwrap();
    let lognp = LogNP::from(LogGP::new(5e-6, 1e-6, 2e-6, 1e-9).unwrap());
    let log3p = presets::titan_log3p();
    for (label, model) in [
        ("plogp", &plogp as &dyn CommModel),
        ("loggpo", &loggpo),
        ("lognp", &lognp),
        ("log3p", &log3p),
    ] {
        every_algorithm(c, label, model);
    }
}

fn ranking(c: &mut Criterion) {
    let model = presets::open_mpi_openib();
    let model: &dyn CommModel = &model;
    let mut group = c.benchmark_group("rank_broadcast");
    for bytes in [8u64, 64 * 1024, 4 << 20] {
        let problem = Problem::new(1024, Message::contiguous(bytes));
        group.bench_with_input(BenchmarkId::from_parameter(bytes), &problem, |b, pr| {
            b.iter(|| rank::<Bcast>(black_box(model), black_box(pr)))
        });
    }
    group.finish();
}

fn decision_table(c: &mut Criterion) {
    let model = presets::open_mpi_openib();
    // 64 geometric sizes from 8 B to 4 MiB (ratio 2^(19/63) ≈ 1.23: all distinct)
    let sizes: Vec<u64> = (0..64)
        .map(|k| (8.0 * 2f64.powf(19.0 * f64::from(k) / 63.0)).round() as u64)
        .collect();
    let processes: Vec<u64> = (1..=16).map(|k| 1u64 << k).collect();
    let template = Problem::new(1, Message::contiguous(1));
    c.bench_function("decision_table_allreduce_64x16", |b| {
        b.iter(|| {
            DecisionTable::<Allreduce>::build(black_box(&model), &processes, &sizes, &template)
        })
    });
    c.bench_function("decision_table_lookup", |b| {
        let table =
            DecisionTable::<Allreduce>::build(&model, &processes, &sizes, &template).unwrap();
        b.iter(|| table.lookup(black_box(1000), black_box(100_000)))
    });
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20)
}

/// Every Open MPI algorithm (8 KiB segments, fan-out and radix 4 where it has them) at
/// P = 2^32 with 64 KiB messages, on the openib preset and on LogP (8-byte words).
fn ompi_evaluation_every_algorithm(c: &mut Criterion) {
    let openib = presets::open_mpi_openib();
    let logp = LogP::new(5e-6, 1e-6, 2e-6, 8).unwrap();
    let problem = Problem::new(1 << 32, Message::contiguous(64 * 1024))
        .with_operator(Operator::new(1e-7, 1e-10).unwrap());
    fn each<A: ompi::OmpiAlgorithm>(
        group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        model: &dyn CommModel,
        problem: &Problem,
        algorithms: &[A],
    ) {
        for algorithm in algorithms {
            let id = format!("{}/{}", A::COLLECTIVE, algorithm.name());
            group.bench_function(id, |b| {
                b.iter(|| algorithm.cost(black_box(model), black_box(problem)))
            });
        }
    }
    let segment = 8192;
    for (label, model) in [("openib", &openib as &dyn CommModel), ("logp", &logp)] {
        let mut group = c.benchmark_group(format!("ompi_evaluate_p2^32_{label}"));
        each(&mut group, model, &problem, ompi::Allgather::ALL);
        each(&mut group, model, &problem, ompi::Barrier::ALL);
        {
            use ompi::Allreduce::*;
            let all = [BasicLinear, Nonoverlapping, RecursiveDoubling, Ring];
            each(&mut group, model, &problem, &all);
            each(
                &mut group,
                model,
                &problem,
                &[SegmentedRing { segment }, Rabenseifner],
            );
        }
        {
            use ompi::Alltoall::*;
            let all = [
                Linear,
                Pairwise,
                ModifiedBruck,
                LinearSync { max_requests: 4 },
                TwoProc,
            ];
            each(&mut group, model, &problem, &all);
        }
        {
            use ompi::Bcast::*;
            let all = [
                BasicLinear,
                Chain { segment, fanout: 4 },
                Pipeline { segment },
                SplitBinaryTree { segment },
                BinaryTree { segment },
                Binomial { segment },
                Knomial { segment, radix: 4 },
                ScatterAllgather,
                ScatterAllgatherRing,
            ];
            each(&mut group, model, &problem, &all);
        }
        {
            use ompi::Gather::*;
            each(
                &mut group,
                model,
                &problem,
                &[BasicLinear, Binomial, LinearSync { segment }],
            );
        }
        {
            use ompi::Reduce::*;
            let all = [
                Linear,
                Chain { segment, fanout: 4 },
                Pipeline { segment },
                Binary { segment },
                Binomial { segment },
                InOrderBinary { segment },
                Rabenseifner,
            ];
            each(&mut group, model, &problem, &all);
        }
        {
            use ompi::ReduceScatter::*;
            let all = [NonOverlapping, RecursiveHalving, Ring, Butterfly];
            each(&mut group, model, &problem, &all);
        }
        {
            use ompi::Scatter::*;
            each(
                &mut group,
                model,
                &problem,
                &[BasicLinear, Binomial, LinearNb],
            );
        }
        group.finish();
    }
}

/// `rank` over all candidates of each Open MPI collective at P = 2^32, 64 KiB, openib.
fn ompi_ranking(c: &mut Criterion) {
    let model = presets::open_mpi_openib();
    let model: &dyn CommModel = &model;
    let problem = Problem::new(1 << 32, Message::contiguous(64 * 1024))
        .with_operator(Operator::new(1e-7, 1e-10).unwrap());
    let mut group = c.benchmark_group("ompi_rank_p2^32");
    macro_rules! each {
        ($($a:ident),*) => {$(
            group.bench_function(
                format!("{} ({} candidates)", stringify!($a), ompi::$a::candidates(model, &problem).len()),
                |b| b.iter(|| rank::<ompi::$a>(black_box(model), black_box(&problem))),
            );
        )*};
    }
    each!(
        Allgather,
        Allreduce,
        Alltoall,
        Barrier,
        Bcast,
        Gather,
        Reduce,
        ReduceScatter,
        Scatter
    );
    group.finish();
}

/// An Open MPI rules file for bcast, allreduce, reduce, allgather, alltoall and barrier on
/// 3 communicator sizes × 32 message sizes (1 B to 2 GiB), openib.
fn ompi_export(c: &mut Criterion) {
    let model = presets::open_mpi_openib();
    let collectives = [
        Collective::Bcast,
        Collective::Allreduce,
        Collective::Reduce,
        Collective::Allgather,
        Collective::Alltoall,
        Collective::Barrier,
    ];
    let processes = [4u64, 64, 1024];
    let sizes: Vec<u64> = (0..32).map(|k| 1u64 << k).collect();
    c.bench_function("ompi_export_rules_6_collectives_3x32", |b| {
        b.iter(|| {
            export::ompi_rules(
                black_box(&model),
                &collectives,
                &processes,
                &sizes,
                &Default::default(),
            )
            .map(|r| r.to_string())
        })
    });
}

criterion_group! {
    name = benches;
    config = config();
    targets = evaluation, evaluation_every_algorithm, ranking, decision_table,
        ompi_evaluation_every_algorithm, ompi_ranking, ompi_export,
        evaluation_software_models
}
criterion_main!(benches);
