//! Building a schedule: [`ScheduleBuilder`] collects operations and dependencies, interning
//! their signatures, messages and calc durations, and [`build`](ScheduleBuilder::build)
//! validates and freezes them into a [`Schedule`].

use super::freeze::{GROUP, Parts, freeze};
use super::op::{
    Calc, Dependency, KIND_CALC, KIND_RECV, KIND_SEND, NONE, OpId, START_EDGE, Signature,
};
use super::schedule::{MAX_CALC_SECONDS, MAX_OPERATIONS, MAX_RANKS, Schedule};
use crate::Message;
use crate::collectives::Operator;
use crate::sim::SimError;

/// Builds a [`Schedule`] operation by operation; [`build`](Self::build) validates it.
///
/// # Examples
///
/// ```
/// use commcost::sim::{Dependency, ScheduleBuilder};
///
/// // rank 0 sends 8 bytes to rank 1, which computes for 1 µs after receiving them
/// let mut b = ScheduleBuilder::new(2);
/// b.send(0, 1, 0, 8);
/// let recv = b.recv(1, 0, 0, 8);
/// let calc = b.calc(1, 1e-6);
/// b.depend(calc, recv, Dependency::Requires);
/// let schedule = b.build()?;
/// assert_eq!((schedule.ranks(), schedule.len()), (2, 3));
/// # Ok::<(), commcost::sim::SimError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ScheduleBuilder {
    ranks: u64,
    /// Kind, tag and message class of each operation, interned as it is added (an index into
    /// `signatures`).
    sig: Vec<u32>,
    signatures: Vec<Signature>,
    signature_index: std::collections::HashMap<Signature, u32>,
    /// The last two signatures found (schedules alternate between a few): no hash lookup.
    recent: [Option<(Signature, u32)>; 2],
    rank: Vec<u32>,
    peer: Vec<u32>,
    messages: Vec<Message>,
    message_index: std::collections::HashMap<Message, u32>,
    calcs: Vec<f64>,
    calc_index: std::collections::HashMap<u64, u32>,
    /// The dependencies in the order they were added: `(op, on | START_EDGE if irequires)`,
    /// or a group ([`requires_all`](Self::requires_all)) as two entries
    /// `(GROUP | ops.start, ops.end), (GROUP | on.start, on.end)`.
    deps: Vec<(u32, u32)>,
    /// Number of dependencies (a group counts each of its pairs).
    dep_count: u64,
    /// Keep the operations in the order they were added (the builder wrote them round by
    /// round) instead of reordering them time-major.
    keep_order: bool,
    last_message: Option<(Message, u32)>,
    /// The first out-of-range value seen while adding (reported by `build`).
    error: Option<SimError>,
    /// The memory budget, bytes ([`super::memory`]).
    max_memory: u64,
    /// Bytes the caller holds besides the builder (a GOAL reader's labels), counted against
    /// the budget.
    extra_memory: u64,
    /// The most `extra_memory` was.
    peak_extra_memory: u64,
    /// The budget was exceeded: nothing more is added.
    over_budget: bool,
}

impl ScheduleBuilder {
    /// An empty schedule for `ranks` ranks.
    pub fn new(ranks: u64) -> Self {
        Self {
            ranks,
            sig: Vec::new(),
            signatures: Vec::new(),
            signature_index: std::collections::HashMap::new(),
            recent: [None, None],
            rank: Vec::new(),
            peer: Vec::new(),
            messages: Vec::new(),
            message_index: std::collections::HashMap::new(),
            calcs: Vec::new(),
            calc_index: std::collections::HashMap::new(),
            deps: Vec::new(),
            dep_count: 0,
            keep_order: false,
            last_message: None,
            error: None,
            max_memory: super::memory::current_budget(),
            extra_memory: 0,
            peak_extra_memory: 0,
            over_budget: false,
        }
    }

    /// Sets the memory budget, bytes (default [`DEFAULT_MAX_MEMORY`](super::DEFAULT_MAX_MEMORY)):
    /// before any of its arrays grows, the builder checks that the schedule and its simulation
    /// ([`stored_schedule_memory`](super::stored_schedule_memory) of the grown capacity) fit;
    /// if not, nothing more is added and [`build`](Self::build) returns
    /// [`SimError::MemoryBudget`].
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::sim::SimError;
    /// use commcost::sim::ScheduleBuilder;
    ///
    /// let mut b = ScheduleBuilder::new(2);
    /// b.set_max_memory(64 << 10);
    /// for _ in 0..100_000 {
    ///     b.send(0, 1, 0, 8);
    ///     b.recv(1, 0, 0, 8);
    /// }
    /// assert!(matches!(b.build(), Err(SimError::MemoryBudget { budget: 65536, .. })));
    /// ```
    pub fn set_max_memory(&mut self, bytes: u64) {
        self.max_memory = bytes;
    }

    /// The memory budget, bytes.
    pub fn max_memory(&self) -> u64 {
        self.max_memory
    }

    /// Whether the ranks and what was reserved so far fit the budget.
    pub(crate) fn check_fits(&self) -> Result<(), SimError> {
        self.check_memory(self.sig.capacity() as u64, self.deps.capacity() as u64)
    }

    /// Counts `bytes` the caller holds besides the builder against the budget (replacing the
    /// previous amount); an error if the whole no longer fits.
    pub(crate) fn set_extra_memory(&mut self, bytes: u64) -> Result<(), SimError> {
        self.extra_memory = bytes;
        self.peak_extra_memory = self.peak_extra_memory.max(bytes);
        self.check_memory(self.sig.capacity() as u64, self.deps.capacity() as u64)
    }

    /// The most bytes [`set_extra_memory`](Self::set_extra_memory) was given.
    pub(crate) fn peak_extra_memory(&self) -> u64 {
        self.peak_extra_memory
    }

    /// Whether the schedule fits the budget with its arrays as large as adding its operations
    /// and dependencies one at a time grows them to (doubling: the next power of two of each
    /// length, at most) and `labels` more bytes: every check made while they were added
    /// needed no more.
    pub(crate) fn fits_as_grown(&self, labels: u64) -> Result<(), SimError> {
        let grown = |len: usize, min: usize| len.max(1).next_power_of_two().max(min) as u64;
        let distinct = grown(self.signatures.len() + 1, 4)
            + grown(self.messages.len() + 1, 4)
            + grown(self.calcs.len() + 1, 4);
        let needed = super::memory::stored_schedule_memory(
            grown(self.sig.len(), 8),
            self.dep_count,
            grown(self.deps.len(), 8),
            self.ranks,
        )
        .saturating_add(distinct.saturating_mul(super::memory::BYTES_PER_DISTINCT_VALUE))
        .saturating_add(self.extra_memory)
        .saturating_add(labels);
        super::memory::check(needed, self.max_memory)
    }

    /// Appends the operations and dependencies of `other` (a builder of as many ranks) after
    /// this one's, as if they had been added here in the same order: its signatures, messages
    /// and calc times interned in this builder's tables in the order it has them. An error
    /// (and nothing appended) when either builder refused something or the operations would
    /// be too many.
    pub(crate) fn append(&mut self, other: ScheduleBuilder) -> Result<(), SimError> {
        if let Some(e) = self.error.clone().or_else(|| other.error.clone()) {
            return Err(e);
        }
        let (n, m) = (self.sig.len() as u64, other.sig.len() as u64);
        if other.ranks != self.ranks || n + m >= MAX_OPERATIONS {
            return Err(SimError::TooLarge {
                what: "operations",
                count: n + m,
                limit: MAX_OPERATIONS,
            });
        }
        let messages: Vec<u32> = other
            .messages
            .iter()
            .map(|&x| self.lookup_message(x))
            .collect();
        let calcs: Vec<u32> = other.calcs.iter().map(|&x| self.calc_class(x)).collect();
        let signatures: Vec<u32> = other
            .signatures
            .iter()
            .map(|&x| {
                let classes = if x.kind == KIND_CALC {
                    &calcs
                } else {
                    &messages
                };
                self.intern(Signature {
                    class: classes[x.class as usize],
                    ..x
                })
            })
            .collect();
        self.sig
            .extend(other.sig.iter().map(|&s| signatures[s as usize]));
        self.rank.extend_from_slice(&other.rank);
        self.peer.extend_from_slice(&other.peer);
        // its operations' indices moved by `n` (an index out of its range stays out of range)
        let shift = |x: u32, end: bool| {
            if u64::from(x) < m || (end && u64::from(x) == m) {
                x + n as u32
            } else {
                NONE >> 1
            }
        };
        self.deps.reserve(other.deps.len());
        for &(a, b) in &other.deps {
            self.deps.push(if a & GROUP != 0 {
                (GROUP | shift(a & !GROUP, false), shift(b, true))
            } else {
                (
                    shift(a, false),
                    shift(b & !START_EDGE, false) | (b & START_EDGE),
                )
            });
        }
        self.dep_count = self.dep_count.saturating_add(other.dep_count);
        Ok(())
    }

    /// The memory the schedule needs with room for `ops` operations and `entries` dependency
    /// entries, checked against the budget.
    fn check_memory(&self, ops: u64, entries: u64) -> Result<(), SimError> {
        self.check_memory_with(ops, entries, self.distinct_capacity())
    }

    /// Room for the distinct (kind, tag, message) signatures, messages and calc times.
    fn distinct_capacity(&self) -> u64 {
        (self.signatures.capacity() + self.messages.capacity() + self.calcs.capacity()) as u64
    }

    /// Before an operation is added: a table of distinct values that is full grows to twice
    /// its size if that fits the budget (else nothing more is added).
    #[inline]
    fn room_for_distinct(&mut self) -> bool {
        if self.over_budget {
            return false;
        }
        let full = |len: usize, cap: usize| len == cap;
        let (s, m, c) = (
            full(self.signatures.len(), self.signatures.capacity()),
            full(self.messages.len(), self.messages.capacity()),
            full(self.calcs.len(), self.calcs.capacity()),
        );
        if !(s || m || c) {
            return true;
        }
        let grown = |len: usize, cap: usize, is_full: bool| {
            if is_full { (cap * 2).max(4) - len } else { 0 }
        };
        let (gs, gm, gc) = (
            grown(self.signatures.len(), self.signatures.capacity(), s),
            grown(self.messages.len(), self.messages.capacity(), m),
            grown(self.calcs.len(), self.calcs.capacity(), c),
        );
        let distinct = self.distinct_capacity() + (gs + gm + gc) as u64;
        match self.check_memory_with(
            self.sig.capacity() as u64,
            self.deps.capacity() as u64,
            distinct,
        ) {
            Ok(()) => {
                self.signatures.reserve_exact(gs);
                self.messages.reserve_exact(gm);
                self.calcs.reserve_exact(gc);
                true
            }
            Err(e) => {
                self.over_budget = true;
                self.fail_first(e);
                false
            }
        }
    }

    /// [`check_memory`](Self::check_memory) with room for `distinct` distinct values.
    fn check_memory_with(&self, ops: u64, entries: u64, distinct: u64) -> Result<(), SimError> {
        let needed =
            super::memory::stored_schedule_memory(ops, self.dep_count, entries, self.ranks)
                .saturating_add(distinct.saturating_mul(super::memory::BYTES_PER_DISTINCT_VALUE))
                .saturating_add(self.extra_memory);
        super::memory::check(needed, self.max_memory)
    }

    /// Before the operation arrays grow (`len == capacity`): whether the grown ones fit.
    #[inline]
    fn room_for_operation(&mut self) -> bool {
        if self.over_budget {
            return false;
        }
        let (len, cap) = (self.sig.len(), self.sig.capacity());
        if len < cap {
            return true;
        }
        let next = (cap as u64).saturating_mul(2).max(8);
        match self.check_memory(next, self.deps.capacity() as u64) {
            Ok(()) => {
                // grow all three to the checked capacity at once
                let more = (next - len as u64) as usize;
                self.sig.reserve_exact(more);
                self.rank.reserve_exact(more);
                self.peer.reserve_exact(more);
                true
            }
            Err(e) => {
                self.over_budget = true;
                self.fail_first(e);
                false
            }
        }
    }

    /// Before `add` more dependency entries: whether the grown list fits.
    #[inline]
    fn room_for_dependencies(&mut self, add: usize) -> bool {
        if self.over_budget {
            return false;
        }
        let (len, cap) = (self.deps.len(), self.deps.capacity());
        if len + add <= cap {
            return true;
        }
        let next = (cap as u64)
            .saturating_mul(2)
            .max(8)
            .max((len + add) as u64);
        match self.check_memory(self.sig.capacity() as u64, next) {
            Ok(()) => {
                self.deps.reserve_exact((next - len as u64) as usize);
                true
            }
            Err(e) => {
                self.over_budget = true;
                self.fail_first(e);
                false
            }
        }
    }

    /// Records `e`, replacing an earlier error: a budget exceeded is reported before the
    /// validation of a schedule that was never completed.
    fn fail_first(&mut self, e: SimError) {
        self.error = Some(e);
    }

    /// Reserves room for `ops` more operations and `deps` more dependencies.
    /// Room beyond the memory budget is not reserved (the budget is checked again when the
    /// arrays grow).
    pub fn reserve(&mut self, ops: usize, deps: usize) {
        let (ops_after, deps_after) = (
            (self.sig.len() as u64).saturating_add(ops as u64),
            (self.deps.len() as u64).saturating_add(deps as u64),
        );
        if self.check_memory(ops_after, deps_after).is_err() {
            return;
        }
        self.sig.reserve(ops);
        self.rank.reserve(ops);
        self.peer.reserve(ops);
        self.deps.reserve(deps);
    }

    /// Keeps the operations in the order they are added: a collective builder that writes its
    /// operations round by round (all ranks' operations of one time step together) already
    /// has the order the simulator reads best.
    pub(crate) fn keep_order(&mut self) {
        self.keep_order = true;
    }

    /// Number of operations added so far.
    pub fn len(&self) -> usize {
        self.sig.len()
    }

    /// Whether no operation was added yet.
    pub fn is_empty(&self) -> bool {
        self.sig.is_empty()
    }

    /// The error [`build`](Self::build) will report once the builder refused an operation
    /// (returned an `OpId` of `u32::MAX`: the budget exceeded, too many operations).
    pub(crate) fn refusal(&self) -> Option<SimError> {
        self.error.clone()
    }

    fn fail(&mut self, e: SimError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    fn rank_u32(&mut self, what: &'static str, rank: u64) -> u32 {
        if rank >= self.ranks || rank >= u64::from(NONE) {
            self.fail(SimError::RankOutOfRange {
                what,
                rank,
                ranks: self.ranks,
            });
            return 0;
        }
        rank as u32
    }

    fn push(&mut self, kind: u8, rank: u64, peer: u32, tag: u32, class: u32) -> OpId {
        let r = self.rank_u32("rank", rank);
        let id = self.sig.len() as u64;
        if id >= MAX_OPERATIONS {
            self.fail(SimError::TooLarge {
                what: "operations",
                count: id + 1,
                limit: MAX_OPERATIONS,
            });
            return OpId(NONE);
        }
        if !self.room_for_operation() {
            return OpId(NONE);
        }
        let x = Signature { kind, tag, class };
        let s = self.intern(x);
        self.sig.push(s);
        self.rank.push(r);
        self.peer.push(peer);
        OpId(id as u32)
    }

    /// The index of signature `x` in the table of distinct ones.
    #[inline]
    fn intern(&mut self, x: Signature) -> u32 {
        match self.recent {
            [Some((a, id)), _] if a == x => id,
            [_, Some((b, id))] if b == x => {
                self.recent.swap(0, 1);
                id
            }
            _ => {
                let table = &mut self.signatures;
                let id = *self.signature_index.entry(x).or_insert_with(|| {
                    table.push(x);
                    (table.len() - 1) as u32
                });
                self.recent = [Some((x, id)), self.recent[0]];
                id
            }
        }
    }

    fn message_class(&mut self, message: Message) -> u32 {
        // schedules repeat one message many times in a row: skip the hash lookup
        if let Some(&(last, c)) = self.last_message.as_ref()
            && last == message
        {
            return c;
        }
        let c = self.lookup_message(message);
        self.last_message = Some((message, c));
        c
    }

    fn lookup_message(&mut self, message: Message) -> u32 {
        if let Some(&c) = self.message_index.get(&message) {
            return c;
        }
        let c = self.messages.len() as u32;
        self.messages.push(message);
        self.message_index.insert(message, c);
        c
    }

    /// Rank `rank` sends a contiguous message of `bytes` bytes to `peer` with `tag`.
    pub fn send(&mut self, rank: u64, peer: u64, tag: u32, bytes: u64) -> OpId {
        self.send_message(rank, peer, tag, Message::contiguous(bytes))
    }

    /// Rank `rank` sends `message` to `peer` with `tag`.
    pub fn send_message(&mut self, rank: u64, peer: u64, tag: u32, message: Message) -> OpId {
        if !self.room_for_distinct() {
            return OpId(NONE);
        }
        let p = self.rank_u32("peer", peer);
        let c = self.message_class(message);
        self.push(KIND_SEND, rank, p, tag, c)
    }

    /// Rank `rank` receives a contiguous message of `bytes` bytes from `peer` with `tag`.
    pub fn recv(&mut self, rank: u64, peer: u64, tag: u32, bytes: u64) -> OpId {
        self.recv_message(rank, peer, tag, Message::contiguous(bytes))
    }

    /// Rank `rank` receives `message` from `peer` with `tag`.
    pub fn recv_message(&mut self, rank: u64, peer: u64, tag: u32, message: Message) -> OpId {
        if !self.room_for_distinct() {
            return OpId(NONE);
        }
        let p = self.rank_u32("peer", peer);
        let c = self.message_class(message);
        self.push(KIND_RECV, rank, p, tag, c)
    }

    /// Rank `rank` computes for `seconds` (finite, `>= 0`, else [`build`](Self::build) fails).
    pub fn calc(&mut self, rank: u64, seconds: f64) -> OpId {
        if !self.room_for_distinct() {
            return OpId(NONE);
        }
        if !(seconds >= 0.0 && seconds.is_finite()) {
            self.fail(SimError::InvalidTime {
                name: "calc seconds",
                value: seconds,
            });
        } else if seconds > MAX_CALC_SECONDS {
            self.fail(SimError::TimeTooLarge {
                name: "calc seconds",
                value: seconds,
                limit: MAX_CALC_SECONDS,
            });
        }
        let c = self.calc_class(seconds);
        self.push(KIND_CALC, rank, NONE, 0, c)
    }

    /// The index of calc time `seconds` in the table of distinct ones.
    fn calc_class(&mut self, seconds: f64) -> u32 {
        let bits = seconds.to_bits();
        match self.calc_index.get(&bits) {
            Some(&c) => c,
            None => {
                let c = self.calcs.len() as u32;
                self.calcs.push(seconds);
                self.calc_index.insert(bits, c);
                c
            }
        }
    }

    /// Rank `rank` applies `operator` to `bytes` bytes.
    pub fn calc_operator(&mut self, rank: u64, bytes: u64, operator: Operator) -> OpId {
        self.calc(rank, Calc::Operator { bytes, operator }.seconds())
    }

    /// `op` depends on `on` (both operations of the same rank).
    pub fn depend(&mut self, op: OpId, on: OpId, kind: Dependency) {
        let flag = if kind == Dependency::Irequires {
            START_EDGE
        } else {
            0
        };
        if !self.room_for_dependencies(1) {
            return;
        }
        // an id with the top bit set is out of range either way (UnknownOperation)
        self.deps
            .push((op.0.min(NONE >> 1), on.0.min(NONE >> 1) | flag));
        self.dep_count += 1;
    }

    /// Every operation of `ops` requires every operation of `on` (the blocking step of a
    /// collective: a step's operations all wait for the rank's previous step), stored once
    /// for the group. The same as `requires(op, o)` for each `op` in `ops` and, for each, each
    /// `o` in `on`, in that order; an empty range adds nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::sim::{OpId, ScheduleBuilder};
    ///
    /// // rank 0 exchanges with rank 1 twice; the second exchange waits for the first
    /// let mut b = ScheduleBuilder::new(2);
    /// let first = b.send(0, 1, 0, 8);
    /// b.recv(0, 1, 0, 8);
    /// let second = b.send(0, 1, 1, 8);
    /// let last = b.recv(0, 1, 1, 8);
    /// b.requires_all(second..OpId(last.0 + 1), first..second);
    /// for tag in [0, 1] {
    ///     b.recv(1, 0, tag, 8);
    ///     b.send(1, 0, tag, 8);
    /// }
    /// let s = b.build()?;
    /// assert_eq!(s.dependencies(), 4);
    /// assert_eq!(s.dependents(first).count(), 2);
    /// # Ok::<(), commcost::sim::SimError>(())
    /// ```
    pub fn requires_all(&mut self, ops: std::ops::Range<OpId>, on: std::ops::Range<OpId>) {
        if ops.start >= ops.end || on.start >= on.end {
            return;
        }
        let clamp = |x: OpId| x.0.min(NONE >> 1);
        if u64::from(clamp(ops.end) - clamp(ops.start)) * u64::from(clamp(on.end) - clamp(on.start))
            <= 2
        {
            // one or two pairs take no more room than the group
            for op in ops.start.0..ops.end.0 {
                for o in on.start.0..on.end.0 {
                    self.requires(OpId(op), OpId(o));
                }
            }
            return;
        }
        if !self.room_for_dependencies(2) {
            return;
        }
        self.deps.push((GROUP | clamp(ops.start), clamp(ops.end)));
        self.deps.push((GROUP | clamp(on.start), clamp(on.end)));
        self.dep_count = self.dep_count.saturating_add(
            u64::from(clamp(ops.end) - clamp(ops.start))
                * u64::from(clamp(on.end) - clamp(on.start)),
        );
    }

    /// `op requires on`: `op` starts after `on` completes.
    pub fn requires(&mut self, op: OpId, on: OpId) {
        self.depend(op, on, Dependency::Requires);
    }

    /// `op irequires on`: `op` starts after `on` starts.
    pub fn irequires(&mut self, op: OpId, on: OpId) {
        self.depend(op, on, Dependency::Irequires);
    }

    /// Validates and freezes the schedule.
    ///
    /// Threads: with the `parallel` feature (off by default), a schedule of 2^16 operations or
    /// more is validated and frozen by two threads (the same schedule and errors); without
    /// it, on the calling thread. Every schedule builder ([`ToSchedule`](crate::sim::ToSchedule),
    /// the GOAL readers) ends here.
    ///
    /// # Errors
    ///
    /// [`SimError::NoRanks`], [`SimError::RankOutOfRange`] (an operation's rank or peer),
    /// [`SimError::InvalidTime`] (a calc), [`SimError::UnknownOperation`],
    /// [`SimError::CrossRankDependency`], [`SimError::Cycle`] (dependencies),
    /// [`SimError::Unmatched`], [`SimError::SizeMismatch`] (messages),
    /// [`SimError::TooLarge`] (more than [`MAX_RANKS`] ranks or [`MAX_OPERATIONS`] operations).
    pub fn build(self) -> Result<Schedule, SimError> {
        if self.ranks == 0 {
            return Err(SimError::NoRanks);
        }
        if self.ranks > MAX_RANKS {
            return Err(SimError::TooLarge {
                what: "ranks",
                count: self.ranks,
                limit: MAX_RANKS,
            });
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        self.check_memory(self.sig.capacity() as u64, self.deps.capacity() as u64)?;
        if self.dep_count >= u64::from(NONE) {
            return Err(SimError::TooLarge {
                what: "dependencies",
                count: self.dep_count,
                limit: u64::from(NONE) - 1,
            });
        }
        let ScheduleBuilder {
            ranks,
            sig,
            signatures,
            rank,
            peer,
            messages,
            calcs,
            deps,
            dep_count,
            keep_order,
            ..
        } = self;
        freeze(Parts {
            ranks,
            sig,
            signatures,
            rank,
            peer,
            messages,
            calcs,
            deps,
            dep_count,
            keep_order,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::OpKind;

    /// Ranks' programs interleaved, so the internal (time-major) order differs from the order
    /// of addition: every accessor must still answer by the operation's own index, with the
    /// values given to the builder.
    #[test]
    fn accessors_answer_by_operation_index() {
        let mut b = ScheduleBuilder::new(3);
        let c0 = b.calc(0, 1e-6); // 0
        let s0 = b.send(0, 1, 7, 100); // 1
        let r1 = b.recv(1, 0, 7, 100); // 2
        let s1 = b.send(1, 2, 9, 8); // 3
        let r2 = b.recv(2, 1, 9, 8); // 4
        let s2 = b.send(2, 0, 3, 16); // 5
        let r0 = b.recv(0, 2, 3, 16); // 6
        b.requires(s0, c0);
        b.requires(r0, s0);
        b.irequires(s1, r1);
        b.requires(s2, r2);
        let s = b.build().unwrap();
        assert_eq!(s.len(), 7);
        let kinds = [
            OpKind::Calc,
            OpKind::Send,
            OpKind::Recv,
            OpKind::Send,
            OpKind::Recv,
            OpKind::Send,
            OpKind::Recv,
        ];
        let ranks = [0, 0, 1, 1, 2, 2, 0];
        let peers = [None, Some(1), Some(0), Some(2), Some(1), Some(0), Some(2)];
        let tags = [0, 7, 7, 9, 9, 3, 3];
        let bytes = [
            None,
            Some(100),
            Some(100),
            Some(8),
            Some(8),
            Some(16),
            Some(16),
        ];
        let partners = [
            None,
            Some(r1),
            Some(s0),
            Some(r2),
            Some(s1),
            Some(r0),
            Some(s2),
        ];
        for i in 0..7 {
            let op = OpId(i as u32);
            assert_eq!(s.kind(op), Some(kinds[i]), "op {i}");
            assert_eq!(s.rank(op), Some(ranks[i]), "op {i}");
            assert_eq!(s.peer(op), peers[i], "op {i}");
            assert_eq!(s.tag(op), Some(tags[i]), "op {i}");
            assert_eq!(s.message(op).map(|m| m.bytes()), bytes[i], "op {i}");
            assert_eq!(s.partner(op), partners[i], "op {i}");
        }
        assert_eq!(s.calc_seconds(c0), Some(1e-6));
        let deps = |op: OpId| s.dependents(op).collect::<Vec<_>>();
        assert_eq!(deps(c0), vec![(s0, Dependency::Requires)]);
        assert_eq!(deps(s0), vec![(r0, Dependency::Requires)]);
        assert_eq!(deps(r1), vec![(s1, Dependency::Irequires)]);
        assert_eq!(deps(r2), vec![(s2, Dependency::Requires)]);
        assert!(deps(r0).is_empty());
        assert_eq!(s.kind(OpId(7)), None);
    }

    /// A group of dependencies is the same as its pairs added one by one (the oracle): the
    /// same successor lists, in the same order, mixed with single pairs and `irequires`.
    #[test]
    fn requires_all_equals_its_pairs() {
        let build = |grouped: bool| {
            let mut b = ScheduleBuilder::new(2);
            let ops: Vec<OpId> = (0..9).map(|_| b.calc(0, 1e-6)).collect();
            b.irequires(ops[4], ops[0]);
            if grouped {
                b.requires_all(ops[3]..ops[6], ops[0]..ops[3]);
                b.requires_all(ops[6]..ops[7], ops[5]..ops[6]);
                b.requires_all(ops[7]..OpId(9), ops[3]..ops[6]);
                b.requires_all(ops[8]..ops[8], ops[0]..ops[3]);
            } else {
                for (a, b_, c, d) in [(3, 6, 0, 3), (6, 7, 5, 6), (7, 9, 3, 6)] {
                    for op in a..b_ {
                        for on in c..d {
                            b.requires(ops[op], ops[on]);
                        }
                    }
                }
            }
            b.requires(ops[8], ops[1]);
            b.calc(1, 0.0);
            b.build().unwrap()
        };
        let (g, p) = (build(true), build(false));
        assert_eq!(g.dependencies(), p.dependencies());
        assert_eq!(g.dependencies(), 1 + 9 + 1 + 6 + 1);
        for i in 0..g.len() as u32 {
            let deps = |s: &Schedule| s.dependents(OpId(i)).collect::<Vec<_>>();
            assert_eq!(deps(&g), deps(&p), "op {i}");
        }
    }

    /// Ranks whose first operations come out of order are numbered internally in the order
    /// they appear; everything a schedule or a simulation reports still names the ranks
    /// themselves: accessors, per-rank finish times (rank 1 only computes, for exactly 5 µs),
    /// the critical path and a deadlock.
    #[test]
    fn ranks_are_reported_by_their_own_numbers() {
        use crate::sim::{SimOptions, simulate};
        use crate::{CommModel, presets};
        let mut b = ScheduleBuilder::new(3);
        let c2 = b.calc(2, 3e-6); // 0: rank 2 appears first
        let s2 = b.send(2, 0, 0, 8); // 1
        let r0 = b.recv(0, 2, 0, 8); // 2: then rank 0
        let c0 = b.calc(0, 1e-6); // 3
        let c1 = b.calc(1, 5e-6); // 4: then rank 1
        b.requires(s2, c2);
        b.requires(c0, r0);
        let s = b.build().unwrap();
        assert!(
            !s.raw_rank_of().is_empty(),
            "the numbering must differ here"
        );
        assert_eq!(s.rank(c2), Some(2));
        assert_eq!(s.rank(r0), Some(0));
        assert_eq!(s.rank(c1), Some(1));
        assert_eq!((s.peer(s2), s.peer(r0)), (Some(0), Some(2)));
        let model = presets::open_mpi_openib();
        let options = SimOptions {
            critical_path: true,
            ..SimOptions::default()
        };
        let run = simulate(&s, &model, &options).unwrap();
        assert_eq!(run.rank_finish[1].to_bits(), 5e-6f64.to_bits());
        // rank 2 computes 3 µs, then sends for its send overhead
        let o = model
            .quantities(&crate::Message::contiguous(8))
            .send_overhead;
        assert_eq!(run.rank_finish[2].to_bits(), (3e-6 + o).to_bits());
        assert!(run.rank_finish[0] > run.rank_finish[2]);
        let path = run.critical_path.unwrap();
        let ranks: Vec<u64> = path.steps.iter().map(|x| x.rank).collect();
        assert_eq!(ranks, vec![2, 2, 0, 0]);
        // ranks 1 and 2 each wait for the other's message first
        let mut b = ScheduleBuilder::new(3);
        b.calc(2, 1e-6); // 0
        let r2 = b.recv(2, 1, 6, 8); // 1: the first operation that never completes
        let s2 = b.send(2, 1, 5, 8); // 2
        b.calc(0, 1e-6); // 3
        let r1 = b.recv(1, 2, 5, 8); // 4
        let s1 = b.send(1, 2, 6, 8); // 5
        b.requires(s2, r2);
        b.requires(s1, r1);
        let s = b.build().unwrap();
        assert!(!s.raw_rank_of().is_empty());
        assert!(matches!(
            simulate(&s, &model, &SimOptions::default()),
            Err(SimError::Deadlock { rank: 2, op: 1, .. })
        ));
    }

    /// Errors found after the reordering name the operation by its own index.
    #[test]
    fn errors_name_operations_by_their_own_index() {
        // a cycle on rank 1, whose operations come after rank 0's
        let mut b = ScheduleBuilder::new(2);
        b.calc(0, 0.0); // 0
        b.calc(0, 0.0); // 1
        let x = b.calc(1, 0.0); // 2
        let y = b.calc(1, 0.0); // 3
        b.requires(x, y);
        b.requires(y, x);
        assert!(matches!(b.build(), Err(SimError::Cycle { rank: 1, op: 2 })));
        // an unmatched receive: the second operation of rank 1
        let mut b = ScheduleBuilder::new(2);
        b.send(0, 1, 0, 8); // 0
        b.calc(0, 0.0); // 1
        b.recv(1, 0, 0, 8); // 2
        b.recv(1, 0, 0, 8); // 3
        assert!(matches!(
            b.build(),
            Err(SimError::Unmatched { op: 3, rank: 1, .. })
        ));
    }
}
