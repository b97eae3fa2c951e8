//! Parametrised round trips `PRTT(n, d, s)` (Hoefler, Lichei, Rehm, "Low-overhead LogGP
//! parameter assessment for modern interconnection networks", IPDPS 2007, §3, Listing 1): the
//! [`Prober`] of a transport, a simulated one, and the measurement plan whose samples
//! [`assess_loggp`](crate::calibrate::assess_loggp) fits.

use crate::calibrate::PrttSample;
use crate::probe::ProbeError;
use crate::util::rng::SplitMix64;
use crate::util::stats::median;
use crate::{LogGP, Protocols};

/// Takes one `PRTT(n, d, s)` measurement: Listing 1 of the paper, on whatever transport
/// implements it (loopback TCP, MPI, a simulator).
pub trait Prober {
    /// The round trip, in seconds, of `n` messages of `size` bytes sent `delay` seconds apart
    /// and one `size`-byte reply.
    ///
    /// # Errors
    ///
    /// Whatever stops the measurement: an invalid request, a spent budget, a transport error.
    fn prtt(&mut self, n: u32, delay: f64, size: u64) -> Result<f64, ProbeError>;
}

/// A [`Prober`] that answers from a LogGP model instead of a network: eq. (1) and (5) of the
/// paper, `PRTT(n, d, s) = 2 (L + 2o + (s - 1) G) + (n - 1) max(o + d, G_all(s))`, each answer
/// multiplied by an independent uniform factor in `[1 - noise, 1 + noise]` (seeded).
///
/// For testing calibration pipelines and for what-if studies ("how well would the assessment
/// recover this transport with 1 % noise?"); it measures nothing.
///
/// # Examples
///
/// ```
/// use commcost::probe::{Prober, SimulatedProber};
/// use commcost::presets;
///
/// let mut prober = SimulatedProber::new(presets::open_mpi_openib(), 0.0, 1);
/// // PRTT(1, 0, 1) = 2 p2p(1 B) = 2 · 5.96 µs, the paper's end-to-end L (Table 2)
/// assert!((prober.prtt(1, 0.0, 1)? - 11.92e-6).abs() < 1e-15);
/// # Ok::<(), commcost::probe::ProbeError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SimulatedProber {
    model: Protocols<LogGP>,
    noise: f64,
    rng: u64,
}

impl SimulatedProber {
    /// A prober for `model` with relative noise `noise` (0.01 for ±1 %) and a seed.
    pub fn new(model: Protocols<LogGP>, noise: f64, seed: u64) -> Self {
        Self {
            model,
            noise: if noise.is_finite() {
                noise.abs().min(0.99)
            } else {
                0.0
            },
            rng: seed,
        }
    }
}

impl Prober for SimulatedProber {
    fn prtt(&mut self, n: u32, delay: f64, size: u64) -> Result<f64, ProbeError> {
        let m = self.model.model_for(size);
        let single = 2.0
            * (m.latency() + 2.0 * m.overhead() + size.saturating_sub(1) as f64 * m.gap_per_byte());
        let time = single
            + f64::from(n.saturating_sub(1)) * (m.overhead() + delay).max(m.cumulative_gap(size));
        let mut rng = SplitMix64(self.rng);
        let unit = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        self.rng = rng.0;
        Ok(time * (1.0 + self.noise * (2.0 * unit - 1.0)))
    }
}

/// What [`measure_prtt`] measures.
#[derive(Debug, Clone, PartialEq)]
pub struct PrttPlan {
    /// Message sizes, bytes.
    pub sizes: Vec<u64>,
    /// `n` (16 in the paper).
    pub n: u32,
    /// Measurement passes over the sizes (each in its own shuffled order).
    pub passes: usize,
    /// Seed of the shuffles.
    pub seed: u64,
}

impl PrttPlan {
    /// The size grid for an MPI transport, dense where MPI libraries switch protocol (fast
    /// paths for tiny messages, eager limits), since each protocol range needs several points
    /// before [`assess_loggp`](crate::calibrate::assess_loggp) can tell it from outliers:
    ///
    /// ```text
    /// 1 B; 32 B steps from 32 to 480 B; 256 B steps from 512 B to 8 KiB;
    /// 1 KiB steps (4 KiB when `quick`) above 8 KiB to 64 KiB;
    /// the powers of two from 128 KiB to 64 MiB that do not exceed `max_size`
    /// ```
    ///
    /// `n = 16` (the paper's), `passes` passes, shuffle seed 3. What `commcost calibrate mpi`
    /// measures.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::probe::PrttPlan;
    /// let plan = PrttPlan::mpi(1 << 16, 3, false);
    /// // 1 + 15 + 31 + 56 sizes, the last 64 KiB
    /// assert_eq!(plan.sizes.len(), 103);
    /// assert_eq!(plan.sizes.last(), Some(&65536));
    /// ```
    pub fn mpi(max_size: u64, passes: usize, quick: bool) -> Self {
        const DENSE: u64 = 1 << 16;
        let step = if quick { 4096 } else { 1024 };
        let sizes = std::iter::once(1)
            .chain((1..16).map(|k| k * 32))
            .chain((2..=32).map(|k| k * 256))
            .chain((8192 / step + 1..=DENSE / step).map(|k| k * step))
            .chain((17..=26).map(|k| 1u64 << k).filter(|&s| s <= max_size))
            .collect();
        Self {
            sizes,
            n: 16,
            passes,
            seed: 3,
        }
    }
}

/// How much the passes of [`measure_prtt`] disagreed at one size: `(max - min) / median` of
/// each PRTT kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrttSpread {
    /// Message size, bytes.
    pub size: u64,
    /// Relative spread of `PRTT(1, 0, s)`.
    pub single: f64,
    /// Relative spread of `PRTT(n, 0, s)`.
    pub burst: f64,
    /// Relative spread of `PRTT(n, d, s)`.
    pub delayed: f64,
}

/// The result of [`measure_prtt`]: the median samples for
/// [`assess_loggp`](crate::calibrate::assess_loggp) and the spread.
#[derive(Debug, Clone, PartialEq)]
pub struct PrttMeasurement {
    /// One sample per size and kind (medians over the passes).
    pub samples: Vec<PrttSample>,
    /// Per-size spread over the passes.
    pub spread: Vec<PrttSpread>,
}

/// Measures exactly the samples [`assess_loggp`](crate::calibrate::assess_loggp) needs,
/// robustly against drift of the machine.
///
/// # Method
///
/// A pilot pass (sizes in shuffled order) measures `PRTT(1, 0, s)` and `PRTT(n, 0, s)` and fixes
/// each size's delay `d = PRTT(1, 0, s)` — or `d = PRTT(2, 0, s)` when `PRTT(1, 0, s)` does not
/// exceed `G_all(s)` (the paper's fallback for tiny `L` and large `g`). Then `passes` passes, each
/// over the sizes in its own seeded shuffled order, measure `PRTT(1, 0, s)`, `PRTT(n, 0, s)` and
/// `PRTT(n, d, s)`; the median over the passes is kept and the spread reported.
///
/// Netgauge measures sizes in increasing order, so a slow drift or a level shift of the machine
/// (real loopback runs show 2-3× shifts lasting dozens of sizes) is indistinguishable from a
/// protocol change. Shuffling decorrelates time from size, and the median of several passes
/// removes what a shift does to one pass.
///
/// # Errors
///
/// [`ProbeError::InvalidPlan`] for no sizes, `n < 2` or no passes; the prober's errors.
pub fn measure_prtt(
    prober: &mut dyn Prober,
    plan: &PrttPlan,
) -> Result<PrttMeasurement, ProbeError> {
    if plan.sizes.is_empty() || plan.passes == 0 || plan.n < 2 {
        return Err(ProbeError::InvalidPlan(format!(
            "a PRTT plan needs sizes ({}), passes ({}) and n >= 2 ({})",
            plan.sizes.len(),
            plan.passes,
            plan.n
        )));
    }
    let mut rng = SplitMix64(plan.seed);
    let mut order: Vec<usize> = (0..plan.sizes.len()).collect();
    let n1 = f64::from(plan.n - 1);
    let mut delays = vec![0.0; plan.sizes.len()];
    rng.shuffle(&mut order);
    for &k in &order {
        let s = plan.sizes[k];
        let single = prober.prtt(1, 0.0, s)?;
        let burst = prober.prtt(plan.n, 0.0, s)?;
        delays[k] = if single > (burst - single) / n1 {
            single
        } else {
            prober.prtt(2, 0.0, s)?
        };
    }
    let mut runs = vec![[Vec::new(), Vec::new(), Vec::new()]; plan.sizes.len()];
    for _ in 0..plan.passes {
        rng.shuffle(&mut order);
        for &k in &order {
            let s = plan.sizes[k];
            runs[k][0].push(prober.prtt(1, 0.0, s)?);
            runs[k][1].push(prober.prtt(plan.n, 0.0, s)?);
            runs[k][2].push(prober.prtt(plan.n, delays[k], s)?);
        }
    }
    let mut samples = Vec::with_capacity(3 * plan.sizes.len());
    let mut spread = Vec::with_capacity(plan.sizes.len());
    for (k, kinds) in runs.iter_mut().enumerate() {
        let size = plan.sizes[k];
        let mut relative = [0.0; 3];
        let mut medians = [0.0; 3];
        for (j, values) in kinds.iter_mut().enumerate() {
            medians[j] = median(values);
            let (lo, hi) = (values[0], values[values.len() - 1]);
            relative[j] = (hi - lo) / medians[j];
        }
        samples.push(PrttSample {
            n: 1,
            delay: 0.0,
            size,
            time: medians[0],
        });
        samples.push(PrttSample {
            n: plan.n,
            delay: 0.0,
            size,
            time: medians[1],
        });
        samples.push(PrttSample {
            n: plan.n,
            delay: delays[k],
            size,
            time: medians[2],
        });
        spread.push(PrttSpread {
            size,
            single: relative[0],
            burst: relative[1],
            delayed: relative[2],
        });
    }
    Ok(PrttMeasurement { samples, spread })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The MPI grid written out by hand: the sizes `calibrate mpi` measured before the grid
    /// had a constructor.
    #[test]
    fn the_mpi_grid_is_dense_below_64_kib_then_powers_of_two() {
        let mut expected: Vec<u64> = vec![1];
        expected.extend([
            32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 480,
        ]);
        expected.extend((512..=8192).step_by(256));
        expected.extend((9216..=65536).step_by(1024));
        expected.extend([131072, 262144, 524288, 1048576, 2097152, 4194304]);
        let plan = PrttPlan::mpi(4 << 20, 5, false);
        assert_eq!(plan.sizes, expected);
        assert_eq!((plan.n, plan.passes, plan.seed), (16, 5, 3));
        let quick = PrttPlan::mpi(1 << 16, 2, true);
        assert_eq!(quick.sizes.len(), 1 + 15 + 31 + 14);
        assert_eq!(&quick.sizes[47..49], &[12288, 16384]);
        // past 64 MiB: the grid stops there, whatever the request
        assert_eq!(
            PrttPlan::mpi(u64::MAX, 1, false).sizes.last(),
            Some(&(1 << 26))
        );
        assert_eq!(PrttPlan::mpi(0, 1, true).sizes.last(), Some(&65536));
    }
}
