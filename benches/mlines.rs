//! Exact memory-line counts versus walking every line, for column blocks of H rows.
//!
//! `cargo bench -p commcost-benches --bench mlines`; figures and targets in docs/PERFORMANCE.md.

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
    // Power-of-two lines: the partial period (u < q rows, or its complement, whichever is
    // shorter) is the only part that is not O(1). Worst cases: half a period left over (q/2
    // rows, the most for either side), with the odd stride residue that makes the lockstep
    // nearest-integer Euclid chain of the floor sums longest (exhaustive search over odd
    // residues, several row counts and offsets: 5, 6, 7, 7, 8, 9, 10, 13 steps for
    // L = 64 ... 65536); 10^6 whole periods in front.
    for (line, residue) in [
        (64u64, 19u64),
        (128, 29),
        (256, 75),
        (512, 111),
        (1024, 429),
        (2048, 791),
        (4096, 1719),
        (65536, 25343),
    ] {
        let rows = 1_000_000 * line + line / 2;
        group.bench_with_input(
            BenchmarkId::new("exact/power_of_two_worst", line),
            &line,
            |b, &l| b.iter(|| vector_lines(black_box(rows), 2, 9 * l + residue, 0, black_box(l))),
        );
    }
    // Other line sizes up to 2^31 bytes: the same period form with a binary gcd and integer
    // divisions; worst residues of the lockstep chain found the same way (4, 6, 8, 10, 12
    // steps for L = 48, 100, 1000, 4000, 65000).
    for (line, residue) in [
        (48u64, 5u64),
        (100, 39),
        (1000, 179),
        (4000, 1117),
        (65000, 12319),
    ] {
        let rows = 1_000_000 * line + line / 2;
        group.bench_with_input(
            BenchmarkId::new("exact/any_line_worst", line),
            &line,
            |b, &l| b.iter(|| vector_lines(black_box(rows), 2, 9 * l + residue, 0, black_box(l))),
        );
    }
    // whole periods only (64-byte lines, 10^6 and 2^54 rows)
    for rows in [1_000_000u64 * 64, 1 << 54] {
        group.bench_with_input(
            BenchmarkId::new("exact/whole_periods", rows),
            &rows,
            |b, &h| b.iter(|| vector_lines(black_box(h), 1, 64 * 9 + 39, 7, 64)),
        );
    }
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
    // huge 3-D layouts, planes in case B: u64::MAX planes with 2^40-byte lines (whole periods
    // of both strides in closed form, the leftover rectangle summed along its 5 rows), and the
    // longest leftover rectangle below the step limit: 2^20 rows, each a floor-sum difference
    // over 2^31 - 5 planes with 2^32-byte lines, the plane stride residue ⌊2^32/φ⌋ (odd) making
    // every Euclid chain as long as it gets, 2^31-byte blocks (a window of 2^31 - 1 residues)
    let huge = NestedLayout {
        planes: u64::MAX,
        plane_stride: (7 << 41) + 5,
        rows: 5,
        row_stride: (1 << 40) + 3,
        block: 9,
        offset: 17,
    };
    group.bench_function("nested/u64_max_planes_2^40_lines", |b| {
        b.iter(|| nested_lines(black_box(&huge), black_box(1 << 40)))
    });
    let longest = NestedLayout {
        planes: (1 << 31) - 5,
        plane_stride: (1 << 62) + 2_654_435_769,
        rows: 1 << 20,
        row_stride: (1 << 33) + 3,
        block: 1 << 31,
        offset: 0,
    };
    group.bench_function("nested/leftover_2^20_lines_2^32_lines", |b| {
        b.iter(|| nested_lines(black_box(&longest), black_box(1 << 32)))
    });
    // a leftover rectangle long on both sides (2^22 + 1 rows, 2^31 - 5 planes) counted along
    // the residues of the window of large offsets instead: 100-byte blocks (99 residues), and
    // the most the step limit allows, 2^20 residues (blocks of 2^20 + 1 bytes)
    let short_window = NestedLayout {
        rows: (1 << 22) + 1,
        block: 100,
        ..longest
    };
    group.bench_function("nested/both_long_99_residues_2^32_lines", |b| {
        b.iter(|| nested_lines(black_box(&short_window), black_box(1 << 32)))
    });
    let widest_window = NestedLayout {
        block: (1 << 20) + 1,
        ..short_window
    };
    group.bench_function("nested/both_long_2^20_residues_2^32_lines", |b| {
        b.iter(|| nested_lines(black_box(&widest_window), black_box(1 << 32)))
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
