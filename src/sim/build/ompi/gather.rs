//! The schedules of Open MPI's gathers ([`Gather`]).

use super::*;
use crate::collectives::ompi::Gather;
use crate::collectives::{self as textbook, Problem};
use crate::sim::SimError;
use crate::sim::build::ToSchedule;
use crate::sim::build::writer::Calls;
use crate::sim::schedule::Schedule;

impl ToSchedule for Gather {
    /// `ompi_coll_base_gather_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        let m = problem.message.bytes();
        match *self {
            Self::Binomial => textbook::Gather::Binomial.schedule(problem),
            Self::BasicLinear => {
                let mut w = Calls::new(problem, 2)?;
                for r in 0..p {
                    w.rank(r);
                    if r == 0 {
                        for peer in 1..p {
                            w.recv(peer, 0, m);
                        }
                    } else {
                        w.send(0, 0, m);
                    }
                }
                w.finish()
            }
            Self::LinearSync { segment } => {
                let first = if segment == 0 { m } else { segment.min(m) };
                let rest = m - first;
                let mut w = Calls::new(problem, 8)?;
                for r in 0..p {
                    w.rank(r);
                    if r == 0 {
                        // per process: post the first segment's receive, send the go-ahead,
                        // post the rest's receive, wait for the first segment
                        let mut rests = Vec::new();
                        for peer in 1..p {
                            let head = w.irecv(peer, 1, first);
                            w.send(peer, 0, 0);
                            if rest > 0 {
                                rests.push(w.irecv(peer, 2, rest));
                            }
                            w.wait(head);
                        }
                        for h in rests {
                            w.wait(h);
                        }
                    } else {
                        w.recv(0, 0, 0);
                        w.send(0, 1, first);
                        if rest > 0 {
                            w.send(0, 2, rest);
                        }
                    }
                }
                w.finish()
            }
        }
    }
}
