//! The schedules of the textbook reduces ([`Reduce`]).

use super::ToSchedule;
use super::shapes::binomial_up;
use super::writer::Steps;
use crate::collectives::{Problem, Reduce};
use crate::sim::SimError;
use crate::sim::schedule::Schedule;

impl ToSchedule for Reduce {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        let p = problem.processes;
        let mut w = Steps::new(problem, 3)?;
        let m = w.m();
        for r in 0..p {
            w.rank(r);
            binomial_up(&mut w, r, p, |_| m, true);
        }
        w.finish()
    }
}
