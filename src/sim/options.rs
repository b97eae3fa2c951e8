//! How to simulate: [`SimOptions`].

use super::noise::Noise;
use crate::CommModel;

/// How to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SimOptions {
    /// Keep the start and end of every operation ([`SimResult::timeline_csv`](super::SimResult::timeline_csv)).
    pub timeline: bool,
    /// Record the critical path ([`SimResult::critical_path`](super::SimResult::critical_path)).
    pub critical_path: bool,
    /// Messages larger than this many bytes use the rendezvous protocol: the transfer starts
    /// only once the matching receive is posted, and the send completes with the receive.
    /// `None` (the default): every message is eager, the reading the collectives' closed forms
    /// follow. [`with_protocols_of`](Self::with_protocols_of) takes the model's own threshold
    /// ([`CommModel::rendezvous_above`]: LogGPO's eager limit, the Open MPI/openib preset's
    /// 12 KiB).
    pub rendezvous_above: Option<u64>,
    /// Seeded CPU noise added to every send overhead, receive overhead and calc.
    pub noise: Option<Noise>,
    /// When a rendezvous send completes ([`RendezvousCompletion`]): with its receive (the
    /// default), or once the receiver has acknowledged the request, the data still streaming.
    pub rendezvous_completion: RendezvousCompletion,
    /// The ranks' CPU work (send and receive overheads, calcs) runs on this many shared cores:
    /// an operation that needs its rank's CPU also waits for the earliest free core. `None`
    /// (the default): every rank has a core of its own. For oversubscribed runs — more ranks
    /// than cores, as when several emulated nodes or shared-memory ranks share a machine.
    pub cores: Option<u32>,
    /// Links shaped by a token bucket of this many bytes (Linux `tc tbf`, a cloud's traffic
    /// shaping): each rank's sending and receiving NIC collects credit while idle, one byte per
    /// `G` (the per-byte part of the message's send interval, `(I - g) / (k - 1)`), up to this
    /// many bytes, and a message's bytes covered by credit cross without their `G`: a lone
    /// message passes at the link's line speed, a train of back-to-back messages is held to
    /// the rate once the credit is spent. `None` (the default): no credit, every byte pays `G`.
    pub link_burst: Option<u64>,
    /// The receiver's acknowledgement of a rendezvous request waits for the receiver's
    /// sending NIC: it leaves only after the sends its rank has handed to that NIC (every send
    /// that became ready before the acknowledgement, in order, each for its interval `I`,
    /// rendezvous sends whose data still waits included), and the data leaves the sender that
    /// much later. Two ranks exchanging rendezvous messages take turns: one link's rate for
    /// both directions (Open MPI's TCP transport on a queueing link). `false` (the default):
    /// the acknowledgement leaves at once.
    pub ack_behind_sends: bool,
    /// Which completion a price read from a simulation is ([`Finish`]): the last rank's (the
    /// default, the makespan, the closed forms' reading) or the mean over the ranks (what
    /// OSU's "Avg Latency" measures). The simulation itself does not change; the rankings on a
    /// platform ([`rank_on_nodes_in`](super::rank_on_nodes_in)), the simulated rankings
    /// ([`rank_simulated_on`](super::rank_simulated_on): every candidate simulated when this
    /// is [`Finish::Mean`]) and [`cost_hierarchical`](super::cost_hierarchical) read it.
    pub finish: Finish,
}

/// Which completion time of a simulated collective a price is ([`SimOptions::finish`]).
///
/// A rooted collective's ranks return at different times: a reduction's leaves after their
/// one send, its root after the last arrival. A job whose next step waits for every rank pays
/// the last completion; a benchmark that averages over ranks (the OSU Micro-Benchmarks'
/// "Avg Latency", their default output) and a rank that goes on with independent work see the
/// mean ([`SimResult::mean_finish`](super::SimResult::mean_finish)). The cheapest algorithm
/// can differ between the two: Open MPI's pipelined reduce finishes its leaves early and its
/// root late.
///
/// # Examples
///
/// Open MPI's gathers of 1 byte on 4 processes, LogGP `L = 3`, `o = 1`, `g = 4` µs, `G = 0`.
/// The linear gather's senders are done after their overhead (1 µs); the root receives at 4,
/// 8 and 12 µs and is done at 13 µs: mean `(13 + 3 · 1) / 4 = 4` µs. The binomial gather ends
/// at 10 µs (rank 2 forwards rank 3's byte, done at 6 µs; ranks 1 and 3 at 1 µs): mean
/// `(10 + 1 + 6 + 1) / 4 = 4.5` µs. By the last completion the binomial gather wins, by the
/// mean the linear one.
///
/// ```
/// use commcost::collectives::{Problem, ompi::Gather};
/// use commcost::sim::{Finish, SimLimits, SimOptions, rank_simulated_on};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(3e-6, 1e-6, 4e-6, 0.0)?;
/// let problem = Problem::new(4, Message::contiguous(1));
/// let last = rank_simulated_on::<Gather>(&model, &problem, SimLimits::default(), &SimOptions::default())?;
/// assert_eq!(last[0].algorithm, Gather::Binomial);
/// assert!((last[0].cost - 10e-6).abs() < 1e-15);
/// let mean = SimOptions { finish: Finish::Mean, ..SimOptions::default() };
/// let by_mean = rank_simulated_on::<Gather>(&model, &problem, SimLimits::default(), &mean)?;
/// assert_eq!(by_mean[0].algorithm, Gather::BasicLinear);
/// assert!((by_mean[0].cost - 4e-6).abs() < 1e-15);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Finish {
    /// The last rank's completion: the makespan ([`SimResult::makespan`](super::SimResult::makespan)).
    #[default]
    Last,
    /// The mean over the ranks of their completions
    /// ([`SimResult::mean_finish`](super::SimResult::mean_finish)).
    Mean,
}

/// When the send of a rendezvous message completes (in a model file: `"with_receive"`,
/// `"at_handshake"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum RendezvousCompletion {
    /// With the matching receive: the sender's buffer is read until the last byte is
    /// delivered (RDMA-style transports, a synchronous send).
    #[default]
    WithReceive,
    /// When the receiver's acknowledgement of the request arrives: the request travels to the
    /// receiver, waits there for the receive to be posted, and the acknowledgement travels back
    /// (each a one-byte message, `p2p(1 B)`); then the sender hands the whole message to its
    /// transport (Open MPI's TCP BTL writes it into the kernel's socket buffer) and completes,
    /// while the data still streams at the model's rate.
    AtHandshake,
}

impl SimOptions {
    /// These options with the model's eager / rendezvous threshold
    /// ([`CommModel::rendezvous_above`]; every message eager where the model describes none).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::presets;
    /// use commcost::sim::SimOptions;
    /// let options = SimOptions::default().with_protocols_of(&presets::open_mpi_openib());
    /// assert_eq!(options.rendezvous_above, Some(12288));
    /// ```
    #[must_use]
    pub fn with_protocols_of(self, model: &dyn CommModel) -> Self {
        Self {
            rendezvous_above: model.rendezvous_above(),
            ..self
        }
    }
}
