//! The schedules of Open MPI's all-to-alls ([`Alltoall`]).

use super::*;
use crate::collectives::ompi::Alltoall;
use crate::collectives::{self as textbook, Problem};
use crate::sim::SimError;
use crate::sim::build::ToSchedule;
use crate::sim::build::writer::Calls;
use crate::sim::op::OpId;
use crate::sim::schedule::Schedule;

impl ToSchedule for Alltoall {
    /// `ompi_coll_base_alltoall_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        if *self == Self::TwoProc {
            two_proc_only(p)?;
        }
        let m = problem.message.bytes();
        match *self {
            Self::Pairwise => textbook::Alltoall::PairwiseExchange.schedule(problem),
            Self::ModifiedBruck => textbook::Alltoall::Bruck.schedule(problem),
            Self::Linear | Self::LinearSync { .. } => {
                let batch = match *self {
                    Self::LinearSync { max_requests } if max_requests != 0 && max_requests < p => {
                        max_requests
                    }
                    _ => p.saturating_sub(1).max(1),
                };
                let mut w = Calls::new(problem, 2 * p)?;
                for r in 0..p {
                    w.rank(r);
                    // batches of receives from r - j and sends to r + j, j = 1 … P - 1
                    let mut j = 1;
                    while j < p {
                        let end = (j + batch).min(p);
                        let recvs: Vec<OpId> =
                            (j..end).map(|d| w.irecv((r + p - d) % p, 0, m)).collect();
                        for d in j..end {
                            w.isend((r + d) % p, 0, m);
                        }
                        for h in recvs {
                            w.wait(h);
                        }
                        w.waitall();
                        j = end;
                    }
                }
                w.finish()
            }
            Self::TwoProc => two_proc_exchange(problem, m),
        }
    }
}
