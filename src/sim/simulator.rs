//! The simulator's entry points: [`simulate`] and [`Simulator`], which keeps its working
//! memory between simulations.

use super::engine::{Work, simulate_in};
use super::nodes::TwoLevel;
use super::options::SimOptions;
use super::result::SimResult;
use super::schedule::Schedule;
use crate::CommModel;
use crate::sim::SimError;

/// Simulates `schedule` on `model`.
///
/// The semantics are those of the [module documentation](super): sends occupy the sender's CPU
/// for `send_overhead` and its NIC for `send_interval`, arrive `p2p - recv_overhead` after they
/// start, and the receiver's CPU pays `recv_overhead` once the receive is posted.
///
/// # Errors
///
/// [`SimError::InvalidTime`] when the model returns a negative or non-finite quantity for one
/// of the schedule's messages, [`SimError::Deadlock`] when operations wait on each other and
/// never run, [`SimError::TooLarge`] when one operation has `2^28` or more dependencies.
///
/// # Examples
///
/// ```
/// use commcost::sim::{ScheduleBuilder, SimOptions, simulate};
/// use commcost::{CommModel, LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// let mut b = ScheduleBuilder::new(2);
/// b.send(0, 1, 0, 1001);
/// b.recv(1, 0, 0, 1001);
/// let run = simulate(&b.build()?, &model, &SimOptions::default())?;
/// // one message: 2o + L + (s - 1) G
/// assert!((run.makespan - model.p2p(&Message::contiguous(1001))).abs() < 1e-18);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn simulate(
    schedule: &Schedule,
    model: &dyn CommModel,
    options: &SimOptions,
) -> Result<SimResult, SimError> {
    Simulator::new().simulate(schedule, model, options)
}

/// A simulator that keeps its working memory (per-operation and per-rank state, event queue)
/// between simulations: [`simulate`] for programs that simulate many schedules one after
/// another, such as a runtime choosing among collectives or [`rank_simulated`](super::rank_simulated).
///
/// Each call gives the result [`simulate`] gives, bit for bit; what is saved is allocating and
/// first touching the memory (at 2^20 processes and 42 million operations, about a sixth of
/// the time). The memory stays allocated, at the size of the largest schedule simulated, until
/// the simulator is dropped.
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Allreduce, Problem};
/// use commcost::sim::{SimOptions, Simulator, ToSchedule, simulate};
/// use commcost::{Message, presets};
///
/// let model = presets::open_mpi_openib();
/// let mut simulator = Simulator::new();
/// for p in [4, 64, 16] {
///     let problem = Problem::new(p, Message::contiguous(8));
///     let schedule = Allreduce::RecursiveDoubling.schedule(&problem)?;
///     let run = simulator.simulate(&schedule, &model, &SimOptions::default())?;
///     assert_eq!(run, simulate(&schedule, &model, &SimOptions::default())?);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Simulator {
    work: Work,
    /// The memory budget, bytes.
    max_memory: u64,
}

impl Default for Simulator {
    fn default() -> Self {
        Self {
            work: Work::default(),
            max_memory: super::memory::DEFAULT_MAX_MEMORY,
        }
    }
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("operations", &self.work.operations_capacity())
            .field("ranks", &self.work.ranks_capacity())
            .field("queued_events", &self.work.queue_capacity())
            .finish_non_exhaustive()
    }
}

impl Simulator {
    /// A simulator without any memory yet.
    ///
    /// # Examples
    ///
    /// ```
    /// let simulator = commcost::sim::Simulator::new();
    /// assert!(format!("{simulator:?}").starts_with("Simulator"));
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the memory budget, bytes (default
    /// [`DEFAULT_MAX_MEMORY`](super::DEFAULT_MAX_MEMORY)): a simulation whose schedule and
    /// state ([`simulation_memory`](super::simulation_memory)) would need more is
    /// [`SimError::MemoryBudget`] before the state is allocated.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::{Bcast, Problem};
    /// use commcost::sim::{SimOptions, Simulator, ToSchedule};
    /// use commcost::{Message, Pram};
    /// use commcost::sim::SimError;
    ///
    /// let schedule = Bcast::Linear.schedule(&Problem::new(4096, Message::contiguous(8)))?;
    /// let mut simulator = Simulator::new();
    /// simulator.set_max_memory(1 << 16);
    /// let run = simulator.simulate(&schedule, &Pram::new(1e-6)?, &SimOptions::default());
    /// assert!(matches!(run, Err(SimError::MemoryBudget { budget: 65536, .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_max_memory(&mut self, bytes: u64) {
        self.max_memory = bytes;
    }

    /// Simulates `schedule` on `model`, as [`simulate`] does, reusing the memory of earlier
    /// calls.
    ///
    /// # Errors
    ///
    /// Those of [`simulate`].
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::sim::{ScheduleBuilder, SimOptions, Simulator};
    /// use commcost::{CommModel, LogGP, Message};
    ///
    /// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
    /// let mut b = ScheduleBuilder::new(2);
    /// b.send(0, 1, 0, 1001);
    /// b.recv(1, 0, 0, 1001);
    /// let schedule = b.build()?;
    /// let mut simulator = Simulator::new();
    /// for _ in 0..2 {
    ///     let run = simulator.simulate(&schedule, &model, &SimOptions::default())?;
    ///     assert!((run.makespan - model.p2p(&Message::contiguous(1001))).abs() < 1e-18);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn simulate(
        &mut self,
        schedule: &Schedule,
        model: &dyn CommModel,
        options: &SimOptions,
    ) -> Result<SimResult, SimError> {
        simulate_in(
            &mut self.work,
            self.max_memory,
            schedule,
            model,
            options,
            None,
        )
    }

    /// Simulates `schedule` on a two-level platform: a message between two ranks of one node
    /// costs `intra`'s quantities and uses the ranks' own NICs, a message between nodes costs
    /// `platform.inter`'s and uses the nodes' NICs, one per node and direction, which the ranks
    /// of a node share ([`TwoLevel`]). `options` apply as in [`simulate`]
    /// (`rendezvous_above` to messages inside a node, `link_burst` to the nodes' links).
    ///
    /// # Errors
    ///
    /// Those of [`simulate`]; [`SimError::InvalidOption`] (`nodes`) if the node map places
    /// another number of ranks than the schedule has.
    ///
    /// # Examples
    ///
    /// Two nodes of two ranks: ranks 0 and 1 each send 1001 B to the other node at once. Their
    /// node's one link takes them one after the other, `I = g + 1000 G` apart, so the second
    /// arrives at `I + T`; on a flat platform both would arrive at `T`.
    ///
    /// ```
    /// use commcost::sim::{NodeMap, ScheduleBuilder, SimOptions, Simulator, TwoLevel};
    /// use commcost::{CommModel, LogGP, Message};
    ///
    /// let intra = LogGP::new(0.2e-6, 0.1e-6, 0.05e-6, 0.1e-9)?;
    /// let inter = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
    /// let nodes = NodeMap::block(2, 2)?;
    /// let mut b = ScheduleBuilder::new(4);
    /// for (from, to) in [(0, 2), (1, 3)] {
    ///     b.send(from, to, 0, 1001);
    ///     b.recv(to, from, 0, 1001);
    /// }
    /// let schedule = b.build()?;
    /// let platform = TwoLevel { nodes: &nodes, inter: &inter, inter_rendezvous_above: None };
    /// let run = Simulator::new().simulate_two_level(&schedule, &intra, platform, &SimOptions::default())?;
    /// let m = Message::contiguous(1001);
    /// let (t, i) = (inter.p2p(&m), inter.send_interval(&m));
    /// assert!((run.rank_finish[2] - t).abs() < 1e-15);
    /// assert!((run.rank_finish[3] - (i + t)).abs() < 1e-15);
    /// // inside a node the same messages cost the intra-node model's time, each on its own NICs
    /// let mut b = ScheduleBuilder::new(4);
    /// for (from, to) in [(0, 1), (2, 3)] {
    ///     b.send(from, to, 0, 1001);
    ///     b.recv(to, from, 0, 1001);
    /// }
    /// let run = Simulator::new().simulate_two_level(&b.build()?, &intra, platform, &SimOptions::default())?;
    /// assert!((run.makespan - intra.p2p(&m)).abs() < 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn simulate_two_level(
        &mut self,
        schedule: &Schedule,
        intra: &dyn CommModel,
        platform: TwoLevel<'_>,
        options: &SimOptions,
    ) -> Result<SimResult, SimError> {
        simulate_in(
            &mut self.work,
            self.max_memory,
            schedule,
            intra,
            options,
            Some(platform),
        )
    }
}
