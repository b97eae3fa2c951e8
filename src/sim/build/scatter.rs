//! The schedules of the textbook scatters ([`Scatter`]).

use super::ToSchedule;
use super::shapes::{binomial_down, linear_out};
use super::writer::Steps;
use crate::collectives::{Problem, Scatter};
use crate::sim::SimError;
use crate::sim::schedule::Schedule;
use crate::util::bits::lowbit;

impl ToSchedule for Scatter {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let m = problem.message.bytes();
        match self {
            Self::Linear => linear_out(problem, m),
            Self::Binomial => {
                let mut w = Steps::new(problem, 2)?;
                for r in 0..p {
                    w.rank(r);
                    binomial_down(&mut w, r, p, |c| m.saturating_mul(lowbit(c).min(p - c)));
                }
                w.finish()
            }
        }
    }
}
