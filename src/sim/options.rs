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
