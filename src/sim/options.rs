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
