//! The schedules of Open MPI's scatters ([`Scatter`]).

use super::*;
use crate::collectives::ompi::Scatter;
use crate::collectives::{self as textbook, Problem};
use crate::sim::SimError;
use crate::sim::build::ToSchedule;
use crate::sim::build::writer::Calls;
use crate::sim::schedule::Schedule;

impl ToSchedule for Scatter {
    /// `ompi_coll_base_scatter_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        let m = problem.message.bytes();
        match self {
            Self::Binomial => textbook::Scatter::Binomial.schedule(problem),
            Self::BasicLinear | Self::LinearNb => {
                let mut w = Calls::new(problem, 2)?;
                for r in 0..p {
                    w.rank(r);
                    if r == 0 {
                        for peer in 1..p {
                            if *self == Self::BasicLinear {
                                w.send(peer, 0, m);
                            } else {
                                w.isend(peer, 0, m);
                            }
                        }
                        w.waitall();
                    } else {
                        w.recv(0, 0, m);
                    }
                }
                w.finish()
            }
        }
    }
}
