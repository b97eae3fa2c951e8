//! Cost of one prediction through `&dyn CommModel`, swept over message sizes.
//!
//! `cargo bench -p commcost-benches --bench models`; figures and targets in docs/PERFORMANCE.md.

use std::hint::black_box;
use std::time::Duration;

use commcost::models::copy_transfer::Composition;
use commcost::models::copy_transfer::Stage;
use commcost::models::loggpo::Mechanism;
use commcost::models::loggpo::Progress;
use commcost::models::lognp::Hop;
use commcost::models::lognp::SizeCost;
use commcost::models::lognp::StrideCost;
use commcost::table::Table1D;
use commcost::table::Table2D;
use commcost::{
    CommModel, CopyTransfer, Log3P, LogGP, LogGpo, LogNP, LogP, MemoryLogP, Message, Pram,
    Protocols,
};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

const SIZES: [u64; 4] = [1, 1024, 65_536, 1 << 24];

fn models() -> Vec<(&'static str, Box<dyn CommModel>)> {
    let loggp = LogGP::new(5.96e-6, 4.72e-6, 5.14e-6, 0.73e-9).unwrap();
    let eight_ranges = Protocols::from_starts(
        (0..8u32)
            .map(|k| {
                let start = if k == 0 { 1 } else { 1u64 << (2 * k + 4) };
                let model =
                    LogGP::new(5e-6, 4e-6, f64::from(k + 1) * 1e-6, 1e-9 / f64::from(k + 1))
                        .unwrap();
                (start, model)
            })
            .collect(),
    )
    .unwrap();
    let loggpo = LogGpo::new(
        5.96e-6,
        1.03e-9,
        12288,
        Progress::Dependent,
        Mechanism::T,
        Mechanism::Rat,
        4.72e-6,
        Table1D::constant(4.72e-6).unwrap(),
        Table1D::linear(0.0, 0.73e-9).unwrap(),
    )
    .unwrap();
    vec![
        ("logp", Box::new(LogP::new(5e-6, 2e-6, 3e-6, 8).unwrap())),
        ("loggp", Box::new(loggp)),
        ("pram", Box::new(Pram::unit())),
        ("protocols_8_ranges", Box::new(eight_ranges)),
        ("loggpo_dependent", Box::new(loggpo)),
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

/// 32 sizes from 64 B to ~2 MiB (geometric), and 8 strides from 8 B to 1 KiB.
fn grid() -> (Vec<f64>, Vec<f64>) {
    let sizes = (0..32).map(|k| 64.0 * 1.4f64.powi(k)).collect();
    let strides = (0..8).map(|k| 8.0 * 2f64.powi(k)).collect();
    (sizes, strides)
}

fn o_table(scale: f64) -> Table1D {
    let (sizes, _) = grid();
    let values = sizes.iter().map(|s| scale * (1.0 + s / 1024.0)).collect();
    Table1D::new(sizes, values).unwrap()
}

fn l_table(scale: f64) -> Table2D {
    let (sizes, strides) = grid();
    let values = sizes
        .iter()
        .map(|s| {
            strides
                .iter()
                .map(|d| {
                    if *d <= 8.0 {
                        0.0
                    } else {
                        scale * s / 1024.0 * d.log2()
                    }
                })
                .collect()
        })
        .collect();
    Table2D::new(sizes, strides, values).unwrap()
}

fn table_models() -> Vec<(&'static str, Box<dyn CommModel>)> {
    let middleware =
        Hop::new(SizeCost::Table(o_table(1e-6))).with_strided(StrideCost::Table(l_table(1e-7)));
    let lognp = LogNP::new(
        vec![
            middleware.clone(),
            Hop::new(SizeCost::Table(o_table(3e-6))),
            middleware,
        ],
        8,
    )
    .unwrap();
    let log3p = Log3P::new(o_table(2e-6), l_table(2e-7), o_table(3e-6), 8).unwrap();
    let memory = MemoryLogP::new(o_table(1e-10), Some(l_table(1e-11)), 8, 8).unwrap();
    let (_, strides) = grid();
    let stage = |name: &'static str, bw: f64| {
        let strided = strides
            .iter()
            .map(|d| if *d <= 8.0 { bw } else { bw / d.log2() })
            .collect();
        Stage::new(name, bw, 1e-6)
            .unwrap()
            .with_strided_bandwidth(strides.clone(), strided)
            .unwrap()
    };
    let stages = vec![
        stage("pack", 4e9),
        stage("dma", 6e9),
        stage("wire", 1e9),
        stage("unpack", 4e9),
    ];
    let sequential = CopyTransfer::new(stages.clone(), Composition::Sequential, 8).unwrap();
    let pipelined = CopyTransfer::new(stages, Composition::Pipelined, 8).unwrap();
    vec![
        ("lognp_3_hops_32_points", Box::new(lognp)),
        ("log3p_32_points", Box::new(log3p)),
        ("memory_logp_32_points", Box::new(memory)),
        ("copy_transfer_4_stages_sequential", Box::new(sequential)),
        ("copy_transfer_4_stages_pipelined", Box::new(pipelined)),
    ]
}

/// Table-driven models on strided messages of 8-byte elements at a 200-byte stride.
fn p2p_strided(c: &mut Criterion) {
    let mut group = c.benchmark_group("p2p_strided");
    for (name, model) in table_models() {
        let model: &dyn CommModel = model.as_ref();
        for elements in [16u64, 1024, 65_536] {
            let msg = Message::vector(elements, 8, 200).unwrap();
            group.bench_with_input(BenchmarkId::new(name, msg.bytes()), &msg, |b, msg| {
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
    targets = p2p, p2p_strided, table
}
criterion_main!(benches);
