//! The schedules of Open MPI's reduce-scatters ([`ReduceScatter`]).

use super::tree::Tree;
use super::*;
use crate::collectives::Problem;
use crate::collectives::ompi::ReduceScatter;
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
        // the non-overlapping root's P - 1 scatter sends are one more per rank on average
        let per_rank = match self {
            Self::Ring => 3 * p,
            _ => 4 * h + 10,
        };
        let mut w = Calls::new(problem, per_rank)?;
        for r in 0..p {
            w.rank(r);
            if p == 1 {
                continue;
            }
            match self {
                Self::NonOverlapping => {
                    let tree = Tree::binomial(p);
                    reduce_generic(&mut w, &tree, r, m, 1);
                    linear_bcast(&mut w, r, p, 1, c);
                }
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
