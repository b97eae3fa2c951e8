//! The exact memory-lines calculator against a brute-force oracle that enumerates every touched
//! byte, plus the worked examples and bound conditions of Mlines paper §3.2.1.

use std::collections::HashSet;

use commcost::Message;
use commcost::mlines::{
    NestedLayout, columns, lines_touched, nested_lines, paper_column_bounds, paper_row_bounds,
    per_row_line_sum, rows, tight_column_bounds, vector_lines, vector_lines_by_enumeration,
};
use proptest::prelude::*;

/// Independent oracle: the set of `byte / L` over every byte of every block.
fn brute_force(blocks: impl Iterator<Item = (u64, u64)>, line: u64) -> u128 {
    let mut seen = HashSet::new();
    for (start, len) in blocks {
        for byte in start..start + len {
            seen.insert(byte / line);
        }
    }
    seen.len() as u128
}

fn brute_vector(count: u64, block: u64, stride: u64, offset: u64, line: u64) -> u128 {
    brute_force((0..count).map(|i| (offset + i * stride, block)), line)
}

fn brute_nested(n: &NestedLayout, line: u64) -> u128 {
    let blocks = (0..n.planes).flat_map(|j| {
        (0..n.rows).map(move |i| (n.offset + j * n.plane_stride + i * n.row_stride, n.block))
    });
    brute_force(blocks, line)
}

#[test]
fn worked_examples_of_spec_5_1() {
    // H = 100, W = 36, L = 16, k = 5, s0 = 5: 125 (offsets 5, 9, 13, 1; only 13 crosses)
    assert_eq!(columns(100, 36, 5, 0, 5, 16), Ok(125));
    assert_eq!(brute_vector(100, 5, 36, 5, 16), 125);
    // same array with k = 20: 225
    assert_eq!(columns(100, 36, 5, 0, 20, 16), Ok(225));
    assert_eq!(brute_vector(100, 20, 36, 5, 16), 225);
    // W = 6, k = 2 (case A): 38
    assert_eq!(columns(100, 6, 5, 0, 2, 16), Ok(38));
    assert_eq!(brute_vector(100, 2, 6, 5, 16), 38);
}

#[test]
fn case_boundary_w_minus_k_equals_l_minus_1() {
    // W - k = L - 1: both case formulas apply and must agree with the oracle
    for line in [1u64, 2, 3, 8, 16, 64] {
        let ks = [
            1,
            2,
            line.saturating_sub(1).max(1),
            line,
            line + 1,
            2 * line,
            2 * line + 1,
        ];
        for k in ks {
            let w = k + line - 1;
            for s in (0..line).step_by((line as usize / 8).max(1)) {
                let exact = vector_lines(37, k, w, s, line).unwrap();
                assert_eq!(
                    exact,
                    brute_vector(37, k, w, s, line),
                    "L {line} k {k} s {s}"
                );
                assert_eq!(exact, per_row_line_sum(37, k, w, s, line).unwrap());
            }
        }
    }
}

#[test]
fn paper_per_row_sum_overcounts_when_rows_share_lines() {
    // L = 16, W = 20, k = 10, s = 10, H = 100 (W >= L but W < k + L - 1)
    assert_eq!(per_row_line_sum(100, 10, 20, 10, 16), Ok(150));
    assert_eq!(vector_lines(100, 10, 20, 10, 16), Ok(125));
    assert_eq!(brute_vector(100, 10, 20, 10, 16), 125);
}

#[test]
fn rows_of_aligned_arrays_stay_within_the_paper_bounds() {
    for line in [8u64, 16, 64] {
        for width in 1..2 * line {
            for k in 1..4 {
                let (lower, upper, estimate, worst) = paper_row_bounds(k, width, line).unwrap();
                // start offsets repeat with period L / gcd(W, L) <= L rows
                let counts: Vec<u128> = (0..line)
                    .map(|r0| rows(4 * line, width, 0, r0, k, line).unwrap())
                    .collect();
                for (r0, c) in counts.iter().enumerate() {
                    assert!(
                        (lower..=upper).contains(c),
                        "L {line} W {width} k {k} r0 {r0}: {c}"
                    );
                    let oracle = brute_force(std::iter::once((r0 as u64 * width, k * width)), line);
                    assert_eq!(*c, oracle);
                }
                assert_eq!(counts.iter().max().copied(), Some(worst));
                assert!((estimate - (lower as f64 + upper as f64) / 2.0).abs() < 1e-12);
            }
        }
    }
}

#[test]
fn lines_of_messages() {
    let column = Message::vector(2000, 4, 8000).unwrap();
    assert_eq!(lines_touched(&column, 64), Ok(2000));
    let shifted = Message::vector(3, 8, 16).unwrap().with_offset(60);
    // bytes 60..68, 76..84, 92..100 with 64-byte lines: lines 0 and 1
    assert_eq!(lines_touched(&shifted, 64), Ok(2));
    assert_eq!(lines_touched(&Message::contiguous(0), 64), Ok(0));
    assert_eq!(lines_touched(&Message::contiguous(1), 64), Ok(1));
}

/// Shapes around the interesting regimes: W < L, k > L, unaligned, near the case boundary.
fn vector_shape() -> impl Strategy<Value = (u64, u64, u64, u64, u64)> {
    (1u64..=130, 0u64..200, 0u64..=70, 0u64..300, 0u64..40)
        .prop_flat_map(|(line, k, gap_base, s, count)| {
            // bias the gap around L - 1 so both cases and the boundary are hit often
            let gaps = prop_oneof![
                Just(line.saturating_sub(1)),
                Just(line),
                Just(line.saturating_sub(2)),
                0u64..=gap_base + 1,
                0u64..=3 * line,
            ];
            (Just(line), Just(k), gaps, Just(s), Just(count))
        })
        .prop_map(|(line, k, gap, s, count)| (count, k, k + gap, s, line))
}

/// Case-B shapes (`W - k >= L - 1`: no line shared by two rows), any alignment.
fn case_b_shape() -> impl Strategy<Value = (u64, u64, u64, u64, u64)> {
    (1u64..=130, 1u64..200, 0u64..100, 0u64..300, 0u64..40)
        .prop_map(|(line, k, extra, s, count)| (count, k, k + line - 1 + extra, s, line))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn exact_equals_brute_force((count, k, w, s, line) in vector_shape()) {
        let exact = vector_lines(count, k, w, s, line).unwrap();
        prop_assert_eq!(exact, brute_vector(count, k, w, s % line, line));
        prop_assert_eq!(exact, vector_lines_by_enumeration(count, k, w, s, line).unwrap());
        // the offset only matters mod L
        prop_assert_eq!(exact, vector_lines(count, k, w, s % line, line).unwrap());
    }

    /// The tight bounds hold in case B for any alignment.
    #[test]
    fn tight_bounds_bracket_case_b((count, k, w, s, line) in case_b_shape()) {
        let exact = vector_lines(count, k, w, s, line).unwrap();
        let (lower, upper) = tight_column_bounds(count, w, k, line).unwrap();
        prop_assert!(lower <= exact && exact <= upper, "{} <= {} <= {}", lower, exact, upper);
    }

    /// The paper's column bounds hold under their condition W >= k + L - 1.
    #[test]
    fn paper_bounds_bracket_under_their_condition((count, k, w, s, line) in case_b_shape()) {
        let exact = vector_lines(count, k, w, s, line).unwrap();
        let b = paper_column_bounds(count, w, k, line).unwrap();
        prop_assert!(b.lower <= exact && exact <= b.upper, "{} <= {} <= {}", b.lower, exact, b.upper);
    }

    #[test]
    fn nested_equals_brute_force(
        line in 1u64..=70,
        planes in 0u64..12,
        rows in 0u64..10,
        k in 0u64..40,
        row_gap in 0u64..90,
        plane_gap in 0u64..150,
        offset in 0u64..200,
    ) {
        let row_stride = k + row_gap;
        let extent = if rows == 0 { 0 } else { (rows - 1) * row_stride + k };
        let layout = NestedLayout {
            planes,
            plane_stride: extent + plane_gap,
            rows,
            row_stride,
            block: k,
            offset,
        };
        prop_assume!(planes <= 1 || layout.plane_stride > 0);
        let exact = nested_lines(&layout, line).unwrap();
        prop_assert_eq!(exact, brute_nested(&layout, line), "{:?}", layout);
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Large counts: the closed form against the line-walking reference (too big to enumerate
    /// bytes, small enough to walk lines).
    #[test]
    fn exact_equals_line_walk_for_large_counts(
        count in 10_000u64..50_000,
        k in 1u64..200,
        gap in 0u64..300,
        s in 0u64..64,
        line in prop::sample::select(vec![32u64, 64, 128, 4096]),
    ) {
        prop_assert_eq!(
            vector_lines(count, k, k + gap, s, line).unwrap(),
            vector_lines_by_enumeration(count, k, k + gap, s, line).unwrap()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Huge case-B inputs (beyond any enumeration): the period form used for power-of-two lines
    /// agrees with the floor-sum form (`per_row_line_sum` is the exact count in case B).
    #[test]
    fn period_form_equals_floor_sums_on_huge_inputs(
        count in 0u64..u64::MAX / 4,
        k in 1u64..1 << 20,
        extra in 0u64..1 << 40,
        s in any::<u64>(),
        log_line in 0u32..13,
    ) {
        let line = 1u64 << log_line;
        let w = k + line - 1 + extra; // case B
        prop_assert_eq!(
            vector_lines(count, k, w, s, line).unwrap(),
            per_row_line_sum(count, k, w, s, line).unwrap()
        );
    }

    /// Partial periods short enough to be stepped (up to 128 rows, or their complements, in
    /// 32-bit lanes) on lines up to 2^40 bytes, across the 2^31 limit of the stepped path,
    /// against the floor sums.
    #[test]
    fn stepped_partial_periods_equal_floor_sums(
        count in 0u64..600,
        k in 1u64..1 << 20,
        extra in 0u64..1 << 40,
        s in any::<u64>(),
        log_line in 0u32..=40,
    ) {
        let line = 1u64 << log_line;
        let w = k + line - 1 + extra; // case B
        prop_assert_eq!(
            vector_lines(count, k, w, s, line).unwrap(),
            per_row_line_sum(count, k, w, s, line).unwrap()
        );
    }

    /// Any line size (the period form with a binary gcd up to 2^31-byte lines, the floor sums
    /// beyond), huge case-B inputs, against the floor-sum form.
    #[test]
    fn general_period_form_equals_floor_sums(
        count in 0u64..u64::MAX / 4,
        k in 1u64..1 << 20,
        extra in 0u64..1 << 40,
        s in any::<u64>(),
        line in prop_oneof![1u64..200, 1u64..1 << 16, (1u64 << 16)..1 << 32, 1u64..1 << 50],
    ) {
        let w = k + line - 1 + extra; // case B
        prop_assert_eq!(
            vector_lines(count, k, w, s, line).unwrap(),
            per_row_line_sum(count, k, w, s, line).unwrap()
        );
    }
}
