//! Timing MPI collectives over a range of message sizes (feature `mpi`): the measurement side
//! of comparing the collectives' predicted costs with real runs, and of fitting per-call costs
//! of Open MPI's `coll_tuned` algorithms.
//!
//! Every rank of the communicator calls [`time_collective`] with the same arguments. For each
//! size: [`CollectivePlan::warmup`] calls, then [`CollectivePlan::samples`] synchronised calls,
//! each `barrier; start; collective; end` on every rank, timed from the last rank's start to
//! the last rank's end on the system clock all ranks of one machine share (`min_s`,
//! `median_s` over the calls: the latency of one collective started together, what the models
//! predict), and each rank's own time of those calls averaged over the calls, then averaged
//! (`rank_mean_s`) and maximised (`rank_max_s`) over the ranks, as OSU's `-f` average and
//! maximum latency are; then back-to-back calls (`reps` agreed by all ranks, enough for about
//! [`CollectivePlan::pipelined_target`], at most [`CollectivePlan::max_reps`]; best of 3
//! samples of the slowest rank's mean, `pipelined_s`: successive calls may overlap, as in OSU-
//! and IMB-style loops).
//!
//! Elements are `f64` (reductions: `MPI_SUM`), root 0. Sizes are per-rank bytes (multiples of
//! 8): the whole buffer for bcast, reduce and allreduce, one block for allgather, alltoall,
//! gather, scatter and reduce_scatter_block; barrier is timed once whatever the sizes. Which
//! algorithm the MPI library runs is its own choice (with Open MPI, forced by
//! `--mca coll_tuned_<coll>_algorithm N`); [`CollectiveTiming::csv_row`] only labels the row.
//!
//! The rows' CSV format ([`CSV_HEADER`]) is the one `tests/fixtures/collectives/ompi_runs.csv`
//! uses: `bytes` in Open MPI's rules-file lookup convention (`8 × count` for bcast, reduce,
//! allreduce; `8 × count × P` for the others; 0 for barrier) and `count` the per-rank
//! elements.
//!
//! Reproduce a row set (two ranks, Open MPI's binomial broadcast forced):
//!
//! ```sh
//! cargo build --release -p commcost-validation --features mpi --bin mpi_collectives
//! mpirun -np 2 --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_bcast_algorithm 6 \
//!   target/release/mpi_collectives --collective bcast --algorithm 6 --name binomial
//! ```

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::traits::Communicator;

use super::{Budget, ProbeError, ProgressFn, TIMED, try_filled};
use crate::collectives::Collective;

/// The header of the CSV rows [`CollectiveTiming::csv_row`] writes.
pub const CSV_HEADER: &str = "collective,ompi_coll_id,procs,algorithm_id,algorithm,segsize,bytes,count,elem_bytes,calls,min_s,median_s,reps,pipelined_s,rank_mean_s,rank_max_s";

/// Largest per-rank size [`time_collective`] accepts: 16 MiB.
pub const MAX_SIZE: u64 = 1 << 24;

/// What [`time_collective`] measures per collective.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectivePlan {
    /// Per-rank sizes, bytes: multiples of 8 in `8 ..= MAX_SIZE` (barrier ignores them).
    pub sizes: Vec<u64>,
    /// Untimed calls before each size's timed ones.
    pub warmup: u32,
    /// Synchronised timed calls per size (`1 ..= 1000`); `min_s`, `median_s` are over them.
    pub samples: u32,
    /// About how long one sample of back-to-back calls lasts (`pipelined_s`), at most 1 s.
    pub pipelined_target: Duration,
    /// Most back-to-back calls in one sample (`1 ..= 100000`).
    pub max_reps: u32,
}

impl CollectivePlan {
    /// The validation harness's defaults: 3 warm-up calls, 15 samples, back-to-back samples
    /// of about 2 ms and at most 1000 calls.
    pub fn standard(sizes: Vec<u64>) -> Self {
        Self {
            sizes,
            warmup: 3,
            samples: 15,
            pipelined_target: Duration::from_millis(2),
            max_reps: 1000,
        }
    }

    /// Checks the plan.
    ///
    /// # Errors
    ///
    /// [`ProbeError::InvalidPlan`] naming the field out of range.
    pub fn validate(&self) -> Result<(), ProbeError> {
        if self.sizes.is_empty() {
            return Err(ProbeError::InvalidPlan("no sizes".into()));
        }
        if let Some(bad) = self
            .sizes
            .iter()
            .find(|&&s| s == 0 || s % 8 != 0 || s > MAX_SIZE)
        {
            return Err(ProbeError::InvalidPlan(format!(
                "size {bad}: per-rank bytes, multiples of 8 in 8 ..= {MAX_SIZE}"
            )));
        }
        if !(1..=1000).contains(&self.samples) {
            return Err(ProbeError::InvalidPlan(format!(
                "samples {}: 1 ..= 1000",
                self.samples
            )));
        }
        if self.warmup > 1000 {
            return Err(ProbeError::InvalidPlan(format!(
                "warmup {}: 0 ..= 1000",
                self.warmup
            )));
        }
        if self.pipelined_target.is_zero() || self.pipelined_target > Duration::from_secs(1) {
            return Err(ProbeError::InvalidPlan(format!(
                "pipelined target {:?}: more than 0, at most 1 s",
                self.pipelined_target
            )));
        }
        if !(1..=100_000).contains(&self.max_reps) {
            return Err(ProbeError::InvalidPlan(format!(
                "max reps {}: 1 ..= 100000",
                self.max_reps
            )));
        }
        Ok(())
    }
}

/// The times of one collective at one size, as every rank agrees on them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CollectiveTiming {
    /// The collective.
    pub collective: Collective,
    /// Processes of the communicator.
    pub procs: u64,
    /// Per-rank bytes (the buffer or one block; 0 for barrier).
    pub size: u64,
    /// Per-rank `f64` elements (`size / 8`).
    pub count: u64,
    /// Synchronised calls timed.
    pub calls: u32,
    /// Fastest synchronised call, seconds.
    pub min_s: f64,
    /// Median synchronised call, seconds.
    pub median_s: f64,
    /// Back-to-back calls per sample.
    pub reps: u32,
    /// Seconds per back-to-back call (best of 3 samples of the slowest rank's mean).
    pub pipelined_s: f64,
    /// Each rank's own time of the synchronised calls (from its leaving the barrier to its
    /// return), averaged over the calls, then over the ranks: what OSU's `-f` "Avg Latency"
    /// reports, seconds.
    pub rank_mean_s: f64,
    /// The same per-rank means' maximum over the ranks: OSU's "Max Latency", seconds.
    pub rank_max_s: f64,
}

impl CollectiveTiming {
    /// The row under [`CSV_HEADER`]: `algorithm_id` (Open MPI's number or `default`),
    /// `algorithm` (its name) and `segsize` label it. Commas and line breaks in the labels are
    /// replaced by `_` so the row stays one CSV record of 16 fields.
    pub fn csv_row(&self, algorithm_id: &str, algorithm: &str, segsize: u64) -> String {
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| {
                    if matches!(c, ',' | '\n' | '\r') {
                        '_'
                    } else {
                        c
                    }
                })
                .collect()
        };
        format!(
            "{},{},{},{},{},{segsize},{},{},8,{},{:.9e},{:.9e},{},{:.9e},{:.9e},{:.9e}",
            self.collective.name(),
            self.collective.ompi_id(),
            self.procs,
            clean(algorithm_id),
            clean(algorithm),
            self.collective.ompi_rules_size(self.size, self.procs),
            self.count,
            self.calls,
            self.min_s,
            self.median_s,
            self.reps,
            self.pipelined_s,
            self.rank_mean_s,
            self.rank_max_s,
        )
    }
}

struct Buffers {
    send: Vec<f64>,
    recv: Vec<f64>,
}

/// One call of `collective` with per-rank element count `count` (`count × P` fits the
/// buffers and MPI's `int`: checked by [`time_collective`]).
fn call<C: Communicator>(comm: &C, collective: Collective, count: usize, b: &mut Buffers) {
    let root = comm.process_at_rank(0);
    let me = comm.rank();
    let p = usize::try_from(comm.size()).unwrap_or(1);
    let all = count * p;
    let sum = SystemOperation::sum();
    match collective {
        Collective::Bcast => root.broadcast_into(&mut b.send[..count]),
        Collective::Allreduce => comm.all_reduce_into(&b.send[..count], &mut b.recv[..count], sum),
        Collective::Reduce => {
            if me == 0 {
                root.reduce_into_root(&b.send[..count], &mut b.recv[..count], sum)
            } else {
                root.reduce_into(&b.send[..count], sum)
            }
        }
        Collective::Allgather => comm.all_gather_into(&b.send[..count], &mut b.recv[..all]),
        Collective::Alltoall => comm.all_to_all_into(&b.send[..all], &mut b.recv[..all]),
        Collective::Barrier => comm.barrier(),
        Collective::ReduceScatterBlock => {
            comm.reduce_scatter_block_into(&b.send[..all], &mut b.recv[..count], sum)
        }
        Collective::Gather => {
            if me == 0 {
                root.gather_into_root(&b.send[..count], &mut b.recv[..all])
            } else {
                root.gather_into(&b.send[..count])
            }
        }
        Collective::Scatter => {
            if me == 0 {
                root.scatter_into_root(&b.send[..all], &mut b.recv[..count])
            } else {
                root.scatter_into(&mut b.recv[..count])
            }
        }
        Collective::Scan => comm.scan_into(&b.send[..count], &mut b.recv[..count], sum),
        // refused by `time_collective` before any call (not in `TIMED`)
        Collective::ReduceScatter => {}
    }
}

/// The slowest rank's value, element by element.
fn slowest_each<C: Communicator>(comm: &C, local: &[f64]) -> Vec<f64> {
    let mut global = vec![0.0f64; local.len()];
    comm.all_reduce_into(local, &mut global[..], SystemOperation::max());
    global
}

/// Whether any rank says `true`.
fn any_rank<C: Communicator>(comm: &C, local: bool) -> bool {
    let mut global = 0u8;
    comm.all_reduce_into(&u8::from(local), &mut global, SystemOperation::max());
    global != 0
}

/// Seconds since an origin all ranks share: the ranks of one machine read the same system
/// clock, and rank 0's reading at start-up (broadcast) is the origin, so that an `f64` keeps
/// nanosecond resolution.
struct SharedClock {
    origin_ns: u64,
}

impl SharedClock {
    fn new<C: Communicator>(comm: &C) -> Self {
        let mut origin_ns = Self::system_ns();
        comm.process_at_rank(0).broadcast_into(&mut origin_ns);
        SharedClock { origin_ns }
    }
    fn system_ns() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }
    fn now(&self) -> f64 {
        let now = Self::system_ns();
        if now >= self.origin_ns {
            (now - self.origin_ns) as f64 * 1e-9
        } else {
            -((self.origin_ns - now) as f64 * 1e-9)
        }
    }
}

/// Seconds per call over `reps` back-to-back calls, slowest rank.
fn back_to_back<C: Communicator>(
    comm: &C,
    collective: Collective,
    count: usize,
    reps: u32,
    b: &mut Buffers,
) -> f64 {
    comm.barrier();
    let t0 = Instant::now();
    for _ in 0..reps {
        call(comm, collective, count, b);
    }
    let local = t0.elapsed().as_secs_f64() / f64::from(reps.max(1));
    slowest_each(comm, &[local])
        .first()
        .copied()
        .unwrap_or(local)
}

/// Times `collective` at every size of `plan` (barrier: once), on every rank of `comm`. Every
/// rank must call it with the same arguments; all ranks return the same timings.
///
/// Per size: [`CollectivePlan::warmup`] calls, then [`CollectivePlan::samples`] synchronised
/// calls, each `barrier; start; collective; end` on every rank, timed from the last rank's
/// start to the last rank's end on the system clock all ranks of one machine share
/// ([`CollectiveTiming::min_s`], [`median_s`](CollectiveTiming::median_s): the latency of one
/// collective started together, what the models predict); then back-to-back calls (`reps`
/// agreed by all ranks, enough for about [`CollectivePlan::pipelined_target`], at most
/// [`CollectivePlan::max_reps`]; best of 3 samples of the slowest rank's mean,
/// [`pipelined_s`](CollectiveTiming::pipelined_s): successive calls may overlap, as in OSU-
/// and IMB-style loops). Elements are `f64` (reductions: `MPI_SUM`), root 0; sizes are
/// per-rank bytes: the whole buffer for bcast, reduce and allreduce, one block for the
/// others. Which algorithm the MPI library runs is its own choice (with Open MPI, forced by
/// `--mca coll_tuned_<coll>_algorithm N`). `progress` hears `(collective name, sizes done,
/// sizes)` after each size.
///
/// The budget is checked by all ranks together before each size (one rank out of time stops
/// them all, so none waits in a collective the others left); the buffers, `2 × P × the
/// largest size`, must fit its memory limit.
///
/// # Errors
///
/// [`ProbeError::InvalidPlan`] for a plan [`CollectivePlan::validate`] rejects or sizes whose
/// `P` blocks exceed MPI's `int` count; [`ProbeError::OutOfMemory`] when the buffers exceed the
/// budget or cannot be allocated on some rank; [`ProbeError::OutOfTime`] /
/// [`ProbeError::Cancelled`] when the budget ends on any rank (the sizes measured before are
/// lost: call once per size to keep them).
pub fn time_collective<C: Communicator>(
    comm: &C,
    collective: Collective,
    plan: &CollectivePlan,
    budget: &Budget,
    progress: ProgressFn<'_>,
) -> Result<Vec<CollectiveTiming>, ProbeError> {
    plan.validate()?;
    if !TIMED.contains(&collective) {
        return Err(ProbeError::InvalidPlan(format!(
            "{collective}: not a collective this probe calls (reduce_scatter_block is the same \
             operation with equal blocks)"
        )));
    }
    let procs = u64::try_from(comm.size()).unwrap_or(1).max(1);
    let sizes: Vec<u64> = if collective == Collective::Barrier {
        vec![0]
    } else {
        plan.sizes.clone()
    };
    let max_count = sizes.iter().max().copied().unwrap_or(0) / 8;
    let elements = max_count.saturating_mul(procs);
    if elements > i32::MAX as u64 {
        return Err(ProbeError::InvalidPlan(format!(
            "{max_count} elements × {procs} processes exceed MPI's int count"
        )));
    }
    budget.check_bytes("collective buffers", elements.saturating_mul(16))?;
    let len = usize::try_from(elements.max(1)).map_err(|_| ProbeError::OutOfMemory {
        what: "collective buffers",
        needed: elements.saturating_mul(16),
        limit: budget.max_bytes,
    })?;
    let allocated =
        try_filled("collective send buffer", len, budget.max_bytes, |_| 1.0).and_then(|send| {
            try_filled("collective receive buffer", len, budget.max_bytes, |_| 0.0)
                .map(|recv| Buffers { send, recv })
        });
    // every rank learns whether every rank has its buffers before any collective runs
    if any_rank(comm, allocated.is_err()) {
        return Err(allocated.err().unwrap_or(ProbeError::OutOfMemory {
            what: "collective buffers (on another rank)",
            needed: elements.saturating_mul(16),
            limit: budget.max_bytes,
        }));
    }
    let mut b = allocated?;
    let clock = SharedClock::new(comm);
    let samples = plan.samples as usize;
    let mut timings = Vec::with_capacity(sizes.len());
    for (done, &size) in sizes.iter().enumerate() {
        let stop = budget.check();
        if any_rank(comm, stop.is_err()) {
            stop?;
            return Err(ProbeError::OutOfTime {
                limit: budget.max_duration,
            });
        }
        let count = usize::try_from(size / 8).unwrap_or(0);
        for _ in 0..plan.warmup {
            call(comm, collective, count, &mut b);
        }
        // synchronised calls: barrier, then one call; its time runs from the moment the last
        // rank entered to the moment the last rank left (one clock for all ranks)
        let mut starts = vec![0.0f64; samples];
        let mut ends = vec![0.0f64; samples];
        for (start, end) in starts.iter_mut().zip(ends.iter_mut()) {
            comm.barrier();
            *start = clock.now();
            call(comm, collective, count, &mut b);
            *end = clock.now();
        }
        // each rank's own mean time per call, then its mean and maximum over the ranks
        let own = ends
            .iter()
            .zip(&starts)
            .map(|(e, s)| (e - s).max(0.0))
            .sum::<f64>()
            / samples.max(1) as f64;
        let mut own_sum = 0.0f64;
        comm.all_reduce_into(&own, &mut own_sum, SystemOperation::sum());
        let mut own_max = 0.0f64;
        comm.all_reduce_into(&own, &mut own_max, SystemOperation::max());
        let (last_start, last_end) = (slowest_each(comm, &starts), slowest_each(comm, &ends));
        let mut times: Vec<f64> = last_end
            .iter()
            .zip(&last_start)
            .map(|(e, s)| (e - s).max(0.0))
            .collect();
        times.sort_by(f64::total_cmp);
        // back to back: one timed call fixes the repetitions every rank then runs
        let once = back_to_back(comm, collective, count, 1, &mut b).max(1e-9);
        let wanted = (plan.pipelined_target.as_secs_f64() / once).ceil();
        let reps = if wanted.is_finite() && wanted >= 1.0 {
            (wanted.min(f64::from(plan.max_reps))) as u32
        } else {
            1
        };
        let pipelined = (0..3)
            .map(|_| back_to_back(comm, collective, count, reps, &mut b))
            .fold(f64::INFINITY, f64::min);
        timings.push(CollectiveTiming {
            collective,
            procs,
            size,
            count: size / 8,
            calls: plan.samples,
            min_s: times.first().copied().unwrap_or(0.0),
            median_s: times.get(times.len() / 2).copied().unwrap_or(0.0),
            reps,
            pipelined_s: if pipelined.is_finite() {
                pipelined
            } else {
                0.0
            },
            rank_mean_s: own_sum / procs as f64,
            rank_max_s: own_max,
        });
        progress(collective.name(), done + 1, sizes.len());
    }
    std::hint::black_box(&b.recv);
    Ok(timings)
}

/// One size of [`time_reduce_local`]: seconds per `MPI_Reduce_local` call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReduceLocalTiming {
    /// Bytes reduced per call.
    pub bytes: u64,
    /// Timed calls.
    pub calls: u32,
    /// Fastest call, seconds.
    pub min_s: f64,
    /// Median call, seconds.
    pub median_s: f64,
}

/// Times the reduction operator alone, on this rank, no communication: `MPI_Reduce_local`
/// with `MPI_SUM` on `f64` buffers of each of `plan.sizes` (`plan.warmup` calls, then
/// `plan.samples` timed calls, each on fresh data from a ring of buffer pairs of 64 MiB in
/// all, so that the operator reads both operands from memory as a collective's
/// receive-and-reduce does). That is the local cost a reduction collective adds per reduced
/// block.
///
/// # Errors
///
/// [`ProbeError::InvalidPlan`] for a plan [`CollectivePlan::validate`] rejects;
/// [`ProbeError::OutOfMemory`] when the ring exceeds the budget; an exhausted budget (checked
/// before each size).
pub fn time_reduce_local(
    plan: &CollectivePlan,
    budget: &Budget,
) -> Result<Vec<ReduceLocalTiming>, ProbeError> {
    plan.validate()?;
    let max_count = usize::try_from(plan.sizes.iter().max().copied().unwrap_or(8) / 8)
        .unwrap_or(usize::MAX)
        .max(1);
    let pairs = ((64usize << 20) / max_count.saturating_mul(16)).clamp(2, 4096);
    let bytes = (pairs as u64)
        .saturating_mul(max_count as u64)
        .saturating_mul(16);
    budget.check_bytes("reduce-local buffers", bytes)?;
    let mut inputs = Vec::with_capacity(pairs);
    let mut outputs = Vec::with_capacity(pairs);
    for i in 0..pairs {
        inputs.push(try_filled(
            "reduce-local buffers",
            max_count,
            budget.max_bytes,
            |_| i as f64,
        )?);
        outputs.push(try_filled(
            "reduce-local buffers",
            max_count,
            budget.max_bytes,
            |_| 1.0,
        )?);
    }
    let mut timings = Vec::with_capacity(plan.sizes.len());
    let mut next = 0usize;
    for &size in &plan.sizes {
        budget.check()?;
        let count = usize::try_from(size / 8).unwrap_or(0).min(max_count);
        let mut once = || {
            let k = next % pairs;
            next = next.wrapping_add(1);
            let t0 = Instant::now();
            mpi::collective::reduce_local_into(
                &inputs[k][..count],
                &mut outputs[k][..count],
                SystemOperation::sum(),
            );
            t0.elapsed().as_secs_f64()
        };
        for _ in 0..plan.warmup {
            once();
        }
        let mut times: Vec<f64> = (0..plan.samples).map(|_| once()).collect();
        times.sort_by(f64::total_cmp);
        timings.push(ReduceLocalTiming {
            bytes: size,
            calls: plan.samples,
            min_s: times.first().copied().unwrap_or(0.0),
            median_s: times.get(times.len() / 2).copied().unwrap_or(0.0),
        });
    }
    std::hint::black_box(&outputs);
    Ok(timings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_out_of_range_are_rejected() {
        let ok = CollectivePlan::standard(vec![8, 64]);
        assert!(ok.validate().is_ok());
        for bad in [
            CollectivePlan::standard(vec![]),
            CollectivePlan::standard(vec![12]),
            CollectivePlan::standard(vec![0]),
            CollectivePlan::standard(vec![MAX_SIZE + 8]),
            CollectivePlan {
                samples: 0,
                ..ok.clone()
            },
            CollectivePlan {
                pipelined_target: Duration::ZERO,
                ..ok.clone()
            },
            CollectivePlan {
                max_reps: 0,
                ..ok.clone()
            },
        ] {
            assert!(
                matches!(bad.validate(), Err(ProbeError::InvalidPlan(_))),
                "{bad:?}"
            );
        }
    }

    /// The row of `tests/fixtures/collectives/ompi_runs.csv`'s first line (bcast, 2 ranks,
    /// algorithm 1, 8 B), rebuilt from its fields.
    #[test]
    fn rows_follow_the_fixture_format() {
        let t = CollectiveTiming {
            collective: Collective::Bcast,
            procs: 2,
            size: 8,
            count: 1,
            calls: 15,
            min_s: 2.31e-7,
            median_s: 4.72e-7,
            reps: 1000,
            pipelined_s: 1.44484e-7,
            rank_mean_s: 3.5e-7,
            rank_max_s: 5e-7,
        };
        // the fixture's 14 fields, then each rank's own time: mean and maximum over the ranks
        assert_eq!(
            t.csv_row("1", "basic_linear", 0),
            "bcast,7,2,1,basic_linear,0,8,1,8,15,2.310000000e-7,4.720000000e-7,1000,1.444840000e-7,3.500000000e-7,5.000000000e-7"
        );
        let g = CollectiveTiming {
            collective: Collective::Gather,
            procs: 4,
            ..t
        };
        assert!(
            g.csv_row("x,y", "a\nb", 0)
                .starts_with("gather,9,4,x_y,a_b,0,32,1,")
        );
        assert_eq!(CSV_HEADER.split(',').count(), 16);
    }

    #[test]
    fn names_parse_back() {
        for c in Collective::ALL {
            assert_eq!(c.name().parse::<Collective>(), Ok(c));
        }
        assert!("reduce-scatter-block".parse::<Collective>().is_ok());
        assert!("scan".parse::<Collective>().is_err());
    }
}
