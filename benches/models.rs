//! Cost of one prediction through `&dyn CommModel`, swept over message sizes.
//!
//! `cargo bench --bench models`; figures and targets in docs/PERFORMANCE.md.

use std::hint::black_box;
use std::time::Duration;

use commcost::{CommModel, LogGP, LogP, Message, Pram, Protocols, Table1D};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

const SIZES: [u64; 4] = [1, 1024, 65_536, 1 << 24];

fn models() -> Vec<(&'static str, Box<dyn CommModel>)> {
    let loggp = LogGP::new(5.96e-6, 4.72e-6, 5.14e-6, 0.73e-9, 2).unwrap();
    let eight_ranges = Protocols::from_starts(
        (0..8u32)
            .map(|k| {
                let start = if k == 0 { 1 } else { 1u64 << (2 * k + 4) };
                let model = LogGP::new(
                    5e-6,
                    4e-6,
                    f64::from(k + 1) * 1e-6,
                    1e-9 / f64::from(k + 1),
                    2,
                )
                .unwrap();
                (start, model)
            })
            .collect(),
    )
    .unwrap();
    vec![
        (
            "logp",
            Box::new(LogP::new(5e-6, 2e-6, 3e-6, 64, 8).unwrap()),
        ),
        ("loggp", Box::new(loggp)),
        ("pram", Box::new(Pram::unit())),
        ("protocols_8_ranges", Box::new(eight_ranges)),
    ]
}

fn p2p(c: &mut Criterion) {
    let mut group = c.benchmark_group("p2p");
    for (name, model) in models() {
        let model: &dyn CommModel = model.as_ref();
        for bytes in SIZES {
            let msg = Message::contiguous(bytes);
            group.bench_with_input(BenchmarkId::new(name, bytes), &msg, |b, msg| {
                b.iter(|| black_box(model).p2p(black_box(msg)))
            });
        }
    }
    group.finish();
}

fn table(c: &mut Criterion) {
    let sizes: Vec<f64> = (0..64)
        .map(|k| f64::from(1u32 << (k / 4)) * f64::from(k + 1))
        .collect();
    let values: Vec<f64> = sizes.iter().map(|s| 1e-6 + 1e-9 * s).collect();
    let table = Table1D::new(sizes, values).unwrap();
    let mut group = c.benchmark_group("table1d_64_points");
    for size in [0.5, 700.0, 3.0e5, 1.0e9] {
        group.bench_with_input(BenchmarkId::from_parameter(size), &size, |b, &s| {
            b.iter(|| black_box(&table).eval(black_box(s)))
        });
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(30)
}

criterion_group! {
    name = benches;
    config = config();
    targets = p2p, table
}
criterion_main!(benches);
