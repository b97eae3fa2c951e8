//! Schedules computed from their structure instead of stored operation by operation.
//!
//! A stored [`Schedule`](super::Schedule) of the recursive-doubling allreduce at `P = 2^20`
//! holds 42 million operations at about 23 bytes each (kind, rank, partner, successor lists).
//! The allreduce's structure is regular enough that every one of these facts is a few integer
//! operations away from the operation's index, so its schedule stores none of them: the
//! simulator asks the layout, and the memory left is the simulation's own state.

use super::op::{KIND_CALC, KIND_RECV, KIND_SEND, NONE, Signature};

/// The signature indices of the recursive-doubling allreduce's table (see
/// [`RecursiveDoublingAllreduce::signatures`]).
const SEND_FOLD: u32 = 0;
const RECV_FOLD: u32 = 1;
const SEND_ROUND: u32 = 2;
const RECV_ROUND: u32 = 3;
const CALC: u32 = 4;
const SEND_BACK: u32 = 5;
const RECV_BACK: u32 = 6;

/// What the operation at one position is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Extra pair `q`: rank `2q` hands its data to `2q + 1`.
    FoldSend(u32),
    /// Extra pair `q`: rank `2q + 1` receives it.
    FoldRecv(u32),
    /// Extra pair `q`: rank `2q + 1` reduces it.
    FoldCalc(u32),
    /// Round `k`: new rank `j` sends to `j XOR 2^k`.
    Send(u32, u32),
    /// Round `k`: new rank `j` receives from `j XOR 2^k`.
    Recv(u32, u32),
    /// Round `k`: new rank `j` reduces.
    Calc(u32, u32),
    /// Extra pair `q`: rank `2q` receives the result from `2q + 1`.
    BackRecv(u32),
    /// Extra pair `q`: rank `2q + 1` sends the result to `2q`.
    BackSend(u32),
}

/// The recursive-doubling allreduce of `P >= 2` ranks, operations numbered as the stored
/// schedule written round by round numbers them (so that both simulate identically, noise
/// draws included):
///
/// 1. for each extra pair `q < rem = P - 2^h` (`h = floor(log2 P)`): the send of rank `2q`,
///    the receive of rank `2q + 1` and, with an operator, its reduction;
/// 2. rounds `k = 0 .. h - 2`: for each new rank `j` in rank order (`j < rem` is rank
///    `2j + 1`, else rank `j + rem`) its send to and receive from `j XOR 2^k` and the reduction;
/// 3. the last round in rank order, where rank `2q` receives the result from `2q + 1` and rank
///    `2q + 1` sends it after its exchange.
///
/// Each step (a send-receive pair, a reduction, a single send or receive) requires every
/// operation of its rank's previous step.
#[derive(Debug, Clone)]
pub(crate) struct RecursiveDoublingAllreduce {
    rem: u32,
    /// `h = floor(log2 P) >= 1`.
    rounds: u32,
    /// Whether each received piece is reduced (a calc after each exchange).
    calc: bool,
    /// Position of round 0's first operation (`rem · (2 + calc)`).
    round_start: u32,
    /// Position of the last round's first operation.
    last_start: u32,
    len: u32,
    dependencies: u64,
}

impl RecursiveDoublingAllreduce {
    /// The layout for `p` ranks (`2 <= p <= 2^24`), `None` outside that range or when the
    /// operations would not fit in `u32` positions.
    pub(crate) fn new(p: u64, calc: bool) -> Option<Self> {
        if !(2..=1 << 24).contains(&p) {
            return None;
        }
        let rounds = 63 - p.leading_zeros();
        let pp = 1u64 << rounds;
        let rem = p - pp;
        let e = 2 + u64::from(calc);
        let round_start = rem * e;
        let last_start = round_start + u64::from(rounds - 1) * pp * e;
        let len = last_start + rem * (e + 2) + (pp - rem) * e;
        // dependencies, counted at their operations: a fold calc 1, a back receive 1, round
        // 0's exchange of an extra pair 2 (one on its previous step), a later exchange 2 · (1
        // or 2), a calc 2, a back send 1 or 2
        let calc_u = u64::from(calc);
        let later = u64::from(rounds - 1) * pp * 2 * (2 - calc_u);
        let dependencies = rem * calc_u
            + rem
            + 2 * rem
            + later
            + calc_u * u64::from(rounds) * pp * 2
            + rem * (2 - calc_u);
        Some(Self {
            rem: u32::try_from(rem).ok()?,
            rounds,
            calc,
            round_start: u32::try_from(round_start).ok()?,
            last_start: u32::try_from(last_start).ok()?,
            len: u32::try_from(len).ok().filter(|&n| n < NONE)?,
            dependencies,
        })
    }

    /// Number of operations.
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    /// Number of dependencies.
    pub(crate) fn dependencies(&self) -> usize {
        self.dependencies as usize
    }

    /// The table the signature indices point into: messages are class 0 (the one message
    /// size), the reduction is calc class 0.
    pub(crate) fn signatures() -> Vec<Signature> {
        let (send, recv, calc) = (KIND_SEND, KIND_RECV, KIND_CALC);
        [
            (send, 0),
            (recv, 0),
            (send, 1),
            (recv, 1),
            (calc, 0),
            (send, 3),
            (recv, 3),
        ]
        .into_iter()
        .map(|(kind, tag)| Signature {
            kind,
            tag,
            class: 0,
        })
        .collect()
    }

    /// `x / (2 + calc)`, with a constant divisor.
    #[inline(always)]
    fn per_step(&self, x: u32) -> u32 {
        if self.calc { x / 3 } else { x / 2 }
    }

    /// Operations of a step of the exchange rounds (`2 + calc`).
    #[inline(always)]
    fn step_ops(&self) -> u32 {
        2 + u32::from(self.calc)
    }

    #[inline(always)]
    fn slot(&self, i: u32) -> Slot {
        let e = self.step_ops();
        if i < self.round_start {
            let q = self.per_step(i);
            return match i - q * e {
                0 => Slot::FoldSend(q),
                1 => Slot::FoldRecv(q),
                _ => Slot::FoldCalc(q),
            };
        }
        let (k, j, s) = if i < self.last_start {
            let x = i - self.round_start;
            let u = self.per_step(x);
            (u >> self.rounds, u & ((1 << self.rounds) - 1), x - u * e)
        } else {
            let y = i - self.last_start;
            let f = e + 2;
            let k = self.rounds - 1;
            if y < self.rem * f {
                let q = if self.calc { y / 5 } else { y / 4 };
                match y - q * f {
                    0 => return Slot::BackRecv(q),
                    s if s == f - 1 => return Slot::BackSend(q),
                    s => (k, q, s - 1),
                }
            } else {
                let z = y - self.rem * f;
                let u = self.per_step(z);
                (k, self.rem + u, z - u * e)
            }
        };
        match s {
            0 => Slot::Send(k, j),
            1 => Slot::Recv(k, j),
            _ => Slot::Calc(k, j),
        }
    }

    /// Position of the send of new rank `j` in round `k` (its receive and reduction follow).
    #[inline(always)]
    fn exchange(&self, k: u32, j: u32) -> u32 {
        let e = self.step_ops();
        if k + 1 < self.rounds {
            self.round_start + ((k << self.rounds) + j) * e
        } else if j < self.rem {
            self.last_start + j * (e + 2) + 1
        } else {
            self.last_start + self.rem * (e + 2) + (j - self.rem) * e
        }
    }

    #[inline(always)]
    fn back_recv(&self, q: u32) -> u32 {
        self.last_start + q * (self.step_ops() + 2)
    }

    #[inline(always)]
    fn back_send(&self, q: u32) -> u32 {
        self.back_recv(q) + self.step_ops() + 1
    }

    /// The signature index of operation `i`.
    #[inline(always)]
    pub(crate) fn signature(&self, i: usize) -> u32 {
        match self.slot(i as u32) {
            Slot::FoldSend(_) => SEND_FOLD,
            Slot::FoldRecv(_) => RECV_FOLD,
            Slot::Send(..) => SEND_ROUND,
            Slot::Recv(..) => RECV_ROUND,
            Slot::FoldCalc(_) | Slot::Calc(..) => CALC,
            Slot::BackSend(_) => SEND_BACK,
            Slot::BackRecv(_) => RECV_BACK,
        }
    }

    /// The rank of operation `i`.
    #[inline(always)]
    pub(crate) fn rank(&self, i: usize) -> u32 {
        match self.slot(i as u32) {
            Slot::FoldSend(q) | Slot::BackRecv(q) => 2 * q,
            Slot::FoldRecv(q) | Slot::FoldCalc(q) | Slot::BackSend(q) => 2 * q + 1,
            Slot::Send(_, j) | Slot::Recv(_, j) | Slot::Calc(_, j) => {
                if j < self.rem {
                    2 * j + 1
                } else {
                    j + self.rem
                }
            }
        }
    }

    /// The matched operation of a send or receive, `NONE` for a calc.
    #[inline(always)]
    pub(crate) fn partner(&self, i: usize) -> u32 {
        let e = self.step_ops();
        match self.slot(i as u32) {
            Slot::FoldSend(q) => q * e + 1,
            Slot::FoldRecv(q) => q * e,
            Slot::Send(k, j) => self.exchange(k, j ^ (1 << k)) + 1,
            Slot::Recv(k, j) => self.exchange(k, j ^ (1 << k)),
            Slot::BackSend(q) => self.back_recv(q),
            Slot::BackRecv(q) => self.back_send(q),
            Slot::FoldCalc(_) | Slot::Calc(..) => NONE,
        }
    }

    /// Calls `f(i, d)` for every operation `i`, in order, with its number of dependencies `d`
    /// (the operations of its rank's previous step), without decoding positions.
    pub(crate) fn dependency_counts(&self, mut f: impl FnMut(usize, u32)) {
        let calc = u32::from(self.calc);
        // an exchange after a reduction waits for it; after an exchange, for both its halves
        let after_step = 2 - calc;
        let mut i = 0usize;
        let mut put = |d: u32| {
            f(i, d);
            i += 1;
        };
        let step = |put: &mut dyn FnMut(u32), exchange: u32| {
            put(exchange);
            put(exchange);
            if calc == 1 {
                put(2);
            }
        };
        for _ in 0..self.rem {
            put(0);
            put(0);
            if calc == 1 {
                put(1);
            }
        }
        let pp = 1u32 << self.rounds;
        for k in 0..self.rounds {
            // round 0: an extra pair's odd rank waits for its fold step, the others for nothing
            let first = |j: u32| {
                if k > 0 {
                    after_step
                } else {
                    u32::from(j < self.rem)
                }
            };
            if k + 1 < self.rounds {
                for j in 0..pp {
                    step(&mut put, first(j));
                }
            } else {
                for j in 0..pp {
                    if j < self.rem {
                        put(1);
                    }
                    step(&mut put, first(j));
                    if j < self.rem {
                        put(after_step);
                    }
                }
            }
        }
    }

    /// `(signature, rank, partner)` of operation `i`, decoded once.
    #[inline(always)]
    pub(crate) fn describe(&self, i: usize) -> (u32, u32, u32) {
        let e = self.step_ops();
        let new_rank = |j: u32| {
            if j < self.rem {
                2 * j + 1
            } else {
                j + self.rem
            }
        };
        match self.slot(i as u32) {
            Slot::FoldSend(q) => (SEND_FOLD, 2 * q, q * e + 1),
            Slot::FoldRecv(q) => (RECV_FOLD, 2 * q + 1, q * e),
            Slot::FoldCalc(q) => (CALC, 2 * q + 1, NONE),
            Slot::Send(k, j) => (SEND_ROUND, new_rank(j), self.exchange(k, j ^ (1 << k)) + 1),
            Slot::Recv(k, j) => (RECV_ROUND, new_rank(j), self.exchange(k, j ^ (1 << k))),
            Slot::Calc(_, j) => (CALC, new_rank(j), NONE),
            Slot::BackSend(q) => (SEND_BACK, 2 * q + 1, self.back_recv(q)),
            Slot::BackRecv(q) => (RECV_BACK, 2 * q, self.back_send(q)),
        }
    }

    /// The positions of the operations that require operation `i` (always consecutive).
    #[inline(always)]
    pub(crate) fn successors(&self, i: usize) -> std::ops::Range<u32> {
        let next_step = |k: u32, j: u32| {
            if k + 1 < self.rounds {
                let s = self.exchange(k + 1, j);
                s..s + 2
            } else if j < self.rem {
                let s = self.back_send(j);
                s..s + 1
            } else {
                0..0
            }
        };
        match self.slot(i as u32) {
            Slot::FoldSend(q) => {
                let s = self.back_recv(q);
                s..s + 1
            }
            Slot::FoldRecv(q) if self.calc => {
                let s = q * self.step_ops() + 2;
                s..s + 1
            }
            Slot::FoldRecv(q) | Slot::FoldCalc(q) => {
                let s = self.exchange(0, q);
                s..s + 2
            }
            Slot::Send(k, j) | Slot::Recv(k, j) if self.calc => {
                let s = self.exchange(k, j) + 2;
                s..s + 1
            }
            Slot::Send(k, j) | Slot::Recv(k, j) | Slot::Calc(k, j) => next_step(k, j),
            Slot::BackSend(_) | Slot::BackRecv(_) => 0..0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every position decodes to a slot whose own position is that position (the layout is a
    /// bijection onto `0..len`), for sizes around powers of two, with and without a calc.
    #[test]
    fn positions_and_slots_are_one_to_one() {
        for p in (2..70u64).chain([127, 128, 129, 1000, 1023, 1024, 1025]) {
            for calc in [false, true] {
                let x = RecursiveDoublingAllreduce::new(p, calc).unwrap();
                let mut seen = vec![false; x.len()];
                for i in 0..x.len() as u32 {
                    let e = x.step_ops();
                    let back = match x.slot(i) {
                        Slot::FoldSend(q) => q * e,
                        Slot::FoldRecv(q) => q * e + 1,
                        Slot::FoldCalc(q) => q * e + 2,
                        Slot::Send(k, j) => x.exchange(k, j),
                        Slot::Recv(k, j) => x.exchange(k, j) + 1,
                        Slot::Calc(k, j) => x.exchange(k, j) + 2,
                        Slot::BackRecv(q) => x.back_recv(q),
                        Slot::BackSend(q) => x.back_send(q),
                    };
                    assert_eq!(back, i, "P {p}, calc {calc}, slot {:?}", x.slot(i));
                    assert!(!std::mem::replace(&mut seen[i as usize], true));
                    assert!((x.rank(i as usize) as u64) < p);
                }
            }
        }
        assert!(RecursiveDoublingAllreduce::new(1, true).is_none());
        assert!(RecursiveDoublingAllreduce::new((1 << 24) + 1, true).is_none());
    }

    /// The dependency counts written block by block are the counts of the successor lists
    /// (a second formulation), and sum to `dependencies`.
    #[test]
    fn dependency_counts_match_the_successor_lists() {
        for p in (2..70u64).chain([127, 128, 129, 1000, 1023, 1024, 1025]) {
            for calc in [false, true] {
                let x = RecursiveDoublingAllreduce::new(p, calc).unwrap();
                let mut by_successors = vec![0u32; x.len()];
                for i in 0..x.len() {
                    for s in x.successors(i) {
                        by_successors[s as usize] += 1;
                    }
                }
                let mut counts = vec![0u32; x.len()];
                let mut next = 0;
                x.dependency_counts(|i, d| {
                    assert_eq!(i, next, "P {p}: in order");
                    next += 1;
                    counts[i] += d;
                });
                assert_eq!(next, x.len(), "P {p}, calc {calc}");
                assert_eq!(counts, by_successors, "P {p}, calc {calc}");
                let total: u64 = counts.iter().map(|&d| u64::from(d)).sum();
                assert_eq!(total, x.dependencies() as u64, "P {p}, calc {calc}");
            }
        }
    }
}
