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
