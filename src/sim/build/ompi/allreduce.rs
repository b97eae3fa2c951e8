//! The schedules of Open MPI's allreduces ([`Allreduce`]).

use super::*;
use crate::collectives::ompi::{Allreduce, inner};
use crate::collectives::{self as textbook, Problem};
use crate::sim::SimError;
use crate::sim::build::ToSchedule;
use crate::sim::build::writer::Calls;
use crate::sim::schedule::Schedule;
use crate::util::bits::floor_log2;

impl ToSchedule for Allreduce {
    /// `ompi_coll_base_allreduce_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        let m = problem.message.bytes();
        match *self {
            Self::BasicLinear => {
                let mut w = Calls::new(problem, 6)?;
                for r in 0..p {
                    w.rank(r);
                    if p > 1 {
                        linear_reduce(&mut w, r, p, 0, m);
                        linear_bcast(&mut w, r, p, 1, m);
                    }
                }
                w.finish()
            }
            // ompi_coll_base_allreduce_intra_nonoverlapping: MPI_Reduce to 0, then MPI_Bcast
            // from 0, as the fixed decisions pick them
            Self::Nonoverlapping => {
                let (reduce, bcast) = inner::allreduce_nonoverlapping(p, m);
                sequence(&reduce.schedule(problem)?, &bcast.schedule(problem)?)
            }
            Self::RecursiveDoubling => textbook::Allreduce::RecursiveDoubling.schedule(problem),
            Self::Ring | Self::SegmentedRing { segment: 0 } => {
                if m < p {
                    textbook::Allreduce::RecursiveDoubling.schedule(problem)
                } else {
                    textbook::Allreduce::Ring.schedule(problem)
                }
            }
            Self::SegmentedRing { segment } => {
                let round = p.saturating_mul(segment);
                if m < round {
                    return Self::Ring.schedule(problem);
                }
                let rest = m % round;
                let phases = m / round + u64::from(rest >= p && rest > round / 2);
                let c = m.div_ceil(p);
                let piece = c.div_ceil(phases);
                let per_rank = phases.saturating_add(1).saturating_mul(3 * p);
                let mut w = Calls::new(problem, per_rank)?;
                for r in 0..p {
                    w.rank(r);
                    for phase in 0..phases {
                        ring(&mut w, r, p, piece, 1 + (phase % 1000) as u32, true);
                    }
                    ring(&mut w, r, p, c, 0, false);
                }
                w.finish()
            }
            Self::Rabenseifner => {
                let hp = floor_log2(p);
                if m < 1u64 << hp {
                    return Self::BasicLinear.schedule(problem);
                }
                let mut w = Calls::new(problem, 6 * u64::from(hp) + 8)?;
                for r in 0..p {
                    w.rank(r);
                    let (rem, pp, new) = fold_even(p, r);
                    let half = m.div_ceil(2);
                    if r < 2 * rem {
                        // exchange halves, reduce one; the odd process sends its reduced half
                        // to the even one and waits for the result
                        let partner = r ^ 1;
                        w.sendrecv(partner, partner, 0, half, half);
                        w.op(half);
                        if r % 2 == 1 {
                            w.send(partner, 1, half);
                            w.recv(partner, 9, m);
                            continue;
                        }
                        w.recv(partner, 1, half);
                    }
                    let new = new.unwrap_or(0);
                    rabenseifner_halving(&mut w, rem, pp, new, m, 2);
                    rabenseifner_doubling(&mut w, rem, pp, new, m, 3);
                    if r < 2 * rem {
                        w.send(r + 1, 9, m);
                    }
                }
                w.finish()
            }
        }
    }
}
