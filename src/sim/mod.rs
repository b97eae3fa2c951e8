//! A schedule simulator: executes any communication schedule on any [`CommModel`](crate::CommModel).
//!
//! The closed forms of [`collectives`](crate::collectives) price an algorithm from its round
//! structure. This module executes the algorithm's actual message schedule instead, event by
//! event, in the manner of LogGOPSim (T. Hoefler, T. Schneider, A. Lumsdaine, "LogGOPSim —
//! Simulating Large-Scale Applications in the LogGOPS Model", Proceedings of the 19th ACM
//! International Symposium on High Performance Distributed Computing (HPDC), Workshop on
//! Large-Scale System and Application Performance (LSAP), 2010): it prices schedules no closed
//! form covers (a user's own algorithm, a trace converted to GOAL), shows where the time goes
//! (the critical path, a per-rank timeline), and checks the closed forms.
//!
//! * [`Schedule`] ([`ScheduleBuilder`]): per rank a list of operations — send, receive (a
//!   [`Message`](crate::Message) to or from a peer, with a tag), calc (seconds, or an
//!   [`Operator`](crate::collectives::Operator) applied to bytes) — and dependencies between
//!   operations of one rank: `b requires a` (b starts after a completes) and `b irequires a`
//!   (b starts after a starts), as in GOAL. Flat arrays, validated on
//!   [`build`](ScheduleBuilder::build).
//! * [`ToSchedule`]: the schedule of every collective algorithm the crate prices, any `P >= 1`,
//!   Open MPI's ([`collectives::ompi`](crate::collectives::ompi)) as `coll_base_*.c` runs them.
//! * [`simulate`]: the discrete-event simulator, [`SimResult`] (finish time per rank, their mean
//!   — what OSU's average measures —, makespan,
//!   critical path, timeline as CSV).
//! * [`Simulator`]: the same simulation, keeping its memory between calls (for programs that
//!   simulate many schedules).
//! * [`parse_goal`], [`write_goal`]: LogGOPSim's GOAL text format; [`SchedgenPattern`]: the
//!   schedules LogGOPSim's Schedgen writes.
//! * [`Noise`]: seeded CPU noise.
//! * A memory budget ([`DEFAULT_MAX_MEMORY`], [`stored_schedule_memory`]): a schedule and its
//!   simulation that would need more are [`SimError::MemoryBudget`]
//!   before anything of that size is allocated.
//! * [`rank_simulated`]: the candidates of a collective ranked by the simulated makespan where
//!   a closed form is not exact ([`ExactClosedForm`]), bounded by [`SimLimits`].
//!
//! # Semantics
//!
//! Every rank has one CPU, one sending NIC and one receiving NIC; each serves the operations
//! that need it one at a time, in the order they become ready (simultaneous events in order of
//! operation index), and all times are computed from the model's per-message
//! [`Quantities`](crate::Quantities) of the message the operation carries: `T` =
//! [`p2p`](crate::CommModel::p2p), `os` = [`send_overhead`](crate::CommModel::send_overhead), `or` =
//! [`recv_overhead`](crate::CommModel::recv_overhead), `I` = [`send_interval`](crate::CommModel::send_interval).
//!
//! * An operation is **ready** when every operation it `requires` has completed and every
//!   operation it `irequires` has started.
//! * A **send** ready at `t` starts at `s = max(t, CPU free, sending NIC free)`. It holds the
//!   CPU until `s + os` and the sending NIC until `s + I` (LogGP's `g + (k-1) G` between the
//!   starts of consecutive sends). Its message arrives at the receiver at `s + max(T - or, 0)`.
//!   An eager send completes at `s + os`. A send held back by its NIC alone (the NIC frees
//!   later than the CPU) does not queue for the CPU: it tries again when the NIC is free, and
//!   the CPU serves other operations meanwhile (LogGOPSim re-inserts such a send at
//!   `max(next o, next g)`).
//! * A **receive** ready at `t` is posted at `t` (that is its start). Once its message has
//!   arrived and it is posted, the receiver's CPU pays `or` from
//!   the earliest `r >= max(arrival, posting, CPU free)` at which the receiving NIC's window of
//!   the message, the last `I` before `r + or` (the message streaming in; LogGOPSim charges
//!   `g + (k-1) G` at the receiver as well), does not overlap the previous message's window; the
//!   receive completes at `r + or`. Messages arriving together are thus processed
//!   `max(I, or)` apart, and a receiver that is idle and posted in time completes at `s + T`:
//!   the model's end-to-end time. A receive held back by its NIC window alone tries again when
//!   the window allows, leaving the CPU to other operations meanwhile, as a send does.
//! * A **calc** of `d` seconds ready at `t` holds the CPU from `max(t, CPU free)` for `d`.
//! * **Matching**: the `k`-th send from `a` to `b` with tag `t` (in operation order) matches the
//!   `k`-th receive at `b` from `a` with tag `t`. This is MPI's non-overtaking rule whenever
//!   operations on the same `(peer, tag)` are ordered by their dependencies (every schedule
//!   built here, and every Schedgen output); wildcard sources and tags are not supported.
//! * **Eager and rendezvous**: [`SimOptions::rendezvous_above`] says which messages use the
//!   rendezvous protocol — none by default, the model's own threshold
//!   ([`CommModel::rendezvous_above`](crate::CommModel::rendezvous_above)) with
//!   [`SimOptions::with_protocols_of`]: a rendezvous message leaves at `max(s, posting of the
//!   receive)` and its send completes with the receive. The handshake's latency is inside the model's `p2p` for that size (LogGPO's
//!   `4O' + 3L`, a protocol range's own parameters), not added again.
//! * **Completion at the handshake** ([`SimOptions::rendezvous_completion`] =
//!   [`RendezvousCompletion::AtHandshake`]): a rendezvous send completes when the receiver's
//!   acknowledgement arrives, `max(s + h, posting) + h` with `h = p2p(1 B)`, the data still
//!   streaming — a transport that hands the message to the kernel (Open MPI's TCP BTL).
//! * **Acknowledgement behind the receiver's sends** ([`SimOptions::ack_behind_sends`]): the
//!   acknowledgement of a rendezvous request is a small message on the receiver's own sending
//!   NIC, first in first out behind every send its rank has handed to that NIC (in the order
//!   they became ready, each for its `I`, rendezvous sends still waiting for their own
//!   acknowledgement included): it leaves at the later of `max(s + h, posting)` and that
//!   backlog's end, and the data leaves the sender that much later. Two ranks exchanging
//!   rendezvous messages take turns: one link's rate for both directions. That is what
//!   `osu_bibw` measures with Open MPI's TCP transport on a queueing (`tc tbf`) link
//!   (`tests/fixtures/cluster-200m/pt2pt`: 23-24 MB/s from 256 KiB, 49 MB/s for eager messages
//!   up to 32 KiB; its 64-message window simulated on that cluster's calibration: `1 / G` =
//!   23.6 MB/s with the term, `2 / G` without). Open MPI's pairwise exchanges in collectives
//!   measured 1.2-1.9 times the full-duplex price there (median 1.45), not the term's 2: off by
//!   default (docs/ACCURACY.md).
//! * **Shared cores** ([`SimOptions::cores`] = `C`): every operation that holds its rank's CPU
//!   (send and receive overheads, calcs) also takes the earliest free of `C` cores.
//! * **Shaped links** ([`SimOptions::link_burst`] = `B` bytes): each NIC keeps a token bucket
//!   that fills at one byte per `G` while idle, up to `B`; a message's bytes covered by it do not
//!   pay `G`, on the sender's NIC (its interval and the arrival) and on the receiver's (its
//!   window). A lone message crosses at line speed; back-to-back messages are held to the rate.
//!   [`calibrate::assess_shaped_link`](crate::calibrate::assess_shaped_link) measures `B`.
//! * [`gap`](crate::CommModel::gap) is not used: LogGOPS spaces consecutive messages by `I`, which
//!   already contains it. The closed forms of the tree algorithms add `(h - 1) g` between
//!   rounds (the LogGP broadcast of Alexandrov, Ionescu, Schauser, Scheiman, "LogGP:
//!   Incorporating Long Messages into the LogP Model", SPAA 1995); a simulation of the same
//!   tree does not, and is that much faster (see the cross-check in `tests/slow/sim_crosscheck.rs`
//!   and `docs/SIMULATOR.md`).
//!
//! # Speed
//!
//! Operations live in flat arrays (`u32` indices) in time-major order (by position in their
//! rank's program, so that one round of a lock-step collective is contiguous in memory; every
//! method still names operations by their own index), dependencies in successor lists, events
//! in a radix heap of 12-byte entries in 65 reused vectors (event times never decrease below
//! the current one); all events of one time are taken out together and run in operation order.
//! Nothing is allocated per event. Ranks are numbered internally in the order their first
//! operations lie in memory, so that the state of ranks active together lies together. The
//! recursive-doubling allreduce's schedule stores nothing per operation: it computes each
//! operation's kind, rank, partner and successors from its index, the same as the stored
//! schedule would hold them (at `P = 2^20`, 42 million operations, its simulation needs about
//! 0.6 GB in all).
//!
//! # Examples
//!
//! ```
//! use commcost::collectives::{Algorithm, Allreduce, Problem};
//! use commcost::sim::{SimOptions, ToSchedule, simulate};
//! use commcost::{LogGP, Message};
//!
//! let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
//! let problem = Problem::new(64, Message::contiguous(1024));
//! let schedule = Allreduce::RecursiveDoubling.schedule(&problem)?;
//! let run = simulate(&schedule, &model, &SimOptions::default())?;
//! // P a power of two: 6 rounds of T(m), exactly the closed form
//! let closed = Allreduce::RecursiveDoubling.cost(&model, &problem)?;
//! assert!((run.makespan - closed).abs() <= 1e-12 * closed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod build;
mod builder;
mod engine;
mod error;
mod family;
mod freeze;
mod goal;
mod hierarchical;
mod implicit;
mod layout;
mod memory;
mod nodes;
mod noise;
mod on_nodes;
mod op;
mod options;
mod platform;
mod queue;
mod rank;
mod result;
mod schedgen;
mod schedule;
mod simulator;
mod validate;

pub use build::{MAX_BUILT_OPERATIONS, ToSchedule, collective_schedule};
pub use builder::ScheduleBuilder;
pub use error::{GoalError, SimError};
pub use family::{
    SimAlgorithm, SimVisitor, cost_simulated_in, rank_simulated_in, schedule_in, visit,
};
pub use goal::{
    LABEL_BYTES, parse_goal, parse_goal_within, read_goal_file, write_goal, write_goal_to,
};
pub use hierarchical::{Hierarchical, cost_hierarchical};
pub use memory::{
    BYTES_PER_DEPENDENCY, BYTES_PER_DEPENDENCY_ENTRY, BYTES_PER_DISTINCT_VALUE, BYTES_PER_RANK,
    DEFAULT_MAX_MEMORY, SCHEDULE_BYTES_PER_OPERATION, SIMULATION_BYTES_PER_OPERATION,
    SIMULATION_BYTES_PER_RANK, STORED_BYTES_PER_OPERATION, TIMELINE_BYTES_PER_OPERATION,
    simulation_memory, stored_schedule_memory,
};
pub use nodes::{MAX_MAPPED_RANKS, NodeLayout, NodeMap, Placement, TwoLevel};
pub use noise::Noise;
pub use on_nodes::{cost_on_nodes_in, rank_on_nodes, rank_on_nodes_in};
pub use op::{Calc, Dependency, OpId, OpKind};
pub use options::{Finish, RendezvousCompletion, SimOptions};
pub use platform::Platform;
pub use rank::{
    CostSource, ExactClosedForm, RankedAlgorithm, SimLimits, price_simulated_on, rank_simulated,
    rank_simulated_on,
};
pub use result::{CriticalPath, CriticalStep, SimResult};
pub use schedgen::SchedgenPattern;
pub use schedule::{MAX_CALC_SECONDS, MAX_OPERATIONS, MAX_RANKS, Schedule};
pub use simulator::{Simulator, simulate};
