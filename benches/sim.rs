//! Simulator speed: events per second for a binomial broadcast and a recursive-doubling
//! allreduce at P = 2^10, 2^16 and 2^20 (schedules built outside the timed loop).
//!
//! ```text
//! flock /tmp/measure.lock cargo bench --bench sim
//! ```

use std::time::Duration;

use commcost::Message;
use commcost::collectives::{Allreduce, Broadcast, Problem};
use commcost::presets;
use commcost::sim::{Schedule, SimOptions, ToSchedule, simulate};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let model = presets::open_mpi_openib();
    let mut group = c.benchmark_group("sim");
    for log_p in [10u32, 16, 20] {
        // no operator cost: 2 h operations per rank in the allreduce
        let problem = Problem::new(1 << log_p, Message::contiguous(8));
        let schedules: [(&str, Schedule); 2] = [
            (
                "binomial_bcast",
                Broadcast::Binomial.schedule(&problem).unwrap(),
            ),
            (
                "recursive_doubling_allreduce",
                Allreduce::RecursiveDoubling.schedule(&problem).unwrap(),
            ),
        ];
        if log_p >= 16 {
            group.sample_size(10);
            group.measurement_time(Duration::from_secs(if log_p >= 20 { 20 } else { 5 }));
            group.warm_up_time(Duration::from_secs(1));
        }
        for (name, schedule) in &schedules {
            let events = simulate(schedule, &model, &SimOptions::default())
                .unwrap()
                .events;
            group.throughput(Throughput::Elements(events));
            group.bench_function(format!("{name}/P=2^{log_p}"), |b| {
                b.iter(|| simulate(schedule, &model, &SimOptions::default()).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
