//! Bounds on memory-line counts: the Mlines paper's and tight ones, each with its condition.

use super::{LinesError, gcd, per_block_sum, vector_lines};

/// The Mlines paper's bounds for `k` whole rows of an **aligned** array of `width`-byte rows
/// (Mlines paper §3.2.1, "Rows"): `(LB, UB) = (⌈kW / L⌉, ⌈kW / L⌉ + 1)`, the paper's estimate
/// `(LB + UB) / 2`, and the exact worst case over all start rows, `1 + ⌈(kW - g) / L⌉` with
/// `g = gcd(W, L)` (the start offsets of an aligned array are the multiples of `g`).
///
/// Returns `(lower, upper, paper_estimate, worst_case)`.
///
/// # Errors
///
/// [`LinesError::ZeroLine`] for `line = 0`.
///
/// # Examples
///
/// ```
/// use commcost::mlines::paper_row_bounds;
/// // 2 rows of 24 bytes, 16-byte lines: kW = 48, g = 8: LB 3, UB 4, estimate 3.5, worst 4
/// assert_eq!(paper_row_bounds(2, 24, 16)?, (3, 4, 3.5, 4));
/// # Ok::<(), commcost::mlines::LinesError>(())
/// ```
pub fn paper_row_bounds(
    k: u64,
    width: u64,
    line: u64,
) -> Result<(u128, u128, f64, u128), LinesError> {
    if line == 0 {
        return Err(LinesError::ZeroLine);
    }
    let bytes = u128::from(k) * u128::from(width);
    let l = u128::from(line);
    if bytes == 0 {
        return Ok((0, 0, 0.0, 0));
    }
    let lower = bytes.div_ceil(l);
    let g = gcd(u128::from(width), u128::from(line));
    let worst = 1 + (bytes - g.min(bytes)).div_ceil(l);
    Ok((lower, lower + 1, lower as f64 + 0.5, worst))
}

/// The Mlines paper's column bounds (Theorem 2), as stated there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaperColumnBounds {
    /// `q = L / g`, the number of rows after which the line offsets repeat.
    pub rows_per_group: u64,
    /// `M0`: lines touched by one group of `q` rows (`q + ⌈(k - g) / g⌉` if `k > g`, else `q`).
    pub group_lines: u128,
    /// `LB = ⌊H / q⌋ M0`.
    pub lower: u128,
    /// `UB = ⌈H / q⌉ (M0 + 1)`.
    pub upper: u128,
}

/// The Mlines paper's bounds for a block of `k` columns over `height` rows of `width` bytes.
///
/// **Condition:** they assume that no line is shared by two rows, which holds only when
/// `W >= k + L - 1` (not merely `W >= L`; counter-example `L = 16, W = 20, k = 10, s = 10`, see
/// [`per_row_line_sum`]). Under that condition they bracket the exact count for every alignment;
/// outside it they can be wrong.
///
/// # Errors
///
/// [`LinesError::ZeroLine`] for `line = 0`.
///
/// # Examples
///
/// ```
/// use commcost::mlines::paper_column_bounds;
/// // H = 100, W = 36, L = 16, k = 5: g = 4, q = 4, M0 = 4 + ⌈1/4⌉ = 5: LB 125, UB 150
/// let b = paper_column_bounds(100, 36, 5, 16)?;
/// assert_eq!((b.rows_per_group, b.group_lines, b.lower, b.upper), (4, 5, 125, 150));
/// # Ok::<(), commcost::mlines::LinesError>(())
/// ```
pub fn paper_column_bounds(
    height: u64,
    width: u64,
    k: u64,
    line: u64,
) -> Result<PaperColumnBounds, LinesError> {
    if line == 0 {
        return Err(LinesError::ZeroLine);
    }
    let g128 = gcd(u128::from(width), u128::from(line));
    let q128 = u128::from(line) / g128;
    let k128 = u128::from(k);
    let group_lines = if k128 > g128 {
        q128 + (k128 - g128).div_ceil(g128)
    } else {
        q128
    };
    let h = u128::from(height);
    Ok(PaperColumnBounds {
        // q = L / g <= L fits in u64
        rows_per_group: q128 as u64,
        group_lines,
        lower: (h / q128) * group_lines,
        upper: h.div_ceil(q128) * (group_lines + 1),
    })
}

/// Tight bounds for `k` columns over `height` rows of `width` bytes, valid for **any alignment**
/// whenever no line is shared by two rows (`W - k >= L - 1`, case B of Mlines paper §3.2.1):
///
/// ```text
/// H ⌈k/L⌉ + ⌊H g / L⌋ ⌊r / g⌋  <=  Mlines  <=  H ⌈k/L⌉ + ⌈H g / L⌉ ⌈r / g⌉
/// ```
///
/// with `g = gcd(W, L)`, `r = (k - 1) mod L`: every row touches `⌈k/L⌉` lines, one more when its
/// offset is at least `L - r`, and each period of `L / g` rows holds between `⌊r/g⌋` and `⌈r/g⌉`
/// such rows. Returns `(lower, upper)`; `(0, 0)` for `k = 0`.
///
/// # Errors
///
/// [`LinesError::ZeroLine`] for `line = 0`.
///
/// # Examples
///
/// ```
/// use commcost::mlines::tight_column_bounds;
/// // the Mlines paper §3.2.1 example: both bounds are the exact 125
/// assert_eq!(tight_column_bounds(100, 36, 5, 16)?, (125, 125));
/// # Ok::<(), commcost::mlines::LinesError>(())
/// ```
pub fn tight_column_bounds(
    height: u64,
    width: u64,
    k: u64,
    line: u64,
) -> Result<(u128, u128), LinesError> {
    if line == 0 {
        return Err(LinesError::ZeroLine);
    }
    if k == 0 {
        return Ok((0, 0));
    }
    let g = gcd(u128::from(width), u128::from(line));
    let (h, l, k) = (u128::from(height), u128::from(line), u128::from(k));
    let r = (k - 1) % l;
    let base = h * k.div_ceil(l);
    let lower = base + (h * g / l) * (r / g);
    let upper = base + (h * g).div_ceil(l) * r.div_ceil(g);
    Ok((lower, upper))
}

/// The sum of the per-row line counts, `H + FS(H, L, W, s + k - 1) - FS(H, L, W, s)`, ignoring
/// lines shared by consecutive rows.
///
/// This is the exact count in case B (`W - k >= L - 1`) and an overcount otherwise — what the
/// paper's bounds implicitly assume. It exists to show the difference.
///
/// # Errors
///
/// As [`vector_lines`].
///
/// # Examples
///
/// ```
/// use commcost::mlines::{per_row_line_sum, vector_lines};
/// // L = 16, W = 20, k = 10, s = 10, H = 100: rows at offsets 10, 14, 2, 6 touch 2, 2, 1, 1
/// // lines (150 in all), but consecutive rows share lines: the true count is 125
/// assert_eq!(per_row_line_sum(100, 10, 20, 10, 16)?, 150);
/// assert_eq!(vector_lines(100, 10, 20, 10, 16)?, 125);
/// # Ok::<(), commcost::mlines::LinesError>(())
/// ```
pub fn per_row_line_sum(
    count: u64,
    block: u64,
    stride: u64,
    offset: u64,
    line: u64,
) -> Result<u128, LinesError> {
    // validation and the trivial cases are vector_lines'
    let exact = vector_lines(count, block, stride, offset, line)?;
    if count <= 1 || block == 0 {
        return Ok(exact);
    }
    Ok(per_block_sum(count, block, stride, offset % line, line))
}
