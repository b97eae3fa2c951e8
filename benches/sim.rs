//! Simulator speed: events per second for a binomial broadcast and a recursive-doubling
//! allreduce at P = 2^10, 2^16 and 2^20 (schedules built outside the timed loop). Group `sim`:
//! `sim::simulate`, a fresh simulator per call; group `reused`: one `sim::Simulator` whose
//! memory is kept between the calls; group `nodes`: the same schedules at P = 2^16 as 1024
//! nodes of 64 ranks (`Simulator::simulate_two_level`, shared memory inside a node, the network
//! between) beside the flat simulation of the same schedule, and the leaders' allreduce
//! (`cost_hierarchical`) on that platform.
//!
//! ```text
//! cargo bench -p commcost-benches --bench sim
//! ```

use std::time::Duration;

use commcost::Message;
use commcost::collectives::{Allreduce, Bcast, Collective, Problem};
use commcost::presets;
use commcost::sim::{
    Hierarchical, NodeMap, Schedule, SimLimits, SimOptions, Simulator, ToSchedule, TwoLevel,
    cost_hierarchical, simulate,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// The two schedules at `P = 2^log_p`, 8 bytes, no operator cost (2 h operations per rank in
/// the allreduce).
fn schedules(log_p: u32) -> [(&'static str, Schedule); 2] {
    let problem = Problem::new(1 << log_p, Message::contiguous(8));
    [
        (
            "binomial_bcast",
            Bcast::Binomial.schedule(&problem).unwrap(),
        ),
        (
            "recursive_doubling_allreduce",
            Allreduce::RecursiveDoubling.schedule(&problem).unwrap(),
        ),
    ]
}

fn bench(c: &mut Criterion) {
    let model = presets::open_mpi_openib();
    let options = SimOptions::default();
    for reused in [false, true] {
        let mut group = c.benchmark_group(if reused { "reused" } else { "sim" });
        let mut simulator = Simulator::new();
        for log_p in [10u32, 16, 20] {
            if log_p >= 16 {
                group.sample_size(10);
                group.measurement_time(Duration::from_secs(if log_p >= 20 { 20 } else { 5 }));
                group.warm_up_time(Duration::from_secs(1));
            }
            for (name, schedule) in &schedules(log_p) {
                let events = simulate(schedule, &model, &options).unwrap().events;
                group.throughput(Throughput::Elements(events));
                group.bench_function(format!("{name}/P=2^{log_p}"), |b| {
                    if reused {
                        b.iter(|| simulator.simulate(schedule, &model, &options).unwrap())
                    } else {
                        b.iter(|| simulate(schedule, &model, &options).unwrap())
                    }
                });
            }
        }
        group.finish();
    }
    // 1024 nodes of 64 ranks: the openib preset between nodes, Open MPI over shared memory
    // (LogGP of the vader fixture's order: L = 0.3 µs, o = 0.2 µs, g = 0.1 µs, G = 0.1 ns/B)
    // inside a node
    let shm = commcost::LogGP::new(0.3e-6, 0.2e-6, 0.1e-6, 0.1e-9).unwrap();
    let nodes = NodeMap::block(1024, 64).unwrap();
    let platform = TwoLevel {
        nodes: &nodes,
        inter: &model,
        inter_rendezvous_above: None,
    };
    let mut group = c.benchmark_group("nodes");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    group.warm_up_time(Duration::from_secs(1));
    let mut simulator = Simulator::new();
    for (name, schedule) in &schedules(16) {
        group.bench_function(format!("{name}/flat"), |b| {
            b.iter(|| simulator.simulate(schedule, &model, &options).unwrap())
        });
        group.bench_function(format!("{name}/1024x64"), |b| {
            b.iter(|| {
                simulator
                    .simulate_two_level(schedule, &shm, platform, &options)
                    .unwrap()
            })
        });
    }
    // the same platform priced through the node leaders (a node's reduce, the leaders'
    // allreduce, a node's broadcast), 8 bytes: building the composed schedule and simulating it
    let problem = Problem::new(1 << 16, Message::contiguous(8));
    group.bench_function("leaders_allreduce/1024x64", |b| {
        b.iter(|| {
            cost_hierarchical(
                &shm,
                platform,
                Collective::Allreduce,
                Hierarchical::Leaders,
                &problem,
                SimLimits {
                    max_processes: 1 << 16,
                    max_operations: 1 << 24,
                },
                &options,
            )
            .unwrap()
        })
    });
    let nodes_map = &nodes;
    group.bench_function("leaders_allreduce_closed_form/1024x64", |b| {
        b.iter(|| {
            Hierarchical::Leaders
                .closed_form(Collective::Allreduce, &shm, &model, nodes_map, &problem)
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
