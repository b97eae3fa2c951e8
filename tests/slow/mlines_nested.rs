//! The 3-D (nested) memory-lines count against independent oracles: enumeration of every
//! touched line on small layouts, the per-plane vector counts (with the lines shared by
//! consecutive planes found by direct comparison) on medium ones, and hand counts on huge ones.

use std::collections::HashSet;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use commcost::mlines::{LinesError, NestedLayout, floor_sum, nested_lines, vector_lines};
use proptest::prelude::*;

/// Oracle: the set of line indices of every byte of every block.
fn enumerated(n: &NestedLayout, line: u64) -> u128 {
    let mut seen = HashSet::new();
    for j in 0..n.planes {
        for i in 0..n.rows {
            let start = n.offset + j * n.plane_stride + i * n.row_stride;
            for byte in start..start + n.block {
                seen.insert(byte / line);
            }
        }
    }
    seen.len() as u128
}

/// Second oracle: `Σ_j vector_lines(plane j)` minus the planes whose last line is the next
/// plane's first line (found by comparing the two line indices in `u128`).
fn per_plane(n: &NestedLayout, line: u64) -> u128 {
    let l = u128::from(line);
    let extent = u128::from(n.rows - 1) * u128::from(n.row_stride) + u128::from(n.block);
    let mut total = 0;
    for j in 0..n.planes {
        let start = u128::from(n.offset) + u128::from(j) * u128::from(n.plane_stride);
        let o = (start % l) as u64;
        total += vector_lines(n.rows, n.block, n.row_stride, o, line).unwrap();
        if j + 1 < n.planes {
            let last_line = (start + extent - 1) / l;
            let next_first = (start + u128::from(n.plane_stride)) / l;
            if last_line == next_first {
                total -= 1;
            }
        }
    }
    total
}

fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> (T, Duration) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let t0 = Instant::now();
        let r = f();
        let _ = tx.send((r, t0.elapsed()));
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("call did not finish in 20 s (hang)")
}

/// Small layouts whose planes are in case B (row gap of at least `L - 1`), the path of the
/// period / complement decomposition; any plane gap (including planes sharing a line).
fn case_b_layout() -> impl Strategy<Value = (NestedLayout, u64)> {
    (
        1u64..=40,
        1u64..14,
        2u64..7,
        1u64..30,
        0u64..3,
        0u64..70,
        0u64..80,
    )
        .prop_flat_map(
            |(line, planes, rows, k, extra_lines, row_extra, plane_gap)| {
                let row_stride = k + line - 1 + extra_lines * line + row_extra;
                let extent = (rows - 1) * row_stride + k;
                (0u64..3 * line).prop_map(move |offset| {
                    (
                        NestedLayout {
                            planes,
                            plane_stride: extent + plane_gap,
                            rows,
                            row_stride,
                            block: k,
                            offset,
                        },
                        line,
                    )
                })
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn case_b_planes_equal_enumeration((layout, line) in case_b_layout()) {
        prop_assert_eq!(nested_lines(&layout, line).unwrap(), enumerated(&layout, line), "{:?} L={}", layout, line);
    }

    #[test]
    fn any_small_layout_equals_enumeration(
        line in 1u64..=48,
        planes in 0u64..10,
        rows in 0u64..8,
        k in 0u64..30,
        row_gap in 0u64..100,
        plane_gap in 0u64..120,
        offset in 0u64..100,
    ) {
        let row_stride = k + row_gap;
        let extent = if rows == 0 { 0 } else { (rows - 1) * row_stride + k };
        let layout = NestedLayout { planes, plane_stride: extent + plane_gap, rows, row_stride, block: k, offset };
        prop_assume!(planes <= 1 || layout.plane_stride > 0);
        prop_assert_eq!(nested_lines(&layout, line).unwrap(), enumerated(&layout, line), "{:?} L={}", layout, line);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Medium layouts: up to 3000 planes, lines up to 2^20 bytes (periods longer than the plane
    /// count, partial periods and complements on both sides), against the per-plane sum.
    #[test]
    fn medium_layouts_equal_the_per_plane_sum(
        log_line in 0u32..=20,
        line_extra in 0u64..1000,
        planes in 2u64..3000,
        rows in 2u64..200,
        k in 1u64..5000,
        row_extra in 0u64..5_000_000,
        plane_gap in 0u64..5_000_000,
        offset in any::<u64>(),
    ) {
        let line = (1u64 << log_line) + if log_line > 4 { line_extra % (1 << (log_line - 4)) } else { 0 };
        let row_stride = k + line - 1 + row_extra;
        let extent = (rows - 1) * row_stride + k;
        let layout = NestedLayout { planes, plane_stride: extent + plane_gap, rows, row_stride, block: k, offset };
        prop_assert_eq!(nested_lines(&layout, line).unwrap(), per_plane(&layout, line), "{:?} L={}", layout, line);
    }
}

#[test]
fn whole_periods_on_both_sides_equal_enumeration() {
    // L = 12, W mod L = 8 (g_a = 4, q_a = 3), P mod L = 9 (g_b = 3, q_b = 4): 7 rows = 2 row
    // periods + 1, 9 planes = 2 plane periods + 1; and every leftover / complement mix
    let mut checked = 0;
    for rows in 2..8u64 {
        for planes in 1..10u64 {
            for k in 1..=12u64 {
                for offset in 0..12u64 {
                    let row_stride = 12 * 2 + 8;
                    let extent = (rows - 1) * row_stride + k;
                    let plane_stride = (extent / 12 + 2) * 12 + 9;
                    let n = NestedLayout {
                        planes,
                        plane_stride,
                        rows,
                        row_stride,
                        block: k,
                        offset,
                    };
                    assert_eq!(nested_lines(&n, 12), Ok(enumerated(&n, 12)), "{n:?}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 5000);
}

#[test]
fn u64_max_planes_with_2_pow_40_byte_lines_hand_count() {
    // L = 2^40, W = 2^41 (every row of a plane at the same offset, a line between rows: no
    // line shared by two rows), k = 2 (r = 1), 2^20 rows, P = 2^62 + 1 (plane j at offset
    // j mod 2^40; P - E > L: nothing shared between planes). A row's block crosses a line iff
    // its offset is 2^40 - 1, i.e. j ≡ 2^40 - 1 (mod 2^40): j = m 2^40 + 2^40 - 1 for
    // m < 2^24 - 1 (m = 2^24 - 1 gives j = 2^64 - 1, not a plane). Lines:
    // 2^20 (2^64 - 1) + 2^20 (2^24 - 1).
    let n = NestedLayout {
        planes: u64::MAX,
        plane_stride: (1 << 62) + 1,
        rows: 1 << 20,
        row_stride: 1 << 41,
        block: 2,
        offset: 0,
    };
    let (r, took) = within(move || nested_lines(&n, 1 << 40));
    let rows = 1u128 << 20;
    assert_eq!(r, Ok(rows * u128::from(u64::MAX) + rows * ((1 << 24) - 1)));
    assert!(took < Duration::from_secs(1), "{took:?}");
}

#[test]
fn u64_max_planes_odd_strides_finish_fast_and_stay_in_bounds() {
    // odd residues on both sides, 2^40-byte lines, u64::MAX planes: every count lies between
    // "one line per block" and "two lines per block" (k = 9 bytes < L), and no two planes share
    // a line (gap >= L)
    for (rows, row_stride, plane_stride, offset) in [
        (5u64, (1u64 << 40) + 3, (7u64 << 41) + 5, 17u64),
        (1000, (1 << 41) + 12_345, 3 << 51, 1 << 39),
        (3, (1 << 40) + (1 << 39) + 1, u64::MAX, u64::MAX),
    ] {
        let n = NestedLayout {
            planes: u64::MAX,
            plane_stride,
            rows,
            row_stride,
            block: 9,
            offset,
        };
        let (r, took) = within(move || nested_lines(&n, 1 << 40));
        let blocks = u128::from(rows) * u128::from(u64::MAX);
        let lines = r.unwrap();
        assert!(blocks <= lines && lines <= 2 * blocks, "{n:?}: {lines}");
        assert!(took < Duration::from_secs(2), "{n:?}: {took:?}");
    }
}

#[test]
fn leftover_rectangle_long_on_all_three_sides_is_refused_not_run() {
    // L = 2^32, W and P odd: row and plane offsets have period 2^32; 2^22 + 1 rows and
    // 2^31 - 5 planes leave both sides of the rectangle beyond the step limit, and blocks of
    // 2^31 bytes (r = 2^31 - 1) leave the window of large offsets (and its complement) too
    let n = NestedLayout {
        planes: (1 << 31) - 5,
        plane_stride: (1 << 62) + 1,
        rows: (1 << 22) + 1,
        row_stride: (1 << 33) + 3,
        block: 1 << 31,
        offset: 0,
    };
    let (r, took) = within(move || nested_lines(&n, 1 << 32));
    assert!(matches!(r, Err(LinesError::TooManySteps { .. })), "{r:?}");
    assert!(took < Duration::from_secs(2));
}

/// Every residue pair `(W mod L, P mod L)` for `L` in 8, 9, 12: rows and planes across the
/// periods, every block size up to `L` (so short windows of large offsets, and their
/// complements), planes sharing a line or not, against enumeration.
#[test]
fn every_stride_residue_pair_equals_enumeration() {
    let mut checked = 0;
    for line in [8u64, 9, 12] {
        for a in 0..line {
            for b in 0..line {
                for rows in [2u64, 5, line - 1] {
                    for planes in [2u64, 5, line + 1] {
                        for k in 1..=line {
                            for (offset, slack) in [(0u64, 0u64), (line / 2 + 1, 1)] {
                                let row_stride = (k + line - 1).div_ceil(line) * line + a;
                                let extent = (rows - 1) * row_stride + k;
                                let plane_stride = (extent.div_ceil(line) + slack) * line + b;
                                let n = NestedLayout {
                                    planes,
                                    plane_stride,
                                    rows,
                                    row_stride,
                                    block: k,
                                    offset,
                                };
                                assert_eq!(
                                    nested_lines(&n, line),
                                    Ok(enumerated(&n, line)),
                                    "{n:?} L={line}"
                                );
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 30_000);
}

/// Rectangles long on both sides (refused before) whose window of large offsets is short
/// (`r = 6`) or whose complement is (`r = L - 6`): against the row-by-row sum of two
/// floor sums per row (`Σ_i FS(D, L, b, y_i + r) - FS(D, L, b, y_i)`, `y_i = (s + i a) mod L`),
/// the other formulation of the count (along the rows, not along the window's residues).
#[test]
fn long_rectangles_with_a_short_window_equal_the_row_by_row_sum() {
    let line = 1u64 << 32;
    let (rows, planes) = ((1u64 << 20) + 3, (1u64 << 31) - 5);
    let (row_stride, plane_stride, offset) =
        ((1u64 << 33) + 3, (1u64 << 62) + 3_000_000_019, 12_345);
    let (a, b) = (row_stride % line, plane_stride % line);
    for block in [7u64, line - 5] {
        let r = (block - 1) % line;
        let n = NestedLayout {
            planes,
            plane_stride,
            rows,
            row_stride,
            block,
            offset,
        };
        let (got, took) = within(move || nested_lines(&n, line));
        let mut large = 0u128;
        let mut y = offset % line;
        for _ in 0..rows {
            large +=
                floor_sum(planes, line, b, y + r).unwrap() - floor_sum(planes, line, b, y).unwrap();
            y = (y + a) % line;
        }
        // one line per block plus one per large offset; planes P - E >= L apart share nothing
        let blocks = u128::from(rows) * u128::from(planes);
        assert_eq!(got, Ok(blocks + large), "block {block}");
        assert!(took < Duration::from_secs(1), "{took:?}");
    }
}

#[test]
fn lines_of_2_pow_44_bytes_are_never_refused() {
    // about the most rows a case-B plane can hold with 2^44-byte lines (row stride >= L, plane
    // extent below 2^64: at most 2^20), odd residues on both sides (periods 2^44), 2^63 + 2^43
    // planes (half a plane period left over): the leftover rectangle's short side, the rows, is
    // just below the step limit
    let n = NestedLayout {
        planes: (1 << 63) + (1 << 43),
        plane_stride: u64::MAX,
        rows: (1 << 20) - 200,
        row_stride: (1 << 44) + 2_654_435_769,
        block: 1 << 10,
        offset: 12_345,
    };
    let (r, _) = within(move || nested_lines(&n, 1 << 44));
    let blocks = ((1u128 << 20) - 200) * ((1u128 << 63) + (1 << 43));
    let lines = r.unwrap();
    assert!(blocks <= lines && lines <= 2 * blocks, "{lines}");
}
