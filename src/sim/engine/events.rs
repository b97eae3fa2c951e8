//! The engine's event handlers: an operation becoming ready, a message arriving, a receive
//! completing, and the CPU and NIC bookkeeping around them (the semantics of the
//! [module documentation](crate::sim)).

use super::{
    ARRIVED, Block, DONE, EV_ARRIVE, EV_READY, Engine, Holders, PENDING, POSTED, QUEUED, SENTINEL,
    WAITING, key, okey,
};
use crate::sim::layout::Layout;
use crate::sim::op::{KIND_RECV, KIND_SEND, NONE, START_EDGE, Signature};

impl<'a, L: Layout, const PLATFORM: bool> Engine<'a, L, PLATFORM> {
    /// The operation index of internal position `i`.
    #[inline]
    pub(super) fn ext(&self, i: usize) -> u64 {
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

    /// Posts the eager receives among the operations ready at the start, in one pass in
    /// internal order, and takes them off the ready list (whose order, that of the operations,
    /// jumps through memory when a schedule is stored time-major). What [`ready`](Self::ready)
    /// does to such a receive touches it alone: it is posted at the current time; nothing
    /// depends on its start (no `irequires` in the schedule), no rendezvous send waits for
    /// it, and no message has arrived before the first event. Done when at least an eighth of
    /// the operations are ready at the start (`bits` is scratch space).
    pub(super) fn post_initial_receives(&mut self, bits: &mut Vec<u64>) {
        let n = self.node.len();
        if self.start_edges || self.now_ready.is_empty() || self.now_ready.len() < n / 8 {
            return;
        }
        bits.clear();
        bits.resize(n.div_ceil(64), 0);
        let mut posted = 0u64;
        let now = self.now;
        for i in 0..n {
            if self.node[i].state & PENDING != 0 {
                continue;
            }
            let (x, r, partner) = self.l.describe(i);
            if x.kind == KIND_RECV
                && !self.rendezvous[x.class as usize + self.route(r as usize, partner as usize).1]
            {
                self.node[i].start = now;
                self.node[i].state |= POSTED;
                bits[i / 64] |= 1 << (i % 64);
                posted += 1;
            }
        }
        if posted > 0 {
            self.events += posted;
            self.now_ready
                .retain(|&op| bits[op as usize / 64] & (1 << (op % 64)) == 0);
        }
    }

    pub(super) fn run_ready_now(&mut self) {
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
        let s = if free > t {
            self.note_holder(op, r, |h| h.cpu);
            free
        } else {
            t
        };
        if !PLATFORM || self.cores.is_empty() {
            return s;
        }
        // shared cores: the earliest free one (the first of equals)
        let mut pick = 0;
        for (i, &c) in self.cores.iter().enumerate() {
            if c < self.cores[pick] {
                pick = i;
            }
        }
        self.core = pick;
        s.max(self.cores[pick])
    }

    /// The credit of a NIC idle since `free` with `credit` bytes then, at `t`, for a message
    /// of class `class`: `(credit left after the message, seconds of serialisation it saves)`.
    #[inline]
    fn credit(&self, class: usize, free: f64, credit: f64, t: f64) -> (f64, f64) {
        let (serial, per_byte) = self.shape[class];
        if per_byte <= 0.0 {
            return (credit, 0.0);
        }
        let idle = (t - free).max(0.0);
        let now = if idle.is_finite() {
            (credit + idle / per_byte).min(self.burst)
        } else {
            self.burst
        };
        let used = now.min(serial / per_byte);
        (now - used, used * per_byte)
    }

    /// Rank `r`'s CPU (and the shared core [`cpu_start`](Self::cpu_start) picked) is busy
    /// until `end`.
    #[inline]
    fn hold_cpu(&mut self, r: usize, end: f64) {
        self.ranks[r].cpu_free = end;
        if PLATFORM && let Some(c) = self.cores.get_mut(self.core) {
            *c = end;
        }
    }

    /// Whether `op`, ready at `t`, is held back by a NIC of rank `r` alone (the NIC frees at
    /// `nic_free`, after `t` and after the CPU): it then leaves the CPU to other operations and
    /// tries again at `nic_free` as an event of `kind` (LogGOPSim re-inserts such an operation
    /// at max(next o, next g)).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn waits_for_nic(
        &mut self,
        op: usize,
        r: usize,
        nic: usize,
        t: f64,
        nic_free: f64,
        which: fn(&Holders) -> u32,
        kind: u32,
    ) -> bool {
        if nic_free > t && nic_free > self.ranks[r].cpu_free {
            self.note_holder(op, nic, which);
            if PLATFORM && nic >= self.p {
                // a node's NIC: its waiters try again one at a time, in operation order
                let code = (op as u32) << 1 | kind;
                let w = 2 * (nic - self.p) + usize::from(kind == EV_ARRIVE);
                self.nic_waiters[w]
                    .0
                    .push(std::cmp::Reverse((okey(self.orig, code), code)));
                self.wake_next(w, nic_free, which);
                // (its trying again is no event of the simulated run)
                self.retries += 1;
                self.waited = None;
                return true;
            }
            self.push(nic_free, op as u32, kind);
            self.retries += 1;
            let holder = if self.holders.is_empty() {
                NONE
            } else {
                which(&self.holders[nic])
            };
            self.waited = Some((nic_free, holder));
            true
        } else {
            false
        }
    }

    /// Runs the event `code` at `t` and the operations it made ready; returns when and behind
    /// whom the operation waits, if it waits for a NIC.
    pub(super) fn process(&mut self, code: u32, t: f64) -> Option<(f64, u32)> {
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
    pub(super) fn defer(&mut self, start: usize, end: usize, at: f64, holder: u32) {
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

    /// The first (in operation order) of the operations waiting for node NIC side `w` tries
    /// again at `at`, unless one is already due to.
    fn wake_next(&mut self, w: usize, at: f64, which: fn(&Holders) -> u32) {
        if self.nic_waiters[w].1 {
            return;
        }
        let Some(std::cmp::Reverse((_, code))) = self.nic_waiters[w].0.pop() else {
            return;
        };
        self.nic_waiters[w].1 = true;
        let holder = if self.holders.is_empty() {
            NONE
        } else {
            which(&self.holders[self.p + w / 2])
        };
        self.arena.push(code);
        let end = self.arena.len();
        self.defer(end - 1, end, at, holder);
    }

    /// Node NIC side `w`'s due waiter is trying again now.
    #[inline]
    pub(super) fn woken(&mut self, code: u32) {
        if PLATFORM && !self.nic_waiters.is_empty() {
            let (x, r, partner) = self.l.describe((code >> 1) as usize);
            let (nic, _) = self.route(r as usize, partner as usize);
            if nic >= self.p && (x.kind == KIND_SEND || x.kind == KIND_RECV) {
                self.nic_waiters[2 * (nic - self.p) + usize::from(code & 1 == EV_ARRIVE)].1 = false;
            }
        }
    }

    /// The NIC a message of rank `r` whose matched operation is `partner` uses and the offset of
    /// its quantities: `(r, 0)`, or on a two-level platform for a message between nodes
    /// (`P + r's node`, the number of message classes).
    #[inline(always)]
    pub(super) fn route(&self, r: usize, partner: usize) -> (usize, usize) {
        if PLATFORM && !self.node_of.is_empty() {
            let n = self.node_of[r];
            if n != self.node_of[self.l.rank(partner) as usize] {
                return (self.p + n as usize, self.inter_off);
            }
        }
        (r, 0)
    }

    /// The handshake's one-way time of a message routed with quantity offset `off`, if the
    /// handshake is simulated.
    #[inline]
    fn handshake_h(&self, off: usize) -> Option<f64> {
        self.handshake
            .or(self.ack)
            .map(|h| if off > 0 { self.h_inter } else { h })
    }

    /// Whether event `other`, run right after event `code` waited for a NIC (with nothing in
    /// between), waits for it the same way: both make a send of the same rank ready, or both
    /// are receives of the same rank and message that already tried.
    pub(super) fn waits_alike(&self, code: u32, other: u32) -> bool {
        if code & 1 != other & 1 {
            return false;
        }
        let (a, b) = ((code >> 1) as usize, (other >> 1) as usize);
        let (x, ra, pa) = self.l.describe(a);
        let (y, rb, pb) = self.l.describe(b);
        if ra != rb || x.kind != y.kind {
            return false;
        }
        // (on a two-level platform, the same NIC)
        if PLATFORM
            && !self.node_of.is_empty()
            && self.route(ra as usize, pa as usize) != self.route(rb as usize, pb as usize)
        {
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

    /// Counts the send that event `code` makes ready at `t` in its rank's backlog, once
    /// ([`SimOptions::ack_behind_sends`](crate::sim::SimOptions::ack_behind_sends)): the NIC
    /// takes the sends handed to it in order, each for its interval.
    pub(super) fn enqueue_send(&mut self, code: u32, t: f64) {
        let op = (code >> 1) as usize;
        if code & 1 != EV_READY || self.node[op].state & QUEUED != 0 {
            return;
        }
        let (x, r, partner) = self.l.describe(op);
        if x.kind != KIND_SEND {
            return;
        }
        self.node[op].state |= QUEUED;
        let (nic, off) = self.route(r as usize, partner as usize);
        let interval = self.q[x.class as usize + off].send_interval;
        let b = &mut self.backlog[nic];
        *b = b.max(t) + interval;
    }

    /// The handshake of a rendezvous message whose request left at `sent` and whose receive,
    /// behind sending NIC `q` (its rank's, or its node's), was posted at `posted`: `(delay, ack)`, how much later than `max(sent,
    /// posted)` the data leaves because the acknowledgement waited for `q`'s sending NIC, and
    /// when the acknowledgement reaches the sender (`h = p2p(1 B)` each way).
    #[inline]
    fn handshake_of(&self, q: usize, sent: f64, posted: f64, h: f64) -> (f64, f64) {
        let asked = (sent + h).max(posted);
        let leaves = match self.ack {
            Some(_) => asked.max(self.backlog[q]),
            None => asked,
        };
        (leaves - asked, leaves + h)
    }

    /// The data of rendezvous send `op` (message class `class`, quantity offset included) over
    /// a node's shared sending link `nic` (`nic >= P`), free to leave at `go`: it leaves once the
    /// link is free, holds it for its send interval (less the link's token-bucket credit then)
    /// and arrives a flight later. Returns when it leaves and when it arrives.
    fn depart(&mut self, nic: usize, class: usize, op: usize, go: f64) -> (f64, f64) {
        let q = self.q[class];
        let free = self.ranks[nic].nic_send_free;
        let at = go.max(free);
        let mut saved = 0.0;
        if self.burst > 0.0 {
            let (left, save) = self.credit(class, free, self.credits[nic].0, at);
            saved = save;
            self.credits[nic].0 = left;
        }
        let busy_until = at + q.send_interval - saved;
        self.ranks[nic].nic_send_free = busy_until;
        self.wake_next(2 * (nic - self.p), busy_until, |h| h.nic_send);
        if !self.holders.is_empty() {
            self.holders[nic].nic_send = op as u32;
        }
        (at, at + (q.p2p - q.recv_overhead - saved).max(0.0))
    }

    fn ready(&mut self, op: usize, t: f64) {
        let (x, r, partner) = self.l.describe(op);
        let (r, partner) = (r as usize, partner as usize);
        let class = x.class as usize;
        match x.kind {
            KIND_SEND => {
                let (nic, off) = self.route(r, partner);
                let class = class + off;
                let q = self.q[class];
                if PLATFORM && self.ack.is_some() {
                    self.enqueue_send((op as u32) << 1 | EV_READY, t);
                }
                let nic_free = self.ranks[nic].nic_send_free;
                if self.waits_for_nic(op, r, nic, t, nic_free, |h| h.nic_send, EV_READY) {
                    return;
                }
                let s = self.cpu_start(op, r, t);
                self.node[op].start = s;
                let overhead_end = s + q.send_overhead + self.cpu_noise(op, 0);
                self.hold_cpu(r, overhead_end);
                // a rendezvous message over a node's shared link holds the link when its data
                // leaves, after the handshake ([`depart`](Self::depart)): the request is a byte
                let deferred = PLATFORM
                    && nic >= self.p
                    && self.rendezvous[class]
                    && self.shared_link[nic - self.p];
                let mut saved = 0.0;
                if deferred {
                    // the request has passed: the next send waiting for the link may go
                    let free = self.ranks[nic].nic_send_free.max(s);
                    self.wake_next(2 * (nic - self.p), free, |h| h.nic_send);
                    if !self.holders.is_empty() {
                        self.holders[r].cpu = op as u32;
                    }
                } else if PLATFORM && self.burst > 0.0 {
                    let (left, save) =
                        self.credit(class, self.ranks[nic].nic_send_free, self.credits[nic].0, s);
                    saved = save;
                    self.credits[nic].0 = left;
                }
                if !deferred {
                    self.ranks[nic].nic_send_free = s + q.send_interval - saved;
                    if PLATFORM && nic >= self.p {
                        let w = 2 * (nic - self.p);
                        self.wake_next(w, s + q.send_interval - saved, |h| h.nic_send);
                    }
                    if PLATFORM && self.ack.is_some() {
                        // (a send that started later than its place in the queue)
                        let b = &mut self.backlog[nic];
                        *b = b.max(s + q.send_interval - saved);
                    }
                    if !self.holders.is_empty() {
                        self.holders[r].cpu = op as u32;
                        self.holders[nic].nic_send = op as u32;
                    }
                }
                self.satisfy(op, s, true);
                let flight = (q.p2p - q.recv_overhead - saved).max(0.0);
                if self.rendezvous[class] {
                    if self.node[partner].state & POSTED != 0 {
                        let posted = self.node[partner].start;
                        let mut go = s.max(posted);
                        if PLATFORM && let Some(h) = self.handshake_h(off) {
                            let receiver = self.l.rank(partner) as usize;
                            let (receiver_nic, _) = self.route(receiver, op);
                            let (delay, ack) = self.handshake_of(receiver_nic, s, posted, h);
                            go += delay;
                            let (leaves, arrival) = if deferred {
                                self.depart(nic, class, op, go)
                            } else {
                                (go, go + flight)
                            };
                            self.push(arrival, partner as u32, EV_ARRIVE);
                            if self.handshake.is_some() {
                                // (handed to the transport once its data may leave)
                                self.complete(op, r, overhead_end.max(ack).max(leaves));
                            }
                        } else {
                            let arrival = if deferred {
                                self.depart(nic, class, op, go).1
                            } else {
                                go + flight
                            };
                            self.push(arrival, partner as u32, EV_ARRIVE);
                        }
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
                // (only a rendezvous send waits: its receive has the same size, the same
                // protocol)
                let (nic, off) = self.route(r, partner);
                let class = class + off;
                if self.rendezvous[class] && self.node[partner].state & WAITING != 0 {
                    self.node[partner].state &= !WAITING;
                    let q = self.q[class];
                    let sent = self.node[partner].start;
                    let mut go = t.max(sent);
                    let mut ack = None;
                    if PLATFORM && let Some(h) = self.handshake_h(off) {
                        let (delay, at) = self.handshake_of(nic, sent, t, h);
                        go += delay;
                        ack = Some(at);
                    }
                    let sender_nic = self.route(self.l.rank(partner) as usize, op).0;
                    let (leaves, arrival) = if PLATFORM
                        && sender_nic >= self.p
                        && self.shared_link[sender_nic - self.p]
                    {
                        self.depart(sender_nic, class, partner, go)
                    } else {
                        (go, go + (q.p2p - q.recv_overhead).max(0.0))
                    };
                    self.push(arrival, op as u32, EV_ARRIVE);
                    if PLATFORM
                        && self.handshake.is_some()
                        && let Some(at) = ack
                    {
                        let sender = self.l.rank(partner) as usize;
                        self.complete(
                            partner,
                            sender,
                            (sent + q.send_overhead).max(at).max(leaves),
                        );
                    }
                }
                if self.node[op].state & ARRIVED != 0 {
                    self.receive_at(op, t, x, r, partner);
                }
            }
            _ => {
                let s = self.cpu_start(op, r, t);
                self.node[op].start = s;
                let e = s + self.calcs[class] + self.cpu_noise(op, 2);
                self.hold_cpu(r, e);
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
        let (nic, off) = self.route(r, partner);
        let class = x.class as usize + off;
        let q = self.q[class];
        // the receiving NIC streams the message in during the last `I` before the receive
        // completes: that window must not overlap the previous message's
        let (left, saved) = if PLATFORM && self.burst > 0.0 {
            self.credit(class, self.ranks[nic].nic_recv_free, self.credits[nic].1, t)
        } else {
            (0.0, 0.0)
        };
        let window = self.ranks[nic].nic_recv_free + q.send_interval - saved - q.recv_overhead;
        if self.waits_for_nic(op, r, nic, t, window, |h| h.nic_recv, EV_ARRIVE) {
            return;
        }
        if PLATFORM && self.burst > 0.0 {
            self.credits[nic].1 = left;
        }
        let s = self.cpu_start(op, r, t);
        let e = s + q.recv_overhead + self.cpu_noise(op, 1);
        self.hold_cpu(r, e);
        self.ranks[nic].nic_recv_free = e;
        if PLATFORM && nic >= self.p {
            // the next message's window may end no earlier than this one (its own `I - or`
            // later: it tries again then)
            self.wake_next(2 * (nic - self.p) + 1, e, |h| h.nic_recv);
        }
        if !self.holders.is_empty() {
            self.holders[r].cpu = op as u32;
            self.holders[nic].nic_recv = op as u32;
        }
        self.complete(op, r, e);
        if self.rendezvous[class] && (!PLATFORM || self.handshake.is_none()) {
            let sender = self.l.rank(partner) as usize;
            self.complete(partner, sender, e);
        }
    }
}
