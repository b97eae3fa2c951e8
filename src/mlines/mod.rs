//! Exact count of the unique memory lines a strided block touches.
//!
//! A *memory line* is a cache-line-sized, line-aligned block of `L` bytes. The Mlines model
//! (Mlines paper §3) prices a message by the number of distinct lines its bytes touch:
//! sending a column of a row-major matrix touches up to `L / element` times more lines than
//! sending a row of the same bytes.
//!
//! # Layouts
//!
//! * [`vector_lines`] — `count` blocks of `block` bytes, `stride` bytes apart, the first byte
//!   `offset` bytes into a line: an MPI vector type, a set of columns of a row-major array.
//! * [`rows`] / [`columns`] — the same for `k` rows or `k` columns of an `H × W` array.
//! * [`lines_touched`] — for a [`Message`].
//! * [`nested_lines`] — planes of vector blocks (a 3-D subarray), with [`NestedLayout`].
//!
//! # Method (Mlines paper §3.2.1)
//!
//! For blocks in increasing address order with first byte `a_b` and last byte `e_b`, the
//! distinct lines are the per-block line counts minus the lines consecutive blocks share:
//!
//! ```text
//! Mlines = Σ_b (⌊e_b / L⌋ - ⌊a_b / L⌋ + 1) - #{b : ⌊e_b / L⌋ = ⌊a_{b+1} / L⌋}
//! ```
//!
//! For a vector (`a_i = s + iW`, `e_i = a_i + k - 1`, `H` blocks):
//!
//! * **case A**, `W - k <= L - 1`: no gap between blocks can hold a whole line, so every line of
//!   the span is touched: `Mlines = ⌊(s + (H-1)W + k - 1) / L⌋ - ⌊s / L⌋ + 1`;
//! * **case B**, `W - k >= L - 1`: no line is shared by two blocks, so
//!   `Mlines = H + FS(H, L, W, s + k - 1) - FS(H, L, W, s)` with the floor sum
//!   `FS(n, m, a, b) = Σ_{i<n} ⌊(a i + b) / m⌋` ([`floor_sum`], Euclid-like, `O(log L)`).
//!
//! The two cases agree at `W - k = L - 1`. Before summing, `W` and `s + k - 1` are reduced
//! modulo `L` (the quotients contribute `H ⌊·⌋` terms that cancel or are added in closed form), so
//! every intermediate value fits in `u128` for any `u64` input.
//!
//! For lines up to `2^31` bytes case B uses the period form of Mlines paper §3.2.1 instead (the offsets
//! repeat every `q = L / gcd(W, L)` rows): whole periods in closed form, and of the partial
//! period — or its complement, whichever is shorter — the rows stepped (up to 128, four 32-bit
//! lanes, power-of-two lines) or counted by the two floor sums in lockstep by nearest-integer
//! continued fractions (at most 10 steps for `L <= 4096`). Cost depends on `L` only, not on the
//! row count: worst cases about 20-55 ns for lines up to 256 bytes and 55-90 ns up to 4 KiB
//! (docs/PERFORMANCE.md).
//!
//! # References
//!
//! Mlines paper §3.2.1 (Theorems 1-2); T. H. Cormen, C. E. Leiserson, R. L. Rivest, C. Stein,
//! *Introduction to Algorithms* (the additive group mod `L` and `gcd`); the floor-sum algorithm
//! as in the AtCoder Library (`floor_sum`).

use crate::Message;
use period::{case_b_period_form, per_block_sum};

mod bounds;
mod error;
mod nested;
mod period;

pub use bounds::{
    PaperColumnBounds, paper_column_bounds, paper_row_bounds, per_row_line_sum, tight_column_bounds,
};
pub use error::LinesError;
pub use nested::{MAX_NESTED_STEPS, NestedLayout, nested_lines};

/// `FS(n, m, a, b) = Σ_{i=0}^{n-1} ⌊(a i + b) / m⌋` in `O(log m)` steps; `None` for `m = 0`
/// and for a sum that does not fit in a `u128` (never a wrapped or saturated count).
///
/// # Formula
///
/// Euclid-like reduction: with `a >= m` or `b >= m` the quotients are taken out in closed form
/// (`n(n-1)/2 ⌊a/m⌋ + n ⌊b/m⌋`); otherwise the sum counts lattice points under a line, which is
/// the same floor sum with the roles of `a` and `m` exchanged
/// (`y_max = a n + b`: `FS(⌊y_max/m⌋, a, m, y_max mod m)`).
///
/// Exact for all `u64` inputs whose result fits in a `u128` (always when `a, b < m`: the sum is
/// then below `n²/2 < 2^127`). After the first reduction every loop variable stays below `2^64`;
/// only `a n + b` and the total need 128 bits.
///
/// # Examples
///
/// ```
/// use commcost::mlines::floor_sum;
/// // ⌊5/4⌋ + ⌊8/4⌋ + ⌊11/4⌋ + ⌊14/4⌋ = 1 + 2 + 2 + 3
/// assert_eq!(floor_sum(4, 4, 3, 5), Some(8));
/// assert_eq!(floor_sum(4, 0, 3, 5), None);
/// // Σ_{i < 2^33} (2^64 - 1) i ≈ 2^129 does not fit in a u128: "does not fit", not a number
/// assert_eq!(floor_sum(1 << 33, 1, u64::MAX, 0), None);
/// ```
pub fn floor_sum(n: u64, m: u64, a: u64, b: u64) -> Option<u128> {
    if m == 0 {
        return None;
    }
    let (mut n, mut m, mut a, mut b) = (n, m, a, b);
    let mut total: u128 = 0;
    // the same steps as `floor_sum_nonzero`, with every addition and product checked: the
    // quotient terms of the first reduction can exceed u128 (e.g. n = 2^33, m = 1, a = 2^64-1)
    loop {
        if n == 0 {
            return Some(total);
        }
        if a >= m {
            let n128 = u128::from(n);
            let pairs = n128 * (n128 - 1) / 2;
            total = total.checked_add(pairs.checked_mul(u128::from(a / m))?)?;
            a %= m;
        }
        if b >= m {
            total = total.checked_add(u128::from(n) * u128::from(b / m))?;
            b %= m;
        }
        let y_max = u128::from(a) * u128::from(n) + u128::from(b);
        if y_max < u128::from(m) {
            return Some(total);
        }
        // a < m: y_max / m <= n, fits in u64
        (n, b) = (
            (y_max / u128::from(m)) as u64,
            (y_max % u128::from(m)) as u64,
        );
        std::mem::swap(&mut m, &mut a);
    }
}

/// [`floor_sum`] for `m >= 1`.
fn floor_sum_nonzero(n: u64, m: u64, a: u64, b: u64) -> u128 {
    debug_assert!(m >= 1);
    let (mut n, mut m, mut a, mut b) = (n, m, a, b);
    let mut total: u128 = 0;
    loop {
        if n == 0 {
            return total;
        }
        if a >= m {
            let n128 = u128::from(n);
            // n (n - 1) / 2 <= 2^127: no overflow
            total += n128 * (n128 - 1) / 2 * u128::from(a / m);
            a %= m;
        }
        if b >= m {
            total += u128::from(n) * u128::from(b / m);
            b %= m;
        }
        // a < m, so y_max / m < n + 1: the new n fits in u64
        let y_max = u128::from(a) * u128::from(n) + u128::from(b);
        if y_max < u128::from(m) {
            return total;
        }
        (n, b) = match u64::try_from(y_max) {
            Ok(y) => (y / m, y % m),
            Err(_) => (
                (y_max / u128::from(m)) as u64,
                (y_max % u128::from(m)) as u64,
            ),
        };
        std::mem::swap(&mut m, &mut a);
    }
}

/// The shared checks of the vector routines: a line of at least one byte, blocks that do not
/// overlap.
fn check_vector(count: u64, block: u64, stride: u64, line: u64) -> Result<(), LinesError> {
    if line == 0 {
        return Err(LinesError::ZeroLine);
    }
    if count > 1 && block > stride {
        return Err(LinesError::Overlap {
            what: "vector",
            block: u128::from(block),
            stride,
        });
    }
    Ok(())
}

/// Greatest common divisor (Euclid).
fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `⌊x / L⌋` for the line index of byte `x`.
#[inline]
fn line_of(x: u128, line: u128) -> u128 {
    x / line
}

/// Distinct lines touched by `count` blocks of `block` bytes whose starts are `stride` bytes
/// apart, the first byte `offset` bytes into a line (offsets `>= line` are reduced mod `line`).
///
/// `O(log line)` time, independent of `count`; exact for every `u64` input (the result is a
/// `u128` because `count · ⌈block / line⌉` can exceed `u64`).
///
/// # Formula
///
/// Case A / case B of the [module docs](self) (Mlines paper §3.2.1), with `H = count`, `k = block`,
/// `W = stride`, `s = offset mod L`.
///
/// # Errors
///
/// [`LinesError::ZeroLine`] for `line = 0`; [`LinesError::Overlap`] for `count > 1` with
/// `block > stride` (including `stride = 0`).
///
/// # Examples
///
/// ```
/// use commcost::mlines::vector_lines;
/// // Mlines paper §3.2.1 worked example: 100 rows of a 36-byte-wide array, 16-byte lines, a 5-byte
/// // column block starting 5 bytes into a line: offsets cycle 5, 9, 13, 1 and only the
/// // 13 crosses a line boundary, so 100 + 25 = 125 lines (a bytes-only estimate: 500/16 ≈ 31)
/// assert_eq!(vector_lines(100, 5, 36, 5, 16)?, 125);
/// assert_eq!(vector_lines(100, 20, 36, 5, 16)?, 225);
/// # Ok::<(), commcost::mlines::LinesError>(())
/// ```
pub fn vector_lines(
    count: u64,
    block: u64,
    stride: u64,
    offset: u64,
    line: u64,
) -> Result<u128, LinesError> {
    check_vector(count, block, stride, line)?;
    if count == 0 || block == 0 {
        return Ok(0);
    }
    let (h, k, w, l) = (
        u128::from(count),
        u128::from(block),
        u128::from(stride),
        u128::from(line),
    );
    let s = u128::from(offset % line);
    if count == 1 || w - k < l {
        // case A: the whole span [s, s + (H-1) W + k - 1]
        let last = s + (h - 1) * w + k - 1;
        return Ok(line_of(last, l) - line_of(s, l) + 1);
    }
    if line.is_power_of_two() || line <= 1 << 31 {
        return Ok(case_b_period_form(
            count,
            block,
            stride,
            offset % line,
            line,
        ));
    }
    Ok(per_block_sum(count, block, stride, offset % line, line))
}

/// Distinct lines touched by a [`Message`] with lines of `line` bytes, its first byte
/// [`Message::offset`] bytes into a line.
///
/// # Errors
///
/// [`LinesError::ZeroLine`] for `line = 0`.
///
/// # Examples
///
/// ```
/// use commcost::{Message, mlines::lines_touched};
/// // one column of 4-byte integers of a 2000 x 2000 matrix: one line per element
/// let column = Message::vector(2000, 4, 8000)?;
/// assert_eq!(lines_touched(&column, 64)?, 2000);
/// // one row: 8000 bytes = 125 lines
/// assert_eq!(lines_touched(&Message::contiguous(8000), 64)?, 125);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn lines_touched(msg: &Message, line: u64) -> Result<u64, LinesError> {
    let lines = vector_lines(
        msg.count(),
        msg.block_len(),
        msg.stride(),
        msg.offset(),
        line,
    )?;
    // a valid Message's extent fits in u64, and lines <= ceil((L - 1 + extent) / L) <= extent
    // for L >= 2 (and = bytes for L = 1), so this cannot saturate
    Ok(u64::try_from(lines).unwrap_or(u64::MAX))
}

/// Lines touched by `k` whole rows starting at row `first_row` of an array of `height` rows of
/// `width` bytes whose first byte is `array_offset` bytes into a line.
///
/// The rows are one contiguous block of `k W` bytes at offset `o = (s0 + r0 W) mod L`:
/// `Mlines = ⌈(o + kW) / L⌉` (Mlines paper §3.2.1, "Rows").
///
/// # Errors
///
/// [`LinesError::ZeroLine`], [`LinesError::OutOfArray`] when `first_row + k > height`.
///
/// # Examples
///
/// ```
/// use commcost::mlines::rows;
/// // 3 rows of a 2000 x 8000-byte array, aligned: 24000 / 64 = 375 lines
/// assert_eq!(rows(2000, 8000, 0, 0, 3, 64)?, 375);
/// # Ok::<(), commcost::mlines::LinesError>(())
/// ```
pub fn rows(
    height: u64,
    width: u64,
    array_offset: u64,
    first_row: u64,
    k: u64,
    line: u64,
) -> Result<u128, LinesError> {
    check_within("rows", first_row, k, height)?;
    if line == 0 {
        return Err(LinesError::ZeroLine);
    }
    let l = u128::from(line);
    let start = u128::from(array_offset) + u128::from(first_row) * u128::from(width);
    let bytes = u128::from(k) * u128::from(width);
    if bytes == 0 {
        return Ok(0);
    }
    let o = start % l;
    Ok(line_of(o + bytes - 1, l) + 1)
}

/// Lines touched by `k` adjacent columns starting at byte column `first_column` of every one of
/// the `height` rows of a row-major array of `width`-byte rows whose first byte is
/// `array_offset` bytes into a line: a vector of `height` blocks of `k` bytes, stride `width`.
///
/// # Errors
///
/// [`LinesError::ZeroLine`], [`LinesError::OutOfArray`] when `first_column + k > width`.
///
/// # Examples
///
/// ```
/// use commcost::mlines::columns;
/// // Mlines paper §3.2.1: W = 6, k = 2, 16-byte lines (case A), 100 rows, array 5 bytes into a line
/// assert_eq!(columns(100, 6, 5, 0, 2, 16)?, 38);
/// # Ok::<(), commcost::mlines::LinesError>(())
/// ```
pub fn columns(
    height: u64,
    width: u64,
    array_offset: u64,
    first_column: u64,
    k: u64,
    line: u64,
) -> Result<u128, LinesError> {
    check_within("columns", first_column, k, width)?;
    if line == 0 {
        return Err(LinesError::ZeroLine);
    }
    // offset reduced mod L first so the sum cannot overflow
    let start = (array_offset % line) as u128 + u128::from(first_column);
    let start_in_line = (start % u128::from(line)) as u64;
    vector_lines(height, k, width, start_in_line, line)
}

fn check_within(what: &'static str, first: u64, count: u64, limit: u64) -> Result<(), LinesError> {
    if u128::from(first) + u128::from(count) > u128::from(limit) {
        Err(LinesError::OutOfArray {
            what,
            first,
            count,
            limit,
        })
    } else {
        Ok(())
    }
}

/// Most blocks [`vector_lines_by_enumeration`] walks (`2^28`): more is
/// [`LinesError::TooManySteps`], not minutes of looping.
pub const MAX_ENUMERATED_BLOCKS: u64 = 1 << 28;

/// Reference count by walking every block's lines in address order: `O(count)`.
///
/// The slow, obviously-correct formulation the exact routines are benchmarked against; use
/// [`vector_lines`] in practice.
///
/// # Errors
///
/// As [`vector_lines`]; [`LinesError::TooManySteps`] for more than [`MAX_ENUMERATED_BLOCKS`]
/// blocks.
pub fn vector_lines_by_enumeration(
    count: u64,
    block: u64,
    stride: u64,
    offset: u64,
    line: u64,
) -> Result<u128, LinesError> {
    check_vector(count, block, stride, line)?;
    if block == 0 {
        return Ok(0);
    }
    if count > MAX_ENUMERATED_BLOCKS {
        return Err(LinesError::TooManySteps {
            steps: u128::from(count),
            limit: MAX_ENUMERATED_BLOCKS,
        });
    }
    let (l, s) = (u128::from(line), u128::from(offset % line));
    let mut lines: u128 = 0;
    let mut last_counted: Option<u128> = None;
    for i in 0..u128::from(count) {
        let first_byte = s + i * u128::from(stride);
        let last_byte = first_byte + u128::from(block) - 1;
        let first_line = line_of(first_byte, l);
        let start = match last_counted {
            Some(prev) if prev >= first_line => prev + 1,
            _ => first_line,
        };
        let end = line_of(last_byte, l);
        if end >= start {
            lines += end - start + 1;
            last_counted = Some(end);
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::period::{binary_gcd, floor_sum_difference_u32, floor_sum_difference_u64};
    use super::*;

    /// Direct summation, for checking the floor sum.
    fn floor_sum_naive(n: u64, m: u64, a: u64, b: u64) -> u128 {
        (0..u128::from(n))
            .map(|i| (u128::from(a) * i + u128::from(b)) / u128::from(m))
            .sum()
    }

    #[test]
    fn binary_gcd_is_euclid() {
        let values = (0..200u64).chain([u64::MAX, 1 << 63, 7_540_113_804_746_346_429, 1 << 31]);
        for a in values.clone() {
            for b in values.clone() {
                assert_eq!(
                    u128::from(binary_gcd(a, b)),
                    gcd(a.into(), b.into()),
                    "{a} {b}"
                );
            }
        }
    }

    #[test]
    fn floor_sum_differences_match_direct_summation() {
        // every (m, a) up to 40, several n and start pairs: both widths against direct sums
        for m in 1..=40u64 {
            for a in 0..m {
                for n in [0, 1, 2, 3, m / 2, m - 1, m] {
                    for (b_lo, b_hi) in [
                        (0, 0),
                        (0, 1),
                        (0, m - 1),
                        (m - 1, 2 * m - 1),
                        (3, 3 + m / 2),
                    ] {
                        if b_lo > b_hi || b_hi >= 2 * m {
                            continue;
                        }
                        let expected =
                            floor_sum_naive(n, m, a, b_hi) - floor_sum_naive(n, m, a, b_lo);
                        let narrow = |x: u64| x as u32;
                        let small = floor_sum_difference_u32(
                            narrow(n),
                            narrow(m),
                            narrow(a),
                            narrow(b_lo),
                            narrow(b_hi),
                        );
                        let wide = floor_sum_difference_u64(n, m, a, b_lo, b_hi);
                        assert_eq!(u128::from(small), expected, "{n} {m} {a} {b_lo} {b_hi}");
                        assert_eq!(u128::from(wide), expected, "{n} {m} {a} {b_lo} {b_hi}");
                    }
                }
            }
        }
        // the extremes of each width: m = 2^16 (u32) and 2^31 (u64) with n just below m
        for (n, m, a) in [
            (65535u64, 65536u64, 40447u64),
            (32768, 65536, 25343),
            (65535, 65536, 65535),
        ] {
            let expected = floor_sum_nonzero(n, m, a, m + 5) - floor_sum_nonzero(n, m, a, 7);
            let got = floor_sum_difference_u32(n as u32, m as u32, a as u32, 7, (m + 5) as u32);
            assert_eq!(u128::from(got), expected);
        }
        for (n, m, a) in [
            ((1u64 << 31) - 1, 1u64 << 31, 1_327_217_885u64),
            (1 << 30, 1 << 31, (1 << 31) - 1),
        ] {
            let expected = floor_sum_nonzero(n, m, a, m + 5) - floor_sum_nonzero(n, m, a, 7);
            assert_eq!(
                u128::from(floor_sum_difference_u64(n, m, a, 7, m + 5)),
                expected
            );
        }
    }

    #[test]
    fn floor_sum_matches_direct_summation() {
        for n in 0..20 {
            for m in 1..12 {
                for a in 0..30 {
                    for b in 0..30 {
                        assert_eq!(
                            floor_sum(n, m, a, b),
                            Some(floor_sum_naive(n, m, a, b)),
                            "FS({n}, {m}, {a}, {b})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn floor_sum_at_the_u64_edge() {
        // n = m = 2^64 - 1, a = m - 1, b = m - 1: Σ ⌊((m-1) i + m - 1)/m⌋ = Σ_{i<n} ⌊(m-1)(i+1)/m⌋
        // = Σ_{j=1}^{n} (j - ⌈j/m⌉) = n(n+1)/2 - n  (every j <= m has ⌈j/m⌉ = 1)
        let m = u64::MAX;
        let n = u128::from(m);
        let expected = n * (n + 1) / 2 - n;
        assert_eq!(floor_sum(m, m, m - 1, m - 1), Some(expected));
    }

    #[test]
    fn degenerate_vectors() {
        assert_eq!(vector_lines(0, 8, 8, 0, 64), Ok(0));
        assert_eq!(vector_lines(10, 0, 8, 0, 64), Ok(0));
        assert_eq!(vector_lines(1, 64, 0, 0, 64), Ok(1));
        assert_eq!(vector_lines(1, 64, 0, 1, 64), Ok(2));
        assert_eq!(vector_lines(1, 1, 0, 1, 1), Ok(1));
        assert_eq!(vector_lines(3, 1, 1, 0, 0), Err(LinesError::ZeroLine));
        assert!(matches!(
            vector_lines(3, 9, 8, 0, 64),
            Err(LinesError::Overlap { .. })
        ));
        assert!(matches!(
            columns(10, 8, 0, 5, 4, 64),
            Err(LinesError::OutOfArray { .. })
        ));
        assert!(matches!(
            rows(10, 8, 0, 8, 3, 64),
            Err(LinesError::OutOfArray { .. })
        ));
    }

    #[test]
    fn largest_inputs_do_not_overflow() {
        let max = u64::MAX;
        // 2^64 - 1 one-byte blocks every 2^64 - 1 bytes: one line each
        assert_eq!(vector_lines(max, 1, max, max - 1, 64), Ok(u128::from(max)));
        // max-size block with 1-byte lines: every byte
        assert_eq!(vector_lines(1, max, max, 0, 1), Ok(u128::from(max)));
        // blocks of exactly one line, back to back (offset max mod max = 0): one line each
        assert_eq!(vector_lines(max, max, max, max, max), Ok(u128::from(max)));
    }
}
