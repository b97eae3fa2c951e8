//! Planes of vector blocks: the memory lines of a 3-D subarray.

use super::period::{binary_gcd, floor_sum_difference_u64};
use super::{LinesError, floor_sum_nonzero, vector_lines};

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

/// Most floor-sum differences [`nested_lines`] spends on the leftover rectangle of one layout
/// (`2^20`; at most about 0.5 s, measured with 2^32-byte lines and the longest Euclid chains,
/// docs/PERFORMANCE.md): layouts that would need more return [`LinesError::TooManySteps`]
/// instead of running for minutes. Only planes in case B with lines between `2^21` and `2^44`
/// bytes whose blocks end more than `2^20` bytes from a line boundary on both sides
/// (`2^20 < (k - 1) mod L < L - 2^20`) can need more.
pub const MAX_NESTED_STEPS: u64 = 1 << 20;

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
/// * planes in case B: `Σ_j M = D H (q' + 1) + N`, with `N` the count of (row, plane) pairs
///   whose block starts in the last `r = (k-1) mod L` bytes of a line (and so touches one line
///   more): whole periods of the plane offsets (`q_b = L / gcd(P, L)` planes) and of the row
///   offsets (`q_a = L / gcd(W, L)` rows) in closed form (floor sums modulo the gcds), the
///   rectangle left over — or its complement in either period, whichever is shorter — line by
///   line along the shortest of three directions: its rows, its planes, or the
///   `r' = min(r, L - r)` residues of the window of large offsets (one floor-sum difference
///   each): `O(min(H'', D'', r') log L)` with `H'' <= min(H, q_a/2)`, `D'' <= min(D, q_b/2)`.
///   Logarithmic for `r = 0` and whenever a leftover side or the window is short; never
///   refused for lines up to `2^21` bytes or from `2^44` bytes on (at most `2^20` floor-sum
///   differences, as `H - 1 < 2^64 / L` in case B), nor when `(k - 1) mod L` is within `2^20`
///   of `0` or of `L`; the proof is at `case_b_planes` in the source. (A closed form for a
///   leftover rectangle long in all three directions — a lattice-point count in a
///   three-dimensional polytope — is not implemented.)
///
/// # Errors
///
/// [`LinesError::ZeroLine`] for `line = 0`; [`LinesError::Overlap`] if blocks overlap
/// (`block > row_stride` with several rows) or planes overlap (`E > plane_stride` with several
/// planes); [`LinesError::TooManySteps`] when the leftover rectangle of planes in case B has
/// both sides (after complements) and `min(r, L - r)` longer than [`MAX_NESTED_STEPS`]
/// (never a hang, never an approximate count).
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
        case_b_planes(
            rows,
            planes,
            block,
            row_stride,
            plane_stride,
            offset % line,
            line,
        )?
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

/// `#{j < n : (x + j·step) mod m >= m - r}` for `step, x, r < m` (`0` for `r = 0`): the
/// floor-sum difference `Σ_j ⌊(x + r + j·step)/m⌋ - ⌊(x + j·step)/m⌋` (each term is
/// `[(x + j·step) mod m >= m - r]` as `r < m`). The lockstep floor sums of the vector routines
/// where their widths allow (`n, m <= 2^31`), two `u128` floor sums otherwise.
fn offsets_at_least(n: u64, m: u64, step: u64, x: u64, r: u64) -> u128 {
    debug_assert!(step < m && x < m && r < m);
    if n == 0 || r == 0 {
        return 0;
    }
    if m <= 1 << 31 && n <= 1 << 31 {
        // x + r < 2m <= 2^32
        return u128::from(floor_sum_difference_u64(n, m, step, x, x + r));
    }
    // x + r = m t + rest with t in {0, 1}: ⌊(x + r + j step)/m⌋ = t + ⌊(rest + j step)/m⌋
    let end = u128::from(x) + u128::from(r);
    let (wraps, rest) = if end >= u128::from(m) {
        (u128::from(n), (end - u128::from(m)) as u64)
    } else {
        (0, end as u64)
    };
    // both floor sums are below n(n-1)/2 + n < 2^127 (slope and start below m)
    wraps + floor_sum_nonzero(n, m, step, rest) - floor_sum_nonzero(n, m, step, x)
}

/// `Σ_{t<n} ⌊(r + (x + t·step) mod g)/g⌋` for `g >= 1`: with `r = g ⌊r/g⌋ + r_g`, each term is
/// `⌊r/g⌋ + [(x + t·step) mod g >= g - r_g]`.
fn coset_counts(n: u64, g: u64, step: u64, x: u64, r: u64) -> u128 {
    u128::from(n) * u128::from(r / g) + offsets_at_least(n, g, step % g, x % g, r % g)
}

/// `(x + y) mod m` for `x, y < m`.
fn add_mod(x: u64, y: u64, m: u64) -> u64 {
    debug_assert!(x < m && y < m);
    // x + y < 2m: one subtraction, also when the u64 sum wraps (the true sum is then >= 2^64 > m)
    let (sum, wrapped) = x.overflowing_add(y);
    if wrapped || sum >= m {
        sum.wrapping_sub(m)
    } else {
        sum
    }
}

/// `(x · y) mod m` (in `u64` when the product fits).
fn mul_mod(x: u64, y: u64, m: u64) -> u64 {
    match x.checked_mul(y) {
        Some(product) => product % m,
        None => ((u128::from(x) * u128::from(y)) % u128::from(m)) as u64,
    }
}

/// The rows (`i`, stride residue `a`) and planes (`j`, stride residue `b`) of the planes-in-case-B
/// count, with `r = (k - 1) mod L` and lines of `L` bytes: everything [`LargeOffsets::count`]
/// needs besides the rectangle.
struct LargeOffsets {
    /// `L`.
    line: u64,
    /// `W mod L`.
    a: u64,
    /// `P mod L`.
    b: u64,
    /// `(k - 1) mod L`.
    r: u64,
    /// `gcd(a, L)`.
    g_rows: u64,
    /// `gcd(b, L)`.
    g_planes: u64,
}

impl LargeOffsets {
    /// Rows per period of the row offsets, `q_a = L / gcd(a, L)`.
    fn row_period(&self) -> u64 {
        self.line / self.g_rows
    }

    /// Planes per period of the plane offsets, `q_b = L / gcd(b, L)`.
    fn plane_period(&self) -> u64 {
        self.line / self.g_planes
    }

    /// `Σ_{i<n}` of the large offsets in row `i` over one whole period of planes, starting at
    /// offset `x`: `Σ_{i<n} ⌊(r + (x + i a) mod g_b)/g_b⌋`.
    fn rows_times_plane_period(&self, n: u64, x: u64) -> u128 {
        coset_counts(n, self.g_planes, self.a, x, self.r)
    }

    /// `Σ_{j<n}` of the large offsets in plane `j` over one whole period of rows, starting at
    /// offset `x`: `Σ_{j<n} ⌊(r + (x + j b) mod g_a)/g_a⌋`.
    fn planes_times_row_period(&self, n: u64, x: u64) -> u128 {
        coset_counts(n, self.g_rows, self.b, x, self.r)
    }

    /// `N(x, n_i, n_j) = #{(i, j) : i < n_i, j < n_j, (x + i a + j b) mod L >= L - r}` for
    /// `n_i < q_a`, `n_j < q_b`, `x < L`, by complements and then line by line along the
    /// shortest of three directions: rows, planes, or the `min(r, L - r)` residues of the
    /// window ([`Self::pairs_at_residues`]); [`LinesError::TooManySteps`] beyond
    /// [`MAX_NESTED_STEPS`] lines.
    fn count(&self, x: u64, n_i: u64, n_j: u64) -> Result<u128, LinesError> {
        let (q_a, q_b, l) = (self.row_period(), self.plane_period(), self.line);
        debug_assert!(n_i < q_a && n_j < q_b && x < l);
        // rows [0, n_i) = the whole period minus rows [n_i, q_a), which start at x + n_i a
        if n_i > q_a - n_i {
            let whole = self.planes_times_row_period(n_j, x);
            let rest = self.count(add_mod(x, mul_mod(n_i, self.a, l), l), q_a - n_i, n_j)?;
            return Ok(whole - rest);
        }
        if n_j > q_b - n_j {
            let whole = self.rows_times_plane_period(n_i, x);
            let rest = self.count(add_mod(x, mul_mod(n_j, self.b, l), l), n_i, q_b - n_j)?;
            return Ok(whole - rest);
        }
        if n_i == 0 || n_j == 0 {
            return Ok(0);
        }
        // 1 <= r < L here (r = 0 never reaches the rectangle)
        let window = self.r.min(l - self.r);
        let steps = n_i.min(n_j).min(window);
        if steps > MAX_NESTED_STEPS {
            return Err(LinesError::TooManySteps {
                steps: u128::from(steps),
                limit: MAX_NESTED_STEPS,
            });
        }
        if window < n_i.min(n_j) {
            // offset w in [L - r, L) iff a i + b j ≡ w - x: the r residues from (L - r - x) mod L
            if self.r == window {
                return Ok(self.pairs_at_residues(sub_mod(l - self.r, x, l), self.r, n_i, n_j));
            }
            // the complement: offsets below L - r are, shifted by r, the offsets at least r
            // (`N(x, r) = n_i n_j - N(x + r, L - r)`), whose window has `L - r` residues
            let shifted = add_mod(x, self.r, l);
            let hits = self.pairs_at_residues(sub_mod(self.r, shifted, l), window, n_i, n_j);
            return Ok(u128::from(n_i) * u128::from(n_j) - hits);
        }
        let (outer, inner, outer_step, inner_step) = if n_i <= n_j {
            (n_i, n_j, self.a, self.b)
        } else {
            (n_j, n_i, self.b, self.a)
        };
        let mut total = 0;
        let mut start = x;
        for _ in 0..outer {
            total += offsets_at_least(inner, l, inner_step, start, self.r);
            start = add_mod(start, outer_step, l);
        }
        Ok(total)
    }

    /// `Σ_{t<count} E((first + t) mod L)` with `E(c) = #{(i, j) : i < n_i, j < n_j,
    /// a i + b j ≡ c (mod L)}`, for `1 <= n_j < q_b` (so at most one `j` per `i`): one
    /// floor-sum difference per residue.
    ///
    /// With `g_b = gcd(b, L)`, `h = gcd(a, g_b)`, `g' = g_b / h`: `b j ≡ c - a i` needs
    /// `g_b | c - a i`, i.e. `h | c` and `i ≡ i_0 = (c/h)(a/h)^{-1} (mod g')`; for
    /// `i = i_0 + g' s` the plane is `j ≡ (b/g_b)^{-1} (c - a i)/g_b (mod q_b)`, and
    /// `(c - a i)/g_b` drops by `a/h` per step of `s`. So `E(c)` counts the `s` below
    /// `⌈(n_i - i_0)/g'⌉` whose `j_0 + s v mod q_b` (`v = -(b/g_b)^{-1} a/h mod q_b`) is below
    /// `n_j`: one [`offsets_at_least`] after shifting the window `[0, n_j)` to
    /// `[q_b - n_j, q_b)`.
    fn pairs_at_residues(&self, first: u64, count: u64, n_i: u64, n_j: u64) -> u128 {
        let l = self.line;
        let (g_b, q_b) = (self.g_planes, self.plane_period());
        debug_assert!(first < l && n_j >= 1 && n_j < q_b);
        let h = binary_gcd(self.a, g_b);
        let step_residues = g_b / h;
        let a_over_h = self.a / h;
        let a_inverse = inverse_mod(a_over_h % step_residues, step_residues);
        let b_inverse = inverse_mod((self.b / g_b) % q_b, q_b);
        let v = sub_mod(0, mul_mod(b_inverse, a_over_h % q_b, q_b), q_b);
        let mut total = 0;
        let mut c = first;
        for _ in 0..count {
            if g_b == 1 {
                // every row reaches every residue: i_0 = 0, (c - a i_0)/g_b = c
                let start = add_mod(mul_mod(b_inverse, c, q_b), q_b - n_j, q_b);
                total += offsets_at_least(n_i, q_b, v, start, n_j);
            } else if c.is_multiple_of(h) {
                let i_0 = mul_mod((c / h) % step_residues, a_inverse, step_residues);
                if i_0 < n_i {
                    let rows = (n_i - i_0 - 1) / step_residues + 1;
                    // c - a i_0 ≡ 0 (mod g_b), and g_b | L
                    let t_0 = sub_mod(c, mul_mod(self.a, i_0, l), l) / g_b;
                    let j_0 = mul_mod(b_inverse, t_0, q_b);
                    let start = add_mod(j_0, q_b - n_j, q_b);
                    total += offsets_at_least(rows, q_b, v, start, n_j);
                }
            }
            c = if c + 1 == l { 0 } else { c + 1 };
        }
        total
    }
}

/// `(x - y) mod m` for `x, y < m`.
fn sub_mod(x: u64, y: u64, m: u64) -> u64 {
    if x >= y { x - y } else { m - (y - x) }
}

/// `x^{-1} mod m` for `gcd(x, m) = 1` (`0` for `m = 1`): extended Euclid, `O(log m)` steps;
/// the Bézout coefficients stay below `m` in magnitude, so `i128` holds them.
fn inverse_mod(x: u64, m: u64) -> u64 {
    let (mut old_r, mut r) = (i128::from(x % m), i128::from(m));
    let (mut old_s, mut s) = (1i128, 0i128);
    while r != 0 {
        let q = old_r / r;
        (old_r, r) = (r, old_r - q * r);
        (old_s, s) = (s, old_s - q * s);
    }
    debug_assert!(old_r == 1 || m == 1);
    // the residue of old_s mod m lies in [0, m)
    old_s.rem_euclid(i128::from(m)) as u64
}

/// `Σ_{j<D} M(s + jP)`, the per-plane counts of planes in case B (`H >= 2`, `W - k >= L - 1`).
///
/// # Formula
///
/// With `q' = ⌊(k-1)/L⌋`, `r = (k-1) mod L`, `a = W mod L`, `b = P mod L`, every block touches
/// `q' + 1` lines, or `q' + 2` when its offset is at least `L - r` (the period form of
/// [`vector_lines`]), and no two blocks of a plane share a line, so
///
/// ```text
/// Σ_j M(s + jP) = D H (q' + 1) + N(s, H, D)
/// N(x, n_i, n_j) = #{(i, j) : i < n_i, j < n_j, (x + i a + j b) mod L >= L - r}
/// ```
///
/// Periods. The offsets of plane `j` depend on `j mod q_b`, `q_b = L / g_b`, `g_b = gcd(b, L)`:
/// over `q_b` consecutive planes the offsets of row `i` run once through the coset
/// `(x + i a) + g_b ℤ_L`, of which `⌊(r + e)/g_b⌋` lie in `[L - r, L)` (`e = (x + i a) mod g_b`:
/// the members `e + m g_b` in `[L - r, L - 1]` number `(L/g_b - 1) - (L/g_b - ⌊(r + e)/g_b⌋) + 1`).
/// Likewise for `q_a = L / gcd(a, L)` consecutive rows of plane `j`. So, with `D = t_b q_b + D'`,
/// `H = t_a q_a + H'`:
///
/// ```text
/// N(s, H, D) = t_b K_b(s, H) + t_a K_a(s, D') + N(s, H', D')
/// K_b(x, n) = Σ_{i<n} ⌊(r + (x + i a) mod g_b)/g_b⌋,  K_a(x, n) = Σ_{j<n} ⌊(r + (x + j b) mod g_a)/g_a⌋
/// ```
///
/// each `K` being `n ⌊r/g⌋` plus one floor-sum difference modulo `g` (`O(log L)`). Complements:
/// rows `[0, n_i)` are a whole row period minus rows `[n_i, q_a)`, which start at
/// `x + n_i a`, so `N(x, n_i, n_j) = K_a(x, n_j) - N(x + n_i a, q_a - n_i, n_j)`, and the same
/// for planes; the shorter side of each is kept. What remains, `N(x', n_i, n_j)` with
/// `n_i <= q_a / 2`, `n_j <= q_b / 2`, is summed line by line along its shortest direction,
/// one floor-sum difference per line: the rows (`n_i` lines), the planes (`n_j`), or the
/// residues of the window: `N = Σ_{w = L-r}^{L-1} #{(i, j) : a i + b j ≡ w - x (mod L)}`, each
/// term one floor-sum difference along the rows that can reach residue `w - x` (at most one
/// plane per row, as `n_j < q_b`); or, when `L - r < r`, the complement
/// `N(x, r) = n_i n_j - N(x + r, L - r)` (offsets below `L - r`, shifted by `r`, are those at
/// least `r`) summed over its `L - r` residues.
///
/// Cost: `O(min(H'', D'', r') log L)` with `H'' = min(H', q_a - H') <= min(H, L/2)`, `D''`
/// likewise and `r' = min(r, L - r)`; since `(H - 1) W < P < 2^64` with `W >= L`,
/// `H'' <= min(2^64 / L + 1, L / 2)`. This is logarithmic whenever either dimension's remainder
/// or complement, or the window, is short, and at most `2^20` floor-sum differences for lines up
/// to `2^21` bytes or from `2^44` bytes on; a rectangle with all three beyond
/// [`MAX_NESTED_STEPS`] (possible only for `2^21 < L < 2^44`) is refused. The count is a
/// difference of two-dimensional floor sums `Σ_{i,j} ⌊(a i + b j + c)/L⌋` — lattice points in
/// tetrahedra `{a i + b j + L k <= M}`; the general methods polynomial in the input size for
/// such counts (A. Barvinok, A polynomial time algorithm for counting integral points in
/// polyhedra when the dimension is fixed, Mathematics of Operations Research 19(4), 1994)
/// rest on signed decompositions of cones into unimodular ones, not implemented here.
///
/// Every intermediate count is exact in `u128`: `N <= H D < 2^128`, `H (q' + 1) <= 2^64 + 1`
/// (each block's `k <= W` and `(H - 1) W + k <= P < 2^64`), and `D H (q' + 1)` is at most the
/// true count of a layout within `2^64 + P` bytes.
///
/// # Errors
///
/// [`LinesError::TooManySteps`] as above.
fn case_b_planes(
    h: u64,
    d: u64,
    k: u64,
    w: u64,
    p: u64,
    s: u64,
    l: u64,
) -> Result<u128, LinesError> {
    debug_assert!(h >= 2 && k >= 1 && s < l);
    let (a, b) = (w % l, p % l);
    let offsets = LargeOffsets {
        line: l,
        a,
        b,
        r: (k - 1) % l,
        g_rows: binary_gcd(a, l),
        g_planes: binary_gcd(b, l),
    };
    let per_block = u128::from((k - 1) / l) + 1;
    let base = u128::from(d) * (u128::from(h) * per_block);
    if offsets.r == 0 {
        return Ok(base);
    }
    let (q_a, q_b) = (offsets.row_period(), offsets.plane_period());
    let (plane_periods, planes_left) = (d / q_b, d % q_b);
    let (row_periods, rows_left) = (h / q_a, h % q_a);
    let whole_plane_periods = u128::from(plane_periods) * offsets.rows_times_plane_period(h, s);
    let whole_row_periods =
        u128::from(row_periods) * offsets.planes_times_row_period(planes_left, s);
    let rest = offsets.count(s, rows_left, planes_left)?;
    Ok(base + whole_plane_periods + whole_row_periods + rest)
}
