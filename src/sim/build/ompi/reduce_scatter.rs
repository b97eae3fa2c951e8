//! The schedules of Open MPI's reduce-scatters ([`ReduceScatter`]).

use super::*;
use crate::collectives::Problem;
use crate::collectives::ompi::{ReduceScatter, inner};
use crate::sim::SimError;
use crate::sim::build::ToSchedule;
use crate::sim::build::fold::{fold, unfold};
use crate::sim::build::writer::Calls;
use crate::sim::schedule::Schedule;
use crate::util::bits::{ceil_log2, floor_log2};

impl ToSchedule for ReduceScatter {
    /// `ompi_coll_base_reduce_scatter_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        let m = problem.message.bytes();
        let c = m.div_ceil(p);
        let h = u64::from(ceil_log2(p));
        let per_rank = match self {
            Self::Ring => 3 * p,
            _ => 4 * h + 10,
        };
        if *self == Self::NonOverlapping && p > 1 {
            // ompi_coll_base_reduce_scatter_intra_nonoverlapping: MPI_Reduce to 0 as the fixed
            // decision picks it, then the basic component's MPI_Scatterv
            // (mca_coll_basic_scatterv_intra): the root's blocking sends in rank order
            let reduce = inner::reduce_scatter_nonoverlapping(p, m);
            let mut w = Calls::new(problem, 2)?;
            for r in 0..p {
                w.rank(r);
                if r == 0 {
                    for peer in 1..p {
                        w.send(peer, 0, c);
                    }
                } else {
                    w.recv(0, 0, c);
                }
            }
            return sequence(&reduce.schedule(problem)?, &w.finish()?);
        }
        let mut w = Calls::new(problem, per_rank)?;
        for r in 0..p {
            w.rank(r);
            if p == 1 {
                continue;
            }
            match self {
                // two calls, written above
                Self::NonOverlapping => {}
                Self::Ring => ring(&mut w, r, p, c, 0, true),
                Self::RecursiveHalving | Self::Butterfly => {
                    let (rem, pp, new) = fold(p, r);
                    if r < 2 * rem {
                        if r % 2 == 0 {
                            w.send(r + 1, 0, m);
                            w.recv(r + 1, 9, c);
                            continue;
                        }
                        w.recv(r - 1, 0, m);
                        w.op(m);
                    }
                    let new = new.unwrap_or(0);
                    // round k = 1 … h' exchanges ⌈m/2^k⌉: recursive halving pairs at distance
                    // p'/2^k, the butterfly at distance 2^(k-1)
                    for k in 1..=floor_log2(p) {
                        let mask = if *self == Self::RecursiveHalving {
                            pp >> k
                        } else {
                            1u64 << (k - 1)
                        };
                        let peer = unfold(rem, new ^ mask);
                        let piece = m.div_ceil(1u64 << k);
                        w.sendrecv(peer, peer, 1, piece, piece);
                        w.op(piece);
                    }
                    if r < 2 * rem {
                        w.send(r - 1, 9, c);
                    }
                }
            }
        }
        w.finish()
    }
}
