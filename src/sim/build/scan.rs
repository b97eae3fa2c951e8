//! The schedules of the textbook scans ([`Scan`]).

use super::ToSchedule;
use super::writer::Steps;
use crate::collectives::{Problem, Scan};
use crate::sim::SimError;
use crate::sim::schedule::Schedule;
use crate::util::bits::ceil_log2;

impl ToSchedule for Scan {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        match self {
            Self::LinearChain => {
                let mut w = Steps::new(problem, 3)?;
                let m = w.m();
                for r in 0..p {
                    w.rank(r);
                    if r > 0 {
                        w.recv_step(r - 1, 0, m);
                        w.op(m);
                    }
                    if r + 1 < p {
                        w.send_step(r + 1, 0, m);
                    }
                }
                w.finish()
            }
            Self::RecursiveDoubling => {
                let h = ceil_log2(p);
                let mut w = Steps::new(problem, 3 * u64::from(h))?;
                let m = w.m();
                for r in 0..p {
                    w.rank(r);
                    for k in 0..h {
                        let d = 1u64 << k;
                        if r + d < p {
                            w.send(r + d, k, m);
                        }
                        let receives = r >= d;
                        if receives {
                            w.recv(r - d, k, m);
                        }
                        w.end_step();
                        if receives {
                            w.op(m);
                        }
                    }
                }
                w.finish()
            }
        }
    }
}
