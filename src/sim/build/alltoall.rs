//! The schedules of the textbook all-to-alls ([`Alltoall`]).

use super::ToSchedule;
use super::writer::Steps;
use crate::collectives::{Alltoall, Problem};
use crate::sim::SimError;
use crate::sim::schedule::Schedule;
use crate::util::bits::{blocks_with_bit, ceil_log2};

impl ToSchedule for Alltoall {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let h = ceil_log2(p);
        let per_rank = match self {
            Self::PairwiseExchange => 2 * p.saturating_sub(1),
            Self::Bruck => 2 * u64::from(h),
        };
        let mut w = Steps::new(problem, per_rank)?;
        let m = w.m();
        for r in 0..p {
            w.rank(r);
            match self {
                Self::PairwiseExchange => {
                    for k in 1..p {
                        w.sendrecv((r + k) % p, (r + p - k) % p, 0, m, m);
                    }
                }
                Self::Bruck => {
                    for k in 0..h {
                        let d = 1u64 << k;
                        let piece = m.saturating_mul(blocks_with_bit(p, k));
                        w.sendrecv((r + d) % p, (r + p - d) % p, k, piece, piece);
                    }
                }
            }
        }
        w.finish()
    }
}
