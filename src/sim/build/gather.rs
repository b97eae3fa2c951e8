//! The schedules of the textbook gathers ([`Gather`]).

use super::ToSchedule;
use super::shapes::binomial_up;
use super::writer::Steps;
use crate::collectives::{Gather, Problem};
use crate::sim::SimError;
use crate::sim::schedule::Schedule;
use crate::util::bits::lowbit;

impl ToSchedule for Gather {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let mut w = Steps::new(problem, 2)?;
        let m = w.m();
        for r in 0..p {
            w.rank(r);
            match self {
                Self::Linear => {
                    if r == 0 {
                        for peer in 1..p {
                            w.recv(peer, 0, m);
                        }
                        w.end_step();
                    } else {
                        w.send_step(0, 0, m);
                    }
                }
                Self::Binomial => binomial_up(
                    &mut w,
                    r,
                    p,
                    |c| m.saturating_mul(lowbit(c).min(p - c)),
                    false,
                ),
            }
        }
        w.finish()
    }
}
