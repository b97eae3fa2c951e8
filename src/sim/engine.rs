//! The discrete-event simulator: LogGOPS semantics over any [`CommModel`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;

use super::noise::Noise;
use super::schedule::{NONE, OpId, OpKind, RECV, SEND, START_EDGE, Schedule};
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
    /// `None` (the default): every message is eager. The [`CommModel`] trait does not say which
    /// of a model's size ranges is a rendezvous protocol (only where its costs jump,
    /// [`CommModel::size_breakpoints`]), so the caller states the threshold.
    pub rendezvous_above: Option<u64>,
    /// Seeded CPU noise added to every send overhead, receive overhead and calc.
    pub noise: Option<Noise>,
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
    /// Events processed (operations made ready, messages delivered).
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

const EV_READY: u64 = 0;
const EV_ARRIVE: u64 = 1;

const POSTED: u8 = 1;
const ARRIVED: u8 = 2;
/// A rendezvous send that started and waits for its receive to be posted.
const WAITING: u8 = 4;

struct Engine<'a> {
    s: &'a Schedule,
    q: Vec<Quantities>,
    rendezvous: Vec<bool>,
    noise: Option<Noise>,
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    pending: Vec<u32>,
    /// Before an operation starts: the latest time a dependency was satisfied; then its start.
    start: Vec<f64>,
    end: Vec<f64>,
    flags: Vec<u8>,
    /// The operation that held this one back (critical path), if recorded.
    cause: Vec<u32>,
    cpu_free: Vec<f64>,
    nic_send_free: Vec<f64>,
    nic_recv_free: Vec<f64>,
    cpu_last: Vec<u32>,
    nic_send_last: Vec<u32>,
    nic_recv_last: Vec<u32>,
    events: u64,
    done: u64,
}

/// `f64` times are non-negative and finite, so their bit patterns order like the values.
#[inline]
fn key(t: f64) -> u64 {
    t.to_bits()
}

impl Engine<'_> {
    #[inline]
    fn push(&mut self, t: f64, op: u32, kind: u64) {
        self.heap
            .push(Reverse((key(t), (u64::from(op) << 1) | kind)));
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
        let offsets = self.s.raw_offsets();
        let (a, b) = (offsets[op] as usize, offsets[op + 1] as usize);
        for k in a..b {
            let e = self.s.raw_successors()[k];
            if (e & START_EDGE != 0) != started {
                continue;
            }
            let d = (e & !START_EDGE) as usize;
            if t > self.start[d] {
                self.start[d] = t;
                self.note_cause(d, op as u32);
            }
            self.pending[d] -= 1;
            if self.pending[d] == 0 {
                let ready = self.start[d];
                self.push(ready, d as u32, EV_READY);
            }
        }
    }

    #[inline]
    fn cpu_noise(&self, op: usize, which: u64) -> f64 {
        self.noise.map_or(0.0, |n| n.delay(op as u64, which))
    }

    fn complete(&mut self, op: usize, t: f64) {
        self.end[op] = t;
        self.done += 1;
        self.satisfy(op, t, false);
    }

    fn ready(&mut self, op: usize, t: f64) {
        let r = self.s.raw_rank()[op] as usize;
        let class = self.s.raw_class()[op] as usize;
        match self.s.raw_kind()[op] {
            SEND => {
                let q = self.q[class];
                let mut s = t;
                if self.cpu_free[r] > s {
                    s = self.cpu_free[r];
                    self.note_cause(op, self.cpu_last[r]);
                }
                if self.nic_send_free[r] > s {
                    s = self.nic_send_free[r];
                    self.note_cause(op, self.nic_send_last[r]);
                }
                self.start[op] = s;
                let overhead_end = s + q.send_overhead + self.cpu_noise(op, 0);
                self.cpu_free[r] = overhead_end;
                self.nic_send_free[r] = s + q.send_interval;
                self.cpu_last[r] = op as u32;
                self.nic_send_last[r] = op as u32;
                self.satisfy(op, s, true);
                let partner = self.s.raw_partner()[op] as usize;
                let flight = (q.p2p - q.recv_overhead).max(0.0);
                if self.rendezvous[class] {
                    if self.flags[partner] & POSTED != 0 {
                        let go = s.max(self.start[partner]);
                        self.push(go + flight, partner as u32, EV_ARRIVE);
                    } else {
                        self.flags[op] |= WAITING;
                    }
                } else {
                    self.push(s + flight, partner as u32, EV_ARRIVE);
                    self.complete(op, overhead_end);
                }
            }
            RECV => {
                self.start[op] = t;
                self.flags[op] |= POSTED;
                self.satisfy(op, t, true);
                let partner = self.s.raw_partner()[op] as usize;
                if self.flags[partner] & WAITING != 0 {
                    self.flags[partner] &= !WAITING;
                    let q = self.q[class];
                    let go = t.max(self.start[partner]);
                    self.push(
                        go + (q.p2p - q.recv_overhead).max(0.0),
                        op as u32,
                        EV_ARRIVE,
                    );
                }
                if self.flags[op] & ARRIVED != 0 {
                    self.receive(op, t);
                }
            }
            _ => {
                let mut s = t;
                if self.cpu_free[r] > s {
                    s = self.cpu_free[r];
                    self.note_cause(op, self.cpu_last[r]);
                }
                self.start[op] = s;
                let e = s + self.s.raw_calcs()[class] + self.cpu_noise(op, 2);
                self.cpu_free[r] = e;
                self.cpu_last[r] = op as u32;
                self.satisfy(op, s, true);
                self.complete(op, e);
            }
        }
    }

    fn arrive(&mut self, op: usize, t: f64) {
        self.flags[op] |= ARRIVED;
        if self.flags[op] & POSTED != 0 {
            // the message, not the posting, is what this receive waited for
            if t > self.start[op] {
                self.note_cause(op, self.s.raw_partner()[op]);
            }
            self.receive(op, t);
        }
    }

    /// The message of receive `op` is there and the receive is posted: the receiver's CPU pays
    /// its overhead once it and the receiving NIC are free.
    fn receive(&mut self, op: usize, t: f64) {
        let r = self.s.raw_rank()[op] as usize;
        let class = self.s.raw_class()[op] as usize;
        let q = self.q[class];
        let mut s = t;
        if self.cpu_free[r] > s {
            s = self.cpu_free[r];
            self.note_cause(op, self.cpu_last[r]);
        }
        // the receiving NIC streams the message in during the last `I` before the receive
        // completes: that window must not overlap the previous message's
        let nic = self.nic_recv_free[r] + q.send_interval - q.recv_overhead;
        if nic > s {
            s = nic;
            self.note_cause(op, self.nic_recv_last[r]);
        }
        let e = s + q.recv_overhead + self.cpu_noise(op, 1);
        self.cpu_free[r] = e;
        self.nic_recv_free[r] = e;
        self.cpu_last[r] = op as u32;
        self.nic_recv_last[r] = op as u32;
        self.complete(op, e);
        if self.rendezvous[class] {
            let partner = self.s.raw_partner()[op] as usize;
            self.complete(partner, e);
        }
    }
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
/// never run.
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
    let n = schedule.len();
    let p = schedule.ranks() as usize;
    let mut q = Vec::with_capacity(schedule.messages().len());
    let mut rendezvous = Vec::with_capacity(schedule.messages().len());
    for m in schedule.messages() {
        let x = model.quantities(m);
        q.push(Quantities {
            p2p: check_time("p2p", x.p2p)?,
            send_overhead: check_time("send_overhead", x.send_overhead)?,
            recv_overhead: check_time("recv_overhead", x.recv_overhead)?,
            send_interval: check_time("send_interval", x.send_interval)?,
            gap: x.gap,
        });
        rendezvous.push(options.rendezvous_above.is_some_and(|s| m.bytes() > s));
    }
    let mut pending = vec![0u32; n];
    for &e in schedule.raw_successors() {
        pending[(e & !START_EDGE) as usize] += 1;
    }
    let mut engine = Engine {
        s: schedule,
        q,
        rendezvous,
        noise: options.noise,
        heap: BinaryHeap::with_capacity(p.saturating_mul(2).min(n.max(16))),
        pending,
        start: vec![0.0; n],
        end: vec![f64::NAN; n],
        flags: vec![0u8; n],
        cause: if options.critical_path {
            vec![NONE; n]
        } else {
            Vec::new()
        },
        cpu_free: vec![0.0; p],
        nic_send_free: vec![0.0; p],
        // no message before the first: its window may start at any time
        nic_recv_free: vec![f64::NEG_INFINITY; p],
        cpu_last: vec![NONE; p],
        nic_send_last: vec![NONE; p],
        nic_recv_last: vec![NONE; p],
        events: 0,
        done: 0,
    };
    for i in 0..n {
        if engine.pending[i] == 0 {
            engine.push(0.0, i as u32, EV_READY);
        }
    }
    while let Some(Reverse((t, code))) = engine.heap.pop() {
        engine.events += 1;
        let t = f64::from_bits(t);
        let op = (code >> 1) as usize;
        if code & 1 == EV_READY {
            engine.ready(op, t);
        } else {
            engine.arrive(op, t);
        }
    }
    if engine.done < n as u64 {
        let op = engine.end.iter().position(|e| e.is_nan()).unwrap_or(0);
        return Err(SimError::Deadlock {
            stuck: n as u64 - engine.done,
            op: op as u64,
            rank: u64::from(schedule.raw_rank()[op]),
        });
    }
    let mut rank_finish = vec![0.0f64; p];
    let mut last = None;
    let mut makespan = 0.0f64;
    for (i, (&e, &r)) in engine.end.iter().zip(schedule.raw_rank()).enumerate() {
        let f = &mut rank_finish[r as usize];
        *f = f.max(e);
        if last.is_none() || e > makespan {
            makespan = e;
            last = Some(i);
        }
    }
    let critical_path = options.critical_path.then(|| {
        let mut steps = Vec::new();
        let mut cur = last.map_or(NONE, |i| i as u32);
        while cur != NONE && steps.len() < n {
            let i = cur as usize;
            let op = OpId(cur);
            steps.push(CriticalStep {
                op,
                rank: u64::from(schedule.raw_rank()[i]),
                kind: schedule.kind(op).unwrap_or(OpKind::Calc),
                start: engine.start[i],
                end: engine.end[i],
            });
            cur = engine.cause[i];
        }
        steps.reverse();
        CriticalPath { steps }
    });
    let (starts, ends) = if options.timeline {
        (Some(engine.start), Some(engine.end))
    } else {
        (None, None)
    };
    Ok(SimResult {
        rank_finish,
        makespan,
        events: engine.events,
        critical_path,
        starts,
        ends,
    })
}
