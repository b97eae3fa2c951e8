//! `MPI_Barrier` in Open MPI (`coll_base_barrier.c`), ID 6.

use super::table::ompi_algorithms;
use crate::CommModel;
use crate::collectives::CollectiveError;
use crate::collectives::eval::setup;
use crate::collectives::{Copies, Problem};
use crate::util::bits::{ceil_log2, floor_log2};

/// Open MPI's barrier algorithms (`coll_tuned_barrier_algorithm`); the rules-file size is 0.
///
/// # Formula
///
/// With `T = T(0)`, `I = I(0)`, `or = or(0)` (empty messages), `lag = max(0, I - T)` (0 when
/// the sender keeps pace, [`PiecewiseCost::sender_keeps_pace`](crate::PiecewiseCost::sender_keeps_pace): a process's consecutive sends are
/// `max(T, I)` apart):
///
/// | ID | variant | cost |
/// |---|---|---|
/// | 1 | `Linear` | everyone to rank 0 and back: `2 T + (P-2) (max(I, or) + I)` |
/// | 2 | `DoubleRing` | two trips around the ring: `P T + max(P T, I)` (rank 0 sends twice, at least `I` apart) |
/// | 3 | `RecursiveDoubling` | `h' T + [np2] 2T + (h' - 1 + [np2]) lag` |
/// | 4 | `Bruck` | dissemination, `h T + (h - 1) lag` |
/// | 5 | `TwoProc` | `T`; only `P = 2` |
/// | 6 | `Tree` | fan-in and fan-out over a hypercube tree: `2 (h T + (h - 1) lag)` |
///
/// Against a simulation of the schedule Open MPI runs ([`ToSchedule`](crate::sim::ToSchedule),
/// `tests/slow/sim_ompi_crosscheck.rs`, `docs/SIMULATOR.md`): 1, 2, 4 and 5 are exact; 3 and 6 are exact
/// at powers of two and upper bounds otherwise.
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::Barrier;
/// use commcost::collectives::{Algorithm, Problem};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// // dissemination on 5 processes: ⌈log2 5⌉ = 3 rounds of T(0) = 7 µs
/// let t = Barrier::Bruck.cost(&model, &Problem::new(5, Message::contiguous(0)))?;
/// assert!((t - 21e-6).abs() < 1e-15);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "kebab-case", deny_unknown_fields)
)]
pub enum Barrier {
    /// 1, `linear`.
    Linear,
    /// 2, `double_ring`.
    DoubleRing,
    /// 3, `recursive_doubling`.
    RecursiveDoubling,
    /// 4, `bruck` (dissemination).
    Bruck,
    /// 5, `two_proc`: `P = 2` only.
    TwoProc,
    /// 6, `tree`.
    Tree,
}

ompi_algorithms! {
    plain Barrier, Barrier;
    1 Linear => "linear", "linear";
    2 DoubleRing => "double-ring", "double_ring";
    3 RecursiveDoubling => "recursive-doubling", "recursive_doubling";
    4 Bruck => "bruck", "bruck";
    5 TwoProc => "two-proc", "two_proc";
    6 Tree => "tree", "tree";
    impl OmpiAlgorithm {}
    impl Algorithm {
        fn candidates(_: &dyn CommModel, problem: &Problem) -> Vec<Self> {
            Self::ALL
                .iter()
                .copied()
                .filter(|a| *a != Self::TwoProc || problem.processes == 2)
                .collect()
        }
    }
}

impl Barrier {
    /// The messages and the operator: the closed form of the table above.
    fn messages_cost(
        &self,
        model: &dyn CommModel,
        problem: &Problem,
    ) -> Result<f64, CollectiveError> {
        if *self == Self::TwoProc && problem.processes > 2 {
            return Err(CollectiveError::NotApplicable {
                algorithm: "two-proc",
                processes: problem.processes,
                requirement: "exactly 2 processes",
            });
        }
        let Some((mut x, _, p)) = setup(model, problem)? else {
            return Ok(0.0);
        };
        let q = x.quantities(0);
        let t = q.p2p;
        // a process that sends in consecutive rounds sends them max(T, I) apart
        let lag = x.lag(0, 0.0);
        Ok(match self {
            Self::Linear => {
                2.0 * t + (p - 2) as f64 * (q.send_interval.max(q.recv_overhead) + q.send_interval)
            }
            // rank 0 starts the second trip when the first returns, P T after its first send,
            // and at least I after it
            Self::DoubleRing => p as f64 * t + (p as f64 * t).max(q.send_interval),
            Self::RecursiveDoubling => {
                let hp = f64::from(floor_log2(p));
                if p.is_power_of_two() {
                    hp * t + (hp - 1.0) * lag
                } else {
                    // a remaining process also sends to its extra process after the rounds
                    (hp + 2.0) * t + hp * lag
                }
            }
            Self::Bruck => {
                let h = f64::from(ceil_log2(p));
                h * t + (h - 1.0) * lag
            }
            Self::TwoProc => t,
            // fan-in: rank 0 receives h messages, at least I apart; fan-out: it sends h, I apart
            Self::Tree => {
                let h = f64::from(ceil_log2(p));
                2.0 * (h * t + (h - 1.0) * lag)
            }
        })
    }

    /// Local work on the critical path (copies and temporary buffers, from Open MPI 4.1.4's
    /// `coll_base` source; see [`OmpiAlgorithm::local_work`]).
    pub(crate) fn local_work_of(&self, processes: u64, bytes: u64) -> Copies {
        let _ = (processes, bytes);
        Copies::none()
    }
}
