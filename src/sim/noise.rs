//! Seeded CPU noise: a random delay added to every CPU busy period of a simulation.

use crate::sim::SimError;

/// Exponentially distributed delays with a given mean, drawn per operation from a seed.
///
/// The delay of an operation is a pure function of `(seed, operation index, which CPU period)`
/// (SplitMix64 hashing, S. Vigna's finaliser), so a simulation is deterministic for a seed and
/// independent of the order in which the simulator happens to process events.
///
/// # Formula
///
/// ```text
/// delay = -mean · ln(1 - u),   u uniform in [0, 1) from 53 hashed bits
/// ```
///
/// # Examples
///
/// ```
/// use commcost::sim::Noise;
///
/// let noise = Noise::exponential(42, 1e-6)?;
/// assert_eq!(noise.delay(7, 0), noise.delay(7, 0));
/// assert!(noise.delay(7, 0) >= 0.0);
/// // over many draws the mean is close to 1 µs
/// let mean = (0..100_000).map(|i| noise.delay(i, 0)).sum::<f64>() / 1e5;
/// assert!((mean - 1e-6).abs() < 2e-8);
/// # Ok::<(), commcost::sim::SimError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    seed: u64,
    mean: f64,
}

impl Noise {
    /// Exponential delays of mean `mean` seconds.
    ///
    /// # Errors
    ///
    /// [`SimError::InvalidTime`] for a negative or non-finite mean,
    /// [`SimError::TimeTooLarge`] above [`MAX_SECONDS`](crate::limits::MAX_SECONDS) (1e9 s,
    /// the bound of every model's time parameters; a delay is at most about 37 means).
    pub fn exponential(seed: u64, mean: f64) -> Result<Self, SimError> {
        if !(mean >= 0.0 && mean.is_finite()) {
            return Err(SimError::InvalidTime {
                name: "noise mean",
                value: mean,
            });
        }
        if mean > crate::limits::MAX_SECONDS {
            return Err(SimError::TimeTooLarge {
                name: "noise mean",
                value: mean,
                limit: crate::limits::MAX_SECONDS,
            });
        }
        Ok(Self { seed, mean })
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The mean delay, seconds.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The delay of CPU period `which` (0 send overhead, 1 receive overhead, 2 calc) of
    /// operation `op`, seconds: finite and `>= 0`.
    pub fn delay(&self, op: u64, which: u64) -> f64 {
        let mut z = self
            .seed
            .wrapping_add(op.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .wrapping_add(which.wrapping_mul(0xD1B5_4A32_D192_ED03));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // u in [0, 1): 1 - u in (0, 1], ln finite and <= 0
        let u = (z >> 11) as f64 / (1u64 << 53) as f64;
        -self.mean * (1.0 - u).ln()
    }
}
