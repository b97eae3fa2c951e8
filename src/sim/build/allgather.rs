//! The schedules of the textbook allgathers ([`Allgather`]).

use super::ToSchedule;
use super::fold::{fold, unfold};
use super::shapes::ring;
use super::writer::Steps;
use crate::collectives::{Allgather, Problem};
use crate::sim::SimError;
use crate::sim::schedule::Schedule;
use crate::util::bits::{ceil_log2, floor_log2};

impl ToSchedule for Allgather {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let h = ceil_log2(p);
        let per_rank = match self {
            Self::Ring => 2 * p.saturating_sub(1),
            _ => 2 * u64::from(h) + 2,
        };
        let mut w = Steps::new(problem, per_rank)?;
        let m = w.m();
        for r in 0..p {
            w.rank(r);
            match self {
                Self::Ring => ring(&mut w, r, p, m, 0, false),
                Self::RecursiveDoubling => {
                    let (rem, pp, new) = fold(p, r);
                    let total = m.saturating_mul(p);
                    if r < 2 * rem && r % 2 == 0 {
                        w.send_step(r + 1, 0, m);
                        w.recv_step(r + 1, 3, total);
                        continue;
                    }
                    if r < 2 * rem {
                        w.recv_step(r - 1, 0, m);
                    }
                    let new = new.unwrap_or(0);
                    let c = m.saturating_mul(p.div_ceil(pp));
                    for k in 0..floor_log2(p) {
                        let partner = unfold(rem, new ^ (1 << k));
                        let piece = c.saturating_mul(1 << k);
                        w.sendrecv(partner, partner, 1, piece, piece);
                    }
                    if r < 2 * rem {
                        w.send_step(r - 1, 3, total);
                    }
                }
                Self::Bruck => {
                    for k in 0..h {
                        let d = 1u64 << k;
                        let piece = m.saturating_mul(d.min(p - d));
                        w.sendrecv((r + p - d) % p, (r + d) % p, k, piece, piece);
                    }
                }
            }
        }
        w.finish()
    }
}
