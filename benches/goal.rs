//! GOAL reading and writing: `parse_goal` on the text of Schedgen's patterns (written by
//! `write_goal` from `SchedgenPattern`, the operations Schedgen writes), throughput in
//! operations; `write_goal_to` of the same schedules. The texts are made outside the timed
//! loop. End-to-end figures against LogGOPSim: `scripts/loggopsim_bench.sh`.
//!
//! ```text
//! cargo bench --bench goal
//! ```

use std::time::Duration;

use commcost::sim::{SchedgenPattern, parse_goal, write_goal, write_goal_to};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

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
        let text = write_goal(&schedule, 1e-9);
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

criterion_group!(benches, bench);
criterion_main!(benches);
