//! The schedule writer of every collective builder: [`Writer`] creates a rank's operations (a
//! send or receive of a piece of the problem's message, the operator on some bytes) within the
//! size checks of [`sized_builder`](super::sized_builder); the two ways a rank's program orders
//! them wrap it:
//!
//! * [`Steps`] (the textbook algorithms): a program of blocking steps, each operation of a step
//!   requiring every operation of the rank's previous step (stored once per step);
//! * [`Calls`] (Open MPI's algorithms): a program of MPI calls, blocking or non-blocking, where a
//!   call requires the last blocking call and the requests waited on since.

use std::ops::{Deref, DerefMut, Range};

use super::sized_builder;
use crate::collectives::Problem;
use crate::sim::SimError;
use crate::sim::builder::ScheduleBuilder;
use crate::sim::op::OpId;
use crate::sim::schedule::Schedule;

/// A schedule under construction for one problem, written one rank at a time.
pub(in crate::sim) struct Writer<'a> {
    pub(in crate::sim) b: ScheduleBuilder,
    pub(in crate::sim) problem: &'a Problem,
    /// The rank whose program is being written.
    pub(in crate::sim) rank: u64,
}

impl<'a> Writer<'a> {
    /// Checks `P` and the estimated size (`ops_per_rank` operations per rank on average, an
    /// upper bound) and starts; reserves room for at most 2^22 operations up front (the arrays
    /// grow beyond).
    fn new(problem: &'a Problem, ops_per_rank: u64) -> Result<Self, SimError> {
        Ok(Self {
            b: sized_builder(problem.processes, ops_per_rank)?,
            problem,
            rank: 0,
        })
    }

    /// The problem's message size, bytes.
    pub(in crate::sim) fn m(&self) -> u64 {
        self.problem.message.bytes()
    }

    /// A send of a `bytes`-byte piece of the problem's message from the current rank.
    fn send_op(&mut self, peer: u64, tag: u32, bytes: u64) -> OpId {
        let msg = self.problem.piece(bytes);
        self.b.send_message(self.rank, peer, tag, msg)
    }

    /// A receive of a `bytes`-byte piece of the problem's message at the current rank.
    fn recv_op(&mut self, peer: u64, tag: u32, bytes: u64) -> OpId {
        let msg = self.problem.piece(bytes);
        self.b.recv_message(self.rank, peer, tag, msg)
    }

    /// The operator on `bytes` bytes at the current rank, `None` when it costs nothing.
    fn calc_op(&mut self, bytes: u64) -> Option<OpId> {
        let cost = self.problem.operator.cost(bytes);
        (cost > 0.0).then(|| self.b.calc(self.rank, cost))
    }
}

/// A schedule written rank by rank as programs of blocking steps.
pub(in crate::sim) struct Steps<'a> {
    w: Writer<'a>,
    /// The operations of the rank's previous step (consecutive indices).
    prev: Range<OpId>,
    /// The operations of the step being written (consecutive indices).
    step: Range<OpId>,
    /// Per rank, the operations of its last step, when the ranks' programs are written
    /// interleaved ([`at`](Self::at)).
    prevs: Vec<Range<OpId>>,
}

impl<'a> Deref for Steps<'a> {
    type Target = Writer<'a>;
    fn deref(&self) -> &Writer<'a> {
        &self.w
    }
}

impl<'a> DerefMut for Steps<'a> {
    fn deref_mut(&mut self) -> &mut Writer<'a> {
        &mut self.w
    }
}

impl<'a> Steps<'a> {
    /// Checks `P` and the estimated size (`ops_per_rank` operations per rank) and starts.
    pub(in crate::sim) fn new(problem: &'a Problem, ops_per_rank: u64) -> Result<Self, SimError> {
        Ok(Self {
            w: Writer::new(problem, ops_per_rank)?,
            prev: OpId(0)..OpId(0),
            step: OpId(0)..OpId(0),
            prevs: Vec::new(),
        })
    }

    /// Like [`new`](Self::new), for a builder that writes the ranks' programs interleaved,
    /// round by round ([`at`](Self::at)): the schedule keeps that order.
    pub(in crate::sim) fn interleaved(
        problem: &'a Problem,
        ops_per_rank: u64,
    ) -> Result<Self, SimError> {
        let mut w = Self::new(problem, ops_per_rank)?;
        w.w.b.keep_order();
        w.prevs = vec![OpId(0)..OpId(0); problem.processes as usize];
        Ok(w)
    }

    /// Continues the program of rank `r` where it was left (interleaved writing): the current
    /// step ends.
    pub(in crate::sim) fn at(&mut self, r: u64) {
        self.end_step();
        if let Some(slot) = self.prevs.get_mut(self.w.rank as usize) {
            *slot = self.prev.clone();
        }
        self.w.rank = r;
        self.prev = self
            .prevs
            .get(r as usize)
            .cloned()
            .unwrap_or(OpId(0)..OpId(0));
    }

    /// Starts the program of rank `r`.
    pub(in crate::sim) fn rank(&mut self, r: u64) {
        self.flush();
        self.w.rank = r;
        self.prev = OpId(0)..OpId(0);
        self.step = OpId(0)..OpId(0);
    }

    /// The dependencies of the step being written: each of its operations requires every
    /// operation of the previous step, stored once for the step.
    fn flush(&mut self) {
        self.w.b.requires_all(self.step.clone(), self.prev.clone());
    }

    /// Adds `op` to the step being written. The operations of a step are created one after
    /// another (every caller makes each just before adding it), so the step is a range.
    fn add(&mut self, op: OpId) {
        if self.step.is_empty() {
            self.step = op..op;
        }
        self.step.end = OpId(op.0.saturating_add(1));
    }

    /// Ends the current step: the next step's operations require all of its operations.
    pub(in crate::sim) fn end_step(&mut self) {
        if !self.step.is_empty() {
            self.flush();
            self.prev = self.step.clone();
            self.step = OpId(0)..OpId(0);
        }
    }

    /// A send in the step being written.
    pub(in crate::sim) fn send(&mut self, peer: u64, tag: u32, bytes: u64) {
        let op = self.w.send_op(peer, tag, bytes);
        self.add(op);
    }

    /// A receive in the step being written.
    pub(in crate::sim) fn recv(&mut self, peer: u64, tag: u32, bytes: u64) {
        let op = self.w.recv_op(peer, tag, bytes);
        self.add(op);
    }

    /// A blocking send.
    pub(in crate::sim) fn send_step(&mut self, peer: u64, tag: u32, bytes: u64) {
        self.send(peer, tag, bytes);
        self.end_step();
    }

    /// A blocking receive.
    pub(in crate::sim) fn recv_step(&mut self, peer: u64, tag: u32, bytes: u64) {
        self.recv(peer, tag, bytes);
        self.end_step();
    }

    /// A send-receive.
    pub(in crate::sim) fn sendrecv(
        &mut self,
        to: u64,
        from: u64,
        tag: u32,
        send_bytes: u64,
        recv_bytes: u64,
    ) {
        self.send(to, tag, send_bytes);
        self.recv(from, tag, recv_bytes);
        self.end_step();
    }

    /// The operator on `bytes` bytes (nothing when it costs nothing).
    pub(in crate::sim) fn op(&mut self, bytes: u64) {
        if let Some(op) = self.w.calc_op(bytes) {
            self.add(op);
            self.end_step();
        }
    }

    /// Validates and freezes the schedule.
    pub(in crate::sim) fn finish(mut self) -> Result<Schedule, SimError> {
        self.flush();
        self.w.b.build()
    }
}

/// A schedule written rank by rank as programs of MPI calls.
pub(in crate::sim) struct Calls<'a> {
    w: Writer<'a>,
    /// What the next call requires: the last blocking call and the requests waited on since.
    after: Vec<OpId>,
    /// Non-blocking sends not yet waited on.
    pending: Vec<OpId>,
}

impl<'a> Deref for Calls<'a> {
    type Target = Writer<'a>;
    fn deref(&self) -> &Writer<'a> {
        &self.w
    }
}

impl<'a> DerefMut for Calls<'a> {
    fn deref_mut(&mut self) -> &mut Writer<'a> {
        &mut self.w
    }
}

impl<'a> Calls<'a> {
    /// Checks `P` and the estimated size (`ops_per_rank` operations per rank on average, an
    /// upper bound) and starts.
    pub(in crate::sim) fn new(problem: &'a Problem, ops_per_rank: u64) -> Result<Self, SimError> {
        Ok(Self {
            w: Writer::new(problem, ops_per_rank)?,
            after: Vec::new(),
            pending: Vec::new(),
        })
    }

    /// Starts the program of rank `r`.
    pub(in crate::sim) fn rank(&mut self, r: u64) {
        self.w.rank = r;
        self.after.clear();
        self.pending.clear();
    }

    fn require(&mut self, op: OpId) {
        for &d in &self.after {
            self.w.b.requires(op, d);
        }
    }

    /// A blocking call's operation: it requires what came before, and everything after it.
    fn blocking(&mut self, op: OpId) {
        self.require(op);
        self.after.clear();
        self.after.push(op);
    }

    /// `MPI_Isend`.
    pub(in crate::sim) fn isend(&mut self, peer: u64, tag: u32, bytes: u64) {
        let op = self.w.send_op(peer, tag, bytes);
        self.require(op);
        self.pending.push(op);
    }

    /// `MPI_Irecv`: the request, for [`wait`](Self::wait).
    pub(in crate::sim) fn irecv(&mut self, peer: u64, tag: u32, bytes: u64) -> OpId {
        let op = self.w.recv_op(peer, tag, bytes);
        self.require(op);
        op
    }

    /// `MPI_Wait` on a request.
    pub(in crate::sim) fn wait(&mut self, op: OpId) {
        self.after.push(op);
    }

    /// `MPI_Waitall` on the pending sends.
    pub(in crate::sim) fn waitall(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.after.extend(pending);
    }

    /// A blocking `MPI_Send`.
    pub(in crate::sim) fn send(&mut self, peer: u64, tag: u32, bytes: u64) {
        let op = self.w.send_op(peer, tag, bytes);
        self.blocking(op);
    }

    /// A blocking `MPI_Recv`.
    pub(in crate::sim) fn recv(&mut self, peer: u64, tag: u32, bytes: u64) {
        let op = self.w.recv_op(peer, tag, bytes);
        self.blocking(op);
    }

    /// `ompi_coll_base_sendrecv`: both posted together, both completed before the next call.
    pub(in crate::sim) fn sendrecv(
        &mut self,
        to: u64,
        from: u64,
        tag: u32,
        send_bytes: u64,
        recv_bytes: u64,
    ) {
        let s = self.w.send_op(to, tag, send_bytes);
        let r = self.w.recv_op(from, tag, recv_bytes);
        self.require(s);
        self.require(r);
        self.after.clear();
        self.after.extend([s, r]);
    }

    /// The operator on `bytes` bytes (nothing when it costs nothing).
    pub(in crate::sim) fn op(&mut self, bytes: u64) {
        if let Some(op) = self.w.calc_op(bytes) {
            self.blocking(op);
        }
    }

    /// Validates and freezes the schedule.
    pub(in crate::sim) fn finish(self) -> Result<Schedule, SimError> {
        self.w.b.build()
    }
}
