//! The schedules of Open MPI's allgathers ([`Allgather`]).

use super::*;
use crate::collectives::ompi::{Allgather, inner};
use crate::collectives::{self as textbook, Problem};
use crate::sim::SimError;
use crate::sim::build::ToSchedule;
use crate::sim::build::writer::Calls;
use crate::sim::schedule::Schedule;

impl ToSchedule for Allgather {
    /// `ompi_coll_base_allgather_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        if *self == Self::TwoProc {
            two_proc_only(p)?;
        }
        let m = problem.message.bytes();
        match self {
            // ompi_coll_base_allgather_intra_basic_linear: MPI_Gather to 0, then MPI_Bcast of
            // P m bytes from 0, as the fixed decisions pick them
            Self::Linear => {
                let (gather, bcast) = inner::allgather_linear(p, m);
                let all = problem.with_bytes(m.saturating_mul(p));
                sequence(&gather.schedule(problem)?, &bcast.schedule(&all)?)
            }
            Self::Bruck => textbook::Allgather::Bruck.schedule(problem),
            Self::RecursiveDoubling => {
                if p.is_power_of_two() {
                    textbook::Allgather::RecursiveDoubling.schedule(problem)
                } else {
                    textbook::Allgather::Bruck.schedule(problem)
                }
            }
            Self::Ring => textbook::Allgather::Ring.schedule(problem),
            Self::Neighbor => {
                if p % 2 == 1 {
                    return textbook::Allgather::Ring.schedule(problem);
                }
                let mut w = Calls::new(problem, p + 2)?;
                let two = m.saturating_mul(2);
                for r in 0..p {
                    w.rank(r);
                    // even ranks: first the right neighbour, then alternate; odd: the left
                    let (first, second) = if r % 2 == 0 {
                        ((r + 1) % p, (r + p - 1) % p)
                    } else {
                        ((r + p - 1) % p, (r + 1) % p)
                    };
                    w.sendrecv(first, first, 0, m, m);
                    for i in 1..p / 2 {
                        let peer = if i % 2 == 1 { second } else { first };
                        w.sendrecv(peer, peer, 0, two, two);
                    }
                }
                w.finish()
            }
            Self::TwoProc => two_proc_exchange(problem, m),
        }
    }
}
