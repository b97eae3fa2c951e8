//! LogGPO's timeline analysis: when each call arrives ([`Timeline`]) and what overlaps
//! ([`Overlap`]), with the protocol and rendezvous case that applied.

use thiserror::Error;

/// The protocol a message size selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtocolKind {
    /// `K <= S`.
    Eager,
    /// `K > S`.
    Rendezvous,
}

/// Which rendezvous case of dependent progress + RAT applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RendezvousCase {
    /// (a) `Tr > Ts + O' + L`: the receiver posts after the request arrived and sends the ACK.
    LateReceiver,
    /// (b) `Tr <= Ts + O' + L`: the ACK is sent from the receiver's `MPI_Wait`.
    EarlyReceiver,
}

/// When each call arrives (seconds on one clock) and the computation placed between the
/// non-blocking calls and their waits.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Timeline {
    /// `Ts`: arrival of `MPI_Isend`.
    pub isend: f64,
    /// `Tr`: arrival of `MPI_Irecv`.
    pub irecv: f64,
    /// `Tsw`: arrival of the sender's `MPI_Wait`.
    pub send_wait: f64,
    /// `Trw`: arrival of the receiver's `MPI_Wait`.
    pub recv_wait: f64,
    /// `comp`: user computation between the non-blocking call and its wait.
    pub computation: f64,
}

impl Timeline {
    /// Both processes post at 0, compute `computation` seconds, then wait: `Tr = Ts`,
    /// `Trw = Tsw` (Chen et al. 2009, §2, without a timeline).
    pub fn balanced(computation: f64) -> Self {
        Self {
            isend: 0.0,
            irecv: 0.0,
            send_wait: computation,
            recv_wait: computation,
            computation,
        }
    }

    pub(super) fn validate(&self) -> Result<(), TimelineError> {
        for (name, value) in [
            ("isend", self.isend),
            ("irecv", self.irecv),
            ("send_wait", self.send_wait),
            ("recv_wait", self.recv_wait),
        ] {
            if !value.is_finite() {
                return Err(TimelineError::OutOfRange {
                    name,
                    value,
                    expected: "finite",
                });
            }
        }
        if !(self.computation >= 0.0 && self.computation.is_finite()) {
            return Err(TimelineError::OutOfRange {
                name: "computation",
                value: self.computation,
                expected: "finite and >= 0",
            });
        }
        for (wait, wait_time, start, start_time) in [
            ("send_wait", self.send_wait, "isend", self.isend),
            ("recv_wait", self.recv_wait, "irecv", self.irecv),
        ] {
            if wait_time < start_time {
                return Err(TimelineError::WaitBeforeStart {
                    wait,
                    wait_time,
                    start,
                    start_time,
                });
            }
        }
        Ok(())
    }
}

/// Every quantity of the LogGPO analysis for one message on one timeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overlap {
    /// Eager or rendezvous.
    pub protocol: ProtocolKind,
    /// The dependent-progress rendezvous case, when it applies.
    pub case: Option<RendezvousCase>,
    /// `Os`: total overhead at the sender.
    pub send_overhead: f64,
    /// `Or`: total overhead at the receiver.
    pub recv_overhead: f64,
    /// `Osw`: overhead inside the sender's `MPI_Wait`.
    pub send_wait_overhead: f64,
    /// `Orw`: overhead inside the receiver's `MPI_Wait`.
    pub recv_wait_overhead: f64,
    /// `Tc`: total communication cost.
    pub total: f64,
    /// `Rso = comp / (comp + Os)`.
    pub send_overlap: f64,
    /// `Rro = comp / (comp + Or)`.
    pub recv_overlap: f64,
}

/// `comp / (comp + O)`; 1 when both are 0 (nothing left exposed).
pub(super) fn overlap_ratio(computation: f64, overhead: f64) -> f64 {
    if computation + overhead > 0.0 {
        computation / (computation + overhead)
    } else {
        1.0
    }
}

/// An impossible LogGPO timeline or question.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum TimelineError {
    /// A time that is NaN or infinite, or a negative duration.
    #[error("timeline `{name}` = {value} is invalid: it must be {expected}")]
    OutOfRange {
        /// The field.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// What it must be.
        expected: &'static str,
    },
    /// A wait that arrives before its own non-blocking call.
    #[error("`{wait}` = {wait_time} arrives before `{start}` = {start_time}")]
    WaitBeforeStart {
        /// The wait's field name.
        wait: &'static str,
        /// Its arrival time.
        wait_time: f64,
        /// The call's field name.
        start: &'static str,
        /// Its arrival time.
        start_time: f64,
    },
    /// An overlap ratio that no computation reaches (1 with a non-zero overhead).
    #[error("an overlap ratio of {ratio} cannot be reached: the overhead is {overhead} s")]
    UnreachableRatio {
        /// The requested ratio.
        ratio: f64,
        /// The overhead that always stays exposed.
        overhead: f64,
    },
}
