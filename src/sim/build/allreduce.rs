//! The schedules of the textbook allreduces ([`Allreduce`]), the recursive-doubling one computed
//! rather than stored for `P >= 2`.

use super::fold::{fold, unfold};
use super::shapes::ring;
use super::writer::Steps;
use super::{ToSchedule, check_size};
use crate::collectives::{Allreduce, Problem};
use crate::sim::SimError;
use crate::sim::implicit::RecursiveDoublingAllreduce;
use crate::sim::layout::Operations;
use crate::sim::schedule::Schedule;
use crate::util::bits::floor_log2;

impl ToSchedule for Allreduce {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let hp = floor_log2(p);
        let per_rank = match self {
            Self::Ring => 6 * p.saturating_sub(1),
            _ => 6 * u64::from(hp) + 4,
        };
        if *self == Self::RecursiveDoubling {
            return recursive_doubling_allreduce(problem, per_rank);
        }
        let mut w = Steps::new(problem, per_rank)?;
        let m = w.m();
        for r in 0..p {
            w.rank(r);
            match self {
                Self::Ring => {
                    let c = m.div_ceil(p);
                    ring(&mut w, r, p, c, 1, true);
                    ring(&mut w, r, p, c, 2, false);
                }
                // written by recursive_doubling_allreduce
                Self::RecursiveDoubling => {}
                Self::Rabenseifner => {
                    let (rem, pp, new) = fold(p, r);
                    if r < 2 * rem && r % 2 == 0 {
                        w.send_step(r + 1, 0, m);
                        w.recv_step(r + 1, 3, m);
                        continue;
                    }
                    if r < 2 * rem {
                        w.recv_step(r - 1, 0, m);
                        w.op(m);
                    }
                    let new = new.unwrap_or(0);
                    // recursive halving: round k exchanges ⌈m/2^k⌉ with newrank ^ p'/2^k
                    for k in 1..=hp {
                        let piece = m.div_ceil(1 << k);
                        let partner = unfold(rem, new ^ (pp >> k));
                        w.sendrecv(partner, partner, 1, piece, piece);
                        w.op(piece);
                    }
                    // recursive doubling back, the same pieces in reverse
                    for k in (1..=hp).rev() {
                        let piece = m.div_ceil(1 << k);
                        let partner = unfold(rem, new ^ (pp >> k));
                        w.sendrecv(partner, partner, 2, piece, piece);
                    }
                    if r < 2 * rem {
                        w.send_step(r - 1, 3, m);
                    }
                }
            }
        }
        w.finish()
    }
}

/// The recursive-doubling allreduce: the even ranks below `2 rem` hand their data to the odd
/// ones, which reduce; the `p'` remaining ranks exchange with `newrank XOR 2^k` and reduce in
/// round `k`; the result goes back to the even ranks. Each rank's program is that of the
/// per-rank description on [`ToSchedule`]. For `P >= 2` the schedule is computed from this
/// structure rather than stored ([`RecursiveDoublingAllreduce`]), with the operations
/// numbered as [`recursive_doubling_allreduce_stored`] writes them.
pub(super) fn recursive_doubling_allreduce(
    problem: &Problem,
    per_rank: u64,
) -> Result<Schedule, SimError> {
    let p = problem.processes;
    check_size(p, per_rank)?;
    let m = problem.message.bytes();
    let cost = problem.operator.cost(m);
    if !(cost >= 0.0 && cost.is_finite()) {
        return Err(SimError::InvalidTime {
            name: "calc seconds",
            value: cost,
        });
    }
    match RecursiveDoublingAllreduce::new(p, cost > 0.0) {
        Some(layout) => Ok(Schedule::computed(
            p,
            Operations::RecursiveDoublingAllreduce(layout),
            RecursiveDoublingAllreduce::signatures(),
            vec![problem.piece(m)],
            (cost > 0.0).then_some(cost).into_iter().collect(),
        )),
        None => recursive_doubling_allreduce_stored(problem, per_rank),
    }
}

/// The recursive-doubling allreduce stored operation by operation, written round by round
/// (every rank's step of one round together).
pub(super) fn recursive_doubling_allreduce_stored(
    problem: &Problem,
    per_rank: u64,
) -> Result<Schedule, SimError> {
    let p = problem.processes;
    let mut w = Steps::interleaved(problem, per_rank)?;
    let m = w.m();
    let (rem, _, _) = fold(p, 0);
    for r in 0..2 * rem {
        w.at(r);
        if r % 2 == 0 {
            w.send_step(r + 1, 0, m);
        } else {
            w.recv_step(r - 1, 0, m);
            w.op(m);
        }
    }
    // the result goes back with the last round, so that the operations that end the
    // schedule keep the ranks' order among themselves
    let hp = floor_log2(p);
    for k in 0..hp {
        let last = k + 1 == hp;
        for r in 0..p {
            match fold(p, r).2 {
                Some(new) => {
                    w.at(r);
                    let partner = unfold(rem, new ^ (1 << k));
                    w.sendrecv(partner, partner, 1, m, m);
                    w.op(m);
                    if last && r < 2 * rem {
                        w.send_step(r - 1, 3, m);
                    }
                }
                None if last => {
                    w.at(r);
                    w.recv_step(r + 1, 3, m);
                }
                None => {}
            }
        }
    }
    w.finish()
}
