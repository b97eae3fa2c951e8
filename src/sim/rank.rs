//! Ranking with the simulator where a closed form is not exact.
//!
//! [`collectives::rank`](crate::collectives::rank) prices every candidate with its closed
//! form: nanoseconds each, exact for many algorithms, but for others a bound or an
//! approximation (non-powers of two, the LogGP gap between tree rounds, segmented reductions,
//! linear exchanges that load one CPU; the cross-checks in `tests/slow/sim_crosscheck.rs` and
//! `tests/slow/sim_ompi_crosscheck.rs` and `docs/SIMULATOR.md` list them). [`rank_simulated`] ranks
//! the same candidates, but prices each one whose closed form is not exact for the problem
//! ([`ExactClosedForm`]) by simulating its schedule, within [`SimLimits`]; every entry says
//! which cost it carries ([`CostSource`]).

use super::build::ToSchedule;
use super::options::SimOptions;
use super::simulator::Simulator;
use crate::CommModel;
use crate::collectives::{self as textbook, Algorithm, LocalWork, Problem, ompi};
use crate::sim::SimError;

/// Whether an algorithm's closed form is exact (agrees with the simulation of its schedule to
/// 1e-9 relative) for a model and a problem, as the cross-checks establish.
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Problem, ompi};
/// use commcost::sim::ExactClosedForm;
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// let at = |p| Problem::new(p, Message::contiguous(1024));
/// // the binomial gather's closed form adds the LogGP gap between rounds
/// assert!(!ompi::Gather::Binomial.closed_form_exact(&model, &at(8)));
/// // the recursive-doubling allreduce is exact on powers of two only
/// assert!(ompi::Allreduce::RecursiveDoubling.closed_form_exact(&model, &at(8)));
/// assert!(!ompi::Allreduce::RecursiveDoubling.closed_form_exact(&model, &at(6)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait ExactClosedForm {
    /// `true` when [`Algorithm::cost`] equals the simulated makespan of
    /// [`ToSchedule::schedule`] for `problem` on `model`.
    fn closed_form_exact(&self, model: &dyn CommModel, problem: &Problem) -> bool;
}

/// Which cost a ranked entry carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostSource {
    /// The closed form ([`Algorithm::cost`]): exact for this problem, or the schedule was
    /// beyond [`SimLimits`].
    ClosedForm,
    /// The simulated makespan of the algorithm's schedule.
    Simulated,
}

/// How far [`rank_simulated`] simulates: a schedule is simulated only for at most
/// `max_processes` processes and `max_operations` operations (else the closed form is used).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimLimits {
    /// The largest number of processes simulated (default 1024).
    pub max_processes: u64,
    /// The largest schedule simulated, in operations (default 2^20).
    pub max_operations: u64,
}

impl Default for SimLimits {
    fn default() -> Self {
        Self {
            max_processes: 1024,
            max_operations: 1 << 20,
        }
    }
}

/// One entry of [`rank_simulated`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankedAlgorithm<A> {
    /// The algorithm.
    pub algorithm: A,
    /// The cost the ranking uses, seconds: the closed form, or the simulated completion
    /// ([`SimOptions::finish`]) plus what `problem.local` adds to the closed form (copies,
    /// buffers, call costs).
    pub cost: f64,
    /// Where `cost` comes from.
    pub source: CostSource,
    /// The closed form, seconds (equal to `cost` when `source` is `ClosedForm`).
    pub closed_form: f64,
}

/// Every candidate of a collective, cheapest first (ties keep the candidates' order), each
/// priced by its closed form where that is exact for `problem` ([`ExactClosedForm`]) and
/// otherwise by simulating its schedule, if the schedule has at most
/// [`max_processes`](SimLimits::max_processes) processes and
/// [`max_operations`](SimLimits::max_operations) operations (else by its closed form again).
///
/// The default path, [`collectives::rank`](crate::collectives::rank), stays closed-form only;
/// this one costs a schedule build and a simulation per inexact candidate. A simulated
/// candidate's cost is its makespan (or the mean of its ranks' completions, with
/// [`SimOptions::finish`] set to [`Finish::Mean`](super::Finish::Mean): then every candidate is
/// simulated) plus what `problem.local` adds to its closed form (the schedules hold messages
/// and operator only).
///
/// # Errors
///
/// As [`Algorithm::cost`] ([`SimError::Collective`]); [`SimError`] from a simulation.
///
/// # Examples
///
/// Open MPI's gathers on 4 processes, LogGP with `L = 3`, `o = 1`, `g = 4` µs, `G = 0`, 1
/// byte: the linear gather costs `T + 2 max(g, o) = 5 + 8 = 13` µs (exact); the binomial
/// gather's closed form `T(1) + T(2) + g = 14` µs charges a gap the schedule does not have:
/// rank 2 receives rank 3's byte at 5 µs and forwards both to rank 0 at 10 µs, after rank 1's.
///
/// ```
/// use commcost::collectives::{Problem, ompi::Gather};
/// use commcost::sim::{CostSource, SimLimits, rank_simulated};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(3e-6, 1e-6, 4e-6, 0.0)?;
/// let problem = Problem::new(4, Message::contiguous(1));
/// let ranking = rank_simulated::<Gather>(&model, &problem, SimLimits::default())?;
/// assert_eq!(ranking[0].algorithm, Gather::Binomial);
/// assert_eq!(ranking[0].source, CostSource::Simulated);
/// assert!((ranking[0].cost - 10e-6).abs() < 1e-15);
/// assert!((ranking[0].closed_form - 14e-6).abs() < 1e-15);
///
/// // a call of the binomial gather costs 2 µs besides its messages: 12 µs simulated, 16 µs in
/// // closed form
/// use commcost::collectives::{CallCost, CallCosts, Collective, LocalWork};
/// let calls = CallCosts::new(&[CallCost { collective: Collective::Gather, algorithm: 2, seconds: 2e-6 }])?;
/// let priced = problem.with_local(LocalWork::FREE.with_calls(calls));
/// let ranking = rank_simulated::<Gather>(&model, &priced, SimLimits::default())?;
/// let binomial = ranking.iter().find(|r| r.algorithm == Gather::Binomial).unwrap();
/// assert!((binomial.cost - 12e-6).abs() < 1e-15);
/// assert!((binomial.closed_form - 16e-6).abs() < 1e-15);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn rank_simulated<A>(
    model: &dyn CommModel,
    problem: &Problem,
    limits: SimLimits,
) -> Result<Vec<RankedAlgorithm<A>>, SimError>
where
    A: Algorithm + ToSchedule + ExactClosedForm,
{
    rank_simulated_on(model, problem, limits, &SimOptions::default())
}

/// [`rank_simulated`] on a platform: every candidate simulated with `options` (its
/// protocols, rendezvous completion, shared cores, shaped links), the closed form used only
/// where it is exact and `options` add nothing to the LogGOPS semantics the closed forms follow
/// (no rendezvous, noise, shared cores or link credit).
///
/// # Errors
///
/// As [`rank_simulated`]; [`SimError::InvalidOption`] for invalid `options`.
///
/// # Examples
///
/// Open MPI's broadcasts of 1 MiB on 4 processes over links shaped to 40 ns/B with a
/// 9000-byte bucket (LogGP with `L = 2`, `o = 8`, `g = 5` µs): every candidate is simulated.
///
/// ```
/// use commcost::collectives::{Problem, ompi::Bcast};
/// use commcost::sim::{CostSource, SimLimits, SimOptions, rank_simulated_on};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(2e-6, 8e-6, 5e-6, 40e-9)?;
/// let problem = Problem::new(4, Message::contiguous(1 << 20));
/// let shaped = SimOptions { link_burst: Some(9000), ..SimOptions::default() };
/// let ranking = rank_simulated_on::<Bcast>(&model, &problem, SimLimits::default(), &shaped)?;
/// assert!(ranking.iter().all(|r| r.source == CostSource::Simulated));
/// assert!(ranking.windows(2).all(|w| w[0].cost <= w[1].cost));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn rank_simulated_on<A>(
    model: &dyn CommModel,
    problem: &Problem,
    limits: SimLimits,
    options: &SimOptions,
) -> Result<Vec<RankedAlgorithm<A>>, SimError>
where
    A: Algorithm + ToSchedule + ExactClosedForm,
{
    rank_with(model, problem, limits, options, None)
}

/// Every candidate of `A` priced by [`price_with`] on one simulator, cheapest first (on a
/// two-level platform with `two_level`).
pub(super) fn rank_with<A>(
    model: &dyn CommModel,
    problem: &Problem,
    limits: SimLimits,
    options: &SimOptions,
    two_level: Option<super::TwoLevel<'_>>,
) -> Result<Vec<RankedAlgorithm<A>>, SimError>
where
    A: Algorithm + ToSchedule + ExactClosedForm,
{
    let mut ranked = Vec::new();
    // one simulator for every candidate: its memory is allocated once
    let mut simulator = Simulator::new();
    for algorithm in A::candidates(model, problem) {
        ranked.push(price_with(
            algorithm,
            &mut simulator,
            model,
            problem,
            limits,
            options,
            two_level,
        )?);
    }
    ranked.sort_by(|x, y| x.cost.total_cmp(&y.cost));
    Ok(ranked)
}

/// One algorithm priced as [`rank_simulated_on`] prices each candidate: its closed form where
/// that is exact and `options` add nothing to LogGOPS (nor ask for the mean completion), else
/// its simulated completion ([`SimOptions::finish`], within `limits`) plus what
/// `problem.local` adds.
///
/// # Errors
///
/// As [`rank_simulated_on`].
///
/// # Examples
///
/// The linear gather on 4 processes (LogGP `L = 3`, `o = 1`, `g = 4` µs, `G = 0`, 1 byte) is
/// exact in closed form, `T + 2 max(g, o) = 13` µs; the binomial gather is simulated, 10 µs.
///
/// ```
/// use commcost::collectives::{Problem, ompi::Gather};
/// use commcost::sim::{CostSource, SimLimits, SimOptions, price_simulated_on};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(3e-6, 1e-6, 4e-6, 0.0)?;
/// let problem = Problem::new(4, Message::contiguous(1));
/// let plain = SimOptions::default();
/// let linear = price_simulated_on(Gather::BasicLinear, &model, &problem, SimLimits::default(), &plain)?;
/// assert_eq!(linear.source, CostSource::ClosedForm);
/// assert!((linear.cost - 13e-6).abs() < 1e-15);
/// let binomial = price_simulated_on(Gather::Binomial, &model, &problem, SimLimits::default(), &plain)?;
/// assert_eq!(binomial.source, CostSource::Simulated);
/// assert!((binomial.cost - 10e-6).abs() < 1e-15);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn price_simulated_on<A>(
    algorithm: A,
    model: &dyn CommModel,
    problem: &Problem,
    limits: SimLimits,
    options: &SimOptions,
) -> Result<RankedAlgorithm<A>, SimError>
where
    A: Algorithm + ToSchedule + ExactClosedForm,
{
    price_with(
        algorithm,
        &mut Simulator::new(),
        model,
        problem,
        limits,
        options,
        None,
    )
}

/// [`price_simulated_on`] with a simulator to reuse; on a two-level platform (`two_level`)
/// always simulated, and a schedule beyond `limits` is an error (no closed form prices it).
pub(super) fn price_with<A>(
    algorithm: A,
    simulator: &mut Simulator,
    model: &dyn CommModel,
    problem: &Problem,
    limits: SimLimits,
    options: &SimOptions,
    two_level: Option<super::TwoLevel<'_>>,
) -> Result<RankedAlgorithm<A>, SimError>
where
    A: Algorithm + ToSchedule + ExactClosedForm,
{
    if let Some(platform) = two_level {
        let closed_form = algorithm.cost(model, problem)?;
        if problem.processes > limits.max_processes {
            return Err(SimError::TooLarge {
                what: "processes to simulate",
                count: problem.processes,
                limit: limits.max_processes,
            });
        }
        let s = algorithm.schedule(problem)?;
        if s.len() as u64 > limits.max_operations {
            return Err(SimError::TooLarge {
                what: "operations to simulate",
                count: s.len() as u64,
                limit: limits.max_operations,
            });
        }
        let run = simulator.simulate_two_level(&s, model, platform, options)?;
        return Ok(RankedAlgorithm {
            cost: run.time(options.finish) + local_part(&algorithm, model, problem, closed_form)?,
            algorithm,
            source: CostSource::Simulated,
            closed_form,
        });
    }
    let plain = options.rendezvous_above.is_none()
        && options.noise.is_none()
        && options.cores.is_none()
        && options.link_burst.is_none()
        && !options.ack_behind_sends
        && options.finish == super::Finish::Last;
    let closed_form = algorithm.cost(model, problem)?;
    let simulated = if (plain && algorithm.closed_form_exact(model, problem))
        || problem.processes > limits.max_processes
    {
        None
    } else {
        match algorithm.schedule(problem) {
            Ok(s) if (s.len() as u64) <= limits.max_operations => {
                Some(simulator.simulate(&s, model, options)?.time(options.finish))
            }
            Ok(_) | Err(SimError::TooLarge { .. } | SimError::MemoryBudget { .. }) => None,
            Err(e) => return Err(e),
        }
    };
    Ok(match simulated {
        // the schedule holds the messages and the operator; the local work and the call
        // cost (`problem.local`) are added as the closed form adds them
        Some(simulated) => RankedAlgorithm {
            cost: simulated + local_part(&algorithm, model, problem, closed_form)?,
            algorithm,
            source: CostSource::Simulated,
            closed_form,
        },
        None => RankedAlgorithm {
            algorithm,
            cost: closed_form,
            source: CostSource::ClosedForm,
            closed_form,
        },
    })
}

/// What `problem.local` (copies, buffers, call costs) adds to `algorithm`'s closed form
/// `closed_form`: 0 without local work.
fn local_part<A: Algorithm>(
    algorithm: &A,
    model: &dyn CommModel,
    problem: &Problem,
    closed_form: f64,
) -> Result<f64, SimError> {
    if problem.local.is_free() {
        return Ok(0.0);
    }
    let messages = algorithm.cost(model, &problem.with_local(LocalWork::FREE))?;
    Ok((closed_form - messages).max(0.0))
}

/// `P` a power of two (where the recursive forms are exact).
fn pow2_exact(problem: &Problem) -> bool {
    problem.processes.is_power_of_two()
}

impl ExactClosedForm for ompi::Bcast {
    fn closed_form_exact(&self, _: &dyn CommModel, problem: &Problem) -> bool {
        let (p, m) = (problem.processes, problem.message.bytes());
        if p <= 1 {
            return true;
        }
        match *self {
            Self::BasicLinear
            | Self::Chain { .. }
            | Self::Binomial { .. }
            | Self::Knomial { .. } => true,
            // segmented: the closed form's step is short on some models
            Self::Pipeline { segment } | Self::BinaryTree { segment } => {
                segment == 0 || segment >= m
            }
            // below P bytes Open MPI runs the linear broadcast
            Self::ScatterAllgather | Self::ScatterAllgatherRing => m < p,
            Self::SplitBinaryTree { .. } => false,
        }
    }
}

impl ExactClosedForm for ompi::Allreduce {
    fn closed_form_exact(&self, model: &dyn CommModel, problem: &Problem) -> bool {
        problem.processes <= 1
            || match self {
                Self::RecursiveDoubling | Self::Ring | Self::SegmentedRing { .. } => {
                    pow2_exact(problem)
                }
                // the sum of its reduce and broadcast: exact when both are
                Self::Nonoverlapping => {
                    let (p, m) = (problem.processes, problem.message.bytes());
                    let (reduce, bcast) = ompi::inner::allreduce_nonoverlapping(p, m);
                    reduce.closed_form_exact(model, problem)
                        && bcast.closed_form_exact(model, problem)
                }
                Self::BasicLinear | Self::Rabenseifner => false,
            }
    }
}

impl ExactClosedForm for ompi::Reduce {
    fn closed_form_exact(&self, _: &dyn CommModel, problem: &Problem) -> bool {
        problem.processes <= 1 || *self == Self::InOrderBinary { segment: 0 }
    }
}

impl ExactClosedForm for ompi::Allgather {
    fn closed_form_exact(&self, model: &dyn CommModel, problem: &Problem) -> bool {
        // every form but the linear one, also with rounds of growing size on a slow sender (the
        // spacing of lock-step rounds, `collectives::algorithms::Spacings`); the linear one is
        // the sum of its gather and broadcast: exact when both are
        let (p, m) = (problem.processes, problem.message.bytes());
        if *self != Self::Linear || p <= 1 {
            return true;
        }
        let (gather, bcast) = ompi::inner::allgather_linear(p, m);
        gather.closed_form_exact(model, problem)
            && bcast.closed_form_exact(model, &problem.with_bytes(m.saturating_mul(p)))
    }
}

impl ExactClosedForm for ompi::Alltoall {
    fn closed_form_exact(&self, _: &dyn CommModel, problem: &Problem) -> bool {
        problem.processes <= 1
            || matches!(self, Self::Pairwise | Self::ModifiedBruck | Self::TwoProc)
    }
}

impl ExactClosedForm for ompi::Barrier {
    fn closed_form_exact(&self, _: &dyn CommModel, problem: &Problem) -> bool {
        problem.processes <= 1
            || match self {
                Self::Linear | Self::DoubleRing | Self::Bruck | Self::TwoProc => true,
                Self::RecursiveDoubling | Self::Tree => pow2_exact(problem),
            }
    }
}

impl ExactClosedForm for ompi::ReduceScatter {
    fn closed_form_exact(&self, model: &dyn CommModel, problem: &Problem) -> bool {
        problem.processes <= 1
            || match self {
                Self::Ring => true,
                Self::RecursiveHalving | Self::Butterfly => pow2_exact(problem),
                // the sum of its reduce and the linear scatterv (exact): exact when the reduce is
                Self::NonOverlapping => ompi::inner::reduce_scatter_nonoverlapping(
                    problem.processes,
                    problem.message.bytes(),
                )
                .closed_form_exact(model, problem),
            }
    }
}

impl ExactClosedForm for ompi::Gather {
    fn closed_form_exact(&self, _: &dyn CommModel, problem: &Problem) -> bool {
        let p = problem.processes;
        match self {
            Self::BasicLinear => true,
            Self::Binomial => p <= 2,
            Self::LinearSync { .. } => p <= 1,
        }
    }
}

impl ExactClosedForm for ompi::Scatter {
    fn closed_form_exact(&self, _: &dyn CommModel, problem: &Problem) -> bool {
        problem.processes <= 2 || matches!(self, Self::BasicLinear | Self::LinearNb)
    }
}

impl ExactClosedForm for textbook::Bcast {
    fn closed_form_exact(&self, _: &dyn CommModel, problem: &Problem) -> bool {
        let p = problem.processes;
        match self {
            Self::Linear => true,
            // at P = 2 the step of an inner process is charged, and there is none
            Self::Pipelined { .. } => p != 2,
            // the LogGP gap between tree rounds, none for one round
            Self::Binomial | Self::ScatterAllgather => p <= 2,
        }
    }
}

impl ExactClosedForm for textbook::Scan {
    fn closed_form_exact(&self, _: &dyn CommModel, problem: &Problem) -> bool {
        problem.processes <= 1
            || match self {
                Self::LinearChain => true,
                Self::RecursiveDoubling => pow2_exact(problem),
            }
    }
}

impl ExactClosedForm for textbook::Reduce {
    fn closed_form_exact(&self, _: &dyn CommModel, problem: &Problem) -> bool {
        problem.processes <= 2
    }
}

impl ExactClosedForm for textbook::Allreduce {
    fn closed_form_exact(&self, model: &dyn CommModel, problem: &Problem) -> bool {
        problem.processes <= 1
            || match self {
                Self::Ring => true,
                Self::Rabenseifner => model.sender_keeps_pace() || pow2_exact(problem),
                Self::RecursiveDoubling => pow2_exact(problem),
            }
    }
}

impl ExactClosedForm for textbook::Allgather {
    fn closed_form_exact(&self, _: &dyn CommModel, problem: &Problem) -> bool {
        problem.processes <= 1
            || match self {
                Self::Ring | Self::Bruck => true,
                Self::RecursiveDoubling => pow2_exact(problem),
            }
    }
}

impl ExactClosedForm for textbook::Gather {
    fn closed_form_exact(&self, _: &dyn CommModel, problem: &Problem) -> bool {
        problem.processes <= 2 || matches!(self, Self::Linear)
    }
}

impl ExactClosedForm for textbook::Scatter {
    fn closed_form_exact(&self, _: &dyn CommModel, problem: &Problem) -> bool {
        problem.processes <= 2 || matches!(self, Self::Linear)
    }
}

impl ExactClosedForm for textbook::Barrier {
    fn closed_form_exact(&self, _: &dyn CommModel, _: &Problem) -> bool {
        true
    }
}

impl ExactClosedForm for textbook::Alltoall {
    fn closed_form_exact(&self, _: &dyn CommModel, _: &Problem) -> bool {
        true
    }
}
