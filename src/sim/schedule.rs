//! Schedules as data: per rank a list of operations and the dependencies between them.

use super::implicit::RecursiveDoublingAllreduce;
use crate::Message;
use crate::collectives::Operator;
use crate::error::SimError;

/// The index of an operation in a [`Schedule`] (its position in the order operations were
/// added to the [`ScheduleBuilder`]).
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

const KIND_SEND: u8 = 0;
const KIND_RECV: u8 = 1;
const KIND_CALC: u8 = 2;
/// No peer / no partner / no predecessor.
pub(crate) const NONE: u32 = u32::MAX;
/// Marks an `irequires` edge in the successor lists.
pub(crate) const START_EDGE: u32 = 1 << 31;
/// The largest number of operations a schedule holds (indices keep the top bit free).
pub const MAX_OPERATIONS: u64 = (1 << 31) - 1;
/// The largest number of ranks a schedule holds: the simulator keeps ~56 bytes per rank, so a
/// few bytes of GOAL text (`num_ranks 4000000000`) must not make it allocate gigabytes.
pub const MAX_RANKS: u64 = 1 << 24;

/// The longest calc a schedule holds, seconds (`1e30`, as a table value in
/// [`limits`](crate::limits)): the times of `2^31` operations, each at most this or a model's
/// cost of one message (below `1e29` s), sum to far below `f64::MAX`.
pub const MAX_CALC_SECONDS: f64 = 1e30;

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
    /// The budget was exceeded: nothing more is added.
    over_budget: bool,
}

/// Marks the two entries of a group of dependencies in the builder's list (operation indices
/// stay below `2^31`).
const GROUP: u32 = 1 << 31;

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
        self.check_memory(self.sig.capacity() as u64, self.deps.capacity() as u64)
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
        let bits = seconds.to_bits();
        let c = match self.calc_index.get(&bits) {
            Some(&c) => c,
            None => {
                let c = self.calcs.len() as u32;
                self.calcs.push(seconds);
                self.calc_index.insert(bits, c);
                c
            }
        };
        self.push(KIND_CALC, rank, NONE, 0, c)
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
        let n = self.sig.len();
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
        // every dependency on an earlier operation (the collective builders): no cycle
        let mut forward = true;
        each_dependency(&deps, |op, on| {
            let on = on & !START_EDGE;
            forward &= on < op;
            for id in [op, on] {
                if id as usize >= n {
                    return Err(SimError::UnknownOperation {
                        op: u64::from(op),
                        on: u64::from(on),
                        ops: n as u64,
                    });
                }
            }
            let (r1, r2) = (rank[op as usize], rank[on as usize]);
            if r1 != r2 {
                return Err(SimError::CrossRankDependency {
                    op: u64::from(op),
                    rank: u64::from(r1),
                    on: u64::from(on),
                    other_rank: u64::from(r2),
                });
            }
            Ok(())
        })?;
        let index = if keep_order {
            Vec::new()
        } else {
            time_major(&rank, ranks as usize)
        };
        let orig = invert(&index);
        // from here on every per-operation array is in internal order (one gathered at a time)
        let sig = permute(sig, &orig);
        let rank = permute(rank, &orig);
        let peer = permute(peer, &orig);
        let matched = |peer: Vec<u32>| {
            match_messages(
                &sig,
                &signatures,
                &rank,
                &peer,
                &messages,
                &orig,
                ranks as usize,
            )
        };
        // without a possible cycle, messages are matched first and the peers dropped before
        // the successor lists are made (less memory at once); else the cycle is reported first
        let (mut partner, mut peer) = if forward {
            (matched(peer)?, Vec::new())
        } else {
            (Vec::new(), peer)
        };
        let to_int = |i: u32| -> u32 {
            if index.is_empty() {
                i
            } else {
                index[i as usize]
            }
        };
        // one pass over the dependencies: note which operations have any, and count the
        // successors of each operation (CSR, internal order: edge on -> op) in
        // `offsets[on + 1]`
        let mut offsets = vec![0u32; n + 1];
        let mut has_pred = vec![false; n];
        for_each_entry(&deps, false, |entry| match entry {
            Entry::Pair(op, on) => {
                has_pred[op as usize] = true;
                offsets[to_int(on & !START_EDGE) as usize + 1] += 1;
            }
            Entry::Group(ops, on) => {
                for op in ops.clone() {
                    has_pred[op as usize] = true;
                }
                for o in on {
                    offsets[to_int(o) as usize + 1] += ops.len() as u32;
                }
            }
        });
        // the operations without dependencies, ready at the start, in operation order
        let roots: Vec<u32> = (0..n as u32)
            .filter(|&e| !has_pred[e as usize])
            .map(to_int)
            .collect();
        drop(has_pred);
        // `offsets[i + 1]` becomes the end of `i`'s list; filling each list from its end with
        // the edges taken in reverse leaves `offsets[i]` at its start and the edges in the
        // order they were added (no second offset array)
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut successors = vec![0u32; dep_count as usize];
        for_each_entry(&deps, true, |entry| match entry {
            Entry::Pair(op, on) => {
                let slot = &mut offsets[to_int(on & !START_EDGE) as usize + 1];
                *slot -= 1;
                successors[*slot as usize] = to_int(op) | (on & START_EDGE);
            }
            Entry::Group(ops, on) => {
                for op in ops.rev() {
                    let op = to_int(op);
                    for o in on.clone().rev() {
                        let slot = &mut offsets[to_int(o) as usize + 1];
                        *slot -= 1;
                        successors[*slot as usize] = op;
                    }
                }
            }
        });
        offsets.rotate_left(1);
        offsets[n] = dep_count as u32;
        drop(deps);
        drop(index);
        if !forward {
            check_acyclic(&offsets, &successors, &rank, &orig)?;
            partner = matched(std::mem::take(&mut peer))?;
        }
        let (rank, rank_of) = renumber_ranks(rank, ranks as usize);
        let start_edges = successors.iter().any(|&e| e & START_EDGE != 0);

        Ok(Schedule {
            ranks,
            sig,
            signatures,
            rank,
            rank_of,
            roots,
            partner,
            messages,
            calcs,
            offsets,
            successors,
            // the inverse is rebuilt on the first question about an operation by its index:
            // a simulation needs only `orig`
            index: std::sync::OnceLock::new(),
            orig,
            computed: None,
            start_edges,
        })
    }
}

/// Numbers the ranks in the order their first operation appears in internal order (ranks
/// without operations last), so that the ranks whose operations lie together in memory have
/// their simulation state together too; returns the operations' ranks so numbered and the map
/// from that number to the rank (empty when it is the identity, as for every schedule whose
/// first round visits the ranks in order).
fn renumber_ranks(mut rank: Vec<u32>, ranks: usize) -> (Vec<u32>, Vec<u32>) {
    let mut number = vec![NONE; ranks];
    let mut next = 0u32;
    for &r in &rank {
        let x = &mut number[r as usize];
        if *x == NONE {
            *x = next;
            next += 1;
        }
    }
    for x in &mut number {
        if *x == NONE {
            *x = next;
            next += 1;
        }
    }
    if number.iter().enumerate().all(|(r, &x)| x as usize == r) {
        return (rank, Vec::new());
    }
    for r in &mut rank {
        *r = number[*r as usize];
    }
    let mut rank_of = vec![0u32; ranks];
    for (r, &x) in number.iter().enumerate() {
        rank_of[x as usize] = r as u32;
    }
    (rank, rank_of)
}

/// One entry of the builder's list of dependencies: a pair `(op, on | START_EDGE if
/// irequires)`, or a group (every operation of the first range requires every one of the
/// second).
enum Entry {
    Pair(u32, u32),
    Group(std::ops::Range<u32>, std::ops::Range<u32>),
}

/// Calls `f` on each entry of the builder's list of dependencies, in the order they were
/// added (`reverse`: the opposite order).
fn for_each_entry(deps: &[(u32, u32)], reverse: bool, mut f: impl FnMut(Entry)) {
    let entry = |i: usize| -> (Entry, usize) {
        let (a, b) = deps[i];
        if a & GROUP != 0 {
            let (c, d) = deps[i + 1];
            (Entry::Group(a & !GROUP..b, c & !GROUP..d), 2)
        } else {
            (Entry::Pair(a, b), 1)
        }
    };
    if reverse {
        let mut i = deps.len();
        while i > 0 {
            // the second entry of a group is marked too: its first is the one before
            let start = if deps[i - 1].0 & GROUP != 0 {
                i - 2
            } else {
                i - 1
            };
            f(entry(start).0);
            i = start;
        }
    } else {
        let mut i = 0;
        while i < deps.len() {
            let (e, len) = entry(i);
            f(e);
            i += len;
        }
    }
}

/// Calls `f(op, on | START_EDGE if irequires)` on every dependency, groups expanded, in the
/// order they were added; stops at the first error.
fn each_dependency(
    deps: &[(u32, u32)],
    mut f: impl FnMut(u32, u32) -> Result<(), SimError>,
) -> Result<(), SimError> {
    let mut result = Ok(());
    for_each_entry(deps, false, |e| {
        if result.is_err() {
            return;
        }
        result = match e {
            Entry::Pair(op, on) => f(op, on),
            Entry::Group(ops, on) => ops
                .flat_map(|op| on.clone().map(move |o| (op, o)))
                .try_for_each(|(op, o)| f(op, o)),
        };
    });
    result
}

/// The time-major order of the operations: by position in their rank's program, then by
/// operation index, so that the operations a lock-step collective runs at one time lie next
/// to each other. Returns `index[op]`, the internal position of `op`; empty when that order is
/// the operations' own.
fn time_major(rank: &[u32], ranks: usize) -> Vec<u32> {
    let n = rank.len();
    // position of each operation in its rank's program, and how many operations each
    // position has
    let mut next = vec![0u32; ranks];
    let mut pos = vec![0u32; n];
    let mut count: Vec<u32> = Vec::new();
    for (i, &r) in rank.iter().enumerate() {
        let k = next[r as usize];
        next[r as usize] += 1;
        pos[i] = k;
        if k as usize == count.len() {
            count.push(0);
        }
        count[k as usize] += 1;
    }
    drop(next);
    // already in that order when positions never go down
    if pos.is_sorted() {
        return Vec::new();
    }
    let mut start = 0u32;
    for c in count.iter_mut() {
        let here = *c;
        *c = start;
        start += here;
    }
    for k in pos.iter_mut() {
        let slot = &mut count[*k as usize];
        *k = *slot;
        *slot += 1;
    }
    pos
}

/// The inverse of a permutation (empty for the identity).
fn invert(index: &[u32]) -> Vec<u32> {
    let mut orig = vec![0u32; index.len()];
    for (e, &i) in index.iter().enumerate() {
        orig[i as usize] = e as u32;
    }
    orig
}

/// An array in internal order (`out[i] = v[orig[i]]`; itself for the identity): a gather,
/// which writes in order (cheaper than a scatter).
fn permute(v: Vec<u32>, orig: &[u32]) -> Vec<u32> {
    if orig.is_empty() {
        return v;
    }
    orig.iter().map(|&e| v[e as usize]).collect()
}

/// Kahn's algorithm over all operations: every operation must be reachable in a topological
/// order, else the rest lie on or behind a cycle.
///
/// All arrays in internal order (`orig`: internal position to operation index, empty for the
/// same); the error names the first operation (in operation order) left over.
fn check_acyclic(
    offsets: &[u32],
    successors: &[u32],
    rank: &[u32],
    orig: &[u32],
) -> Result<(), SimError> {
    let n = rank.len();
    let mut indegree = vec![0u32; n];
    for &s in successors {
        indegree[(s & !START_EDGE) as usize] += 1;
    }
    // a queue (first in, first out) walks the operations round by round, in memory order
    let mut queue: Vec<u32> = (0..n as u32)
        .filter(|&i| indegree[i as usize] == 0)
        .collect();
    let mut seen = 0usize;
    while seen < queue.len() {
        let op = queue[seen];
        seen += 1;
        let (a, b) = (offsets[op as usize], offsets[op as usize + 1]);
        for &s in &successors[a as usize..b as usize] {
            let t = (s & !START_EDGE) as usize;
            indegree[t] -= 1;
            if indegree[t] == 0 {
                queue.push(t as u32);
            }
        }
    }
    if seen < n {
        let ext = |i: usize| if orig.is_empty() { i } else { orig[i] as usize };
        let i = (0..n)
            .filter(|&i| indegree[i] > 0)
            .min_by_key(|&i| ext(i))
            .unwrap_or(0);
        return Err(SimError::Cycle {
            rank: u64::from(rank[i]),
            op: ext(i) as u64,
        });
    }
    Ok(())
}

/// Pairs every send with a receive: the `k`-th send from `a` to `b` with tag `t` (in operation
/// order) matches the `k`-th receive at `b` from `a` with tag `t`.
///
/// Sends and receives are bucketed by source rank (a counting sort, 4 bytes per operation),
/// each bucket sorted by (destination, tag, operation): together the order of
/// (source, destination, tag, operation), walked in step over sends and receives.
///
/// The arrays are in internal order, which keeps each rank's operations in operation order, so
/// "operation" can be the internal position; `orig` (internal position to operation index,
/// empty for the same) names operations in errors; every rank and peer is below `ranks`.
/// Returns the partners' internal positions.
fn match_messages(
    sig: &[u32],
    signatures: &[Signature],
    rank: &[u32],
    peer: &[u32],
    messages: &[Message],
    orig: &[u32],
    ranks: usize,
) -> Result<Vec<u32>, SimError> {
    let kind = |i: usize| signatures[sig[i] as usize].kind;
    let tag = |i: usize| signatures[sig[i] as usize].tag;
    let class = |i: usize| signatures[sig[i] as usize].class;
    let ext = |i: usize| -> u64 {
        if orig.is_empty() {
            i as u64
        } else {
            u64::from(orig[i])
        }
    };
    let n = sig.len();
    let src = |i: usize| -> usize {
        if kind(i) == KIND_SEND {
            rank[i] as usize
        } else {
            peer[i] as usize
        }
    };
    let dst = |i: usize| -> u32 {
        if kind(i) == KIND_SEND {
            peer[i]
        } else {
            rank[i]
        }
    };
    // operations of kind `k` bucketed by source, each bucket in (destination, tag, op) order,
    // with their keys `destination << 32 | tag` beside them (read in order when merging),
    // and where each source's bucket starts
    let key = |i: usize| (u64::from(dst(i)) << 32) | u64::from(tag(i));
    let bucket = |k: u8| -> (Vec<u32>, Vec<u64>, Vec<u32>) {
        let mut start = vec![0u32; ranks + 1];
        for i in 0..n {
            if kind(i) == k {
                start[src(i) + 1] += 1;
            }
        }
        for r in 0..ranks {
            start[r + 1] += start[r];
        }
        let mut fill = start[..ranks].to_vec();
        let mut ops = vec![0u32; start[ranks] as usize];
        let mut keys = vec![0u64; start[ranks] as usize];
        for i in 0..n {
            if kind(i) == k {
                let slot = &mut fill[src(i)];
                ops[*slot as usize] = i as u32;
                keys[*slot as usize] = key(i);
                *slot += 1;
            }
        }
        drop(fill);
        let mut keyed: Vec<(u64, u32)> = Vec::new();
        for r in 0..ranks {
            let range = start[r] as usize..start[r + 1] as usize;
            // already in operation order: sorting is needed only when (dst, tag) goes down
            if !keys[range.clone()].is_sorted() {
                // (key, position) pairs are distinct, so an unstable sort keeps equal keys in
                // operation order
                keyed.clear();
                keyed.extend(
                    keys[range.clone()]
                        .iter()
                        .copied()
                        .zip(ops[range.clone()].iter().copied()),
                );
                keyed.sort_unstable();
                for ((k, i), &(key, op)) in keys[range.clone()]
                    .iter_mut()
                    .zip(&mut ops[range.clone()])
                    .zip(&keyed)
                {
                    *k = key;
                    *i = op;
                }
            }
        }
        (ops, keys, start)
    };
    let (sends, send_keys, send_start) = bucket(KIND_SEND);
    let (recvs, recv_keys, recv_start) = bucket(KIND_RECV);
    let mut partner = vec![NONE; n];
    let unmatched = |i: usize| {
        let send = kind(i) == KIND_SEND;
        SimError::Unmatched {
            kind: if send { "send" } else { "recv" },
            op: ext(i),
            rank: u64::from(rank[i]),
            peer: u64::from(peer[i]),
            tag: u64::from(tag(i)),
            missing: if send { "recv" } else { "send" },
        }
    };
    // merged source by source: in (source, destination, tag, op) order, as one merge of the
    // whole lists would (an operation left over in a source's bucket is unmatched)
    for r in 0..ranks {
        let (mut a, a_end) = (send_start[r] as usize, send_start[r + 1] as usize);
        let (mut b, b_end) = (recv_start[r] as usize, recv_start[r + 1] as usize);
        while a < a_end || b < b_end {
            if a == a_end {
                return Err(unmatched(recvs[b] as usize));
            }
            if b == b_end {
                return Err(unmatched(sends[a] as usize));
            }
            let (s, v) = (sends[a] as usize, recvs[b] as usize);
            match send_keys[a].cmp(&recv_keys[b]) {
                std::cmp::Ordering::Less => return Err(unmatched(s)),
                std::cmp::Ordering::Greater => return Err(unmatched(v)),
                std::cmp::Ordering::Equal => {
                    let (sb, rb) = (
                        messages[class(s) as usize].bytes(),
                        messages[class(v) as usize].bytes(),
                    );
                    if sb != rb {
                        return Err(SimError::SizeMismatch {
                            send: ext(s),
                            send_bytes: sb,
                            recv: ext(v),
                            recv_bytes: rb,
                        });
                    }
                    partner[s] = v as u32;
                    partner[v] = s as u32;
                    a += 1;
                    b += 1;
                }
            }
        }
    }
    Ok(partner)
}

/// A validated schedule: operations in flat arrays, dependencies as successor lists, every send
/// paired with its receive.
///
/// Built by [`ScheduleBuilder::build`], the collective builders
/// ([`collective_schedule`](crate::sim::collective_schedule)) or
/// [`parse_goal`](crate::sim::parse_goal).
///
/// Inside, the operations are stored in time-major order (by position in their rank's program,
/// then by index), so that the operations of one round of a lock-step collective lie next to
/// each other in memory — or in the order they were added, for the collective builders that
/// write them round by round; every method takes and returns the operations' own indices
/// ([`OpId`]).
#[derive(Debug, Clone)]
pub struct Schedule {
    ranks: u64,
    // per operation, in internal order
    /// Kind, tag and message class: an index into `signatures`.
    sig: Vec<u32>,
    /// The rank of each operation, numbered in the order the ranks first appear in internal
    /// order (see `rank_of`).
    rank: Vec<u32>,
    /// `rank_of[x]`: the rank numbered `x` in `rank`; empty when the numbers are the ranks.
    rank_of: Vec<u32>,
    /// The operations without dependencies, in operation order.
    roots: Vec<u32>,
    /// The internal position of the matched operation of a send or receive (its rank is the
    /// peer), `NONE` for a calc.
    partner: Vec<u32>,
    signatures: Vec<Signature>,
    messages: Vec<Message>,
    calcs: Vec<f64>,
    /// `successors[offsets[i]..offsets[i+1]]`: the internal positions of the operations that
    /// depend on `i` (top bit: `irequires`).
    offsets: Vec<u32>,
    successors: Vec<u32>,
    /// `orig[i]`: the operation at internal position `i`; empty when the internal order is the
    /// operations' own.
    orig: Vec<u32>,
    /// `index[op]`: the internal position of operation `op` (the inverse of `orig`), made when
    /// first needed.
    index: std::sync::OnceLock<Vec<u32>>,
    /// The layout that computes every operation's kind, rank, partner and successors, for a
    /// schedule whose per-operation arrays are not stored (they are empty then).
    computed: Option<RecursiveDoublingAllreduce>,
    /// Whether any dependency is an `irequires`.
    start_edges: bool,
}

impl Schedule {
    /// The schedule of `ranks` ranks laid out by `layout`, whose messages are all `message`
    /// and whose calcs (if any) take `calc_seconds`.
    pub(crate) fn computed(
        ranks: u64,
        layout: RecursiveDoublingAllreduce,
        message: Message,
        calc_seconds: Option<f64>,
    ) -> Self {
        Self {
            ranks,
            sig: Vec::new(),
            rank: Vec::new(),
            rank_of: Vec::new(),
            roots: Vec::new(),
            partner: Vec::new(),
            signatures: RecursiveDoublingAllreduce::signatures([KIND_SEND, KIND_RECV, KIND_CALC]),
            messages: vec![message],
            calcs: calc_seconds.into_iter().collect(),
            offsets: Vec::new(),
            successors: Vec::new(),
            orig: Vec::new(),
            index: std::sync::OnceLock::new(),
            computed: Some(layout),
            start_edges: false,
        }
    }

    /// The bytes its arrays hold (capacity, not length).
    pub(crate) fn heap_bytes(&self) -> u64 {
        let words = self.sig.capacity()
            + self.rank.capacity()
            + self.rank_of.capacity()
            + self.roots.capacity()
            + self.partner.capacity()
            + self.offsets.capacity()
            + self.successors.capacity()
            + self.orig.capacity();
        let bytes = 4 * words as u128
            + (self.signatures.capacity() * std::mem::size_of::<Signature>()) as u128
            + (self.messages.capacity() * std::mem::size_of::<Message>()) as u128
            + 8 * self.calcs.capacity() as u128;
        u64::try_from(bytes).unwrap_or(u64::MAX)
    }

    /// Whether any dependency is an `irequires`.
    pub(crate) fn has_start_edges(&self) -> bool {
        self.start_edges
    }

    /// The computing layout, if the schedule has one (its arrays are then empty).
    pub(crate) fn computed_layout(&self) -> Option<&RecursiveDoublingAllreduce> {
        self.computed.as_ref()
    }

    /// The internal position of `op`, `None` if out of range.
    #[inline]
    fn int(&self, op: OpId) -> Option<usize> {
        let i = op.index();
        if i >= self.len() {
            None
        } else if self.orig.is_empty() {
            Some(i)
        } else {
            Some(self.index.get_or_init(|| invert(&self.orig))[i] as usize)
        }
    }

    /// The operation at internal position `i`.
    #[inline]
    pub(crate) fn ext(&self, i: usize) -> u32 {
        if self.orig.is_empty() {
            i as u32
        } else {
            self.orig[i]
        }
    }

    /// The rank numbered `x` internally.
    #[inline]
    pub(crate) fn rank_named(&self, x: u32) -> u64 {
        if self.rank_of.is_empty() {
            u64::from(x)
        } else {
            u64::from(self.rank_of[x as usize])
        }
    }

    /// Internal rank number to rank (empty: the same).
    pub(crate) fn raw_rank_of(&self) -> &[u32] {
        &self.rank_of
    }

    /// Number of ranks.
    pub fn ranks(&self) -> u64 {
        self.ranks
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        match &self.computed {
            Some(x) => x.len(),
            None => self.sig.len(),
        }
    }

    /// Whether the schedule has no operation.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of dependencies.
    pub fn dependencies(&self) -> usize {
        match &self.computed {
            Some(x) => x.dependencies(),
            None => self.successors.len(),
        }
    }

    /// The kind of operation `op` (`None` if out of range).
    pub fn kind(&self, op: OpId) -> Option<OpKind> {
        self.int(op).map(|i| kind_of(self.signature(i).kind))
    }

    /// The rank that executes `op`.
    pub fn rank(&self, op: OpId) -> Option<u64> {
        self.int(op).map(|i| self.rank_at(i))
    }

    /// The rank of the operation at internal position `i`.
    #[inline]
    fn rank_at(&self, i: usize) -> u64 {
        match &self.computed {
            Some(x) => u64::from(x.rank(i)),
            None => self.rank_named(self.rank[i]),
        }
    }

    /// The internal position of the partner of the operation at internal position `i`.
    #[inline]
    fn partner_at(&self, i: usize) -> u32 {
        match &self.computed {
            Some(x) => x.partner(i),
            None => self.partner[i],
        }
    }

    /// The peer of a send or receive (`None` for a calc).
    pub fn peer(&self, op: OpId) -> Option<u64> {
        let i = self.int(op)?;
        let p = self.partner_at(i);
        (p != NONE).then(|| self.rank_at(p as usize))
    }

    /// The tag of a send or receive (0 for a calc).
    pub fn tag(&self, op: OpId) -> Option<u32> {
        self.int(op).map(|i| self.signature(i).tag)
    }

    /// The message of a send or receive.
    pub fn message(&self, op: OpId) -> Option<Message> {
        let x = self.signature(self.int(op)?);
        match x.kind {
            KIND_CALC => None,
            _ => Some(self.messages[x.class as usize]),
        }
    }

    /// The duration of a calc, seconds.
    pub fn calc_seconds(&self, op: OpId) -> Option<f64> {
        let x = self.signature(self.int(op)?);
        match x.kind {
            KIND_CALC => Some(self.calcs[x.class as usize]),
            _ => None,
        }
    }

    /// The receive a send matched, or the send a receive matched.
    pub fn partner(&self, op: OpId) -> Option<OpId> {
        let i = self.int(op)?;
        let p = self.partner_at(i);
        (p != NONE).then(|| OpId(self.ext(p as usize)))
    }

    /// The operations that depend on `op`, with the kind of each dependency.
    pub fn dependents(&self, op: OpId) -> impl Iterator<Item = (OpId, Dependency)> + '_ {
        let (range, computed) = match (self.int(op), &self.computed) {
            (Some(i), Some(x)) => (0..0, x.successors(i)),
            (Some(i), None) => (self.offsets[i] as usize..self.offsets[i + 1] as usize, 0..0),
            (None, _) => (0..0, 0..0),
        };
        self.successors[range]
            .iter()
            .copied()
            .chain(computed)
            .map(|s| {
                let kind = if s & START_EDGE != 0 {
                    Dependency::Irequires
                } else {
                    Dependency::Requires
                };
                (OpId(self.ext((s & !START_EDGE) as usize)), kind)
            })
    }

    /// The distinct messages of the schedule (each send and receive refers to one).
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    // crate-internal views for the engine, all in internal order
    #[inline]
    fn signature(&self, i: usize) -> Signature {
        match &self.computed {
            Some(x) => self.signatures[x.signature(i) as usize],
            None => self.signatures[self.sig[i] as usize],
        }
    }
    /// The kind of the operation at internal position `i`.
    pub(crate) fn kind_at(&self, i: usize) -> OpKind {
        kind_of(self.signature(i).kind)
    }
    /// The internal positions of the operations without dependencies, in operation order.
    pub(crate) fn raw_roots(&self) -> &[u32] {
        &self.roots
    }
    pub(crate) fn raw_sig(&self) -> &[u32] {
        &self.sig
    }
    pub(crate) fn raw_signatures(&self) -> &[Signature] {
        &self.signatures
    }
    pub(crate) fn raw_rank(&self) -> &[u32] {
        &self.rank
    }
    pub(crate) fn raw_partner(&self) -> &[u32] {
        &self.partner
    }
    pub(crate) fn raw_calcs(&self) -> &[f64] {
        &self.calcs
    }
    pub(crate) fn raw_offsets(&self) -> &[u32] {
        &self.offsets
    }
    pub(crate) fn raw_successors(&self) -> &[u32] {
        &self.successors
    }
    /// Internal position to operation index (empty: the same).
    pub(crate) fn raw_orig(&self) -> &[u32] {
        &self.orig
    }
}

/// An operation's kind, tag and message class (into the messages or the calc durations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Signature {
    pub(crate) kind: u8,
    pub(crate) tag: u32,
    pub(crate) class: u32,
}

fn kind_of(k: u8) -> OpKind {
    match k {
        KIND_SEND => OpKind::Send,
        KIND_RECV => OpKind::Recv,
        _ => OpKind::Calc,
    }
}

pub(crate) const SEND: u8 = KIND_SEND;
pub(crate) const RECV: u8 = KIND_RECV;

#[cfg(test)]
mod tests {
    use super::*;

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
