//! The Mlines model and its regression variants on synthetic data with a known answer.

use crate::common;

use commcost::calibrate::{Feature, MlinesSample, RegressionVariant, Term, fit_regression};
use commcost::mlines::columns;
use commcost::{CommModel, Message, MlinesModel};
use common::{SplitMix64, assert_rel};

const LINE: u64 = 64;
/// The "true" machine: α = 20 µs, β = 2 ns/byte, γ = 50 ns/line.
const ALPHA: f64 = 20e-6;
const BETA: f64 = 2e-9;
const GAMMA: f64 = 50e-9;

/// Row and column transfers of a 2000 x 2000 matrix of 4-byte integers (the paper's
/// experiment), with independent ±1 % multiplicative noise on each time.
fn samples(rng: &mut SplitMix64, n: usize) -> Vec<MlinesSample> {
    let width = 2000 * 4;
    (0..n)
        .map(|_| {
            let k = rng.int(1, 64);
            let msg = if rng.next_u64().is_multiple_of(2) {
                let first_row = rng.int(0, 2000 - k);
                Message::contiguous(k * width).with_offset(first_row * width)
            } else {
                let first_col = rng.int(0, 2000 - k);
                Message::vector(2000, 4 * k, width)
                    .unwrap()
                    .with_offset(first_col * 4)
            };
            let truth = MlinesModel::new(ALPHA, BETA, GAMMA, LINE).unwrap();
            let time = truth.p2p(&msg) * rng.range(0.99, 1.01);
            MlinesSample::from_message(&msg, LINE, time).unwrap()
        })
        .collect()
}

#[test]
fn m1_recovers_the_coefficients_and_beats_s1() {
    let mut rng = SplitMix64(2026);
    let train = samples(&mut rng, 100);
    let test = samples(&mut rng, 100);
    let m1 = fit_regression(RegressionVariant::M1, LINE, &train, &test).unwrap();
    assert_eq!(m1.terms(), &[Term::Messages, Term::Bytes, Term::Lines]);
    // ±1 % noise: coefficients within a few per cent
    let c = m1.coefficients();
    assert_rel(c[0], ALPHA, 0.05);
    assert_rel(c[1], BETA, 0.05);
    assert_rel(c[2], GAMMA, 0.05);
    let s1 = fit_regression(RegressionVariant::S1, LINE, &train, &test).unwrap();
    let (sigma_m1, sigma_s1) = (
        m1.test().sigma_eps().unwrap(),
        s1.test().sigma_eps().unwrap(),
    );
    // the paper's finding (Table 2: S1 errors 2-6x M1's); on this data the gap is far larger
    assert!(
        sigma_s1 > 5.0 * sigma_m1,
        "S1 {sigma_s1:e} vs M1 {sigma_m1:e}"
    );
    assert!(m1.test().unexplained_variance_ratio().unwrap() < 0.01);
    // every variant fits; the M family beats the S family
    for variant in RegressionVariant::ALL {
        let fit = fit_regression(variant, LINE, &train, &test).unwrap();
        let sigma = fit.test().sigma_eps().unwrap();
        match variant.features {
            commcost::calibrate::FeatureSet::Lines => assert!(sigma < sigma_s1 / 5.0),
            commcost::calibrate::FeatureSet::Standard => assert!(sigma > 5.0 * sigma_m1),
        }
    }
}

#[test]
fn a_fitted_variant_is_a_model() {
    let mut rng = SplitMix64(7);
    let train = samples(&mut rng, 100);
    let test = samples(&mut rng, 100);
    let m1 = fit_regression(RegressionVariant::M1, LINE, &train, &test).unwrap();
    let column = Message::vector(2000, 16, 8000).unwrap(); // 2000 lines, 32000 bytes
    let truth = ALPHA + BETA * 32000.0 + GAMMA * 2000.0;
    let model: &dyn CommModel = &m1;
    assert_rel(model.p2p(&column), truth, 0.03);
}

#[test]
fn variants_have_the_documented_columns() {
    use Feature::{Bytes, Lines, Operations};
    assert_eq!(
        RegressionVariant::S2.terms(),
        vec![Term::Messages, Term::Bytes, Term::Square(Bytes)]
    );
    assert_eq!(RegressionVariant::S3.terms(), RegressionVariant::S2.terms());
    assert_eq!(
        RegressionVariant::M3.terms(),
        vec![
            Term::Messages,
            Term::Bytes,
            Term::Lines,
            Term::Square(Bytes),
            Term::Square(Lines),
            Term::Product(Bytes, Lines)
        ]
    );
    let scan = RegressionVariant::M3.with_operations();
    assert_eq!(scan.name(), "M3+ops");
    assert_eq!(scan.terms().len(), 1 + 3 + 3 + 3);
    assert!(scan.terms().contains(&Term::Product(Lines, Operations)));
    let names: Vec<String> = RegressionVariant::ALL.iter().map(|v| v.name()).collect();
    assert_eq!(names, ["S1", "S2", "S3", "M1", "M2", "M3"]);
}

#[test]
fn degenerate_training_data_is_an_error_not_a_panic() {
    // every sample the same shape: the columns are dependent
    let same = vec![
        MlinesSample {
            messages: 1.0,
            bytes: 64.0,
            lines: 1.0,
            operations: 0.0,
            time: 1e-6
        };
        10
    ];
    assert!(fit_regression(RegressionVariant::M1, LINE, &same, &same).is_err());
    assert!(fit_regression(RegressionVariant::M1, LINE, &[], &[]).is_err());
    assert!(fit_regression(RegressionVariant::M1, 0, &same, &same).is_err());
}

#[test]
fn mlines_model_prices_columns_by_their_lines() {
    let model = MlinesModel::new(ALPHA, BETA, GAMMA, LINE).unwrap();
    // 8 columns (32 bytes) of 2000 rows, rows 8000 bytes apart, aligned: one line per row
    let cols = Message::vector(2000, 32, 8000).unwrap();
    assert_eq!(columns(2000, 8000, 0, 0, 32, LINE), Ok(2000));
    // α + β 64000 + γ 2000 = 20 + 128 + 100 = 248 µs
    assert_rel(model.p2p(&cols), 248e-6, 1e-12);
    // the same bytes as rows: 64000 / 64 = 1000 lines: 20 + 128 + 50 = 198 µs
    assert_rel(model.p2p(&Message::contiguous(64_000)), 198e-6, 1e-12);
    assert!(MlinesModel::new(-1.0, 0.0, 0.0, 64).is_err());
    assert!(MlinesModel::new(0.0, 0.0, 0.0, 0).is_err());
}
