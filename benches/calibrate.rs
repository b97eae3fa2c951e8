//! Calibration: PRTT assessment, protocol detection (running sums vs refitting every window),
//! least squares.
//!
//! `cargo bench -p commcost-benches --bench calibrate`; figures and targets in docs/PERFORMANCE.md.

use std::hint::black_box;
use std::time::Duration;

use commcost::calibrate::{
    AssessmentConfig, DetectionConfig, PrttSample, assess_loggp, detect_changes,
    detect_changes_naive, least_squares,
};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

/// A deterministic ±1 % noise source.
fn noise(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    1.0 + 0.02 * ((*state >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
}

/// A two-protocol cumulative-gap series (switch half way), ±1 % noise.
fn series(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut state = 7;
    let sizes: Vec<f64> = (0..n).map(|k| 1.0 + 64.0 * k as f64).collect();
    let values = sizes
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            let v = if k < n / 2 {
                5e-6 + 7e-10 * s
            } else {
                2e-5 + 1e-9 * s
            };
            v * noise(&mut state)
        })
        .collect();
    (sizes, values)
}

fn detection(c: &mut Criterion) {
    let config = DetectionConfig::default();
    let mut group = c.benchmark_group("detect");
    for n in [2_000usize, 10_000, 100_000] {
        let (sizes, values) = series(n);
        group.bench_with_input(BenchmarkId::new("running_sums", n), &n, |b, _| {
            b.iter(|| detect_changes(black_box(&sizes), black_box(&values), &config))
        });
    }
    for n in [2_000usize, 10_000] {
        let (sizes, values) = series(n);
        group.bench_with_input(BenchmarkId::new("refit_every_window", n), &n, |b, _| {
            b.iter(|| detect_changes_naive(black_box(&sizes), black_box(&values), &config))
        });
    }
    group.finish();
}

fn assessment(c: &mut Criterion) {
    // 10^4 sizes of the Open MPI / openib model (two protocols), ±1 % noise
    let mut state = 11;
    let mut samples = Vec::new();
    for k in 0..10_000u64 {
        let s = 1 + 64 * k;
        let (g, big_g) = if s < 12289 {
            (5.14e-6, 0.73e-9)
        } else {
            (21.39e-6, 1.03e-9)
        };
        let single = 2.0 * (5.96e-6 + 2.0 * 4.72e-6 + (s - 1) as f64 * big_g);
        let g_all = g + (s - 1) as f64 * big_g;
        let mut push = |n: u32, d: f64, t: f64| {
            samples.push(PrttSample {
                n,
                delay: d,
                size: s,
                time: t * noise(&mut state),
            })
        };
        push(1, 0.0, single);
        push(16, 0.0, single + 15.0 * g_all.max(4.72e-6));
        push(16, single, single + 15.0 * (4.72e-6 + single).max(g_all));
    }
    c.bench_function("assess_loggp_10000_sizes", |b| {
        b.iter(|| assess_loggp(black_box(&samples), &AssessmentConfig::default()))
    });
}

fn fitting(c: &mut Criterion) {
    let rows = 100_000usize;
    let mut state = 3;
    let design: Vec<f64> = (0..rows * 6).map(|_| noise(&mut state)).collect();
    let y: Vec<f64> = design.chunks_exact(6).map(|r| r.iter().sum()).collect();
    c.bench_function("least_squares_100000x6", |b| {
        b.iter(|| least_squares(black_box(&design), 6, black_box(&y)))
    });
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sample_size(10)
}

criterion_group! {
    name = benches;
    config = config();
    targets = detection, assessment, fitting
}
criterion_main!(benches);
