//! The schedules of the textbook broadcasts ([`Bcast`]).

use super::ToSchedule;
use super::shapes::{binomial_down, linear_out, ring};
use super::writer::Steps;
use crate::collectives::CollectiveError;
use crate::collectives::{Bcast, Problem};
use crate::sim::SimError;
use crate::sim::op::OpId;
use crate::sim::schedule::Schedule;
use crate::util::bits::{ceil_log2, lowbit};

impl ToSchedule for Bcast {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        match *self {
            Self::Linear => linear_out(problem, problem.message.bytes()),
            Self::Binomial => {
                // the programs of `binomial_down`, written by the receiving rank's class: rank
                // `c > 0` receives from `c - lowbit(c)`; on a homogeneous model every hop costs
                // the same, so a rank's receive time depends only on its depth (the number of
                // set bits, `k`) and the position of its lowest set bit `b` — ranks of one class
                // receive together. Classes are written by depth, then by descending `b`, so a
                // parent's receive precedes its sends and its sends keep their order
                // (descending masks); the events of one time then lie together in memory
                let mut w = Steps::interleaved(problem, 2)?;
                let m = w.m();
                let h = ceil_log2(p) as usize;
                let class = |c: u64| {
                    (c.count_ones() as usize - 1) * h + (h - 1) - c.trailing_zeros() as usize
                };
                let mut start = vec![0u32; h * h + 1];
                for c in 1..p {
                    start[class(c) + 1] += 1;
                }
                for i in 0..h * h {
                    start[i + 1] += start[i];
                }
                let mut order = vec![0u32; p.saturating_sub(1) as usize];
                for c in 1..p {
                    let slot = &mut start[class(c)];
                    order[*slot as usize] = c as u32;
                    *slot += 1;
                }
                for c in order {
                    let c = u64::from(c);
                    let parent = c - lowbit(c);
                    w.at(parent);
                    w.send_step(c, 0, m);
                    w.at(c);
                    w.recv_step(parent, 0, m);
                }
                w.finish()
            }
            Self::ScatterAllgather => {
                let mut w = Steps::new(problem, 2 + 2 * p.saturating_sub(1))?;
                let c = w.m().div_ceil(p);
                for r in 0..p {
                    w.rank(r);
                    binomial_down(&mut w, r, p, |child| c * lowbit(child).min(p - child));
                    ring(&mut w, r, p, c, 1, false);
                }
                w.finish()
            }
            Self::Pipelined { segment } => {
                if segment == 0 {
                    return Err(CollectiveError::ZeroSegment.into());
                }
                let m = problem.message.bytes();
                let s = segment.min(m);
                let q = m.div_ceil(segment).max(1);
                let mut w = Steps::new(problem, q.saturating_mul(2))?;
                for r in 0..p {
                    w.rank(r);
                    // an inner rank alternates: receive segment j, forward it, then post the
                    // receive of segment j + 1; the root and the last rank only send or receive
                    let mut last_send: Option<OpId> = None;
                    for _ in 0..q {
                        let recv = (r > 0).then(|| {
                            let op = w.b.recv_message(r, r - 1, 0, problem.piece(s));
                            if let Some(prev) = last_send {
                                w.b.requires(op, prev);
                            }
                            op
                        });
                        if r + 1 < p {
                            let op = w.b.send_message(r, r + 1, 0, problem.piece(s));
                            if let Some(rv) = recv {
                                w.b.requires(op, rv);
                            }
                            last_send = Some(op);
                        }
                    }
                }
                w.finish()
            }
        }
    }
}
