//! Planes of vector blocks: the memory lines of a 3-D subarray.

use super::{LinesError, floor_sum_nonzero, gcd, vector_lines};

/// A 3-D subarray: `planes` planes whose starts are `plane_stride` bytes apart, each holding
/// `rows` blocks of `block` bytes whose starts are `row_stride` bytes apart; the first byte is
/// `offset` bytes into a line.
///
/// For a `D × H × W`-byte row-major array, the sub-box of `d` planes, `h` rows and `k` bytes per
/// row is `NestedLayout { planes: d, plane_stride: H * W, rows: h, row_stride: W, block: k, .. }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct NestedLayout {
    /// Number of planes.
    pub planes: u64,
    /// Bytes between the starts of consecutive planes.
    pub plane_stride: u64,
    /// Blocks per plane.
    pub rows: u64,
    /// Bytes between the starts of consecutive blocks in a plane.
    pub row_stride: u64,
    /// Bytes per block.
    pub block: u64,
    /// Offset of the first byte inside its line.
    pub offset: u64,
}

/// `⌊(j P + c) / L⌋` summed over `j < n`, with `P` reduced mod `L` (the `j ⌊P/L⌋` part is
/// returned separately as `⌊P/L⌋ n (n-1) / 2` by the caller where it does not cancel).
fn progression_floor_sum(n: u64, p_mod: u64, c: u128, l: u64) -> u128 {
    let l128 = u128::from(l);
    // c % l < l fits in u64
    u128::from(n) * (c / l128) + floor_sum_nonzero(n, l, p_mod, (c % l128) as u64)
}

/// Most floor-sum steps [`nested_lines`] spends on one layout (`2^20`, about 0.1 s): layouts
/// that would need more return [`LinesError::TooManySteps`] instead of running for minutes.
pub const MAX_NESTED_STEPS: u64 = 1 << 20;

/// `Σ_{j<D} M(s + jP)` for planes in case B, from one period `q` of the offsets
/// (`M(o)` depends on `o mod L` only): `⌊D/q⌋ Σ_{j<q} M + Σ_{j < D mod q} M`.
#[allow(clippy::too_many_arguments)]
fn planes_by_period(
    rows: u64,
    block: u64,
    row_stride: u64,
    s: u128,
    p_mod: u64,
    line: u64,
    period: u128,
    d: u128,
) -> Result<u128, LinesError> {
    let l = u128::from(line);
    let mut one_period = 0;
    let mut remainder = 0;
    let tail = d % period;
    for j in 0..period.min(d) {
        // < L, fits in u64
        let o = ((s + j * u128::from(p_mod)) % l) as u64;
        let m = vector_lines(rows, block, row_stride, o, line)?;
        one_period += m;
        if j < tail {
            remainder += m;
        }
    }
    Ok(if d < period {
        one_period
    } else {
        (d / period) * one_period + remainder
    })
}

/// Distinct lines touched by a [`NestedLayout`] with lines of `line` bytes.
///
/// # Formula
///
/// With `E = (H - 1) W + k` the extent of one plane, `s = offset mod L`, and the per-plane count
/// `M(o)` of [`vector_lines`] at offset `o`:
///
/// ```text
/// Mlines = Σ_{j<D} M(s + jP) - #{j < D-1 : ⌊(s + jP + E - 1)/L⌋ = ⌊(s + (j+1)P)/L⌋}
/// ```
///
/// (blocks in address order: consecutive planes can share at most their boundary line). The
/// correction is `0` when `P - E >= L`; otherwise it equals
/// `(D - 1) - Σ_j (⌊(s + (j+1)P)/L⌋ - ⌊(s + jP + E - 1)/L⌋)`, two floor sums. The plane sum:
///
/// * planes in case A (`W - k < L` or one row): `M(o) = ⌊(o + E - 1)/L⌋ - ⌊o/L⌋ + 1`, two
///   floor sums in `j` — `O(log L)` in all;
/// * planes in case B: `M(o)` depends only on `o mod L`, which repeats with period
///   `q = L / gcd(P, L)` in `j`, so `Σ_j M = ⌊D/q⌋ Σ_{j<q} M + Σ_{j < D mod q} M` —
///   `O(min(D, q) log L)` (at most `L` floor sums: 64 for 64-byte lines); or, row by row,
///   `Σ_{i<H} Σ_{j<D} f(s + iW + jP)` with `f(x) = ⌊(x + k - 1)/L⌋ - ⌊x/L⌋ + 1`, two floor sums
///   over the planes per row — `O(H log L)`. The shorter of the two is used. (Planes in case B
///   have `P >= (H - 1) W + k` with `W >= L`, so `H <= 2^64 / L + 1`; the cost is thus bounded
///   by `O(min(L, 2^64 / L) log L)`, which is not logarithmic: a closed form of this
///   two-dimensional floor sum is not implemented.)
///
/// # Errors
///
/// [`LinesError::ZeroLine`] for `line = 0`; [`LinesError::Overlap`] if blocks overlap
/// (`block > row_stride` with several rows) or planes overlap (`E > plane_stride` with several
/// planes); [`LinesError::TooManySteps`] when the shorter evaluation needs more than
/// [`MAX_NESTED_STEPS`] steps (never a hang, never an approximate count).
///
/// # Examples
///
/// ```
/// use commcost::mlines::{NestedLayout, nested_lines, vector_lines};
/// // a 4 x 8 x 16-byte box inside a 10 x 20 x 100-byte array, 64-byte lines
/// let sub = NestedLayout { planes: 4, plane_stride: 2000, rows: 8, row_stride: 100, block: 16, offset: 0 };
/// let per_plane: u128 = (0..4).map(|j| vector_lines(8, 16, 100, j * 2000 % 64, 64).unwrap()).sum();
/// assert_eq!(nested_lines(&sub, 64)?, per_plane); // planes far apart: nothing shared
/// # Ok::<(), commcost::mlines::LinesError>(())
/// ```
pub fn nested_lines(layout: &NestedLayout, line: u64) -> Result<u128, LinesError> {
    if line == 0 {
        return Err(LinesError::ZeroLine);
    }
    let NestedLayout {
        planes,
        plane_stride,
        rows,
        row_stride,
        block,
        offset,
    } = *layout;
    if rows > 1 && block > row_stride {
        return Err(LinesError::Overlap {
            what: "rows of a plane",
            block: u128::from(block),
            stride: row_stride,
        });
    }
    if rows == 0 || block == 0 || planes == 0 {
        return Ok(0);
    }
    let (l, w, k, h) = (
        u128::from(line),
        u128::from(row_stride),
        u128::from(block),
        u128::from(rows),
    );
    let extent = (h - 1) * w + k;
    if planes > 1 && extent > u128::from(plane_stride) {
        return Err(LinesError::Overlap {
            what: "planes",
            block: extent,
            stride: plane_stride,
        });
    }
    let s = u128::from(offset % line);
    if planes == 1 {
        return vector_lines(rows, block, row_stride, offset % line, line);
    }
    let d = u128::from(planes);
    let p = u128::from(plane_stride);
    let p_mod = plane_stride % line;

    let inner_case_a = rows == 1 || w - k < l;
    let plane_sum = if inner_case_a {
        // Σ_j ⌊(s + jP + E - 1)/L⌋ - ⌊(s + jP)/L⌋ + 1; the j ⌊P/L⌋ parts cancel
        d + progression_floor_sum(planes, p_mod, s + extent - 1, line)
            - progression_floor_sum(planes, p_mod, s, line)
    } else {
        let period = l / gcd(u128::from(p_mod), l);
        // Σ_j M(o_j) is a two-dimensional floor sum; it is evaluated either plane by plane over
        // one period of the offsets (min(D, q) vector counts) or row by row (H pairs of floor
        // sums over the planes), whichever is shorter, and refused beyond MAX_NESTED_STEPS
        let plane_steps = period.min(d);
        if h < plane_steps {
            if h > u128::from(MAX_NESTED_STEPS) {
                return Err(LinesError::TooManySteps {
                    steps: h,
                    limit: MAX_NESTED_STEPS,
                });
            }
            // row i of every plane: Σ_j f(s + iW + jP) with f(x) = ⌊(x + k - 1)/L⌋ - ⌊x/L⌋ + 1
            // (case B: no two blocks of a plane share a line); f depends on x mod L only
            let w_mod = w % l;
            let mut sum = 0;
            for i in 0..h {
                let c = (s + i * w_mod) % l;
                sum += d + progression_floor_sum(planes, p_mod, c + k - 1, line)
                    - progression_floor_sum(planes, p_mod, c, line);
            }
            sum
        } else {
            if plane_steps > u128::from(MAX_NESTED_STEPS) {
                return Err(LinesError::TooManySteps {
                    steps: plane_steps,
                    limit: MAX_NESTED_STEPS,
                });
            }
            planes_by_period(rows, block, row_stride, s, p_mod, line, period, d)?
        }
    };

    let shared = if p - extent < l {
        // consecutive planes share a line iff ⌊(s + jP + E - 1)/L⌋ = ⌊(s + (j+1)P)/L⌋; the gap
        // P - E + 1 <= L makes the difference of the two 0 or 1
        let n = planes - 1;
        let next_starts = progression_floor_sum(n, p_mod, s + p, line);
        let ends = progression_floor_sum(n, p_mod, s + extent - 1, line);
        u128::from(n) - (next_starts - ends)
    } else {
        0
    };
    Ok(plane_sum - shared)
}
