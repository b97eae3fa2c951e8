//! Schedules as data: per rank a list of operations and the dependencies between them.

use super::layout::{Layout, Operations};
use super::op::{Dependency, KIND_CALC, NONE, OpId, OpKind, START_EDGE, Signature, kind_of};
use super::validate::invert;
use crate::Message;

/// The largest number of operations a schedule holds (indices keep the top bit free).
pub const MAX_OPERATIONS: u64 = (1 << 31) - 1;
/// The largest number of ranks a schedule holds: the simulator keeps ~56 bytes per rank, so a
/// few bytes of GOAL text (`num_ranks 4000000000`) must not make it allocate gigabytes.
pub const MAX_RANKS: u64 = 1 << 24;

/// The longest calc a schedule holds, seconds (`1e30`, as a table value in
/// [`limits`](crate::limits)): the times of `2^31` operations, each at most this or a model's
/// cost of one message (below `1e29` s), sum to far below `f64::MAX`.
pub const MAX_CALC_SECONDS: f64 = 1e30;

/// A validated schedule: operations in flat arrays, dependencies as successor lists, every send
/// paired with its receive.
///
/// Built by [`ScheduleBuilder::build`](super::ScheduleBuilder::build), the collective builders
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
    pub(super) ranks: u64,
    /// The operations' kinds, ranks, partners and successors, in internal order: stored, or
    /// computed from their positions.
    pub(super) operations: Operations,
    /// `rank_of[x]`: the rank numbered `x` in the layout's ranks; empty when the numbers are the
    /// ranks.
    pub(super) rank_of: Vec<u32>,
    pub(super) signatures: Vec<Signature>,
    pub(super) messages: Vec<Message>,
    pub(super) calcs: Vec<f64>,
    /// `orig[i]`: the operation at internal position `i`; empty when the internal order is the
    /// operations' own.
    pub(super) orig: Vec<u32>,
    /// `index[op]`: the internal position of operation `op` (the inverse of `orig`), made when
    /// first needed.
    pub(super) index: std::sync::OnceLock<Vec<u32>>,
    /// Whether any dependency is an `irequires`.
    pub(super) start_edges: bool,
}

impl Schedule {
    /// The schedule of `ranks` ranks whose operations `operations` computes (in operation
    /// order, ranks numbered as themselves, no `irequires`), their signature indices pointing
    /// into `signatures`, their classes into `messages` and `calcs`.
    pub(crate) fn computed(
        ranks: u64,
        operations: Operations,
        signatures: Vec<Signature>,
        messages: Vec<Message>,
        calcs: Vec<f64>,
    ) -> Self {
        Self {
            ranks,
            operations,
            rank_of: Vec::new(),
            signatures,
            messages,
            calcs,
            orig: Vec::new(),
            index: std::sync::OnceLock::new(),
            start_edges: false,
        }
    }

    /// The bytes its arrays hold (capacity, not length).
    pub(crate) fn heap_bytes(&self) -> u64 {
        let words = self.rank_of.capacity() + self.orig.capacity();
        let bytes = self.operations.heap_bytes()
            + 4 * words as u128
            + (self.signatures.capacity() * std::mem::size_of::<Signature>()) as u128
            + (self.messages.capacity() * std::mem::size_of::<Message>()) as u128
            + 8 * self.calcs.capacity() as u128;
        u64::try_from(bytes).unwrap_or(u64::MAX)
    }

    /// Whether any dependency is an `irequires`.
    pub(crate) fn has_start_edges(&self) -> bool {
        self.start_edges
    }

    /// The operations' layout.
    pub(crate) fn operations(&self) -> &Operations {
        &self.operations
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
        self.operations.len()
    }

    /// Whether the schedule has no operation.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of dependencies.
    pub fn dependencies(&self) -> usize {
        self.operations.dependencies()
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
        self.rank_named(self.operations.rank(i))
    }

    /// The internal position of the partner of the operation at internal position `i`.
    #[inline]
    fn partner_at(&self, i: usize) -> u32 {
        self.operations.partner(i)
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
        self.int(op)
            .map(|i| self.operations.successors(i))
            .into_iter()
            .flatten()
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
        self.signatures[self.operations.signature(i) as usize]
    }
    /// The kind of the operation at internal position `i`.
    pub(crate) fn kind_at(&self, i: usize) -> OpKind {
        kind_of(self.signature(i).kind)
    }
    pub(crate) fn raw_signatures(&self) -> &[Signature] {
        &self.signatures
    }
    pub(crate) fn raw_calcs(&self) -> &[f64] {
        &self.calcs
    }
    /// Internal position to operation index (empty: the same).
    pub(crate) fn raw_orig(&self) -> &[u32] {
        &self.orig
    }
}
