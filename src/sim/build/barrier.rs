//! The schedules of the textbook barriers ([`Barrier`]).

use super::ToSchedule;
use super::writer::Steps;
use crate::collectives::{Barrier, Problem};
use crate::sim::SimError;
use crate::sim::schedule::Schedule;
use crate::util::bits::ceil_log2;

impl ToSchedule for Barrier {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let h = ceil_log2(p);
        let mut w = Steps::new(problem, 2 * u64::from(h))?;
        for r in 0..p {
            w.rank(r);
            for k in 0..h {
                let d = 1u64 << k;
                w.sendrecv((r + d) % p, (r + p - d) % p, k, 0, 0);
            }
        }
        w.finish()
    }
}
