//! The discrete-event simulator: LogGOPS semantics over any [`CommModel`].

use std::collections::VecDeque;

use super::layout::{Layout, LayoutVisitor};
use super::nodes::TwoLevel;
use super::noise::Noise;
use super::op::{NONE, OpId, Signature};
use super::options::{RendezvousCompletion, SimOptions};
use super::queue::{RadixQueue, sort_by_bitmap};
use super::result::{CriticalPath, CriticalStep, SimResult};
use super::schedule::Schedule;
use crate::sim::SimError;
use crate::{CommModel, Quantities};

mod events;

const EV_READY: u32 = 0;
const EV_ARRIVE: u32 = 1;

// flags in the top four bits of a node's `state`, the pending dependencies below them
const POSTED: u32 = 1 << 28;
const ARRIVED: u32 = 1 << 29;
/// A rendezvous send that started and waits for its receive to be posted.
const WAITING: u32 = 1 << 30;
/// A send counted in its rank's backlog ([`SimOptions::ack_behind_sends`]; a send's own
/// `POSTED` bit, which only receives use otherwise).
const QUEUED: u32 = POSTED;
/// The operation completed.
const DONE: u32 = 1 << 31;
/// The pending dependencies in a node's `state` (at most `2^28 - 1`).
const PENDING: u32 = (1 << 28) - 1;

/// One operation's simulation state (12 bytes; its static data is read from the schedule).
#[derive(Clone, Copy, Default)]
#[repr(C, packed(4))]
struct Node {
    /// Before the operation starts: the latest time a dependency was satisfied; then its start.
    start: f64,
    /// Dependencies not yet satisfied (`state & PENDING`) and the flags (`POSTED`, `ARRIVED`,
    /// `WAITING`, `DONE`).
    state: u32,
}

/// One rank's resources.
#[derive(Clone, Copy)]
struct RankState {
    cpu_free: f64,
    nic_send_free: f64,
    /// When the receiving NIC's last window ended (the last receive's completion).
    nic_recv_free: f64,
    finish: f64,
}

/// The operations that last held one rank's CPU and NICs (kept for the critical path only).
#[derive(Clone, Copy)]
struct Holders {
    cpu: u32,
    nic_send: u32,
    nic_recv: u32,
}

/// The working memory of a simulation, kept between the calls of a [`Simulator`].
#[derive(Default)]
pub(super) struct Work {
    /// The model's quantities per distinct message, evaluated once per simulation.
    q: Vec<Quantities>,
    rendezvous: Vec<bool>,
    /// See `Engine::handshake`.
    handshake: Option<f64>,
    /// See `Engine::ack`.
    ack: Option<f64>,
    /// See `Engine::backlog`.
    backlog: Vec<f64>,
    /// See `Engine::cores`.
    cores: Vec<f64>,
    /// See `Engine::shape`.
    shape: Vec<(f64, f64)>,
    /// See `Engine::credits`.
    credits: Vec<(f64, f64)>,
    /// See `Engine::node_of`.
    node_of: Vec<u32>,
    /// See `Engine::inter_off`.
    inter_off: usize,
    /// See `Engine::h_inter`.
    h_inter: f64,
    /// Pending events: `(time bits, position << 1 | kind)`, where `position` is the
    /// operation's internal position.
    queue: RadixQueue,
    /// Operations that became ready at the time of the event being processed: run next, in
    /// the order they became ready, without a trip through the heap.
    now_ready: std::collections::VecDeque<u32>,
    /// Per operation, the state an event touches, in one 12-byte record.
    node: Vec<Node>,
    end: Vec<f64>,
    /// The operation that held this one back (critical path), if recorded.
    cause: Vec<u32>,
    ranks: Vec<RankState>,
    /// Per rank, if the critical path is recorded.
    holders: Vec<Holders>,
    /// The events of one time.
    batch: Vec<u32>,
    /// The bitmap of [`sort_by_bitmap`].
    bits: Vec<u64>,
}

impl Work {
    /// Operations the memory has room for.
    pub(super) fn operations_capacity(&self) -> usize {
        self.node.capacity()
    }
    /// Ranks the memory has room for.
    pub(super) fn ranks_capacity(&self) -> usize {
        self.ranks.capacity()
    }
    /// Events the queue has room for.
    pub(super) fn queue_capacity(&self) -> usize {
        self.queue.capacity()
    }
}

/// The engine's view of a schedule's operations: the layout, with its signature indices
/// resolved.
struct View<'a, L> {
    layout: &'a L,
    signatures: &'a [Signature],
}

impl<L> Clone for View<'_, L> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<L> Copy for View<'_, L> {}

impl<L: Layout> View<'_, L> {
    /// The matched operation of a send or receive, `NONE` for a calc.
    #[inline(always)]
    fn partner(&self, i: usize) -> u32 {
        self.layout.partner(i)
    }
    /// The rank of operation `i` (internal number).
    #[inline(always)]
    fn rank(&self, i: usize) -> u32 {
        self.layout.rank(i)
    }
    /// `(signature, rank, partner)` of operation `i`.
    #[inline(always)]
    fn describe(&self, i: usize) -> (Signature, u32, u32) {
        let (sig, rank, partner) = self.layout.describe(i);
        (self.signatures[sig as usize], rank, partner)
    }
    /// Calls `f` with each successor entry of `i`, in order.
    #[inline(always)]
    fn for_each_successor(&self, i: usize, f: impl FnMut(u32)) {
        self.layout.for_each_successor(i, f);
    }
    /// Sets `node` to the operations' initial states and appends the operations without
    /// dependencies to `ready`; `false` if an operation has more than `PENDING` dependencies.
    fn initial_state(&self, node: &mut Vec<Node>, ready: &mut VecDeque<u32>) -> bool {
        self.layout
            .initial_state(node, |x: &mut Node| &mut x.state, PENDING, ready)
    }
}

/// `PLATFORM`: whether any platform term is on ([`SimOptions::rendezvous_completion`] at the
/// handshake, shared cores, shaped links); without, their checks are compiled out.
struct Engine<'a, L: Layout, const PLATFORM: bool> {
    q: Vec<Quantities>,
    rendezvous: Vec<bool>,
    /// `p2p(1 B)` when a rendezvous send completes at its handshake
    /// ([`RendezvousCompletion::AtHandshake`]), else `None`.
    handshake: Option<f64>,
    /// `p2p(1 B)` when a rendezvous acknowledgement waits for the receiver's sending NIC
    /// ([`SimOptions::ack_behind_sends`]), else `None`.
    ack: Option<f64>,
    /// Per rank, when its sending NIC would have sent every send handed to it so far (each
    /// counted once, when it first becomes ready; empty without `ack`).
    backlog: Vec<f64>,
    /// When each shared core frees ([`SimOptions::cores`]); empty: a core per rank.
    cores: Vec<f64>,
    /// The core the last [`cpu_start`](Self::cpu_start) picked.
    core: usize,
    /// Token-bucket credit of a NIC, bytes ([`SimOptions::link_burst`]; 0: none).
    burst: f64,
    /// Per message class: its serialisation `I - g` and time per byte, seconds.
    shape: Vec<(f64, f64)>,
    /// Per NIC (as `ranks`), the token-bucket credit of its sending and receiving side at
    /// `nic_send_free` and `nic_recv_free`, bytes (empty without shaped links).
    credits: Vec<(f64, f64)>,
    /// On a two-level platform, each rank's node (internal rank numbers); empty otherwise.
    node_of: Vec<u32>,
    /// Ranks: `ranks[..p]` are the ranks, `ranks[p..]` the nodes' NICs on a two-level platform.
    p: usize,
    /// Where the inter-node quantities start in `q`, `rendezvous` and `shape` (the number of
    /// message classes; 0 without a two-level platform).
    inter_off: usize,
    /// `p2p(1 B)` of the inter-node model (the handshake between nodes).
    h_inter: f64,
    /// Per node NIC and direction (`2 (nic - p) + 0` sending, `+ 1` receiving), the operations
    /// waiting for it, by operation order, and whether one of them is due to try again.
    nic_waiters: Vec<NicWaiters>,
    /// Per node (two-level platform): whether several ranks share its link. A rendezvous
    /// message over such a link holds it only from when its data leaves
    /// ([`depart`](Self::depart)); a rank alone on its node holds its link from the send on, as
    /// on a flat network.
    shared_link: Vec<bool>,
    noise: Option<Noise>,
    queue: RadixQueue,
    now_ready: std::collections::VecDeque<u32>,
    now: f64,
    node: Vec<Node>,
    /// Per operation, its kind, message class, rank, partner and successors.
    l: View<'a, L>,
    /// Whether any dependency is an `irequires` (else nothing waits for a start).
    start_edges: bool,
    calcs: &'a [f64],
    /// Internal position to operation index (empty: the same).
    orig: &'a [u32],
    end: Vec<f64>,
    cause: Vec<u32>,
    /// Per rank its CPU and NICs, then (two-level platform) per node its NICs.
    ranks: Vec<RankState>,
    holders: Vec<Holders>,
    makespan: f64,
    /// The operation that completed last (the end of the critical path).
    last: u32,
    events: u64,
    /// Events that were an operation trying again after waiting for a NIC.
    retries: u64,
    done: u64,
    /// Set by [`waits_for_nic`](Self::waits_for_nic): when the operation tries again and the
    /// operation then holding the NIC.
    waited: Option<(f64, u32)>,
    /// The codes of the operations in [`Block`]s.
    arena: Vec<u32>,
    /// The blocks due at each time (its bits); a [`SENTINEL`] event in the queue marks the time.
    blocks: std::collections::HashMap<u64, Vec<Block>>,
}

/// The operations waiting for one side of a node's NIC, as `Reverse((order, event code))`, and
/// whether one of them is due to try again.
type NicWaiters = (
    std::collections::BinaryHeap<std::cmp::Reverse<(u64, u32)>>,
    bool,
);

/// A queue event that stands for the [`Block`]s due at its time (no operation has this code:
/// operation indices stay below `2^31 - 1`).
const SENTINEL: u32 = u32::MAX;

/// Operations of one rank that wait for the same NIC and try again together: their codes
/// `arena[start..end]`, in processing order, and the operation that held the NIC when they
/// last waited (their cause, for the critical path). A waiter that finds the NIC still busy
/// leaves the state as it was, so every waiter after it that nothing else comes between waits
/// too: a block moves to its next time whole instead of one event per waiter (which made a
/// rank with `k` sends waiting for its NIC cost `k^2` events).
#[derive(Clone, Copy)]
struct Block {
    start: usize,
    end: usize,
    holder: u32,
}

/// The order in which the events of one time run: by operation index, then kind.
#[inline]
fn okey(orig: &[u32], code: u32) -> u64 {
    if orig.is_empty() {
        u64::from(code)
    } else {
        (u64::from(orig[(code >> 1) as usize]) << 1) | u64::from(code & 1)
    }
}

/// `f64` times are non-negative and finite, so their bit patterns order like the values.
#[inline]
fn key(t: f64) -> u64 {
    t.to_bits()
}

fn check_time(name: &'static str, value: f64) -> Result<f64, SimError> {
    if value >= 0.0 && value.is_finite() {
        Ok(value)
    } else {
        Err(SimError::InvalidTime { name, value })
    }
}

/// Simulates `schedule` on `model` in the working memory `work` (the body of
/// [`Simulator::simulate`](super::Simulator::simulate)): checks the memory budget
/// `max_memory`, prepares the state and runs the engine on the schedule's layout.
pub(super) fn simulate_in(
    work: &mut Work,
    max_memory: u64,
    schedule: &Schedule,
    model: &dyn CommModel,
    options: &SimOptions,
    two_level: Option<TwoLevel<'_>>,
) -> Result<SimResult, SimError> {
    let n = schedule.len();
    let p = schedule.ranks() as usize;
    let nodes = match two_level {
        Some(t) if t.nodes.ranks() as usize != p => {
            return Err(SimError::InvalidOption {
                name: "nodes",
                message: "the node map must place as many ranks as the schedule has",
            });
        }
        Some(t) => t.nodes.nodes() as usize,
        None => 0,
    };
    // the schedule's arrays and the simulation's state within the budget, before any of
    // that state is allocated
    super::memory::check(
        schedule
            .heap_bytes()
            .saturating_add(super::memory::simulation_memory(
                n as u64,
                p as u64,
                options.timeline,
            )),
        max_memory,
    )?;
    let w = work;
    w.q.clear();
    w.rendezvous.clear();
    w.shape.clear();
    // per message class its quantities: inside a node (or the only level), then between nodes
    let levels: [(&dyn CommModel, Option<u64>); 2] = match two_level {
        Some(t) => [
            (model, options.rendezvous_above),
            (t.inter, t.inter_rendezvous_above),
        ],
        None => [(model, options.rendezvous_above); 2],
    };
    let shaped_level = usize::from(two_level.is_some());
    for (level, &(m_model, rendezvous_above)) in levels
        .iter()
        .enumerate()
        .take(1 + usize::from(two_level.is_some()))
    {
        for m in schedule.messages() {
            let x = m_model.quantities(m);
            w.q.push(Quantities {
                p2p: check_time("p2p", x.p2p)?,
                send_overhead: check_time("send_overhead", x.send_overhead)?,
                recv_overhead: check_time("recv_overhead", x.recv_overhead)?,
                send_interval: check_time("send_interval", x.send_interval)?,
                gap: x.gap,
            });
            w.rendezvous
                .push(rendezvous_above.is_some_and(|s| m.bytes() > s));
            if options.link_burst.is_some() {
                let q = w.q[w.q.len() - 1];
                let serial = (q.send_interval - q.gap).max(0.0);
                // the shaped link is the nodes' on a two-level platform
                let per_byte = if level == shaped_level && m.bytes() > 1 && q.gap.is_finite() {
                    serial / (m.bytes() - 1) as f64
                } else {
                    0.0
                };
                w.shape.push((serial, per_byte));
            }
        }
    }
    w.inter_off = if two_level.is_some() {
        schedule.messages().len()
    } else {
        0
    };
    w.h_inter = match two_level {
        Some(t) => check_time("p2p", t.inter.p2p(&crate::Message::contiguous(1)))?,
        None => 0.0,
    };
    w.node_of.clear();
    if let Some(t) = two_level {
        let rank_of = schedule.raw_rank_of();
        w.node_of.extend((0..p).map(|x| {
            let rank = rank_of.get(x).copied().unwrap_or(x as u32);
            t.nodes.node(rank)
        }));
    }
    let at_handshake = options.rendezvous_completion == RendezvousCompletion::AtHandshake;
    let h = if at_handshake || options.ack_behind_sends {
        Some(check_time(
            "p2p",
            model.p2p(&crate::Message::contiguous(1)),
        )?)
    } else {
        None
    };
    w.handshake = h.filter(|_| at_handshake);
    w.ack = h.filter(|_| options.ack_behind_sends);
    w.backlog.clear();
    if w.ack.is_some() {
        w.backlog.resize(p + nodes, 0.0);
    }
    w.cores.clear();
    if let Some(c) = options.cores {
        if c == 0 {
            return Err(SimError::InvalidOption {
                name: "cores",
                message: "at least 1 shared core (None: a core per rank)",
            });
        }
        // more cores than ranks change nothing
        w.cores.resize((c as usize).min(p.max(1)), 0.0);
    }
    w.credits.clear();
    if let Some(b) = options.link_burst {
        w.credits.resize(p + nodes, (b as f64, b as f64));
    }
    w.queue.reset();
    w.now_ready.clear();
    // (the per-operation state is set by the layout, `Layout::initial_state`)
    w.node.clear();
    w.end.clear();
    if options.timeline || options.critical_path {
        w.end.resize(n, f64::NAN);
    }
    w.cause.clear();
    if options.critical_path {
        w.cause.resize(n, NONE);
    }
    w.ranks.clear();
    w.ranks.resize(
        p + nodes,
        RankState {
            cpu_free: 0.0,
            nic_send_free: 0.0,
            // no message before the first: its window may start at any time
            nic_recv_free: f64::NEG_INFINITY,
            finish: 0.0,
        },
    );
    w.holders.clear();
    if options.critical_path {
        w.holders.resize(
            p + nodes,
            Holders {
                cpu: NONE,
                nic_send: NONE,
                nic_recv: NONE,
            },
        );
    }
    schedule.operations().visit(RunOn {
        w,
        schedule,
        options,
    })
}

/// [`run_on`] as a [`LayoutVisitor`].
struct RunOn<'a> {
    w: &'a mut Work,
    schedule: &'a Schedule,
    options: &'a SimOptions,
}

impl LayoutVisitor for RunOn<'_> {
    type Output = Result<SimResult, SimError>;
    #[inline]
    fn visit<L: Layout>(self, l: &L) -> Self::Output {
        run_on(self.w, self.schedule, l, self.options)
    }
}

/// Runs the simulation of `schedule` (seen through `l`) on the state prepared in `w`, and
/// gives the memory back to `w`.
fn run_on<L: Layout>(
    w: &mut Work,
    schedule: &Schedule,
    l: &L,
    options: &SimOptions,
) -> Result<SimResult, SimError> {
    if w.handshake.is_some()
        || w.ack.is_some()
        || !w.cores.is_empty()
        || options.link_burst.is_some()
        || !w.node_of.is_empty()
    {
        run_engine::<L, true>(w, schedule, l, options)
    } else {
        run_engine::<L, false>(w, schedule, l, options)
    }
}

/// [`run_on`] with the platform terms compiled in or out.
fn run_engine<L: Layout, const PLATFORM: bool>(
    w: &mut Work,
    schedule: &Schedule,
    l: &L,
    options: &SimOptions,
) -> Result<SimResult, SimError> {
    // (two-level platform: the nodes' NICs follow the ranks in `ranks`)
    let node_nics = if w.node_of.is_empty() {
        0
    } else {
        w.ranks.len().saturating_sub(schedule.ranks() as usize)
    };
    let nic_waiters = vec![(std::collections::BinaryHeap::new(), false); 2 * node_nics];
    // the nodes whose link several ranks share
    let mut ranks_on = vec![0u32; node_nics];
    for &n in &w.node_of {
        if let Some(c) = ranks_on.get_mut(n as usize) {
            *c = c.saturating_add(1);
        }
    }
    let shared_link: Vec<bool> = ranks_on.iter().map(|&c| c > 1).collect();
    let mut engine = Engine::<L, PLATFORM> {
        q: std::mem::take(&mut w.q),
        rendezvous: std::mem::take(&mut w.rendezvous),
        handshake: w.handshake,
        ack: w.ack,
        backlog: std::mem::take(&mut w.backlog),
        cores: std::mem::take(&mut w.cores),
        core: 0,
        burst: options.link_burst.map_or(0.0, |b| b as f64),
        shape: std::mem::take(&mut w.shape),
        credits: std::mem::take(&mut w.credits),
        node_of: std::mem::take(&mut w.node_of),
        p: schedule.ranks() as usize,
        inter_off: w.inter_off,
        h_inter: w.h_inter,
        nic_waiters,
        shared_link,
        noise: options.noise,
        queue: std::mem::take(&mut w.queue),
        now_ready: std::mem::take(&mut w.now_ready),
        now: 0.0,
        node: std::mem::take(&mut w.node),
        l: View {
            layout: l,
            signatures: schedule.raw_signatures(),
        },
        start_edges: schedule.has_start_edges(),
        calcs: schedule.raw_calcs(),
        orig: schedule.raw_orig(),
        end: std::mem::take(&mut w.end),
        cause: std::mem::take(&mut w.cause),
        ranks: std::mem::take(&mut w.ranks),
        holders: std::mem::take(&mut w.holders),
        makespan: 0.0,
        last: NONE,
        events: 0,
        retries: 0,
        done: 0,
        waited: None,
        arena: Vec::new(),
        blocks: std::collections::HashMap::new(),
    };
    let result = engine.run(schedule, options, &mut w.batch, &mut w.bits);
    // the memory back, for the next call
    w.q = engine.q;
    w.rendezvous = engine.rendezvous;
    w.cores = engine.cores;
    w.backlog = engine.backlog;
    w.shape = engine.shape;
    w.credits = engine.credits;
    w.node_of = engine.node_of;
    w.queue = engine.queue;
    w.now_ready = engine.now_ready;
    w.node = engine.node;
    w.end = engine.end;
    w.cause = engine.cause;
    w.ranks = engine.ranks;
    w.holders = engine.holders;
    result
}

impl<L: Layout, const PLATFORM: bool> Engine<'_, L, PLATFORM> {
    /// Runs the simulation on the state set up by [`Simulator::simulate`].
    fn run(
        &mut self,
        schedule: &Schedule,
        options: &SimOptions,
        batch: &mut Vec<u32>,
        bits: &mut Vec<u64>,
    ) -> Result<SimResult, SimError> {
        let n = schedule.len();
        // operations without dependencies are ready at 0, in operation order
        if !self.l.initial_state(&mut self.node, &mut self.now_ready) {
            return Err(SimError::TooLarge {
                what: "dependencies of one operation",
                count: u64::from(PENDING) + 1,
                limit: u64::from(PENDING),
            });
        }
        let orig = schedule.raw_orig();
        self.post_initial_receives(bits);
        self.run_ready_now();
        // events of one time in order of operation (then kind), as a heap ordered by
        // (time, op, kind) would deliver them
        let order = |code: &u32| (orig[(code >> 1) as usize], code & 1);
        let mut due: Vec<Block> = Vec::new();
        let mut heads: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize)>> =
            std::collections::BinaryHeap::new();
        while let Some(key) = self.queue.pop_batch(batch) {
            let t = f64::from_bits(key);
            self.now = t;
            due.clear();
            heads.clear();
            if batch.contains(&SENTINEL) {
                batch.retain(|&c| c != SENTINEL);
                due = self.blocks.remove(&key).unwrap_or_default();
                for (b, block) in due.iter().enumerate() {
                    heads.push(std::cmp::Reverse((okey(orig, self.arena[block.start]), b)));
                }
            } else if self.blocks.is_empty() {
                self.arena.clear();
            }
            if orig.is_empty() {
                if !batch.is_sorted() && !sort_by_bitmap(batch, bits) {
                    batch.sort_unstable();
                }
            } else if !batch.is_sorted_by_key(order) {
                batch.sort_unstable_by_key(order);
            }
            // the batch and the blocks due, merged in processing order
            let mut i = 0;
            loop {
                let next_batch = batch.get(i).map(|&c| okey(orig, c));
                let next_block = heads.peek().map(|h| h.0);
                let from_block = match (next_batch, next_block) {
                    (None, None) => break,
                    (Some(_), None) => false,
                    (None, Some(_)) => true,
                    (Some(a), Some((b, _))) => b < a,
                };
                if from_block {
                    let Some(std::cmp::Reverse((_, b))) = heads.pop() else {
                        break;
                    };
                    let block = due[b];
                    let code = self.arena[block.start];
                    if !self.cause.is_empty() {
                        // the cause its last wait noted
                        self.cause[(code >> 1) as usize] = block.holder;
                    }
                    let mut rest = Block {
                        start: block.start + 1,
                        ..block
                    };
                    if PLATFORM {
                        self.woken(code);
                    }
                    if let Some((at, holder)) = self.process(code, t)
                        && rest.start < rest.end
                    {
                        // the next members up to the next other event wait as it did
                        let limit = next_batch
                            .unwrap_or(u64::MAX)
                            .min(heads.peek().map_or(u64::MAX, |h| h.0.0));
                        let arena = &self.arena[rest.start..rest.end];
                        let end = rest.start + arena.partition_point(|&c| okey(orig, c) < limit);
                        if end > rest.start {
                            self.defer(rest.start, end, at, holder);
                            rest.start = end;
                        }
                    }
                    if rest.start < rest.end {
                        due[b] = rest;
                        heads.push(std::cmp::Reverse((okey(orig, self.arena[rest.start]), b)));
                    }
                } else {
                    let code = batch[i];
                    i += 1;
                    if let Some((at, holder)) = self.process(code, t) {
                        // the codes after it that wait the same way, up to the next block's
                        let limit = heads.peek().map_or(u64::MAX, |h| h.0.0);
                        let mut j = i;
                        while j < batch.len()
                            && okey(orig, batch[j]) < limit
                            && self.waits_alike(code, batch[j])
                        {
                            j += 1;
                        }
                        // (the arena stays within a few times the operations)
                        if j - i >= 2 && self.arena.len() + (j - i) <= 4 * n + 4096 {
                            // (sends handed to the NIC now, though they wait in a block)
                            if PLATFORM && self.ack.is_some() {
                                for &c in &batch[i..j] {
                                    self.enqueue_send(c, t);
                                }
                            }
                            let start = self.arena.len();
                            self.arena.extend_from_slice(&batch[i..j]);
                            self.defer(start, self.arena.len(), at, holder);
                            i = j;
                        }
                    }
                }
            }
        }
        if self.done < n as u64 {
            // the first operation (in operation order) that never completed
            let i = (0..n)
                .filter(|&i| self.node[i].state & DONE == 0)
                .min_by_key(|&i| self.ext(i))
                .unwrap_or(0);
            return Err(SimError::Deadlock {
                stuck: n as u64 - self.done,
                op: self.ext(i),
                rank: schedule.rank_named(self.l.rank(i)),
            });
        }
        let last = (self.last != NONE).then_some(self.last as usize);
        let critical_path = options.critical_path.then(|| {
            let mut steps = Vec::new();
            let mut cur = last.map_or(NONE, |i| i as u32);
            while cur != NONE && steps.len() < n {
                let i = cur as usize;
                let op = OpId(schedule.ext(i));
                steps.push(CriticalStep {
                    op,
                    rank: schedule.rank_named(self.l.rank(i)),
                    kind: schedule.kind_at(i),
                    start: self.node[i].start,
                    end: self.end[i],
                });
                cur = self.cause[i];
            }
            steps.reverse();
            CriticalPath { steps }
        });
        let (starts, ends) = if options.timeline {
            if orig.is_empty() {
                (
                    Some(self.node.iter().map(|x| x.start).collect()),
                    Some(self.end.clone()),
                )
            } else {
                // back to operation order
                let mut starts = vec![0.0; n];
                let mut ends = vec![0.0; n];
                for (i, &e) in orig.iter().enumerate() {
                    starts[e as usize] = self.node[i].start;
                    ends[e as usize] = self.end[i];
                }
                (Some(starts), Some(ends))
            }
        } else {
            (None, None)
        };
        let rank_of = schedule.raw_rank_of();
        let ranks = &self.ranks[..self.p.min(self.ranks.len())];
        let rank_finish = if rank_of.is_empty() {
            ranks.iter().map(|r| r.finish).collect()
        } else {
            let mut finish = vec![0.0; ranks.len()];
            for (x, r) in ranks.iter().enumerate() {
                finish[rank_of[x] as usize] = r.finish;
            }
            finish
        };
        Ok(SimResult {
            rank_finish,
            makespan: self.makespan,
            events: self.events - self.retries,
            critical_path,
            starts,
            ends,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{OpKind, Simulator, simulate};

    /// Sends queued behind one NIC (LogGP with `g > o`), taken in blocks: each operation
    /// counts as one event and each message one more, consecutive sends start `I = g + (k - 1) G` apart and the last
    /// message arrives `T(k)` after its start (Alexandrov, Ionescu, Schauser, Scheiman,
    /// "LogGP", SPAA 1995: sends of `k` bytes at most one per `g + (k - 1) G`); with a calc in
    /// the sender's program the blocks are split around it and the same holds.
    #[test]
    fn sends_waiting_for_one_nic_keep_their_order_and_spacing() {
        use crate::{LogGP, Message};
        let (l, o, g, big_g) = (5e-6, 1e-6, 4e-6, 1e-9);
        let model = LogGP::new(l, o, g, big_g).unwrap();
        let k = 5000u64;
        let interval = g + 7.0 * big_g;
        let t8 = model.p2p(&Message::contiguous(8));
        for with_calc in [false, true] {
            let mut b = super::super::ScheduleBuilder::new(2);
            let mut sends = Vec::new();
            for i in 0..k {
                sends.push(b.send(0, 1, 0, 8));
                if with_calc && i == k / 2 {
                    // a short calc ready at 0, between the sends in operation order
                    b.calc(0, 1e-7);
                }
            }
            for _ in 0..k {
                b.recv(1, 0, 0, 8);
            }
            let schedule = b.build().unwrap();
            let options = SimOptions {
                timeline: true,
                critical_path: true,
                ..SimOptions::default()
            };
            let run = simulate(&schedule, &model, &options).unwrap();
            // one event per operation, one more per message (its arrival)
            assert_eq!(run.events, schedule.len() as u64 + k);
            let starts = run.starts.as_ref().unwrap();
            for w in sends.windows(2) {
                let gap = starts[w[1].index()] - starts[w[0].index()];
                assert!(gap >= interval * (1.0 - 1e-9), "{gap} < {interval}");
            }
            let last = starts[sends[sends.len() - 1].index()];
            if !with_calc {
                assert!((last - (k - 1) as f64 * interval).abs() <= 1e-12 * last);
            }
            assert!((run.makespan - (last + t8)).abs() <= 1e-12 * run.makespan);
            // the critical path ends with the last receive, held back by its message
            let path = run.critical_path.unwrap();
            assert_eq!(path.steps.last().unwrap().kind, OpKind::Recv);
        }
    }

    /// One `Simulator` over a sequence of different schedules, options and an error gives
    /// what a fresh simulation of each gives (the oracle: `simulate`, which starts from empty
    /// memory every time), so nothing of one call leaks into the next.
    #[test]
    fn a_reused_simulator_matches_fresh_simulations() {
        use crate::collectives::{Allreduce, Bcast, Problem};
        use crate::sim::{ScheduleBuilder, ToSchedule};
        use crate::{Message, presets};
        let openib = presets::open_mpi_openib();
        let tcp = presets::mpich2_tcp();
        let big = Problem::new(64, Message::contiguous(100_000));
        let small = Problem::new(5, Message::contiguous(8));
        let mut deadlock = ScheduleBuilder::new(2);
        let a = deadlock.recv(0, 1, 0, 8);
        let x = deadlock.send(0, 1, 0, 8);
        let c = deadlock.recv(1, 0, 0, 8);
        let d = deadlock.send(1, 0, 0, 8);
        deadlock.requires(x, a);
        deadlock.requires(d, c);
        let schedules = [
            Allreduce::RecursiveDoubling.schedule(&big).unwrap(),
            Bcast::Binomial.schedule(&small).unwrap(),
            deadlock.build().unwrap(),
            Allreduce::Ring.schedule(&big).unwrap(),
            Allreduce::RecursiveDoubling.schedule(&small).unwrap(),
        ];
        let all = SimOptions {
            timeline: true,
            critical_path: true,
            rendezvous_above: Some(1024),
            noise: Some(Noise::exponential(3, 1e-6).unwrap()),
            rendezvous_completion: crate::sim::RendezvousCompletion::AtHandshake,
            cores: Some(2),
            link_burst: Some(9000),
            ack_behind_sends: true,
            finish: crate::sim::Finish::Mean,
        };
        let mut simulator = Simulator::new();
        for round in 0..2 {
            for (i, schedule) in schedules.iter().enumerate() {
                let model: &dyn CommModel = if (i + round) % 2 == 0 { &openib } else { &tcp };
                let options = if (i + round) % 3 == 0 {
                    all
                } else {
                    SimOptions::default()
                };
                let reused = simulator.simulate(schedule, model, &options);
                let fresh = simulate(schedule, model, &options);
                assert_eq!(reused, fresh, "schedule {i}, round {round}");
            }
        }
    }
}
