//! GOAL reading and writing: `parse_goal` on the text of Schedgen's patterns (written by
//! `write_goal` from `SchedgenPattern`, the operations Schedgen writes), throughput in
//! operations; `write_goal_to` of the same schedules. The texts are made outside the timed
//! loop. End-to-end figures against LogGOPSim: `scripts/loggopsim_bench.sh`.
//!
//! Group `files` (when `GOAL_FILES` lists files, separated by `:`): where `simulate --goal`'s
//! time goes on each file — `read_goal_file` (reading, parsing, validating) and the
//! simulation of the schedule read (a fresh `Simulator` per call, LogGP L = 3 µs, o = 1 µs,
//! g = 2 µs, G = 1 ns/B, critical path on, as the CLI runs it).
//!
//! ```text
//! cargo bench -p commcost-benches --bench goal
//! GOAL_FILES=ring_p10.goal:recdoub_p16.goal cargo bench -p commcost-benches --bench goal -- files
//! ```

use std::time::Duration;

use commcost::LogGP;
use commcost::sim::{
    DEFAULT_MAX_MEMORY, SchedgenPattern, SimOptions, Simulator, parse_goal, read_goal_file,
    write_goal, write_goal_to,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn files(c: &mut Criterion) {
    let Some(list) = std::env::var_os("GOAL_FILES") else {
        return;
    };
    let model = LogGP::new(3e-6, 1e-6, 2e-6, 1e-9).unwrap();
    let options = SimOptions {
        critical_path: true,
        ..SimOptions::default()
    };
    let mut group = c.benchmark_group("files");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for path in std::env::split_paths(&list) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let read = || read_goal_file(&path, 1e-9, DEFAULT_MAX_MEMORY << 3).unwrap();
        let schedule = read();
        group.throughput(Throughput::Elements(schedule.len() as u64));
        group.bench_function(format!("read/{name}"), |b| b.iter(read));
        group.bench_function(format!("simulate/{name}"), |b| {
            b.iter(|| {
                Simulator::new()
                    .simulate(&schedule, &model, &options)
                    .unwrap()
            })
        });
    }
    group.finish();
}

fn bench(c: &mut Criterion) {
    let cases = [
        (SchedgenPattern::BinomialTreeBcast, 1u64 << 16, 8u64),
        (SchedgenPattern::AllreduceRecdoub, 1 << 12, 8),
        (SchedgenPattern::AllreduceRing, 1 << 8, 1 << 20),
    ];
    let mut group = c.benchmark_group("goal");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for (pattern, procs, bytes) in cases {
        let schedule = pattern.schedule(procs, bytes).unwrap();
        let text = write_goal(&schedule, 1e-9).expect("a schedule of nanosecond calcs");
        group.throughput(Throughput::Elements(schedule.len() as u64));
        group.bench_function(format!("parse/{pattern}/P={procs}"), |b| {
            b.iter(|| parse_goal(&text, 1e-9).unwrap())
        });
        group.bench_function(format!("write/{pattern}/P={procs}"), |b| {
            let mut out = Vec::with_capacity(text.len());
            b.iter(|| {
                out.clear();
                write_goal_to(&schedule, 1e-9, &mut out).unwrap();
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench, files);
criterion_main!(benches);
