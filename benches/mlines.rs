//! Exact memory-line counts versus walking every line, for column blocks of H rows.
//!
//! `cargo bench --bench mlines`; figures and targets in docs/PERFORMANCE.md.

use std::hint::black_box;
use std::time::Duration;

use commcost::mlines::{NestedLayout, nested_lines, vector_lines, vector_lines_by_enumeration};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

/// A 20-byte column block of H rows of a 8004-byte-wide array, 5 bytes into a 64-byte line
/// (case B, unaligned: rows cross line boundaries irregularly).
const BLOCK: u64 = 20;
const WIDTH: u64 = 8004;
const OFFSET: u64 = 5;
const LINE: u64 = 64;

fn column_block(c: &mut Criterion) {
    let mut group = c.benchmark_group("column_block");
    for rows in [1_000u64, 1_000_000] {
        group.bench_with_input(BenchmarkId::new("exact", rows), &rows, |b, &h| {
            b.iter(|| vector_lines(black_box(h), BLOCK, WIDTH, OFFSET, LINE))
        });
        group.bench_with_input(BenchmarkId::new("enumeration", rows), &rows, |b, &h| {
            b.iter(|| vector_lines_by_enumeration(black_box(h), BLOCK, WIDTH, OFFSET, LINE))
        });
    }
    // the worst case for the exact routine: huge inputs, long Euclid chains
    group.bench_function("exact/u64_max_rows", |b| {
        b.iter(|| {
            vector_lines(
                black_box(u64::MAX / 9000),
                black_box(4093),
                black_box(8191),
                black_box(4091),
                black_box(4096),
            )
        })
    });
    // the longest Euclid chain for 64-byte lines: stride ≡ 39 (mod 64), 7 steps
    // 10^6 and 2^54 rows are whole periods (multiples of 64); + 63 leaves the longest partial
    // period, the worst case of the power-of-two path
    for rows in [1_000_000u64, 1 << 54, 1_000_063, (1 << 54) + 63] {
        group.bench_with_input(
            BenchmarkId::new("exact/cache_lines_worst_stride", rows),
            &rows,
            |b, &h| b.iter(|| vector_lines(black_box(h), 1, 64 * 9 + 39, 7, 64)),
        );
    }
    // 128-byte lines, odd stride, 127 leftover rows: the longest partial period stepped
    group.bench_function("exact/128_byte_lines_worst", |b| {
        b.iter(|| vector_lines(black_box(1_000_191), 1, 128 * 9 + 79, 7, 128))
    });
    // 256-byte lines (A64FX) and 1 KiB "lines", odd stride, the longest partial period
    group.bench_function("exact/256_byte_lines_worst", |b| {
        b.iter(|| vector_lines(black_box(1_000_447), 1, 256 * 9 + 157, 7, 256))
    });
    group.bench_function("exact/1024_byte_lines_worst", |b| {
        b.iter(|| vector_lines(black_box(1_000_447 + 768), 1, 1024 * 9 + 633, 7, 1024))
    });
    // the longest Euclid chain for 4096-byte lines (pages): stride ≡ 2297 (mod 4096), 14 steps
    group.bench_function("exact/page_lines_worst_stride", |b| {
        b.iter(|| {
            vector_lines(
                black_box(u64::MAX / 8192),
                black_box(1),
                black_box(4096 + 2297),
                black_box(7),
                black_box(4096),
            )
        })
    });
    // the longest Euclid chains overall: consecutive Fibonacci numbers (F(91), F(92)) as stride and line
    group.bench_function("exact/fibonacci_worst_case", |b| {
        b.iter(|| {
            vector_lines(
                black_box(u64::MAX),
                black_box(1),
                black_box(4_660_046_610_375_530_309 + 7_540_113_804_746_346_429),
                black_box(12_345),
                black_box(7_540_113_804_746_346_429),
            )
        })
    });
    // a 3-D box whose planes are case B: one floor sum per distinct plane offset (<= 64)
    let planes = NestedLayout {
        planes: 1000,
        plane_stride: 8004 * 1000 + 12,
        rows: 1000,
        row_stride: 8004,
        block: 20,
        offset: 5,
    };
    group.bench_function("nested/1000_planes", |b| {
        b.iter(|| nested_lines(black_box(&planes), LINE))
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20)
}

criterion_group! {
    name = benches;
    config = config();
    targets = column_block
}
criterion_main!(benches);
