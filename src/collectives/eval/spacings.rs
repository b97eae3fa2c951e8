//! The lag recurrence of lock-step rounds ([`Spacings`]) and the lags of the model's pieces:
//! how much later than its data a process that sends in consecutive rounds may send again.

use super::{Pieces, ceil_shift, doublings_within, pow2, sum_of_halvings};
use crate::AffineCost;
use crate::util::bits::ceil_log2;

impl Pieces<'_> {
    /// `max(0, I(x) - T(x) - extra)`: how much later than the round's data (`T` after the
    /// previous send, plus `extra`, e.g. the operator) a process that sent `x` bytes in one
    /// round may send again in the next — its sends are at least `I` apart. Rounds of a process
    /// that sends in consecutive rounds are spaced `max(T + extra, I) = T + extra + lag`.
    /// 0 without model calls when the model promises `I <= T`
    /// ([`CommModel::sender_keeps_pace`]); without a model call when `x` lies in a lag line the
    /// model already described ([`CommModel::send_lag_affine`], asked for by the sums over
    /// rounds); else from one `quantities` call (cheaper than asking for a line that a single
    /// lag would not use again).
    pub(in crate::collectives) fn lag(&mut self, bytes: u64, extra: f64) -> f64 {
        if self.keeps_pace {
            return 0.0;
        }
        if self.contiguous
            && let Some(line) = self.known_lag_range(bytes)
        {
            return (line.at(bytes) - extra).max(0.0);
        }
        let q = self.quantities(bytes);
        (q.send_interval - q.p2p - extra).max(0.0)
    }

    /// The remembered lag line, if it holds `bytes`.
    fn known_lag_range(&self, bytes: u64) -> Option<AffineCost> {
        self.lag_range.filter(|a| a.contains(bytes))
    }

    /// The model's lag line ([`CommModel::send_lag_affine`]) around a contiguous piece of
    /// `bytes` bytes, if the pieces are contiguous, the model gives one and it holds at `bytes`.
    pub(super) fn lag_line(&mut self, bytes: u64) -> Option<AffineCost> {
        if !self.contiguous {
            return None;
        }
        if let Some(a) = self.known_lag_range(bytes) {
            return Some(a);
        }
        let a = self
            .model
            .send_lag_affine(bytes)
            .filter(|a| a.contains(bytes))?;
        // a unit of 0 read as 1 byte, as in `affine`
        let a = a.in_units_of(a.unit);
        self.lag_range = Some(a);
        Some(a)
    }

    /// `Σ_{j<n} lag(unit 2^j)`: the lags of `n` doubling rounds (pieces saturate at
    /// `u64::MAX`).
    ///
    /// Over the rounds whose pieces share one lag line of the model
    /// ([`CommModel::send_lag_affine`]) that is a constant `E`, the lags are `count · max(0, E)`:
    /// one model call per range (none when the model keeps pace); a sloped line is evaluated
    /// round by round without model calls.
    pub(in crate::collectives) fn doubling_lag(&mut self, unit: u64, n: u32) -> f64 {
        if self.keeps_pace {
            return 0.0;
        }
        let fits = n == 0 || unit == 0 || unit.leading_zeros() >= n - 1;
        let mut total = 0.0;
        let mut j = 0;
        while j < n {
            let piece = unit.saturating_mul(1u64 << j.min(63));
            let line = if fits { self.lag_line(piece) } else { None };
            let Some(a) = line else {
                total += self.lag(piece, 0.0);
                j += 1;
                continue;
            };
            // the last round whose piece `unit · 2^j1 <= a.last`
            let j1 = if unit == 0 {
                n - 1
            } else {
                doublings_within(unit, a.last).min(n - 1)
            };
            total += if a.per_unit == 0.0 {
                f64::from(j1 - j + 1) * a.intercept.max(0.0)
            } else {
                (j..=j1).map(|i| a.at(unit << i).max(0.0)).sum()
            };
            j = j1 + 1;
        }
        total
    }

    /// `Σ_{k=1}^{n} lag(x_k, op(x_k)) + Σ_{k=from}^{n} lag(x_k, 0)` over the halving pieces
    /// `x_k = ⌈m / 2^k⌉` (`n < 64`): the lags of a process that sends in every round of a
    /// recursive halving (after which it applies the operator) and in every round `k >= from`
    /// of the recursive doubling back (Rabenseifner's reduce-scatter and allgather).
    ///
    /// Over the rounds whose pieces share one constant lag line `E` of the model, the
    /// allgather's lags are `count · max(0, E)`, and the lag of reduce-scatter round `k` is
    /// `max(0, E - a - b x_k)` for the operator `a + b x`: as the pieces shrink with `k`, the
    /// positive terms are those from the first round whose piece is below `(E - a) / b` on, and
    /// they sum to `count (E - a) - b Σ x_k` with the pieces summed in closed form
    /// ([`constant_lag_of_halvings`]). One model call per range instead of two per round.
    pub(in crate::collectives) fn halving_lags(&mut self, m: u64, n: u32, from: u32) -> f64 {
        if self.keeps_pace {
            return 0.0;
        }
        let operator = self.problem.operator;
        let mut total = 0.0;
        let mut k = 1;
        while k <= n {
            let piece = ceil_shift(m, k);
            let Some(a) = self.lag_line(piece) else {
                total += self.lag(piece, operator.cost(piece));
                if k >= from {
                    total += self.lag(piece, 0.0);
                }
                k += 1;
                continue;
            };
            // the last round whose piece `⌈m / 2^k1⌉ >= a.first`, as in `halving_sum`
            let k1 = if m == 0 || a.first <= 1 {
                n
            } else {
                doublings_within(a.first - 1, m - 1).min(n)
            };
            let rounds_back = (k1 + 1).saturating_sub(k.max(from));
            total += if a.per_unit == 0.0 {
                constant_lag_of_halvings(
                    m,
                    k,
                    k1,
                    a.intercept - operator.per_call,
                    operator.per_byte,
                ) + f64::from(rounds_back) * a.intercept.max(0.0)
            } else {
                // a sloped line: round by round, without model calls
                (k..=k1)
                    .map(|i| {
                        let x = ceil_shift(m, i);
                        let back = if i >= from { a.at(x).max(0.0) } else { 0.0 };
                        (a.at(x) - operator.cost(x)).max(0.0) + back
                    })
                    .sum()
            };
            k = k1 + 1;
        }
        total
    }
    /// `E(x)` with `max(0, I(x) - T(x) - e) = max(0, E(x) - e)` for every `e >= 0`: the
    /// model's lag line at `x` ([`CommModel::send_lag_affine`], asked for once per range and
    /// remembered), else `I(x) - T(x)` from one `quantities` call.
    fn excess(&mut self, bytes: u64) -> f64 {
        if let Some(line) = self.lag_line(bytes) {
            return line.at(bytes);
        }
        let q = self.quantities(bytes);
        q.send_interval - q.p2p
    }

    /// Feeds the rounds `x_k = unit 2^k`, `k < n` (pieces saturate at `u64::MAX`), without an
    /// operator, to `spacings` ([`Spacings`]). Over the rounds whose pieces share one constant
    /// lag line `E` of the model, the first round is fed and each further one adds `max(0, E)`
    /// (its wait `w <= max(0, E)` stays): one model call per range; a sloped line is fed round
    /// by round without model calls. Nothing (no model call) when the model keeps pace.
    pub(in crate::collectives) fn doubling_spacings(
        &mut self,
        unit: u64,
        n: u32,
        spacings: &mut Spacings,
    ) {
        if self.keeps_pace {
            return;
        }
        let fits = n == 0 || unit == 0 || unit.leading_zeros() >= n - 1;
        let mut j = 0;
        while j < n {
            let piece = unit.saturating_mul(1u64 << j.min(63));
            let line = if fits { self.lag_line(piece) } else { None };
            let Some(a) = line else {
                let e = self.excess(piece);
                spacings.round(e, 0.0);
                j += 1;
                continue;
            };
            let j1 = if unit == 0 {
                n - 1
            } else {
                doublings_within(unit, a.last).min(n - 1)
            };
            if a.per_unit == 0.0 {
                spacings.round(a.intercept, 0.0);
                spacings.total += f64::from(j1 - j) * a.intercept.max(0.0);
            } else {
                for i in j..=j1 {
                    spacings.round(a.at(unit << i), 0.0);
                }
            }
            j = j1 + 1;
        }
    }

    /// The spacings ([`Spacings`]) of Rabenseifner's rounds at `P = 2^n` (`n < 64`): the
    /// reduce-scatter's `x_k = ⌈m / 2^k⌉`, `k = 1 … n`, each followed by the operator, then the
    /// allgather's `x_k`, `k = n … 1`. The rounds are walked by runs that share one constant
    /// lag line `E` of the model ([`Spacings::run`]: inside a run the spacings are the lags
    /// `max(0, E - op(x_k))`, summed in closed form as in
    /// [`halving_lags`](Self::halving_lags), and only the first round of a run compares the
    /// sender's wait with the new `E`), the allgather's growing pieces by the same lines: two
    /// model calls per range; a sloped line or none, round by round. When one constant line
    /// holds every piece, the spacings are the lags of
    /// [`halving_lags`](Self::halving_lags) (each reduce-scatter round `max(0, E - op(x_k))`,
    /// each allgather round after the first `max(0, E)`): one model call. 0 without a model
    /// call when the model keeps pace.
    pub(in crate::collectives) fn rabenseifner_spacings(&mut self, m: u64, n: u32) -> f64 {
        if self.keeps_pace || n == 0 {
            return 0.0;
        }
        // one constant line for every piece: the sums of lags (see above)
        if let Some(a) = self.lag_line(ceil_shift(m, 1))
            && a.per_unit == 0.0
            && a.contains(ceil_shift(m, n))
        {
            return self.halving_lags(m, n, 2);
        }
        let operator = self.problem.operator;
        let mut spacings = Spacings::default();
        let mut k = 1;
        while k <= n {
            let piece = ceil_shift(m, k);
            let (k1, e) = match self.lag_line(piece) {
                Some(a) if a.per_unit == 0.0 => {
                    // the last round whose piece `⌈m / 2^k1⌉ >= a.first`, as in `halving_sum`
                    let k1 = if m == 0 || a.first <= 1 {
                        n
                    } else {
                        doublings_within(a.first - 1, m - 1).min(n)
                    };
                    (k1.max(k), a.intercept)
                }
                Some(a) => (k, a.at(piece)),
                None => (k, self.excess(piece)),
            };
            let first = operator.cost(piece);
            if k1 == k {
                spacings.round(e, first);
            } else {
                let second = operator.cost(ceil_shift(m, k + 1));
                let last = operator.cost(ceil_shift(m, k1));
                let lags = constant_lag_of_halvings(
                    m,
                    k,
                    k1 - 1,
                    e - operator.per_call,
                    operator.per_byte,
                );
                spacings.run(e, (first, second, last), k1 - k + 1, lags);
            }
            k = k1 + 1;
        }
        // the allgather: the same pieces back, growing, no operator; inside a constant line
        // each further round max(0, E) after the one before
        let mut k = n;
        while k >= 1 {
            let piece = ceil_shift(m, k);
            match self.lag_line(piece) {
                Some(a) if a.per_unit == 0.0 => {
                    // the first round whose piece `⌈m / 2^k0⌉ <= a.last`: `m <= a.last 2^k0`
                    let k0 = if m <= a.last {
                        1
                    } else if a.last == 0 {
                        k
                    } else {
                        doublings_within(a.last, m - 1) + 1
                    }
                    .clamp(1, k);
                    spacings.round(a.intercept, 0.0);
                    spacings.total += f64::from(k - k0) * a.intercept.max(0.0);
                    k = k0 - 1;
                }
                Some(a) => {
                    spacings.round(a.at(piece), 0.0);
                    k -= 1;
                }
                None => {
                    let e = self.excess(piece);
                    spacings.round(e, 0.0);
                    k -= 1;
                }
            }
        }
        spacings.total
    }

    /// Feeds one round of `bytes` followed by the operator `op` to `spacings` (nothing, no
    /// model call, when the model keeps pace).
    pub(in crate::collectives) fn spaced_round(
        &mut self,
        bytes: u64,
        op: f64,
        spacings: &mut Spacings,
    ) {
        if !self.keeps_pace {
            let e = self.excess(bytes);
            spacings.round(e, op);
        }
    }
}

/// The spacing of consecutive rounds of a process that sends and receives one piece in every
/// round (a lock-step exchange: Bruck, recursive doubling and halving, neighbor exchange) and
/// then may apply the operator, under LogGOPS semantics (a send holds the sender's NIC for
/// `I` after its start; a receive's receiving-NIC window is the last `I` of its message before
/// it completes and must not overlap the previous one's).
///
/// # Formula
///
/// Round `k` sends and receives `x_k` bytes, then applies `op_k` (0 for none); `T_k`, `I_k`,
/// `os_k`, `or_k` are the model's quantities of `x_k`. Every process runs the same times (`P`
/// a power of two, or Bruck's rotation); round `k`'s send starts at `s_k`, its receive
/// completes at `R_k`, the round (with its operator) ends at `F_k = R_k + op_k`. The send
/// waits for the round before and for the sender's NIC, the receive for the message, for
/// the CPU after the send's overhead, and for the receiving NIC:
///
/// ```text
/// s_{k+1} = max(F_k, s_k + I_k)
/// R_{k+1} = max(s_{k+1} + max(T_{k+1}, os_{k+1} + or_{k+1}), R_k + I_{k+1})
/// ```
///
/// so that, with `T >= os + or` (as on every model kind the cross-checks run), the sender's
/// wait `w_k = s_{k+1} - F_k` and `E_k = I_k - T_k`:
///
/// ```text
/// F_0     = T_0 + op_0                                   (s_0 = 0, R_0 = T_0)
/// F_{k+1} = F_k + T_{k+1} + op_{k+1} + max(w_k, E_{k+1} - op_k, 0)
/// w_0     = max(0, E_0 - op_0)
/// w_{k+1} = max(0, min(E_{k+1} - op_{k+1}, w_k + op_k - op_{k+1}))
/// ```
///
/// The spacing `max(w_k, E_{k+1} - op_k, 0)` is the sender's own lag or the receiver's NIC
/// taking the next message in for its own interval `I_{k+1}` after the previous receive,
/// whichever is later. Without an operator `w_k = max(0, min_{j<=k} E_j)`: the pieces of
/// growing size on a transport whose interval exceeds its time at large sizes only (Open
/// MPI/openib) are spaced by the lag of the larger one, `max(0, E_{k+1})`, where summing
/// `max(0, E_k)` (the sender's lag after the smaller one) fell short. With one constant `E`
/// (LogGP) every spacing is `max(0, E - op)`, the sum of lags as before.
#[derive(Debug, Clone, Copy, Default)]
pub(in crate::collectives) struct Spacings {
    /// `Σ max(w_k, E_{k+1} - op_k, 0)` over the rounds fed so far.
    pub(in crate::collectives) total: f64,
    /// `(w_k, op_k)` of the latest round.
    last: Option<(f64, f64)>,
}

impl Spacings {
    /// The next round: `excess = E` of its piece, `op` its operator.
    #[inline]
    pub(in crate::collectives) fn round(&mut self, excess: f64, op: f64) {
        let wait = match self.last {
            None => (excess - op).max(0.0),
            Some((wait, op_prev)) => {
                self.total += wait.max(excess - op_prev).max(0.0);
                (excess - op).min(wait + op_prev - op).max(0.0)
            }
        };
        self.last = Some((wait, op));
    }

    /// `count >= 1` rounds with one excess `E` and non-increasing operators (`ops`: the first
    /// round's, the second's, the last's), `lags = Σ max(0, E - op_i)` over all rounds but the
    /// last (`lags` ignored for one round): the first round as [`round`](Self::round); inside
    /// the run `w_i <= max(0, E - op_i)` so each further spacing is `max(0, E - op_i)`, and
    /// `v_i = w_i + op_i` follows `v_{i+1} = max(op_{i+1}, min(E, v_i))`, so that
    /// `v_last = max(op_last, min(E, max(op_second, v_first)))` (`op_second` left out for two
    /// rounds, where it is `op_last`).
    pub(in crate::collectives) fn run(
        &mut self,
        excess: f64,
        ops: (f64, f64, f64),
        count: u32,
        lags: f64,
    ) {
        self.round(excess, ops.0);
        if count < 2 {
            return;
        }
        self.total += lags;
        let Some((wait, op)) = self.last else {
            return;
        };
        let v = wait + op;
        let v = if count == 2 { v } else { v.max(ops.1) };
        let v_last = ops.2.max(excess.min(v));
        self.last = Some(((v_last - ops.2).max(0.0), ops.2));
    }
}

/// `Σ_{k=k0}^{k1} max(0, c - b ⌈m / 2^k⌉)` (`1 <= k0`, `k1 < 64`, `b >= 0`): 0 when `c <= 0`;
/// else the pieces `x_k = ⌈m / 2^k⌉` do not grow with `k`, so the positive terms (`x_k <
/// c / b`, i.e. `x_k <= x_max`) are those of `k >= k*`, the first round with
/// `m <= x_max 2^k`, and they sum to `count · c - b Σ x_k` ([`sum_of_halvings`]).
pub(super) fn constant_lag_of_halvings(m: u64, k0: u32, k1: u32, c: f64, b: f64) -> f64 {
    // a NaN (from a custom model's line) gives no lag either, as `f64::max` would
    if c.is_nan() || c <= 0.0 || k0 > k1 {
        return 0.0;
    }
    let count = f64::from(k1 - k0 + 1);
    if b == 0.0 || m == 0 {
        return count * c;
    }
    let pieces = |first: u32| sum_of_halvings(m, k1) - sum_of_halvings(m, first - 1);
    // the common case: even the largest piece is below the threshold (no division)
    if b * (ceil_shift(m, k0) as f64) < c {
        return (count * c - b * pieces(k0) as f64).max(0.0);
    }
    // the largest whole piece strictly below c / b
    let bound = c / b;
    let x_max = if bound >= pow2(64) {
        u64::MAX
    } else {
        (bound.ceil() as u64).saturating_sub(1)
    };
    let first = if x_max >= m {
        k0
    } else if x_max == 0 {
        return 0.0;
    } else {
        // the largest j with `x_max 2^j <= m - 1` is the last round with a piece above x_max
        doublings_within(x_max, m - 1) + 1
    }
    .max(k0);
    if first > k1 {
        return 0.0;
    }
    (f64::from(k1 - first + 1) * c - b * pieces(first) as f64).max(0.0)
}

/// The spacings ([`Spacings`]) of Bruck's allgather rounds `m min(2^k, P - 2^k)`, `k < h`: the
/// doubling rounds `m 2^k`, `k <= h - 2`, then the last one of `m (P - 2^(h-1))` blocks. 0
/// without a model call when the model keeps pace.
pub(in crate::collectives) fn bruck_spacings(pieces: &mut Pieces<'_>, m: u64, p: u64) -> f64 {
    if pieces.keeps_pace() {
        return 0.0;
    }
    let h = ceil_log2(p);
    let mut spacings = Spacings::default();
    pieces.doubling_spacings(m, h - 1, &mut spacings);
    pieces.spaced_round(m.saturating_mul(p - (1u64 << (h - 1))), 0.0, &mut spacings);
    spacings.total
}
