//! Shared test helpers: every tolerance used by the integration tests is named here.
#![allow(dead_code)]

/// Relative tolerance for values computed by hand from published decimal parameters: the
/// µs → s conversion and a handful of additions lose a few ulps.
pub const HAND_RELATIVE: f64 = 1e-12;

/// Relative tolerance for two formulations of the same prediction.
pub const SAME_PREDICTION_RELATIVE: f64 = 1e-12;

/// Relative tolerance of fits on exact data.
pub const EXACT_FIT_RELATIVE: f64 = 1e-9;

/// One microsecond in seconds.
pub const US: f64 = 1e-6;

/// Asserts that `actual` and `expected` agree to `rel` relative tolerance (approx's
/// `relative_eq`, with an absolute floor of the smallest normal number for zeros).
#[track_caller]
pub fn assert_rel(actual: f64, expected: f64, rel: f64) {
    assert!(
        approx::relative_eq!(
            actual,
            expected,
            epsilon = f64::MIN_POSITIVE,
            max_relative = rel
        ),
        "actual {actual:e} differs from expected {expected:e} by more than {rel:e} relative"
    );
}

/// A tiny deterministic generator (SplitMix64) so tests need no extra dependency and every run
/// sees the same data.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in `[lo, hi]`.
    pub fn int(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
}
