//! The schedules of Open MPI's allgathers ([`Allgather`]).

use super::tree::Tree;
use super::*;
use crate::collectives::ompi::Allgather;
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
            Self::Linear => {
                let tree = Tree::binomial(p);
                let all = m.saturating_mul(p);
                let mut w = Calls::new(problem, 4 + 2 * tree.max_children())?;
                for r in 0..p {
                    w.rank(r);
                    if r == 0 {
                        for peer in 1..p {
                            w.recv(peer, 0, m);
                        }
                    } else {
                        w.send(0, 0, m);
                    }
                    bcast_generic(&mut w, &tree, r, all, 1, 1);
                }
                w.finish()
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
