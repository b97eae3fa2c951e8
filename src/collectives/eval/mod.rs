//! The evaluation engine the collectives' closed forms share: the [`Pieces`] cache of a model's
//! per-message quantities, sums over affine ranges, the lag recurrence of lock-step rounds
//! ([`Spacings`]) and the geometric and halving sums of the recursive algorithms.
//!
//! Notation as in the algorithms' docs: `m` the problem's message bytes, `P` processes,
//! `h = ⌈log2 P⌉`, `T(x)`, `I(x)`, `g(x)`, `os(x)`, `or(x)` the model's `p2p`,
//! `send_interval`, `gap`, `send_overhead`, `recv_overhead` for a piece of `x` bytes, `op(x)`
//! the operator.

use super::Problem;
use crate::collectives::CollectiveError;
use crate::util::bits::{blocks_with_bit, ceil_log2};
use crate::{AffineCost, CommModel, Quantities};

mod spacings;

pub(super) use spacings::{Spacings, bruck_spacings};

/// Per-message quantities of a model for pieces of a problem's message.
pub(super) struct Pieces<'a> {
    model: &'a dyn CommModel,
    pub(super) problem: &'a Problem,
    /// Pieces are contiguous messages, so the model's [`PiecewiseCost::p2p_affine`](crate::PiecewiseCost::p2p_affine) applies.
    contiguous: bool,
    /// The model promises `I <= T` for every message ([`PiecewiseCost::sender_keeps_pace`](crate::PiecewiseCost::sender_keeps_pace)).
    keeps_pace: bool,
    /// The last `p2p` evaluated: consecutive rounds often send pieces of the same size (Bruck
    /// at powers of two, halvings that reached one byte), and models are pure.
    last_p2p: Option<(u64, f64)>,
    /// The first and the latest affine ranges the model described: a later piece inside one is
    /// priced by its line without calling the model.
    first_range: Option<AffineCost>,
    latest_range: Option<AffineCost>,
    /// The latest lag line the model described ([`PiecewiseCost::send_lag_affine`](crate::PiecewiseCost::send_lag_affine)): a later piece
    /// inside it has its lag without a model call (the sums over rounds walk the pieces in
    /// order, so one line is enough).
    lag_range: Option<AffineCost>,
}

impl Pieces<'_> {
    #[inline]
    pub(super) fn p2p(&mut self, bytes: u64) -> f64 {
        if let Some(a) = self.known_range(bytes) {
            return a.at(bytes);
        }
        if let Some((b, t)) = self.last_p2p
            && b == bytes
        {
            return t;
        }
        let t = self.model.p2p(&self.problem.piece(bytes));
        self.last_p2p = Some((bytes, t));
        t
    }

    /// A remembered affine range that holds `bytes`.
    fn known_range(&self, bytes: u64) -> Option<AffineCost> {
        self.latest_range
            .filter(|a| a.contains(bytes))
            .or(self.first_range.filter(|a| a.contains(bytes)))
    }

    /// The model's affine description of `p2p` around a contiguous piece of `bytes` bytes, if
    /// the pieces are contiguous, the model gives one and it holds at `bytes`.
    fn affine(&mut self, bytes: u64) -> Option<AffineCost> {
        if !self.contiguous {
            return None;
        }
        if let Some(a) = self.known_range(bytes) {
            return Some(a);
        }
        let a = self.model.p2p_affine(bytes).filter(|a| a.contains(bytes))?;
        // a custom model may write a unit of 0 (the field is public): read as 1 byte, as
        // `AffineCost::at` does, so that every division below is by a unit of at least 1
        let a = a.in_units_of(a.unit);
        self.first_range = self.first_range.or(Some(a));
        self.latest_range = Some(a);
        Some(a)
    }
    pub(super) fn interval(&self, bytes: u64) -> f64 {
        self.model.send_interval(&self.problem.piece(bytes))
    }

    /// The model promises `I <= T` ([`PiecewiseCost::sender_keeps_pace`](crate::PiecewiseCost::sender_keeps_pace)): every lag is 0.
    pub(super) fn keeps_pace(&self) -> bool {
        self.keeps_pace
    }

    pub(super) fn gap(&self, bytes: u64) -> f64 {
        self.model.gap(&self.problem.piece(bytes))
    }
    pub(super) fn quantities(&self, bytes: u64) -> Quantities {
        self.model.quantities(&self.problem.piece(bytes))
    }
    pub(super) fn op(&self, bytes: u64) -> f64 {
        self.problem.operator.cost(bytes)
    }
    /// `calls · per_call + per_byte · bytes`: the operator over `calls` applications.
    pub(super) fn op_total(&self, calls: u64, bytes: u64) -> f64 {
        self.problem.operator.total(calls, bytes)
    }

    /// `Σ_{j=0}^{n-1} T(unit · 2^j)` (pieces saturate at `u64::MAX`).
    ///
    /// Over the rounds whose pieces share one affine range `a + b·x` of the model, the sum is
    /// `count · a + b · unit · (2^(j1+1) - 2^j0)`: one model call per range instead of one per
    /// round.
    pub(super) fn doubling_sum(&mut self, unit: u64, n: u32) -> f64 {
        let fits = n == 0 || unit == 0 || unit.leading_zeros() >= n - 1;
        let mut total = 0.0;
        let mut j = 0;
        while j < n {
            let piece = unit.saturating_mul(1u64 << j);
            let affine = if fits { self.affine(piece) } else { None };
            let Some(a) = affine else {
                total += self.p2p(piece);
                j += 1;
                continue;
            };
            // the last round whose piece `unit · 2^j1 <= a.last`
            let j1 = if unit == 0 {
                n - 1
            } else {
                doublings_within(unit, a.last).min(n - 1)
            };
            total += match units_of_doublings(unit, j, j1, a.unit) {
                Some(units) => f64::from(j1 - j + 1) * a.intercept + a.per_unit * units,
                // units that are not a power of two: the line round by round, no model call
                None => (j..=j1).map(|i| a.at(unit << i)).sum(),
            };
            j = j1 + 1;
        }
        total
    }

    /// `(Σ_{k=1}^{n} T(⌈m / 2^k⌉), Σ_{k=1}^{n} ⌈m / 2^k⌉)`, `n < 64`: the rounds of a recursive
    /// halving and the bytes they carry.
    ///
    /// Over the rounds whose pieces share one affine range of the model, the time is `count · a
    /// + b · Σ ⌈piece / unit⌉`, and the units sum in closed form ([`sum_of_halvings`]).
    pub(super) fn halving_sum(&mut self, m: u64, n: u32) -> (f64, u64) {
        let mut total = 0.0;
        let mut k = 1;
        while k <= n {
            let piece = ceil_shift(m, k);
            let Some(a) = self.affine(piece) else {
                total += self.p2p(piece);
                k += 1;
                continue;
            };
            // the last round whose piece `⌈m / 2^k1⌉ >= a.first`, i.e. `(first - 1) 2^k1 < m`
            let k1 = if m == 0 || a.first <= 1 {
                n
            } else {
                doublings_within(a.first - 1, m - 1).min(n)
            };
            // ⌈⌈m/2^k⌉ / unit⌉ = ⌈m / (unit 2^k)⌉ = ⌈m' / 2^k⌉ with m' = ⌊(m-1)/unit⌋ + 1
            let m_units = if m == 0 { 0 } else { (m - 1) / a.unit + 1 };
            let units = sum_of_halvings(m_units, k1) - sum_of_halvings(m_units, k - 1);
            total += f64::from(k1 - k + 1) * a.intercept + a.per_unit * units as f64;
            k = k1 + 1;
        }
        (total, sum_of_halvings(m, n))
    }
}

/// The largest `j` with `unit · 2^j <= limit` (`1 <= unit <= limit`), `⌊log2(limit / unit)⌋`
/// without a division: shifting `unit` to the top bit of `limit` overshoots by at most one.
fn doublings_within(unit: u64, limit: u64) -> u32 {
    let j = unit.leading_zeros() - limit.leading_zeros();
    if unit << j > limit { j - 1 } else { j }
}

/// `Σ_{j=j0}^{j1} ⌈base 2^j / unit⌉` (`base 2^j1 < 2^64`) for a power-of-two `unit = 2^e`
/// (`None` otherwise): `base 2^(j-e)` for `j >= e`, a geometric series, and `⌈base / 2^(e-j)⌉`
/// below, a sum of halvings ([`sum_of_halvings`]).
fn units_of_doublings(base: u64, j0: u32, j1: u32, unit: u64) -> Option<f64> {
    if !unit.is_power_of_two() {
        return None;
    }
    let e = unit.trailing_zeros();
    let whole = if j1 >= e {
        base as f64 * (pow2(j1 - e + 1) - pow2(j0.max(e) - e))
    } else {
        0.0
    };
    let split = if j0 < e {
        // t = e - j runs over [e - min(j1, e - 1), e - j0], all >= 1
        let (low, high) = (e - j1.min(e - 1), e - j0);
        (sum_of_halvings(base, high) - sum_of_halvings(base, low - 1)) as f64
    } else {
        0.0
    };
    Some(whole + split)
}

/// `2^e` as an `f64` (`e <= 1023`), from its bits (no software `u128` conversion).
fn pow2(e: u32) -> f64 {
    f64::from_bits(u64::from(1023 + e) << 52)
}

/// `Σ_{k=1}^{n} ⌈m / 2^k⌉` (`n < 64`), in closed form: for `m >= 1`, `⌈m/2^k⌉ = ⌊(m-1)/2^k⌋ + 1`
/// and `Σ_{k>=1} ⌊x/2^k⌋ = x - popcount(x)` (Legendre), so the first `n` terms are
/// `n + (x - popcount x) - (x >> n - popcount(x >> n))` with `x = m - 1`.
pub(super) fn sum_of_halvings(m: u64, n: u32) -> u64 {
    if m == 0 {
        return 0;
    }
    let x = m - 1;
    let all = x - u64::from(x.count_ones());
    let tail = (x >> n) - u64::from((x >> n).count_ones());
    u64::from(n) + all - tail
}

/// `Σ_{j=0}^{p-1} popcount(j)`, the set bits of all indices below `p`, as a `u128` (up to
/// `64 · 2^63`): for each set bit `b` of `p` (high to low), the `2^b` indices that agree with `p`
/// above `b` and have bit `b` clear carry the `c` set bits above `b` and, below, every pattern of
/// `b` bits: `c 2^b + b 2^(b-1)`.
fn set_bits_below(p: u64) -> u128 {
    let mut total = 0u128;
    let mut above = 0u128;
    let mut rest = p;
    while rest != 0 {
        let b = 63 - rest.leading_zeros();
        total += (above << b) + ((u128::from(b) << b) >> 1);
        above += 1;
        rest ^= 1 << b;
    }
    total
}

/// Validates the problem and returns `(pieces, m, P)`, or `None` when `P = 1` (cost 0).
pub(super) fn setup<'a>(
    model: &'a dyn CommModel,
    problem: &'a Problem,
) -> Result<Option<(Pieces<'a>, u64, u64)>, CollectiveError> {
    problem.check()?;
    if problem.processes == 1 {
        return Ok(None);
    }
    let message = &problem.message;
    Ok(Some((
        Pieces {
            model,
            problem,
            contiguous: message.is_contiguous() || message.block_len() == 0,
            keeps_pace: model.sender_keeps_pace(),
            last_p2p: None,
            first_range: None,
            latest_range: None,
            lag_range: None,
        },
        message.bytes(),
        problem.processes,
    )))
}

/// `Σ_{k=1}^{h} T(unit · min(2^(h-k), P - 2^(h-k)))`: the rounds of a binomial scatter (or,
/// reversed, gather) of `unit`-byte blocks — at each round a subtree of at most
/// `min(2^(h-k), P - 2^(h-k))` processes is served. As `2^(h-1) < P <= 2^h`, the first round
/// serves `P - 2^(h-1)` blocks and round `k >= 2` serves `2^(h-k)`:
/// `T(unit (P - 2^(h-1))) + Σ_{j=0}^{h-2} T(unit 2^j)`. The same rounds, in reverse order, are
/// Bruck's allgather.
pub(super) fn binomial_blocks(pieces: &mut Pieces<'_>, unit: u64, p: u64) -> f64 {
    let h = ceil_log2(p);
    // the doubling rounds first: the first round's piece then usually lies in a range they
    // already described
    let doubling = pieces.doubling_sum(unit, h - 1);
    doubling + pieces.p2p(unit.saturating_mul(p - (1u64 << (h - 1))))
}

/// A binomial scatter or gather of `unit`-byte blocks: the rounds of [`binomial_blocks`] and a
/// gap between consecutive rounds, `(h - 1) g(unit)`.
pub(super) fn binomial_tree_of_blocks(pieces: &mut Pieces<'_>, unit: u64, p: u64) -> f64 {
    binomial_blocks(pieces, unit, p) + (f64::from(ceil_log2(p)) - 1.0) * pieces.gap(unit)
}

/// `Σ_{k=0}^{h-1} T(m n_k)`, `n_k` = [`blocks_with_bit`]`(P, k)`.
///
/// With `P = q 2^(k+1) + r`, `n_k = q 2^k + max(0, r - 2^k) <= P/2`, and for `k <= h - 2`,
/// `q >= 2^(h-2-k)` (as `P > 2^(h-1)`) so `n_k >= 2^(h-2)`: the pieces of all rounds but the
/// last lie in `[m 2^(h-2), m ⌊P/2⌋]`. When one affine range `a + b·x` of the model covers that
/// interval they cost `(h - 1) a + b m Σ_{k<h-1} n_k` (in units: when the unit divides `m`), where `Σ_{k<h} n_k` counts the set bits
/// of the indices below `P` ([`set_bits_below`]) and the last round's `n_{h-1} = P - 2^(h-1)`;
/// otherwise every round is evaluated.
pub(super) fn bruck_alltoall(pieces: &mut Pieces<'_>, m: u64, p: u64) -> f64 {
    let h = ceil_log2(p);
    let last = p - (1u64 << (h - 1));
    let rounds = if h >= 2
        && let Some(largest) = m.checked_mul(p / 2)
        && let Some(a) = pieces.affine(m << (h - 2)).filter(|a| a.last >= largest)
    {
        // Σ n_k <= (h - 1) ⌊P/2⌋ < 2^70: split into 2^64 multiples for an exact-enough f64
        let blocks = set_bits_below(p) - u128::from(last);
        let blocks = (blocks >> 64) as f64 * pow2(64) + (blocks as u64) as f64;
        if m.is_multiple_of(a.unit) {
            f64::from(h - 1) * a.intercept + a.per_unit * ((m / a.unit) as f64 * blocks)
        } else {
            // ⌈m n_k / unit⌉ has no closed sum: the line round by round, no model call
            (0..h - 1).map(|k| a.at(m * blocks_with_bit(p, k))).sum()
        }
    } else {
        (0..h - 1)
            .map(|k| pieces.p2p(m.saturating_mul(blocks_with_bit(p, k))))
            .sum::<f64>()
    };
    // every process sends and receives in every round ([`Spacings`]); over the same pieces,
    // one constant lag line `E` of the model spaces the first h - 1 rounds max(0, E) apart,
    // and the last round, max(w, E(last), 0) after them
    let lags: f64 = if pieces.keeps_pace() {
        0.0
    } else {
        let mut spacings = Spacings::default();
        if h >= 2
            && let Some(largest) = m.checked_mul(p / 2)
            && let Some(a) = pieces
                .lag_line(m << (h - 2))
                .filter(|a| a.last >= largest && a.per_unit == 0.0)
        {
            if a.contains(m.saturating_mul(last)) {
                // the last round on the same line too: every spacing max(0, E)
                return rounds
                    + f64::from(h - 1) * a.intercept.max(0.0)
                    + pieces.p2p(m.saturating_mul(last));
            }
            spacings.round(a.intercept, 0.0);
            spacings.total += f64::from(h - 2) * a.intercept.max(0.0);
        } else {
            for k in 0..h - 1 {
                let piece = m.saturating_mul(blocks_with_bit(p, k));
                pieces.spaced_round(piece, 0.0, &mut spacings);
            }
        }
        pieces.spaced_round(m.saturating_mul(last), 0.0, &mut spacings);
        spacings.total
    };
    rounds + lags + pieces.p2p(m.saturating_mul(last))
}

/// `⌈m / P⌉` (`P >= 1`), by a shift when `P` is a power of two.
pub(super) fn ceil_div(m: u64, p: u64) -> u64 {
    if p.is_power_of_two() {
        ceil_shift(m, p.trailing_zeros())
    } else {
        m.div_ceil(p)
    }
}

/// `⌈m / 2^k⌉` (`k < 64`) with a shift.
pub(super) fn ceil_shift(m: u64, k: u32) -> u64 {
    let shifted = m >> k;
    if m & ((1u64 << k) - 1) == 0 {
        shifted
    } else {
        shifted + 1
    }
}

#[cfg(test)]
mod tests {
    use super::spacings::constant_lag_of_halvings;
    use super::*;
    use crate::collectives::{Algorithm, Allgather, Allreduce, Alltoall};
    use crate::util::bits::floor_log2;
    use crate::{Message, presets};

    /// The rounds' times straight from the send and receive constraints (a second formulation
    /// of [`Spacings`]): `s_{k+1} = max(F_k, s_k + I_k)`, `R_{k+1} = max(s_{k+1} + T_{k+1},
    /// R_k + I_{k+1})`, `F_k = R_k + op_k`, from `s_0 = 0`, `R_0 = T_0`.
    fn finish_by_constraints(rounds: &[(f64, f64, f64)]) -> f64 {
        let (t0, _, op0) = rounds[0];
        let (mut s, mut r, mut f) = (0.0f64, t0, t0 + op0);
        for w in rounds.windows(2) {
            let ((_, i, _), (t, i_next, op)) = (w[0], w[1]);
            let send = f.max(s + i);
            r = (send + t).max(r + i_next);
            f = r + op;
            s = send;
        }
        f
    }

    /// A SplitMix64 stream of uniform numbers in `[0, 1)` (53 bits each).
    fn split_mix(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[test]
    fn spacings_follow_the_send_and_receive_constraints() {
        // a SplitMix64 stream: times in [0, 10), operators 0 in a third of the cases
        let mut uniform = split_mix(0x5eed);
        let mut next = move || uniform() * 10.0;
        for case in 0..2000 {
            let n = 1 + case % 9;
            let rounds: Vec<(f64, f64, f64)> = (0..n)
                .map(|_| {
                    let (t, i, op) = (next(), next(), next());
                    (t, i, if op < 3.3 { 0.0 } else { op })
                })
                .collect();
            let mut spacings = Spacings::default();
            for &(t, i, op) in &rounds {
                spacings.round(i - t, op);
            }
            let sum: f64 = rounds.iter().map(|&(t, _, op)| t + op).sum();
            let expected = finish_by_constraints(&rounds);
            let got = sum + spacings.total;
            assert!(
                (got - expected).abs() <= 1e-12 * expected,
                "{rounds:?}: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn a_run_of_one_excess_equals_its_rounds() {
        let mut uniform = split_mix(0x0a11);
        let mut next = move || uniform() * 10.0 - 3.0;
        for case in 0..3000u32 {
            // a round before the run (its excess and operator), then a run of E
            let (e0, op0, e) = (next(), next().max(0.0), next());
            let count = 1 + case % 6;
            let mut ops: Vec<f64> = (0..count).map(|_| next().max(0.0)).collect();
            ops.sort_by(|a, b| b.total_cmp(a));
            let mut rounds = Spacings::default();
            rounds.round(e0, op0);
            for &op in &ops {
                rounds.round(e, op);
            }
            let mut run = Spacings::default();
            run.round(e0, op0);
            let lags: f64 = ops[..ops.len() - 1]
                .iter()
                .map(|op| (e - op).max(0.0))
                .sum();
            let second = ops[1.min(ops.len() - 1)];
            run.run(e, (ops[0], second, ops[ops.len() - 1]), count, lags);
            // and one more round after it
            let (e2, op2) = (next(), next().max(0.0));
            rounds.round(e2, op2);
            run.round(e2, op2);
            assert!(
                (rounds.total - run.total).abs() <= 1e-12 * rounds.total.max(1.0),
                "{e0} {op0} {e} {ops:?} {e2}: {} vs {}",
                rounds.total,
                run.total
            );
        }
    }

    /// A model's five quantities without its affine and lag lines: the closed forms then
    /// evaluate every round (a second path through `Pieces`).
    #[derive(Debug)]
    struct NoLines<M>(M);

    impl<M: CommModel> CommModel for NoLines<M> {
        fn p2p(&self, msg: &Message) -> f64 {
            self.0.p2p(msg)
        }
        fn send_overhead(&self, msg: &Message) -> f64 {
            self.0.send_overhead(msg)
        }
        fn recv_overhead(&self, msg: &Message) -> f64 {
            self.0.recv_overhead(msg)
        }
        fn send_interval(&self, msg: &Message) -> f64 {
            self.0.send_interval(msg)
        }
        fn gap(&self, msg: &Message) -> f64 {
            self.0.gap(msg)
        }
    }

    #[test]
    fn lag_lines_give_the_round_by_round_spacings() {
        let slow_small = crate::Protocols::from_starts(vec![
            (1, crate::LogGP::new(3e-6, 1e-6, 9e-6, 1e-9).unwrap()),
            (4097, crate::LogGP::new(3e-6, 1e-6, 2e-6, 1e-9).unwrap()),
        ])
        .unwrap();
        let slow = crate::LogGP::new(1e-6, 1e-6, 9e-6, 1e-8).unwrap();
        let models: [&dyn CommModel; 3] = [&presets::open_mpi_openib(), &slow_small, &slow];
        for model in models {
            let bare = NoLines(model);
            type Cost = fn(&dyn CommModel, &Problem) -> Result<f64, CollectiveError>;
            let pairs: [(Cost, &str); 4] = [
                (
                    |m, p| Allgather::RecursiveDoubling.cost(m, p),
                    "allgather rd",
                ),
                (|m, p| Allgather::Bruck.cost(m, p), "allgather bruck"),
                (|m, p| Allreduce::Rabenseifner.cost(m, p), "rabenseifner"),
                (|m, p| Alltoall::Bruck.cost(m, p), "alltoall bruck"),
            ];
            for p in (1..70u64).chain([1 << 20, (1 << 30) + 3, 1 << 40]) {
                for m in [1u64, 1000, 3000, 6145, 12289, 1 << 20] {
                    let problem = Problem::new(p, Message::contiguous(m))
                        .with_operator(crate::collectives::Operator::new(1e-7, 1e-10).unwrap());
                    for (alg, name) in pairs {
                        let lines = alg(model, &problem).unwrap();
                        let rounds = alg(&bare, &problem).unwrap();
                        assert!(
                            (lines - rounds).abs() <= 1e-9 * rounds,
                            "{name}, P {p}, m {m}: {lines} vs {rounds}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn ceil_shift_is_ceiling_division() {
        for m in 0..300u64 {
            for k in 0..10 {
                assert_eq!(ceil_shift(m, k), m.div_ceil(1 << k));
            }
        }
        assert_eq!(ceil_shift(u64::MAX, 63), 2);
        for p in (1..70u64).chain([1 << 32, 1 << 63, u64::MAX]) {
            for m in [0, 1, 2, 63, 64, 65, 1000, u64::MAX - 1, u64::MAX] {
                assert_eq!(ceil_div(m, p), m.div_ceil(p), "m {m} p {p}");
            }
        }
    }

    #[test]
    fn doublings_within_is_floor_log2_of_the_quotient() {
        let values = (1..300u64).chain([u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1, 3 << 62]);
        for unit in values.clone() {
            for limit in values.clone().filter(|&l| l >= unit) {
                assert_eq!(doublings_within(unit, limit), floor_log2(limit / unit));
            }
        }
    }

    #[test]
    fn sum_of_halvings_adds_the_ceilings() {
        for m in 0..300u64 {
            for n in 0..12 {
                let brute: u64 = (1..=n).map(|k| m.div_ceil(1 << k)).sum();
                assert_eq!(sum_of_halvings(m, n), brute, "m {m} n {n}");
            }
        }
        // m = 2^64 - 1 over 63 halvings: ⌈m / 2^k⌉ = 2^(64-k) for every k, Σ = 2^64 - 2
        assert_eq!(sum_of_halvings(u64::MAX, 63), u64::MAX - 1);
    }

    #[test]
    fn constant_lag_of_halvings_adds_the_positive_terms() {
        // thresholds c / b on, between and off whole pieces, and none (b = 0)
        let lines = [
            (5.0, 1.0),
            (5.5, 1.0),
            (100.0, 0.5),
            (7.0, 0.0),
            (-1.0, 1.0),
            (3.0, 1e-3),
        ];
        for m in 0..300u64 {
            for (c, b) in lines {
                for k0 in 1..10 {
                    for k1 in k0 - 1..10 {
                        let brute: f64 = (k0..=k1)
                            .map(|k| (c - b * m.div_ceil(1 << k) as f64).max(0.0))
                            .sum();
                        let sum = constant_lag_of_halvings(m, k0, k1, c, b);
                        assert!(
                            (sum - brute).abs() <= 1e-12 * brute,
                            "m {m} c {c} b {b} k {k0}..={k1}: {sum} vs {brute}"
                        );
                    }
                }
            }
        }
        // a threshold beyond every piece, and the largest message over 63 halvings
        // (the pieces sum to 2^64 - 2 bytes: at 1e-40 s each, 2e-21 s off 63 s)
        let sum = constant_lag_of_halvings(u64::MAX, 1, 63, 1.0, 1e-40);
        assert!((sum - 63.0).abs() <= 1e-12 * 63.0, "{sum}");
        let brute: f64 = (1..=63)
            .map(|k| (1e10 - ceil_shift(u64::MAX, k) as f64).max(0.0))
            .sum();
        let sum = constant_lag_of_halvings(u64::MAX, 1, 63, 1e10, 1.0);
        assert!((sum - brute).abs() <= 1e-12 * brute, "{sum} vs {brute}");
    }

    #[test]
    fn set_bits_below_counts_them() {
        let mut brute = 0u128;
        for p in 0..5000u64 {
            assert_eq!(set_bits_below(p), brute, "p {p}");
            brute += u128::from(p.count_ones());
        }
        // all 64-bit patterns but u64::MAX itself: 64 · 2^63 - 64
        assert_eq!(set_bits_below(u64::MAX), (64u128 << 63) - 64);
    }
}
