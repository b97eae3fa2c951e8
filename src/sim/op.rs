//! The operation vocabulary of a schedule: operation indices, kinds, calcs, dependencies, and
//! the interned per-operation signature the schedule's layouts share. A leaf: it names no other
//! module of the simulator.

use crate::collectives::Operator;

/// The index of an operation in a [`Schedule`](crate::sim::Schedule) (its position in the order
/// operations were added to the [`ScheduleBuilder`](crate::sim::ScheduleBuilder)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(pub u32);

impl OpId {
    /// The index as a `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What an operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// Send a message to a peer.
    Send,
    /// Receive a message from a peer.
    Recv,
    /// Local computation.
    Calc,
}

impl OpKind {
    /// `"send"`, `"recv"` or `"calc"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Send => "send",
            Self::Recv => "recv",
            Self::Calc => "calc",
        }
    }
}

/// A local computation: its duration, given directly or as an operator applied to some bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Calc {
    /// A fixed duration, seconds.
    Seconds(f64),
    /// An operator applied to `bytes` bytes: [`Operator::cost`]`(bytes)` seconds.
    Operator {
        /// Bytes the operator is applied to.
        bytes: u64,
        /// The operator.
        operator: Operator,
    },
}

impl Calc {
    /// The duration, seconds.
    pub fn seconds(&self) -> f64 {
        match self {
            Self::Seconds(s) => *s,
            Self::Operator { bytes, operator } => operator.cost(*bytes),
        }
    }
}

/// How a dependency constrains an operation (GOAL's two kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dependency {
    /// `b requires a`: `b` starts after `a` completes.
    Requires,
    /// `b irequires a`: `b` starts after `a` starts.
    Irequires,
}

/// [`Signature::kind`] of a send.
pub(crate) const KIND_SEND: u8 = 0;
/// [`Signature::kind`] of a receive.
pub(crate) const KIND_RECV: u8 = 1;
/// [`Signature::kind`] of a calc.
pub(crate) const KIND_CALC: u8 = 2;
/// No peer / no partner / no predecessor.
pub(crate) const NONE: u32 = u32::MAX;
/// Marks an `irequires` edge in the successor lists.
pub(crate) const START_EDGE: u32 = 1 << 31;

/// An operation's kind, tag and message class (into the messages or the calc durations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Signature {
    pub(crate) kind: u8,
    pub(crate) tag: u32,
    pub(crate) class: u32,
}

pub(crate) fn kind_of(k: u8) -> OpKind {
    match k {
        KIND_SEND => OpKind::Send,
        KIND_RECV => OpKind::Recv,
        _ => OpKind::Calc,
    }
}
