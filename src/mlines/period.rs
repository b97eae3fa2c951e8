//! Case B of the line count by the period form (Mlines paper §3.2.1, Theorem 2), and the
//! per-block sum of the general case.

use super::floor_sum_nonzero;

/// `gcd(a, b)` by Stein's binary algorithm (shifts and subtractions, no division); `gcd(0, b) =
/// b`.
pub(super) fn binary_gcd(a: u64, b: u64) -> u64 {
    if a == 0 || b == 0 {
        return a | b;
    }
    let shift = (a | b).trailing_zeros();
    let (mut a, mut b) = (a >> a.trailing_zeros(), b);
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

/// Case B by the period form of Mlines paper §3.2.1 (the paper's Theorem 2): with `q' = ⌊(k-1)/L⌋`,
/// `r = (k-1) mod L`, `g = gcd(W, L)`, `q = L/g`, `ρ = s mod g` and `H = t q + u`, every row
/// touches `q'+1` lines or `q'+2` when its offset `o_i = (s + iW) mod L` is at least `L - r`; the
/// offsets of `q` consecutive rows run once through the coset `ρ + gℤ_L`, of which
/// `c = ⌊(r + ρ)/g⌋` are that large:
///
/// ```text
/// Mlines = H (q' + 1) + t c + #{i < u : o_i >= L - r}
/// ```
///
/// For a power of two `L`, `g`, `q`, `t`, `u` and `c` are shifts and masks (no division at all
/// for lines up to 256 bytes); otherwise (lines up to `2^31` bytes) `g` comes from a binary gcd
/// and the rest from a few divisions, none when `g = 1`. Then [`partial_period`] counts the
/// last term. Same result as [`per_block_sum`].
pub(super) fn case_b_period_form(h: u64, k: u64, w: u64, s: u64, l: u64) -> u128 {
    debug_assert!(s < l && (l.is_power_of_two() || l <= 1 << 31));
    let form = if l.is_power_of_two() {
        let (mask, log_l) = (l - 1, l.trailing_zeros());
        let w_mod = w & mask;
        // gcd(W, L): the largest power of two dividing W mod L (L if 0)
        let log_g = if w_mod == 0 {
            log_l
        } else {
            w_mod.trailing_zeros()
        };
        let r = (k - 1) & mask;
        let log_q = log_l - log_g;
        PeriodForm {
            w_mod,
            q_lines: (k - 1) >> log_l,
            r,
            period: 1 << log_q,
            per_period: (r + (s & ((1u64 << log_g) - 1))) >> log_g,
            periods: h >> log_q,
            partial_rows: h & ((1u64 << log_q) - 1),
        }
    } else {
        let w_mod = w % l;
        let r = (k - 1) % l;
        let g = binary_gcd(w_mod, l);
        // g = 1 (every stride coprime to the line, the common case) needs no division
        let (period, per_period) = if g == 1 {
            (l, r)
        } else {
            (l / g, (r + s % g) / g)
        };
        PeriodForm {
            w_mod,
            q_lines: (k - 1) / l,
            r,
            period,
            per_period,
            periods: h / period,
            partial_rows: h % period,
        }
    };
    u128::from(h) * (u128::from(form.q_lines) + 1)
        + u128::from(form.periods) * u128::from(form.per_period)
        + partial_period(&form, s, l)
}

/// The quantities of the period form ([`case_b_period_form`]).
struct PeriodForm {
    /// `W mod L`.
    w_mod: u64,
    /// `q' = ⌊(k-1)/L⌋`.
    q_lines: u64,
    /// `r = (k-1) mod L`.
    r: u64,
    /// `q = L / gcd(W, L)`, rows per period.
    period: u64,
    /// `c`, large offsets per period.
    per_period: u64,
    /// `t = ⌊H/q⌋`.
    periods: u64,
    /// `u = H mod q`.
    partial_rows: u64,
}

/// `#{i < u : o_i >= L - r}`, the large offsets among the partial period's rows. The rest of
/// the period, rows `[u, q)`, holds the other `c - #` and starts at offset `(s + uW) mod L`, so
/// the shorter of the two is counted (at most `q/2` rows): by stepping the offsets, four at a
/// time, up to [`STEPPED_ROWS`] rows (power-of-two lines up to 2³¹ bytes), otherwise by the
/// lockstep floor sums [`floor_sum_difference_u32`] (lines up to 64 KiB) /
/// [`floor_sum_difference_u64`] (up to 2³¹ bytes), and by two `u128` floor sums beyond.
fn partial_period(form: &PeriodForm, s: u64, l: u64) -> u128 {
    let PeriodForm {
        w_mod,
        r,
        period,
        per_period,
        partial_rows,
        ..
    } = *form;
    let (rows, start, complement) = if partial_rows <= period - partial_rows {
        (partial_rows, s, false)
    } else {
        let start = if l.is_power_of_two() {
            // mod 2^64 wrapping preserves the value mod L
            s.wrapping_add(partial_rows.wrapping_mul(w_mod)) & (l - 1)
        } else {
            // partial_rows < q <= L <= 2^31 and w_mod < 2^31: the product fits in u64; s and
            // the product's residue are below L, so one subtraction reduces their sum
            let start = s + partial_rows * w_mod % l;
            if start >= l { start - l } else { start }
        };
        (period - partial_rows, start, true)
    };
    let counted = if rows <= STEPPED_ROWS && l.is_power_of_two() && l <= 1 << 31 {
        u128::from(count_offsets_at_least(rows, start, w_mod, l - 1, l - r))
    } else if l <= 1 << 16 {
        // rows < q <= L: every value below 2^32
        let narrow = |x: u64| x as u32;
        let count = floor_sum_difference_u32(
            narrow(rows),
            narrow(l),
            narrow(w_mod),
            narrow(start),
            narrow(start + r),
        );
        u128::from(count)
    } else if l <= 1 << 31 {
        u128::from(floor_sum_difference_u64(rows, l, w_mod, start, start + r))
    } else {
        floor_sum_nonzero(rows, l, w_mod, start + r) - floor_sum_nonzero(rows, l, w_mod, start)
    };
    if complement {
        u128::from(per_period) - counted
    } else {
        counted
    }
}

/// `FS(n, m, a, b_hi) - FS(n, m, a, b_lo)` for `a < m`, `b_lo <= b_hi < 2m`: the two
/// Euclid-like reductions of [`floor_sum`] in lockstep, by nearest-integer continued fractions.
///
/// The two chains share the pairs `(m, a)` and differ only in `n`, `b` and their totals. Each
/// step first makes `b < m`; then, with `a <= m/2`, it is the step of [`floor_sum`]
/// (`n' = ⌊(a n + b)/m⌋`, `b' = (a n + b) mod m`, swap `m` and `a`). With `a > m/2` it reflects
/// first: with `a' = m - a`, `⌊(a i + b)/m⌋ = i + ⌊(b - a' i)/m⌋`, and reversing `i` turns the
/// rest into a floor sum of slope `a'` and start `c = b - a'(n-1)`, lifted to `c + K m >= 0` with
/// `K = ⌈(a'(n-1) - b)/m⌉⁺`:
///
/// ```text
/// FS(n, m, a, b) = n(n-1)/2 - n K + FS(n, m, a', c + K m)
/// n' = K + [a' + b >= m],  b' = (a' + b) mod m      (as a' n + c + K m = a' + b + K m)
/// ```
///
/// So every step shrinks `n` by at least half (slope `min(a, m - a) / m <= 1/2`) and costs one
/// division per chain on its critical path: at most 10 steps for `m = 4096` (15 with plain
/// Euclid), 13 for `m = 65536` (exhaustive search over odd `a`). Comparisons replace divisions
/// whose quotients are 0 or 1.
///
/// Instantiated for `u32` (`n < m <= 2^16`: every value, `a' n` and `a n + b` included, stays
/// below `2^32`) and `u64` (`n, m <= 2^31`). The totals wrap (the reflection subtracts), which
/// keeps their difference exact: it is at most `n`.
macro_rules! floor_sum_difference {
    ($name:ident, $int:ty, $divisor:ident) => {
        pub(super) fn $name(n: $int, m: $int, a: $int, b_lo: $int, b_hi: $int) -> $int {
            debug_assert!(a < m && b_lo <= b_hi && b_hi / 2 < m);
            #[inline(always)]
            fn triangle(n: $int) -> $int {
                n * n.saturating_sub(1) / 2
            }
            /// `(q + ⌊t / m⌋, t mod m)` for a small signed `t`: the other chain's quotient from
            /// this chain's, without a division. `t` is the first chain's remainder plus the
            /// difference of the two dividends, `a Δn ± Δb` with `a <= m/2`; the chains' `n`
            /// differ by at most 2 in every case tried (10^5 random inputs), so `|t| < 3m` and
            /// the loops run at most a few times — and stay exact for any `t`.
            #[inline(always)]
            fn shifted(q: $int, t: i64, m: $int) -> ($int, $int) {
                let (mut q, mut t, m) = (q as i64, t, m as i64);
                while t < 0 {
                    t += m;
                    q -= 1;
                }
                while t >= m {
                    t -= m;
                    q += 1;
                }
                (q as $int, t as $int)
            }
            let (mut m, mut a) = (m, a);
            let mut d = $divisor::new(m);
            let (mut n0, mut b0, mut t0) = (n, b_lo, 0 as $int);
            let (mut n1, mut b1, mut t1) = (n, b_hi, 0 as $int);
            loop {
                let (q, r) = d.div_rem(b0);
                (t0, b0) = (t0.wrapping_add(n0.wrapping_mul(q)), r);
                let (q, r) = d.div_rem(b1);
                (t1, b1) = (t1.wrapping_add(n1.wrapping_mul(q)), r);
                let next_m = if a > m - a {
                    // reflected: K = ⌈(a'(n-1) - b)/m⌉, whose argument is > -m
                    let reflected = m - a;
                    let x0 = (reflected * n0.saturating_sub(1)) as i64 - b0 as i64;
                    let x1 = (reflected * n1.saturating_sub(1)) as i64 - b1 as i64;
                    let lifted = (x0 + m as i64 - 1) as $int;
                    let (k0, rest) = d.div_rem(lifted);
                    let (k1, _) = shifted(k0, rest as i64 + (x1 - x0), m);
                    t0 = t0
                        .wrapping_add(triangle(n0))
                        .wrapping_sub(n0.wrapping_mul(k0));
                    t1 = t1
                        .wrapping_add(triangle(n1))
                        .wrapping_sub(n1.wrapping_mul(k1));
                    let (carry, rest) = d.div_rem(reflected + b0);
                    (n0, b0) = (k0 + carry, rest);
                    let (carry, rest) = d.div_rem(reflected + b1);
                    (n1, b1) = (k1 + carry, rest);
                    reflected
                } else {
                    let y0 = a * n0 + b0;
                    let y1 = a * n1 + b1;
                    let (q0, r0) = d.div_rem(y0);
                    (n1, b1) = shifted(q0, r0 as i64 + (y1 as i64 - y0 as i64), m);
                    (n0, b0) = (q0, r0);
                    a
                };
                if n0 == 0 {
                    b0 = 0;
                }
                if n1 == 0 {
                    b1 = 0;
                }
                if n0 == 0 && n1 == 0 {
                    return t1.wrapping_sub(t0);
                }
                // swap: the next sums run over the old m with modulus min(a, m - a)
                (m, a) = (next_m, m);
                d = $divisor::new(m);
                // the new m is at most half the old: a partial quotient of at least 2
                let (whole, rest) = d.div_rem_at_least_two(a);
                t0 = t0.wrapping_add(triangle(n0).wrapping_mul(whole));
                t1 = t1.wrapping_add(triangle(n1).wrapping_mul(whole));
                a = rest;
            }
        }
    };
}
floor_sum_difference!(floor_sum_difference_u32, u32, Divisor32);
floor_sum_difference!(floor_sum_difference_u64, u64, Divisor64);

/// Division by one `m`, by comparison when the quotient is 0 or 1 (the long Euclid chains'
/// partial quotients are small) and by the hardware division otherwise. (Measured against a
/// multiplication by a precomputed `⌈2^64/m⌉` for the 32-bit case: slower, as the reciprocal
/// costs a 64-bit division per step on the chain of moduli.)
macro_rules! small_quotient_divisor {
    ($name:ident, $int:ty) => {
        #[derive(Clone, Copy)]
        struct $name {
            m: $int,
        }

        impl $name {
            #[inline(always)]
            fn new(m: $int) -> Self {
                Self { m }
            }

            #[inline(always)]
            fn div_rem(self, x: $int) -> ($int, $int) {
                let m = self.m;
                if x < m {
                    (0, x)
                } else if x - m < m {
                    (1, x - m)
                } else {
                    (x / m, x % m)
                }
            }

            /// [`div_rem`](Self::div_rem) for `x >= 2m`, by comparison when the quotient is 2
            /// or 3 (the nearest-integer continued fractions' partial quotients of the longest
            /// chains).
            #[inline(always)]
            fn div_rem_at_least_two(self, x: $int) -> ($int, $int) {
                let m = self.m;
                debug_assert!(x / m >= 2);
                let rest = x - 2 * m;
                if rest < m {
                    (2, rest)
                } else if rest - m < m {
                    (3, rest - m)
                } else {
                    (x / m, x % m)
                }
            }
        }
    };
}
small_quotient_divisor!(Divisor32, u32);
small_quotient_divisor!(Divisor64, u64);

/// Partial periods up to this many rows are counted by stepping the offsets (four lanes at a
/// time, about 0.35 ns a row); longer ones by the lockstep floor sums, which beat stepping from
/// about 200 rows on (measured: 128 rows stepped ~52 ns vs ~75 ns of floor sums for 256-byte
/// lines; 256 rows ~105 ns vs ~85 ns for 512-byte lines).
const STEPPED_ROWS: u64 = 128;

/// `#{i < rows : (s + i w) mod L >= threshold}` for a power-of-two `L = mask + 1 <= 2^31`
/// (`s, w < L`, `threshold <= L`), stepping four offsets at once: independent lanes break the
/// one-row-at-a-time dependency chain (four lanes measured fastest; 2, 8 and 16 slower).
/// Offsets wrap mod 2^32, which preserves them mod `L`.
fn count_offsets_at_least(rows: u64, s: u64, w: u64, mask: u64, threshold: u64) -> u64 {
    const LANES: usize = 4;
    debug_assert!(mask < 1 << 31 && threshold <= mask + 1 && rows <= STEPPED_ROWS);
    let (mask, w, threshold) = (mask as u32, w as u32, threshold as u32);
    let mut offsets = [0u32; LANES];
    for (j, o) in offsets.iter_mut().enumerate() {
        *o = (s as u32).wrapping_add(w.wrapping_mul(j as u32)) & mask;
    }
    let step = w.wrapping_mul(LANES as u32) & mask;
    let mut counts = [0u32; LANES];
    let rows = rows as usize;
    for _ in 0..rows / LANES {
        for (o, c) in offsets.iter_mut().zip(&mut counts) {
            *c += u32::from(*o >= threshold);
            *o = o.wrapping_add(step) & mask;
        }
    }
    let tail = offsets[..rows % LANES]
        .iter()
        .filter(|&&o| o >= threshold)
        .count() as u64;
    counts.iter().map(|&c| u64::from(c)).sum::<u64>() + tail
}

/// `H + Σ_i ⌊(iW + s + k - 1)/L⌋ - Σ_i ⌊(iW + s)/L⌋` (`H, k, L >= 1`, `s < L`): the per-block
/// line counts summed, ignoring sharing between blocks (exact in case B). `W` and `s + k - 1` are
/// reduced mod `L`; the `i ⌊W/L⌋` parts of the two sums cancel.
pub(super) fn per_block_sum(h: u64, k: u64, w: u64, s: u64, l: u64) -> u128 {
    let w_mod = w % l;
    let end = u128::from(s) + u128::from(k) - 1;
    let (l128, h128) = (u128::from(l), u128::from(h));
    // end % l < l fits in u64
    let high = h128 * (end / l128) + floor_sum_nonzero(h, l, w_mod, (end % l128) as u64);
    let low = floor_sum_nonzero(h, l, w_mod, s);
    h128 + high - low
}
