//! The discrete-event simulator: LogGOPS semantics over any [`CommModel`].

use std::collections::VecDeque;
use std::io::Write;

use super::layout::{Layout, LayoutVisitor};
use super::noise::Noise;
use super::op::{KIND_RECV, KIND_SEND, NONE, OpId, OpKind, START_EDGE, Signature};
use super::schedule::Schedule;
use crate::error::SimError;
use crate::{CommModel, Quantities};

/// How to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SimOptions {
    /// Keep the start and end of every operation ([`SimResult::timeline_csv`]).
    pub timeline: bool,
    /// Record the critical path ([`SimResult::critical_path`]).
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

/// One operation of the critical path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CriticalStep {
    /// The operation.
    pub op: OpId,
    /// Its rank.
    pub rank: u64,
    /// Its kind.
    pub kind: OpKind,
    /// When it started (a receive: when it was posted), seconds.
    pub start: f64,
    /// When it completed, seconds.
    pub end: f64,
}

/// The chain of operations that determines the makespan, first to last: each step is the
/// operation (a dependency, the matching send, or the previous holder of the CPU or NIC) whose
/// completion or start held the next one back.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CriticalPath {
    /// The steps, in time order.
    pub steps: Vec<CriticalStep>,
}

impl CriticalPath {
    /// Number of messages on the path (receives whose matching send precedes them on it).
    pub fn messages(&self) -> usize {
        self.steps
            .windows(2)
            .filter(|w| w[1].kind == OpKind::Recv && w[0].kind == OpKind::Send)
            .count()
    }

    /// Number of distinct ranks the path visits.
    pub fn ranks_visited(&self) -> usize {
        let mut ranks: Vec<u64> = self.steps.iter().map(|s| s.rank).collect();
        ranks.sort_unstable();
        ranks.dedup();
        ranks.len()
    }

    /// Seconds the path's operations of each kind spend between their start and end:
    /// `(send, recv, calc)` (a receive counts from its posting).
    pub fn time_by_kind(&self) -> (f64, f64, f64) {
        let mut t = (0.0, 0.0, 0.0);
        for s in &self.steps {
            let d = s.end - s.start;
            match s.kind {
                OpKind::Send => t.0 += d,
                OpKind::Recv => t.1 += d,
                OpKind::Calc => t.2 += d,
            }
        }
        t
    }
}

/// What a simulation produced.
#[derive(Debug, Clone, PartialEq)]
pub struct SimResult {
    /// When each rank completed its last operation, seconds (0 for a rank without any).
    pub rank_finish: Vec<f64>,
    /// The largest finish time, seconds.
    pub makespan: f64,
    /// Events processed: operations made ready and messages delivered (an operation that
    /// waited for a NIC and tried again counts once).
    pub events: u64,
    /// The critical path, if [`SimOptions::critical_path`].
    pub critical_path: Option<CriticalPath>,
    /// Start and end of every operation, if [`SimOptions::timeline`].
    pub starts: Option<Vec<f64>>,
    /// See [`starts`](Self::starts).
    pub ends: Option<Vec<f64>>,
}

impl SimResult {
    /// Writes the timeline as CSV: `rank,op,kind,peer,bytes,start,end` (times in seconds), one
    /// line per operation in operation order. Writes only the header when no timeline was kept.
    ///
    /// # Errors
    ///
    /// The writer's I/O errors.
    pub fn timeline_csv<W: Write>(&self, schedule: &Schedule, mut out: W) -> std::io::Result<()> {
        writeln!(out, "rank,op,kind,peer,bytes,start,end")?;
        let (Some(starts), Some(ends)) = (&self.starts, &self.ends) else {
            return Ok(());
        };
        for i in 0..schedule.len().min(starts.len()) {
            let op = OpId(i as u32);
            let peer = schedule.peer(op).map_or(String::new(), |p| p.to_string());
            let bytes = schedule
                .message(op)
                .map_or(String::new(), |m| m.bytes().to_string());
            writeln!(
                out,
                "{},{},{},{},{},{:e},{:e}",
                schedule.rank(op).unwrap_or(0),
                i,
                schedule.kind(op).map_or("calc", OpKind::name),
                peer,
                bytes,
                starts[i],
                ends[i]
            )?;
        }
        Ok(())
    }
}

const EV_READY: u32 = 0;
const EV_ARRIVE: u32 = 1;

// flags in the top four bits of a node's `state`, the pending dependencies below them
const POSTED: u32 = 1 << 28;
const ARRIVED: u32 = 1 << 29;
/// A rendezvous send that started and waits for its receive to be posted.
const WAITING: u32 = 1 << 30;
/// The operation completed.
const DONE: u32 = 1 << 31;
/// The pending dependencies in a node's `state` (at most `2^28 - 1`).
const PENDING: u32 = (1 << 28) - 1;

/// A monotone priority queue of `(key, code)`: a radix heap, entries in buckets by the highest
/// bit in which their key differs from the last minimum (R. K. Ahuja,
/// K. Mehlhorn, J. B. Orlin, R. E. Tarjan, "Faster algorithms for the shortest path problem",
/// JACM 37(2), 1990). Keys never decrease below the last popped one, which holds for event
/// times; push is O(1), a pop moves each entry at most 64 times over its life, and entries live
/// in a few reused vectors. Entries are 12 bytes; those whose key is the last minimum (bucket 0)
/// keep only their 4-byte code.
#[derive(Default)]
struct RadixQueue {
    last: u64,
    len: usize,
    /// Bucket 0: the codes of the entries whose key is `last`.
    current: Vec<u32>,
    /// Buckets 1 to 64 (index `i - 1`).
    buckets: Vec<Vec<Entry>>,
    /// The storage of large buckets that were emptied (at most [`SPARES`]), lent to the next
    /// bucket that outgrows its own: the queue holds room for the events in flight, not for
    /// the largest size every bucket ever had.
    spare: Vec<Vec<Entry>>,
}

/// How many emptied bucket vectors the queue keeps for reuse.
const SPARES: usize = 2;
/// Emptied bucket vectors with room for at least this many entries go to the spares.
const LARGE_BUCKET: usize = 1 << 12;

/// One pending event: its time's bits and its code (12 bytes).
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
struct Entry {
    key: u64,
    code: u32,
}

impl RadixQueue {
    /// Empties the queue, keeping its vectors.
    fn reset(&mut self) {
        self.last = 0;
        self.len = 0;
        self.current.clear();
        self.buckets.resize_with(64, Vec::new);
        for b in &mut self.buckets {
            b.clear();
        }
    }

    /// The entries the queue's vectors hold room for.
    fn capacity(&self) -> usize {
        self.current.capacity()
            + self
                .buckets
                .iter()
                .chain(&self.spare)
                .map(Vec::capacity)
                .sum::<usize>()
    }

    #[inline]
    fn bucket(x: u64) -> usize {
        64 - x.leading_zeros() as usize
    }

    /// `key >= ` the last popped key.
    #[inline]
    fn push(&mut self, key: u64, code: u32) {
        match Self::bucket(key ^ self.last) {
            0 => self.current.push(code),
            i => self.put(i - 1, Entry { key, code }),
        }
        self.len += 1;
    }

    /// Appends `entry` to `buckets[j]`, first moving the bucket into the largest spare vector
    /// when it is full and the spare is larger.
    #[inline]
    fn put(&mut self, j: usize, entry: Entry) {
        let b = &self.buckets[j];
        if b.len() == b.capacity() && !self.spare.is_empty() {
            self.lend(j);
        }
        self.buckets[j].push(entry);
    }

    #[cold]
    fn lend(&mut self, j: usize) {
        let Some((k, _)) = self
            .spare
            .iter()
            .enumerate()
            .max_by_key(|(_, v)| v.capacity())
        else {
            return;
        };
        if self.spare[k].capacity() > self.buckets[j].capacity() {
            let mut v = self.spare.swap_remove(k);
            v.extend_from_slice(&self.buckets[j]);
            // the smaller vector is freed
            self.buckets[j] = v;
        }
    }

    /// Keeps an emptied bucket vector: large ones as spares (the smallest freed when there are
    /// more than [`SPARES`]), others in bucket `i` again.
    fn stash(&mut self, i: usize, items: Vec<Entry>) {
        if items.capacity() < LARGE_BUCKET {
            self.buckets[i] = items;
            return;
        }
        self.spare.push(items);
        if self.spare.len() > SPARES
            && let Some((k, _)) = self
                .spare
                .iter()
                .enumerate()
                .min_by_key(|(_, v)| v.capacity())
        {
            self.spare.swap_remove(k);
        }
    }

    /// Moves the codes of every entry with the smallest key into `out` (cleared first; its
    /// storage becomes the queue's, nothing is copied), in the order they were pushed; returns
    /// that key.
    fn pop_batch(&mut self, out: &mut Vec<u32>) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        if self.current.is_empty() {
            let i = (0..64).find(|&i| !self.buckets[i].is_empty())?;
            let mut items = std::mem::take(&mut self.buckets[i]);
            let min = items.iter().map(|e| e.key).min()?;
            self.last = min;
            for e in &items {
                let (k, c) = (e.key, e.code);
                match Self::bucket(k ^ min) {
                    0 => self.current.push(c),
                    j => self.put(j - 1, Entry { key: k, code: c }),
                }
            }
            items.clear();
            self.stash(i, items);
        }
        out.clear();
        std::mem::swap(out, &mut self.current);
        self.len -= out.len();
        Some(self.last)
    }
}

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
struct Work {
    /// The model's quantities per distinct message, evaluated once per simulation.
    q: Vec<Quantities>,
    rendezvous: Vec<bool>,
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

struct Engine<'a, L: Layout> {
    q: Vec<Quantities>,
    rendezvous: Vec<bool>,
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

impl<'a, L: Layout> Engine<'a, L> {
    /// The operation index of internal position `i`.
    #[inline]
    fn ext(&self, i: usize) -> u64 {
        if self.orig.is_empty() {
            i as u64
        } else {
            u64::from(self.orig[i])
        }
    }

    #[inline]
    fn push(&mut self, t: f64, op: u32, kind: u32) {
        self.queue.push(key(t), (op << 1) | kind);
    }

    fn run_ready_now(&mut self) {
        while let Some(op) = self.now_ready.pop_front() {
            self.events += 1;
            let now = self.now;
            self.ready(op as usize, now);
        }
    }

    /// Notes that rank `r`'s resource (`which` holder) held `op` back.
    #[inline]
    fn note_holder(&mut self, op: usize, r: usize, which: fn(&Holders) -> u32) {
        if !self.cause.is_empty() {
            self.cause[op] = which(&self.holders[r]);
        }
    }

    #[inline]
    fn note_cause(&mut self, op: usize, by: u32) {
        if !self.cause.is_empty() {
            self.cause[op] = by;
        }
    }

    /// Satisfies the dependents of `op` of one kind (`irequires` at its start, `requires` at
    /// its end) at time `t`.
    #[inline]
    fn satisfy(&mut self, op: usize, t: f64, started: bool) {
        if started && !self.start_edges {
            return;
        }
        let l = self.l;
        l.for_each_successor(op, |e| {
            if (e & START_EDGE != 0) != started {
                return;
            }
            let d = (e & !START_EDGE) as usize;
            if t > self.node[d].start {
                self.node[d].start = t;
                self.note_cause(d, op as u32);
            }
            self.node[d].state -= 1;
            if self.node[d].state & PENDING == 0 {
                let ready = self.node[d].start;
                if ready <= self.now {
                    self.now_ready.push_back(d as u32);
                } else {
                    self.push(ready, d as u32, EV_READY);
                }
            }
        });
    }

    #[inline]
    fn cpu_noise(&self, op: usize, which: u64) -> f64 {
        self.noise.map_or(0.0, |n| n.delay(self.ext(op), which))
    }

    /// Operation `op` of rank `r` completes at `t`.
    fn complete(&mut self, op: usize, r: usize, t: f64) {
        if !self.end.is_empty() {
            self.end[op] = t;
        }
        self.node[op].state |= DONE;
        if t > self.ranks[r].finish {
            self.ranks[r].finish = t;
        }
        if t > self.makespan || self.last == NONE {
            self.makespan = t;
            self.last = op as u32;
        }
        self.done += 1;
        self.satisfy(op, t, false);
    }

    /// When `op`, ready at `t`, gets rank `r`'s CPU: at `t` or when the CPU is free, in the
    /// order operations asked for it (noting the CPU's holder as the cause when it waits).
    #[inline]
    fn cpu_start(&mut self, op: usize, r: usize, t: f64) -> f64 {
        let free = self.ranks[r].cpu_free;
        if free > t {
            self.note_holder(op, r, |h| h.cpu);
            free
        } else {
            t
        }
    }

    /// Whether `op`, ready at `t`, is held back by a NIC of rank `r` alone (the NIC frees at
    /// `nic_free`, after `t` and after the CPU): it then leaves the CPU to other operations and
    /// tries again at `nic_free` as an event of `kind` (LogGOPSim re-inserts such an operation
    /// at max(next o, next g)).
    #[inline]
    fn waits_for_nic(
        &mut self,
        op: usize,
        r: usize,
        t: f64,
        nic_free: f64,
        which: fn(&Holders) -> u32,
        kind: u32,
    ) -> bool {
        if nic_free > t && nic_free > self.ranks[r].cpu_free {
            self.note_holder(op, r, which);
            self.push(nic_free, op as u32, kind);
            self.retries += 1;
            let holder = if self.holders.is_empty() {
                NONE
            } else {
                which(&self.holders[r])
            };
            self.waited = Some((nic_free, holder));
            true
        } else {
            false
        }
    }

    /// Runs the event `code` at `t` and the operations it made ready; returns when and behind
    /// whom the operation waits, if it waits for a NIC.
    fn process(&mut self, code: u32, t: f64) -> Option<(f64, u32)> {
        self.events += 1;
        self.waited = None;
        let op = (code >> 1) as usize;
        if code & 1 == EV_READY {
            self.ready(op, t);
        } else {
            self.arrive(op, t);
        }
        // an operation that waits makes nothing ready
        let waited = self.waited.take();
        self.run_ready_now();
        waited
    }

    /// Moves the waiters `arena[start..end]` to `at`, as if each had waited again (noting
    /// `holder` as their cause when they are taken out).
    fn defer(&mut self, start: usize, end: usize, at: f64, holder: u32) {
        let count = (end - start) as u64;
        self.events += count;
        self.retries += count;
        let key = key(at);
        let list = self.blocks.entry(key).or_default();
        if list.is_empty() {
            self.queue.push(key, SENTINEL);
        }
        list.push(Block { start, end, holder });
    }

    /// Whether event `other`, run right after event `code` waited for a NIC (with nothing in
    /// between), waits for it the same way: both make a send of the same rank ready, or both
    /// are receives of the same rank and message that already tried.
    fn waits_alike(&self, code: u32, other: u32) -> bool {
        if code & 1 != other & 1 {
            return false;
        }
        let (a, b) = ((code >> 1) as usize, (other >> 1) as usize);
        let (x, ra, _) = self.l.describe(a);
        let (y, rb, _) = self.l.describe(b);
        if ra != rb || x.kind != y.kind {
            return false;
        }
        if code & 1 == EV_READY {
            x.kind == KIND_SEND
        } else {
            x.kind == KIND_RECV
                && x.class == y.class
                && self.node[b].state & (ARRIVED | POSTED) == ARRIVED | POSTED
        }
    }

    fn ready(&mut self, op: usize, t: f64) {
        let (x, r, partner) = self.l.describe(op);
        let (r, partner) = (r as usize, partner as usize);
        let class = x.class as usize;
        match x.kind {
            KIND_SEND => {
                let q = self.q[class];
                let nic_free = self.ranks[r].nic_send_free;
                if self.waits_for_nic(op, r, t, nic_free, |h| h.nic_send, EV_READY) {
                    return;
                }
                let s = self.cpu_start(op, r, t);
                self.node[op].start = s;
                let overhead_end = s + q.send_overhead + self.cpu_noise(op, 0);
                self.ranks[r].cpu_free = overhead_end;
                self.ranks[r].nic_send_free = s + q.send_interval;
                if !self.holders.is_empty() {
                    self.holders[r].cpu = op as u32;
                    self.holders[r].nic_send = op as u32;
                }
                self.satisfy(op, s, true);
                let flight = (q.p2p - q.recv_overhead).max(0.0);
                if self.rendezvous[class] {
                    if self.node[partner].state & POSTED != 0 {
                        let go = s.max(self.node[partner].start);
                        self.push(go + flight, partner as u32, EV_ARRIVE);
                    } else {
                        self.node[op].state |= WAITING;
                    }
                } else {
                    self.push(s + flight, partner as u32, EV_ARRIVE);
                    self.complete(op, r, overhead_end);
                }
            }
            KIND_RECV => {
                self.node[op].start = t;
                self.node[op].state |= POSTED;
                self.satisfy(op, t, true);
                if self.node[partner].state & WAITING != 0 {
                    self.node[partner].state &= !WAITING;
                    let q = self.q[class];
                    let go = t.max(self.node[partner].start);
                    self.push(
                        go + (q.p2p - q.recv_overhead).max(0.0),
                        op as u32,
                        EV_ARRIVE,
                    );
                }
                if self.node[op].state & ARRIVED != 0 {
                    self.receive_at(op, t, x, r, partner);
                }
            }
            _ => {
                let s = self.cpu_start(op, r, t);
                self.node[op].start = s;
                let e = s + self.calcs[class] + self.cpu_noise(op, 2);
                self.ranks[r].cpu_free = e;
                if !self.holders.is_empty() {
                    self.holders[r].cpu = op as u32;
                }
                self.satisfy(op, s, true);
                self.complete(op, r, e);
            }
        }
    }

    fn arrive(&mut self, op: usize, t: f64) {
        if self.node[op].state & ARRIVED != 0 {
            // a receive that waited for its NIC tries again
            self.receive(op, t);
            return;
        }
        self.node[op].state |= ARRIVED;
        if self.node[op].state & POSTED != 0 {
            // the message, not the posting, is what this receive waited for
            if t > self.node[op].start && !self.cause.is_empty() {
                self.note_cause(op, self.l.partner(op));
            }
            self.receive(op, t);
        }
    }

    /// The message of receive `op` is there and the receive is posted: the receiver's CPU pays
    /// its overhead once it and the receiving NIC are free.
    fn receive(&mut self, op: usize, t: f64) {
        let (x, r, partner) = self.l.describe(op);
        self.receive_at(op, t, x, r as usize, partner as usize);
    }

    /// [`receive`](Self::receive) of `op`, whose signature, rank and partner are known.
    fn receive_at(&mut self, op: usize, t: f64, x: Signature, r: usize, partner: usize) {
        let class = x.class as usize;
        let q = self.q[class];
        // the receiving NIC streams the message in during the last `I` before the receive
        // completes: that window must not overlap the previous message's
        let nic = self.ranks[r].nic_recv_free + q.send_interval - q.recv_overhead;
        if self.waits_for_nic(op, r, t, nic, |h| h.nic_recv, EV_ARRIVE) {
            return;
        }
        let s = self.cpu_start(op, r, t);
        let e = s + q.recv_overhead + self.cpu_noise(op, 1);
        self.ranks[r].cpu_free = e;
        self.ranks[r].nic_recv_free = e;
        if !self.holders.is_empty() {
            self.holders[r].cpu = op as u32;
            self.holders[r].nic_recv = op as u32;
        }
        self.complete(op, r, e);
        if self.rendezvous[class] {
            let sender = self.l.rank(partner) as usize;
            self.complete(partner, sender, e);
        }
    }
}

/// Sorts a large batch of event codes of one time by a bitmap over them, when they are dense
/// enough; returns whether it did. An operation has at most one event of each kind at one
/// time, so the codes are distinct and the result is that of sorting them.
fn sort_by_bitmap(batch: &mut [u32], bits: &mut Vec<u64>) -> bool {
    if batch.len() < 4096 {
        return false;
    }
    let (mut lo, mut hi) = (u32::MAX, 0);
    for &code in batch.iter() {
        lo = lo.min(code);
        hi = hi.max(code);
    }
    let span = u64::from(hi - lo) + 1;
    if span > 64 * batch.len() as u64 {
        return false;
    }
    let words = span.div_ceil(64) as usize;
    bits.clear();
    bits.resize(words, 0);
    for &code in batch.iter() {
        let i = code - lo;
        bits[(i / 64) as usize] |= 1 << (i % 64);
    }
    // (distinct codes, so this holds; checked rather than trusted)
    if bits.iter().map(|w| w.count_ones() as usize).sum::<usize>() != batch.len() {
        return false;
    }
    let mut slots = batch.iter_mut();
    for (w, &word) in bits.iter().enumerate() {
        let mut word = word;
        while word != 0 {
            // below `hi + 1`, so within u32
            let code = lo + 64 * w as u32 + word.trailing_zeros();
            word &= word - 1;
            if let Some(slot) = slots.next() {
                *slot = code;
            }
        }
    }
    true
}

fn check_time(name: &'static str, value: f64) -> Result<f64, SimError> {
    if value >= 0.0 && value.is_finite() {
        Ok(value)
    } else {
        Err(SimError::InvalidTime { name, value })
    }
}

/// Simulates `schedule` on `model`.
///
/// The semantics are those of the [module documentation](super): sends occupy the sender's CPU
/// for `send_overhead` and its NIC for `send_interval`, arrive `p2p - recv_overhead` after they
/// start, and the receiver's CPU pays `recv_overhead` once the receive is posted.
///
/// # Errors
///
/// [`SimError::InvalidTime`] when the model returns a negative or non-finite quantity for one
/// of the schedule's messages, [`SimError::Deadlock`] when operations wait on each other and
/// never run, [`SimError::TooLarge`] when one operation has `2^28` or more dependencies.
///
/// # Examples
///
/// ```
/// use commcost::sim::{ScheduleBuilder, SimOptions, simulate};
/// use commcost::{CommModel, LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9, 2)?;
/// let mut b = ScheduleBuilder::new(2);
/// b.send(0, 1, 0, 1001);
/// b.recv(1, 0, 0, 1001);
/// let run = simulate(&b.build()?, &model, &SimOptions::default())?;
/// // one message: 2o + L + (s - 1) G
/// assert!((run.makespan - model.p2p(&Message::contiguous(1001))).abs() < 1e-18);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn simulate(
    schedule: &Schedule,
    model: &dyn CommModel,
    options: &SimOptions,
) -> Result<SimResult, SimError> {
    Simulator::new().simulate(schedule, model, options)
}

/// A simulator that keeps its working memory (per-operation and per-rank state, event queue)
/// between simulations: [`simulate`] for programs that simulate many schedules one after
/// another, such as a runtime choosing among collectives or [`rank_simulated`](super::rank_simulated).
///
/// Each call gives the result [`simulate`] gives, bit for bit; what is saved is allocating and
/// first touching the memory (at 2^20 processes and 42 million operations, about a sixth of
/// the time). The memory stays allocated, at the size of the largest schedule simulated, until
/// the simulator is dropped.
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Allreduce, Problem};
/// use commcost::sim::{SimOptions, Simulator, ToSchedule, simulate};
/// use commcost::{Message, presets};
///
/// let model = presets::open_mpi_openib();
/// let mut simulator = Simulator::new();
/// for p in [4, 64, 16] {
///     let problem = Problem::new(p, Message::contiguous(8));
///     let schedule = Allreduce::RecursiveDoubling.schedule(&problem)?;
///     let run = simulator.simulate(&schedule, &model, &SimOptions::default())?;
///     assert_eq!(run, simulate(&schedule, &model, &SimOptions::default())?);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Simulator {
    work: Work,
    /// The memory budget, bytes.
    max_memory: u64,
}

impl Default for Simulator {
    fn default() -> Self {
        Self {
            work: Work::default(),
            max_memory: super::memory::DEFAULT_MAX_MEMORY,
        }
    }
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("operations", &self.work.node.capacity())
            .field("ranks", &self.work.ranks.capacity())
            .field("queued_events", &self.work.queue.capacity())
            .finish_non_exhaustive()
    }
}

impl Simulator {
    /// A simulator without any memory yet.
    ///
    /// # Examples
    ///
    /// ```
    /// let simulator = commcost::sim::Simulator::new();
    /// assert!(format!("{simulator:?}").starts_with("Simulator"));
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the memory budget, bytes (default
    /// [`DEFAULT_MAX_MEMORY`](super::DEFAULT_MAX_MEMORY)): a simulation whose schedule and
    /// state ([`simulation_memory`](super::simulation_memory)) would need more is
    /// [`SimError::MemoryBudget`] before the state is allocated.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::{Broadcast, Problem};
    /// use commcost::sim::{SimOptions, Simulator, ToSchedule};
    /// use commcost::{Message, Pram, SimError};
    ///
    /// let schedule = Broadcast::Linear.schedule(&Problem::new(4096, Message::contiguous(8)))?;
    /// let mut simulator = Simulator::new();
    /// simulator.set_max_memory(1 << 16);
    /// let run = simulator.simulate(&schedule, &Pram::new(1e-6)?, &SimOptions::default());
    /// assert!(matches!(run, Err(SimError::MemoryBudget { budget: 65536, .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_max_memory(&mut self, bytes: u64) {
        self.max_memory = bytes;
    }

    /// Simulates `schedule` on `model`, as [`simulate`] does, reusing the memory of earlier
    /// calls.
    ///
    /// # Errors
    ///
    /// Those of [`simulate`].
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::sim::{ScheduleBuilder, SimOptions, Simulator};
    /// use commcost::{CommModel, LogGP, Message};
    ///
    /// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9, 2)?;
    /// let mut b = ScheduleBuilder::new(2);
    /// b.send(0, 1, 0, 1001);
    /// b.recv(1, 0, 0, 1001);
    /// let schedule = b.build()?;
    /// let mut simulator = Simulator::new();
    /// for _ in 0..2 {
    ///     let run = simulator.simulate(&schedule, &model, &SimOptions::default())?;
    ///     assert!((run.makespan - model.p2p(&Message::contiguous(1001))).abs() < 1e-18);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn simulate(
        &mut self,
        schedule: &Schedule,
        model: &dyn CommModel,
        options: &SimOptions,
    ) -> Result<SimResult, SimError> {
        let n = schedule.len();
        let p = schedule.ranks() as usize;
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
            self.max_memory,
        )?;
        let w = &mut self.work;
        w.q.clear();
        w.rendezvous.clear();
        for m in schedule.messages() {
            let x = model.quantities(m);
            w.q.push(Quantities {
                p2p: check_time("p2p", x.p2p)?,
                send_overhead: check_time("send_overhead", x.send_overhead)?,
                recv_overhead: check_time("recv_overhead", x.recv_overhead)?,
                send_interval: check_time("send_interval", x.send_interval)?,
                gap: x.gap,
            });
            w.rendezvous
                .push(options.rendezvous_above.is_some_and(|s| m.bytes() > s));
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
            p,
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
                p,
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
    let mut engine = Engine {
        q: std::mem::take(&mut w.q),
        rendezvous: std::mem::take(&mut w.rendezvous),
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
    w.queue = engine.queue;
    w.now_ready = engine.now_ready;
    w.node = engine.node;
    w.end = engine.end;
    w.cause = engine.cause;
    w.ranks = engine.ranks;
    w.holders = engine.holders;
    result
}

impl<L: Layout> Engine<'_, L> {
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
        let rank_finish = if rank_of.is_empty() {
            self.ranks.iter().map(|r| r.finish).collect()
        } else {
            let mut finish = vec![0.0; self.ranks.len()];
            for (x, r) in self.ranks.iter().enumerate() {
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

    /// Sends queued behind one NIC (LogGP with `g > o`), taken in blocks: each operation
    /// counts as one event and each message one more, consecutive sends start `I = g + (k - 1) G` apart and the last
    /// message arrives `T(k)` after its start (Alexandrov, Ionescu, Schauser, Scheiman,
    /// "LogGP", SPAA 1995: sends of `k` bytes at most one per `g + (k - 1) G`); with a calc in
    /// the sender's program the blocks are split around it and the same holds.
    #[test]
    fn sends_waiting_for_one_nic_keep_their_order_and_spacing() {
        use crate::{LogGP, Message};
        let (l, o, g, big_g) = (5e-6, 1e-6, 4e-6, 1e-9);
        let model = LogGP::new(l, o, g, big_g, 2).unwrap();
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
        use crate::collectives::{Allreduce, Broadcast, Problem};
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
            Broadcast::Binomial.schedule(&small).unwrap(),
            deadlock.build().unwrap(),
            Allreduce::Ring.schedule(&big).unwrap(),
            Allreduce::RecursiveDoubling.schedule(&small).unwrap(),
        ];
        let all = SimOptions {
            timeline: true,
            critical_path: true,
            rendezvous_above: Some(1024),
            noise: Some(Noise::exponential(3, 1e-6).unwrap()),
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

    /// The bitmap sort orders a batch as the standard sort does (the oracle), and declines
    /// small, sparse or repeated batches.
    #[test]
    fn bitmap_sort_matches_the_standard_sort() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let code = |p: u64, kind: u64| ((p << 1) | kind) as u32;
        let mut bits = Vec::new();
        for (n, stride) in [(5000u64, 1u64), (10_000, 3), (4096, 2)] {
            let mut batch: Vec<u32> = (0..n)
                .flat_map(|i| [code(100 + i * stride, 0), code(100 + i * stride, 1)])
                .filter(|_| next() % 3 != 0)
                .collect();
            for i in (1..batch.len()).rev() {
                batch.swap(i, (next() % (i as u64 + 1)) as usize);
            }
            let mut expected = batch.clone();
            expected.sort_unstable();
            assert!(sort_by_bitmap(&mut batch, &mut bits));
            assert_eq!(batch, expected);
        }
        let mut small = vec![code(5, 0), code(3, 1)];
        assert!(!sort_by_bitmap(&mut small, &mut bits));
        let mut sparse: Vec<u32> = (0..5000).map(|i| code(i * 1000, 0)).collect();
        assert!(!sort_by_bitmap(&mut sparse, &mut bits));
        let mut repeated: Vec<u32> = (0..5000).map(|i| code(i % 10, 0)).collect();
        assert!(!sort_by_bitmap(&mut repeated, &mut bits));
    }
}
