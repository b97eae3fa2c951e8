//! The schedules of Open MPI's barriers ([`Barrier`]).

use super::*;
use crate::collectives::Problem;
use crate::collectives::ompi::Barrier;
use crate::sim::SimError;
use crate::sim::build::ToSchedule;
use crate::sim::build::writer::Calls;
use crate::sim::schedule::Schedule;
use crate::util::bits::{ceil_log2, floor_log2};

impl ToSchedule for Barrier {
    /// `ompi_coll_base_barrier_intra_*`, as Open MPI 4.1 runs them (`docs/SIMULATOR.md`).
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        check_ranks(p)?;
        if *self == Self::TwoProc {
            two_proc_only(p)?;
        }
        // a barrier's messages are empty, whatever the problem's message
        let problem = &problem.with_bytes(0);
        let h = u64::from(ceil_log2(p));
        let mut w = Calls::new(problem, 4 * h + 8)?;
        for r in 0..p {
            w.rank(r);
            if p == 1 {
                continue;
            }
            match self {
                Self::Linear => {
                    if r == 0 {
                        for peer in 1..p {
                            w.recv(peer, 0, 0);
                        }
                        for peer in 1..p {
                            w.isend(peer, 1, 0);
                        }
                        w.waitall();
                    } else {
                        w.send(0, 0, 0);
                        w.recv(0, 1, 0);
                    }
                }
                Self::DoubleRing => {
                    let (left, right) = ((r + p - 1) % p, (r + 1) % p);
                    for trip in 0..2 {
                        if r > 0 {
                            w.recv(left, trip, 0);
                        }
                        w.send(right, trip, 0);
                        if r == 0 {
                            w.recv(left, trip, 0);
                        }
                    }
                }
                Self::RecursiveDoubling => {
                    let pp = 1u64 << floor_log2(p);
                    if r >= pp {
                        w.send(r - pp, 0, 0);
                        w.recv(r - pp, 2, 0);
                        continue;
                    }
                    if r < p - pp {
                        w.recv(r + pp, 0, 0);
                    }
                    let mut mask = 1;
                    while mask < pp {
                        w.sendrecv(r ^ mask, r ^ mask, 1, 0, 0);
                        mask <<= 1;
                    }
                    if r < p - pp {
                        w.send(r + pp, 2, 0);
                    }
                }
                Self::Bruck => {
                    let mut d = 1;
                    let mut k = 0;
                    while d < p {
                        w.sendrecv((r + d) % p, (r + p - d) % p, k, 0, 0);
                        d <<= 1;
                        k += 1;
                    }
                }
                Self::TwoProc => w.sendrecv(1 - r, 1 - r, 0, 0, 0),
                Self::Tree => {
                    let depth = 1u64 << ceil_log2(p);
                    let mut jump = 1;
                    while jump < depth {
                        let partner = r ^ jump;
                        if partner & (jump - 1) == 0 && partner < p {
                            if partner > r {
                                w.recv(partner, 0, 0);
                            } else {
                                w.send(partner, 0, 0);
                            }
                        }
                        jump <<= 1;
                    }
                    let mut jump = depth >> 1;
                    while jump > 0 {
                        let partner = r ^ jump;
                        if partner & (jump - 1) == 0 && partner < p {
                            if partner > r {
                                w.send(partner, 1, 0);
                            } else {
                                w.recv(partner, 1, 0);
                            }
                        }
                        jump >>= 1;
                    }
                }
            }
        }
        w.finish()
    }
}
