//! The crate's least-squares routine: exact recovery, hand-computed statistics, errors.

use crate::common;

use commcost::calibrate::FitError;
use commcost::calibrate::least_squares;
use common::{EXACT_FIT_RELATIVE, assert_rel};
use proptest::prelude::*;

/// Coefficients of very different magnitudes (s/message, s/byte, s/line), as in the Mlines
/// regression: column normalisation must keep all of them.
#[test]
fn recovers_mlines_like_coefficients_from_exact_data() {
    let (alpha, beta, gamma) = (2.5e-6, 7.0e-10, 3.0e-8);
    let mut design = Vec::new();
    let mut y = Vec::new();
    for i in 0..100u32 {
        let b = f64::from(1 + (i * 7919) % 65536);
        let lines = f64::from(1 + (i * 104_729) % 4096);
        design.extend([1.0, b, lines]);
        y.push(alpha + beta * b + gamma * lines);
    }
    let fit = least_squares(&design, 3, &y).unwrap();
    assert_rel(fit.coefficients()[0], alpha, EXACT_FIT_RELATIVE);
    assert_rel(fit.coefficients()[1], beta, EXACT_FIT_RELATIVE);
    assert_rel(fit.coefficients()[2], gamma, EXACT_FIT_RELATIVE);
    let sigma = fit.training().sigma_eps().unwrap();
    assert!(sigma <= 1e-12 * alpha, "sigma_eps = {sigma:e}");
    assert!(fit.training().unexplained_variance_ratio().unwrap() < 1e-18);
}

/// Hand example: points (0, 1), (1, 3), (2, 2), (3, 5) fitted by a + b x.
/// x̄ = 1.5, ȳ = 2.75, Sxx = 5, Sxy = 5.5 → b = 1.1, a = 2.75 - 1.65 = 1.1.
/// Fitted 1.1, 2.2, 3.3, 4.4; residuals -0.1, 0.8, -1.3, 0.6; SSE = 0.01 + 0.64 + 1.69 + 0.36
/// = 2.7; SST = 3.0625 + 0.0625 + 0.5625 + 5.0625 = 8.75; σ_ε = sqrt(2.7 / 2);
/// R² = 1 - 2.7 / 8.75 = 0.6914285714…, unexplained = 0.3085714285…
#[test]
fn statistics_match_a_hand_computed_example() {
    let design = [1.0, 0.0, 1.0, 1.0, 1.0, 2.0, 1.0, 3.0];
    let y = [1.0, 3.0, 2.0, 5.0];
    let fit = least_squares(&design, 2, &y).unwrap();
    assert_rel(fit.coefficients()[0], 1.1, 1e-12);
    assert_rel(fit.coefficients()[1], 1.1, 1e-12);
    let s = fit.training();
    assert_eq!(s.points(), 4);
    assert_rel(s.sse(), 2.7, 1e-12);
    assert_rel(s.sst(), 8.75, 1e-12);
    assert_rel(s.sigma_eps().unwrap(), 1.35f64.sqrt(), 1e-12);
    assert_rel(
        s.coefficient_of_determination().unwrap(),
        6.05 / 8.75,
        1e-12,
    );
    assert_rel(s.unexplained_variance_ratio().unwrap(), 2.7 / 8.75, 1e-12);
    assert_rel(fit.predict(&[1.0, 10.0]).unwrap(), 12.1, 1e-12);

    // held-out set (4, 5), (5, 7), (6, 7.5): predicted 5.5, 6.6, 7.7; residuals -0.5, 0.4,
    // -0.2; SSE = 0.45; mean 6.5, SST = 2.25 + 0.25 + 1 = 3.5; σ_ε = sqrt(0.45 / (3 - 2))
    let test = fit
        .evaluate(&[1.0, 4.0, 1.0, 5.0, 1.0, 6.0], &[5.0, 7.0, 7.5])
        .unwrap();
    assert_rel(test.sse(), 0.45, 1e-12);
    assert_rel(test.sst(), 3.5, 1e-12);
    assert_rel(test.sigma_eps().unwrap(), 0.45f64.sqrt(), 1e-12);
    assert_rel(
        test.unexplained_variance_ratio().unwrap(),
        0.45 / 3.5,
        1e-12,
    );
}

#[test]
fn statistics_without_degrees_of_freedom_or_variance_are_none() {
    // two points, two coefficients: exact, but σ_ε undefined
    let fit = least_squares(&[1.0, 0.0, 1.0, 1.0], 2, &[1.0, 2.0]).unwrap();
    assert_eq!(fit.training().sigma_eps(), None);
    // constant observations: SST = 0
    let flat = least_squares(&[1.0, 1.0, 1.0], 1, &[4.0, 4.0, 4.0]).unwrap();
    assert_eq!(flat.training().unexplained_variance_ratio(), None);
    assert_eq!(flat.training().coefficient_of_determination(), None);
}

#[test]
fn bad_inputs_are_typed_errors() {
    assert!(matches!(
        least_squares(&[1.0, 2.0], 2, &[1.0]),
        Err(FitError::TooFewPoints {
            needed: 2,
            got: 1,
            ..
        })
    ));
    assert!(matches!(
        least_squares(&[1.0, 2.0, 3.0], 2, &[1.0, 2.0]),
        Err(FitError::DimensionMismatch {
            expected: 4,
            got: 3,
            ..
        })
    ));
    assert!(matches!(
        least_squares(&[1.0, f64::NAN, 1.0, 2.0], 2, &[1.0, 2.0]),
        Err(FitError::NonFinite { index: 1, .. })
    ));
    assert!(matches!(
        least_squares(&[1.0, 0.0, 1.0, 1.0], 2, &[1.0, f64::INFINITY]),
        Err(FitError::NonFinite {
            what: "observations",
            index: 1,
            ..
        })
    ));
    assert!(matches!(
        least_squares(&[], 0, &[]),
        Err(FitError::DimensionMismatch { .. })
    ));
    // a zero column
    assert!(matches!(
        least_squares(&[1.0, 0.0, 1.0, 0.0, 1.0, 0.0], 2, &[1.0, 2.0, 3.0]),
        Err(FitError::RankDeficient {
            rank: 1,
            columns: 2,
            column: 1
        })
    ));
    // column 2 = 2 × column 1: dependent
    let design = [1.0, 1.0, 2.0, 1.0, 2.0, 4.0, 1.0, 3.0, 6.0, 1.0, 5.0, 10.0];
    match least_squares(&design, 3, &[1.0, 2.0, 3.0, 4.0]) {
        Err(FitError::RankDeficient {
            rank: 2,
            columns: 3,
            column,
        }) => {
            assert!(
                column == 1 || column == 2,
                "names a dependent column, got {column}"
            )
        }
        other => panic!("expected rank deficiency, got {other:?}"),
    }
    let fit = least_squares(&[1.0, 0.0, 1.0, 1.0, 1.0, 2.0], 2, &[0.0, 1.0, 2.0]).unwrap();
    assert!(matches!(
        fit.predict(&[1.0]),
        Err(FitError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        fit.evaluate(&[], &[]),
        Err(FitError::TooFewPoints { .. })
    ));
}

proptest! {
    /// Random well-posed problems: exact data recovers the coefficients.
    #[test]
    fn exact_data_recovers_random_coefficients(
        beta in prop::collection::vec(-1e3..1e3f64, 1..6),
        extra_rows in 0usize..40,
        seed in any::<u64>(),
    ) {
        let c = beta.len();
        let n = c + 2 + extra_rows;
        // a pseudo-random but well-conditioned design: column 0 of ones, the rest LCG noise
        let mut state = seed | 1;
        let mut design = Vec::with_capacity(n * c);
        for _ in 0..n {
            for j in 0..c {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let noise = (state >> 11) as f64 / (1u64 << 53) as f64;
                design.push(if j == 0 { 1.0 } else { 10.0 * noise });
            }
        }
        let y: Vec<f64> = design
            .chunks_exact(c)
            .map(|row| row.iter().zip(&beta).map(|(x, b)| x * b).sum())
            .collect();
        match least_squares(&design, c, &y) {
            Ok(fit) => {
                let scale = beta.iter().fold(1.0f64, |m, b| m.max(b.abs()));
                for (got, want) in fit.coefficients().iter().zip(&beta) {
                    prop_assert!((got - want).abs() <= 1e-7 * scale, "{got} vs {want}");
                }
            }
            // random columns can be numerically dependent only by extreme bad luck; never a panic
            Err(FitError::RankDeficient { .. }) => {}
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }
}
