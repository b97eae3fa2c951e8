//! What a simulation gives: [`SimResult`] (finish times, makespan, events, the critical path
//! and the timeline).

use std::io::Write;

use super::op::{OpId, OpKind};
use super::schedule::Schedule;

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
    /// The critical path, if [`SimOptions::critical_path`](super::SimOptions::critical_path).
    pub critical_path: Option<CriticalPath>,
    /// Start and end of every operation, if [`SimOptions::timeline`](super::SimOptions::timeline).
    pub starts: Option<Vec<f64>>,
    /// See [`starts`](Self::starts).
    pub ends: Option<Vec<f64>>,
}

impl SimResult {
    /// The mean over ranks of [`rank_finish`](Self::rank_finish), seconds (0 without ranks).
    ///
    /// Every rank enters the schedule at time 0, so a rank's finish time is its own call's
    /// duration when the calls start together — as in a benchmark loop that separates calls by
    /// a barrier, such as the OSU Micro-Benchmarks' collective tests. Their "Avg Latency" (the
    /// mean over ranks of each rank's time per call) is this mean; their "Max Latency" is the
    /// [`makespan`](Self::makespan). A rank that returns early (a rooted collective's leaves,
    /// a broadcast's root) pulls the mean below the makespan.
    ///
    /// # Examples
    ///
    /// One 1001-byte message on LogGP (`L` = 5 µs, `o` = 1 µs, `G` = 1 ns/B): the sender is done
    /// after its overhead, the receiver after `T = 2o + L + 1000 G` = 8 µs.
    ///
    /// ```
    /// use commcost::LogGP;
    /// use commcost::sim::{ScheduleBuilder, SimOptions, simulate};
    ///
    /// let mut b = ScheduleBuilder::new(2);
    /// b.send(0, 1, 0, 1001);
    /// b.recv(1, 0, 0, 1001);
    /// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
    /// let r = simulate(&b.build()?, &model, &SimOptions::default())?;
    /// assert!((r.makespan - 8e-6).abs() < 1e-15);
    /// assert!((r.mean_finish() - (1e-6 + 8e-6) / 2.0).abs() < 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn mean_finish(&self) -> f64 {
        if self.rank_finish.is_empty() {
            0.0
        } else {
            self.rank_finish.iter().sum::<f64>() / self.rank_finish.len() as f64
        }
    }

    /// The completion [`finish`](super::Finish) names: the [`makespan`](Self::makespan) or
    /// the [`mean_finish`](Self::mean_finish), seconds.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::LogGP;
    /// use commcost::sim::{Finish, ScheduleBuilder, SimOptions, simulate};
    ///
    /// let mut b = ScheduleBuilder::new(2);
    /// b.send(0, 1, 0, 1001);
    /// b.recv(1, 0, 0, 1001);
    /// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
    /// let r = simulate(&b.build()?, &model, &SimOptions::default())?;
    /// assert!((r.time(Finish::Last) - 8e-6).abs() < 1e-15);
    /// assert!((r.time(Finish::Mean) - 4.5e-6).abs() < 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn time(&self, finish: super::Finish) -> f64 {
        match finish {
            super::Finish::Last => self.makespan,
            super::Finish::Mean => self.mean_finish(),
        }
    }

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
