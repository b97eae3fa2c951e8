//! Measurements on this machine: memory copies, row / column marshalling, and parametrised
//! round trips over TCP on loopback. Standard library only; nothing here is simulated.
//!
//! Methodology (Hoefler, Lichei & Rehm 2007 §3; Cameron, Ge & Sun 2007 §3.2; Cameron & Sun 2003 §6): warm the cache first; time `repetitions`
//! runs of the operation on a monotonic clock ([`std::time::Instant`]) and take their mean as
//! one sample; keep the minimum of `samples` samples. Every grid is measured in several passes,
//! each in its own seeded shuffled order, and the median over the passes is kept — so a drift of
//! the machine over time (a frequency change, a noisy neighbour) is not mistaken for an effect
//! of size or stride. The work is passed through [`std::hint::black_box`] so the compiler cannot
//! elide it.
//!
//! Every probe is bounded: a [`Budget`] caps its wall time and the memory it allocates, can be
//! cancelled from another thread, and a progress callback hears about every grid point.
//!
//! Data flows on: probe samples → [`crate::calibrate`] → models.

mod error;
mod local;
mod log3p;
mod matrix;
mod memory;
#[cfg(feature = "mpi")]
#[cfg_attr(docsrs, doc(cfg(feature = "mpi")))]
pub mod mpi;
#[cfg(feature = "mpi")]
mod mpi_collectives;
mod prtt;
mod tcp;

pub use error::ProbeError;

use crate::collectives::Collective;

/// The collectives `probe::mpi::time_collective` (feature `mpi`) calls: every [`Collective`] but `reduce_scatter`
/// (its per-rank receive counts are not a plan of this probe; `reduce_scatter_block` is the
/// same operation with equal blocks).
pub const TIMED: [Collective; 10] = [
    Collective::Bcast,
    Collective::Allreduce,
    Collective::Reduce,
    Collective::Allgather,
    Collective::Alltoall,
    Collective::Barrier,
    Collective::ReduceScatterBlock,
    Collective::Gather,
    Collective::Scatter,
    Collective::Scan,
];

pub use local::{LocalKind, LocalSample, measure_local};
pub use log3p::{Log3PCleaning, Log3PPlan};
pub use matrix::{MatrixPlan, MatrixSample, measure_matrix_transfers};
pub use memory::{CopyKind, CopyPlan, CopySample, measure_copies};
pub use prtt::{Prober, PrttMeasurement, PrttPlan, PrttSpread, SimulatedProber, measure_prtt};
pub use tcp::{TcpLoopbackProber, measure_layouts};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Limits of a probe: wall time, bytes allocated, and a cancel flag another thread can raise.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Longest the probe may run.
    pub max_duration: Duration,
    /// Most bytes the probe may allocate for its buffers.
    pub max_bytes: u64,
    cancel: Arc<AtomicBool>,
    started: Instant,
}

impl Budget {
    /// A budget starting now.
    pub fn new(max_duration: Duration, max_bytes: u64) -> Self {
        Self {
            max_duration,
            max_bytes,
            cancel: Arc::new(AtomicBool::new(false)),
            started: Instant::now(),
        }
    }

    /// A handle that cancels the probe when set to `true` (from any thread).
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.cancel)
    }

    /// `Err` when cancelled or out of time.
    ///
    /// # Errors
    ///
    /// [`ProbeError::Cancelled`], [`ProbeError::OutOfTime`].
    pub fn check(&self) -> Result<(), ProbeError> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(ProbeError::Cancelled);
        }
        if self.started.elapsed() > self.max_duration {
            return Err(ProbeError::OutOfTime {
                limit: self.max_duration,
            });
        }
        Ok(())
    }

    /// `Err` when `bytes` exceed the memory budget.
    ///
    /// # Errors
    ///
    /// [`ProbeError::OutOfMemory`].
    pub fn check_bytes(&self, what: &'static str, bytes: u64) -> Result<(), ProbeError> {
        if bytes > self.max_bytes {
            Err(ProbeError::OutOfMemory {
                what,
                needed: bytes,
                limit: self.max_bytes,
            })
        } else {
            Ok(())
        }
    }
}

/// How each point is timed and how a grid is traversed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Methodology {
    /// Runs averaged into one sample (at least this many; more until a sample lasts
    /// `min_sample_time`).
    pub repetitions: u32,
    /// Samples per point; the minimum is kept.
    pub samples: u32,
    /// Shortest duration of one sample, so that clock resolution does not matter.
    pub min_sample_time: Duration,
    /// Passes over the grid, each in its own shuffled order; the median is kept.
    pub passes: usize,
    /// Seed of the shuffles.
    pub seed: u64,
}

impl Methodology {
    /// The papers' practice within a modest time: 20 repetitions, 10 samples, 3 passes.
    pub fn standard() -> Self {
        Self {
            repetitions: 20,
            samples: 10,
            min_sample_time: Duration::from_micros(20),
            passes: 3,
            seed: 2026,
        }
    }

    /// A fast methodology for quick runs and tests: 3 repetitions, 3 samples, 2 passes.
    pub fn quick() -> Self {
        Self {
            repetitions: 3,
            samples: 3,
            min_sample_time: Duration::from_micros(5),
            passes: 2,
            seed: 2026,
        }
    }

    /// Times `op`: the minimum over `samples` of the mean of at least `repetitions` runs, after
    /// one warm-up run. Seconds.
    pub fn time(&self, mut op: impl FnMut()) -> f64 {
        op(); // warm-up: caches, page faults, branch predictors
        let mut best = f64::INFINITY;
        for _ in 0..self.samples.max(1) {
            let mut runs = 0u32;
            let start = Instant::now();
            while runs < self.repetitions.max(1) || start.elapsed() < self.min_sample_time {
                op();
                runs += 1;
            }
            best = best.min(start.elapsed().as_secs_f64() / f64::from(runs));
        }
        best
    }
}

/// This machine's cache-line size in bytes: Linux's
/// `/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size` when readable, else 64 (the
/// line size of every current x86-64 and most ARM cores).
pub fn cache_line_size() -> u64 {
    std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|&l| l > 0)
        .unwrap_or(64)
}

/// The [`Prober::prtt`] of a transport: checks the request against the
/// largest message `max`, then reports the minimum over the methodology's samples of the mean of
/// its repetitions of `trial`.
pub(crate) fn prtt_min_of_means(
    methodology: &Methodology,
    budget: &Budget,
    request: (u32, f64, u64),
    max: usize,
    mut trial: impl FnMut(u32, f64, usize) -> Result<f64, ProbeError>,
) -> Result<f64, ProbeError> {
    let (n, delay, size) = request;
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    if n == 0 || size == 0 || size > max || !(delay >= 0.0 && delay.is_finite()) {
        return Err(ProbeError::InvalidPlan(format!(
            "PRTT(n = {n}, d = {delay}, s = {size}) with messages of 1 ..= {max} bytes"
        )));
    }
    let mut best = f64::INFINITY;
    for _ in 0..methodology.samples.max(1) {
        budget.check()?;
        let reps = methodology.repetitions.max(1);
        let mut total = 0.0;
        for _ in 0..reps {
            total += trial(n, delay, size)?;
        }
        best = best.min(total / f64::from(reps));
    }
    Ok(best)
}

/// Progress of a probe: `(stage, done, total)`.
pub type ProgressFn<'a> = &'a mut dyn FnMut(&str, usize, usize);

/// Measures every point of a grid in `methodology.passes` shuffled passes and returns the
/// median per point, in the grid's order. `measure` is called once per point and pass.
pub(crate) fn measure_grid<P: Copy>(
    stage: &str,
    points: &[P],
    methodology: &Methodology,
    budget: &Budget,
    progress: ProgressFn<'_>,
    mut measure: impl FnMut(P) -> Result<f64, ProbeError>,
) -> Result<Vec<f64>, ProbeError> {
    let passes = methodology.passes.max(1);
    let mut runs: Vec<Vec<f64>> = vec![Vec::with_capacity(passes); points.len()];
    let mut order: Vec<usize> = (0..points.len()).collect();
    let mut rng = crate::util::rng::SplitMix64(methodology.seed);
    let total = points.len() * passes;
    let mut done = 0;
    for _ in 0..passes {
        rng.shuffle(&mut order);
        for &k in &order {
            budget.check()?;
            runs[k].push(measure(points[k])?);
            done += 1;
            progress(stage, done, total);
        }
    }
    Ok(runs
        .iter_mut()
        .map(|values| crate::util::stats::median(values))
        .collect())
}

/// `len` values from `value`, or [`ProbeError::OutOfMemory`] when the allocation fails: a
/// budget of `u64::MAX` bytes must not let a huge plan abort the process.
pub(crate) fn try_filled<T>(
    what: &'static str,
    len: usize,
    limit: u64,
    value: impl FnMut(usize) -> T,
) -> Result<Vec<T>, ProbeError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| ProbeError::OutOfMemory {
            what,
            needed: (len as u64).saturating_mul(std::mem::size_of::<T>() as u64),
            limit,
        })?;
    v.extend((0..len).map(value));
    Ok(v)
}
