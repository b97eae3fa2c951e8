//! log_3 P and memory logP derivation (Cameron, Ge & Sun, IEEE TC 2007; Cameron & Sun, IPDPS 2003) and the Netgauge file reader (Netgauge 2.4.6, `ptrn_loggp.c`).

use crate::common;

use commcost::calibrate::CalibrationError;
use commcost::calibrate::{
    AssessmentConfig, CopyMeasurements, Log3PMeasurements, assess_loggp, derive_log3p,
    derive_memory_logp, parse_netgauge,
};
use commcost::table::Table1D;
use commcost::table::Table2D;
use commcost::{CommModel, MemoryLogP, Message};
use common::{HAND_RELATIVE, US, assert_rel};
use proptest::prelude::*;

fn titan() -> Log3PMeasurements {
    // lognp-log3p §4.1, Titan, s = 16 KiB, d = 1 KiB (µs): T00(s) = 32, T01(s) = 160,
    // T00(s, d) = 452, T_mem = 3
    Log3PMeasurements {
        sizes: vec![16384],
        self_contiguous: vec![32.0 * US],
        remote_contiguous: vec![160.0 * US],
        memory_copy: vec![3.0 * US],
        strides: vec![1024],
        self_strided: vec![vec![452.0 * US]],
        unit_stride: 8,
    }
}

#[test]
fn titan_point_derives_the_published_components() {
    let m = derive_log3p(&titan()).unwrap();
    let b = m.breakdown(&Message::vector(2048, 8, 1024).unwrap());
    // o_mw = 32 - 3 = 29, o_net = 160 - 29 = 131, l_mw = 452 - 29 - 3 = 420
    assert_rel(b.middleware_overhead, 29.0 * US, HAND_RELATIVE);
    assert_rel(b.network_overhead, 131.0 * US, HAND_RELATIVE);
    assert_rel(b.middleware_latency, 420.0 * US, HAND_RELATIVE);
    // and predicts the measured remote strided half round trip, 580 µs
    assert_rel(b.total(), 580.0 * US, HAND_RELATIVE);
}

#[test]
fn inconsistent_measurements_name_the_culprit() {
    let mut faster_than_copy = titan();
    faster_than_copy.self_contiguous = vec![2.0 * US];
    match derive_log3p(&faster_than_copy) {
        Err(CalibrationError::Inconsistent {
            size: 16384,
            component,
            ..
        }) => {
            assert!(component.starts_with("o_mw"))
        }
        other => panic!("{other:?}"),
    }
    let mut remote_too_fast = titan();
    remote_too_fast.remote_contiguous = vec![20.0 * US];
    let err = derive_log3p(&remote_too_fast).unwrap_err();
    assert!(err.to_string().contains("o_net"), "{err}");
    let mut strided_too_fast = titan();
    strided_too_fast.self_strided = vec![vec![30.0 * US]];
    let err = derive_log3p(&strided_too_fast).unwrap_err();
    assert!(err.to_string().contains("stride 1024"), "{err}");
    let mut unit = titan();
    unit.strides = vec![8];
    assert!(matches!(
        derive_log3p(&unit),
        Err(CalibrationError::InvalidValue { .. })
    ));
    let mut short = titan();
    short.memory_copy = vec![];
    assert!(matches!(
        derive_log3p(&short),
        Err(CalibrationError::LengthMismatch { .. })
    ));
    let mut nan = titan();
    nan.remote_contiguous = vec![f64::NAN];
    assert!(matches!(
        derive_log3p(&nan),
        Err(CalibrationError::InvalidValue { .. })
    ));
}

#[test]
fn memory_logp_is_recovered_from_copy_timings() {
    // truth: o = 0.5 ns/B constant, l(s, d) = 1 ns/B at stride 16, 4 ns/B at 256 (all sizes)
    let sizes = vec![1024u64, 4096, 65536];
    let strides = vec![16u64, 256];
    let per_byte = [1e-9, 4e-9];
    let contiguous: Vec<f64> = sizes.iter().map(|&s| s as f64 * 0.5e-9).collect();
    let strided: Vec<Vec<f64>> = sizes
        .iter()
        .map(|&s| per_byte.iter().map(|l| s as f64 * (0.5e-9 + l)).collect())
        .collect();
    let m = derive_memory_logp(&CopyMeasurements {
        sizes: sizes.clone(),
        contiguous,
        strides: strides.clone(),
        strided,
        element: 4,
    })
    .unwrap();
    let truth = MemoryLogP::new(
        Table1D::constant(0.5e-9).unwrap(),
        Some(Table2D::new(vec![0.0], vec![16.0, 256.0], vec![vec![1e-9, 4e-9]]).unwrap()),
        4,
        4,
    )
    .unwrap();
    for &s in &sizes {
        for d in [16u64, 64, 256] {
            let msg = Message::vector(s / 4, 4, d).unwrap();
            assert_rel(m.p2p(&msg), truth.p2p(&msg), 1e-12);
        }
        assert_rel(
            m.p2p(&Message::contiguous(s)),
            truth.p2p(&Message::contiguous(s)),
            1e-12,
        );
    }
    // a strided copy faster than the contiguous one is inconsistent
    let bad = CopyMeasurements {
        sizes: vec![1024],
        contiguous: vec![1e-6],
        strides: vec![64],
        strided: vec![vec![0.5e-6]],
        element: 4,
    };
    assert!(matches!(
        derive_memory_logp(&bad),
        Err(CalibrationError::Inconsistent { .. })
    ));
}

/// A Netgauge LogGP file written by hand in its format: 8 sizes, a change detected when the
/// 7th size (6145 B) was measured, so that line appears twice.
const NETGAUGE_FILE: &str = "\
# size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G)
# to get o: plot \"./loggp.out\" using 1:(($5-$3)/($2-1)-$3)
# to get g,G: plot \"./loggp.out\" using 1:($4-$3)/($2-1)
1 10 30.800000 77.060000 390.040000 15.400000 4.720000 4.500000 -nan -nan -nan
1025 10 32.300000 85.000000 405.000000 15.400000 4.750000 4.500000 -nan -nan -nan
2049 10 33.800000 93.000000 420.000000 15.400000 4.700000 4.500000 5.140000 0.000730 0.010000
3073 10 35.300000 101.000000 435.000000 15.400000 4.730000 4.500000 5.140000 0.000730 0.010000
4097 10 36.800000 109.000000 450.000000 15.400000 4.710000 4.500000 5.140000 0.000730 0.010000
5121 10 38.300000 117.000000 465.000000 15.400000 4.720000 4.500000 5.140000 0.000730 0.010000
6145 10 39.800000 125.000000 480.000000 15.400000 4.720000 4.500000 5.140000 0.000730 0.010000
6145 10 39.800000 125.000000 480.000000 15.400000 4.720000 4.500000 21.390000 0.001030 -nan
7169 10 41.300000 133.000000 495.000000 15.400000 4.720000 4.500000 21.390000 0.001030 0.020000
";

#[test]
fn netgauge_files_are_read() {
    let run = parse_netgauge(NETGAUGE_FILE).unwrap();
    assert_eq!(run.rows.len(), 9);
    assert_eq!(run.rows[0].line, 4);
    assert_eq!(run.rows[0].gap, None);
    assert_rel(
        run.rows[2].gap_per_byte.unwrap(),
        0.00073 * US,
        HAND_RELATIVE,
    );
    // one sample triple per distinct size; the delayed one has d = PRTT(1, 0, s)
    let samples = run.samples();
    assert_eq!(samples.len(), 3 * 8);
    assert_rel(samples[2].delay, 30.8 * US, HAND_RELATIVE);
    assert_rel(samples[2].time, 390.04 * US, HAND_RELATIVE);
    // the reported model: the change at the 7th size starts the new range 3 sizes back (3073 B)
    let model = run.reported_model().unwrap();
    assert_eq!(model.switch_points().collect::<Vec<_>>(), vec![3073]);
    let first = model.ranges()[0].model();
    // Netgauge's g is the paper's g - G: 5.14 + 0.00073 = 5.14073 µs
    assert_rel(first.gap(), 5.14073 * US, HAND_RELATIVE);
    assert_rel(first.gap_per_byte(), 0.00073 * US, HAND_RELATIVE);
    // Netgauge's L column is the end-to-end PRTT(1, 0, 1) / 2 = 15.4 µs (Hoefler, Lichei, Rehm
    // 2007, §3.4); LogGP's p2p = 2o + L keeps it: L = 15.4 - 2 · 4.72 = 5.96 µs
    assert_rel(first.latency(), 5.96 * US, HAND_RELATIVE);
    assert_rel(first.overhead(), 4.72 * US, HAND_RELATIVE);
    let one = commcost::Message::contiguous(1);
    assert_rel(
        commcost::CommModel::p2p(&model, &one),
        15.4 * US,
        HAND_RELATIVE,
    );
    assert_rel(
        model.ranges()[1].model().gap(),
        21.39103 * US,
        HAND_RELATIVE,
    );
    // the samples feed the assessment
    let a = assess_loggp(&samples, &AssessmentConfig::netgauge()).unwrap();
    assert!(!a.ranges.is_empty());
}

#[test]
fn malformed_netgauge_files_give_line_numbers() {
    let cases = [
        ("# only a header\n", "data lines"),
        (
            "1 10 30.8 77.0 390.0\n",
            "line 1: expected 11 columns, found 5",
        ),
        (
            "# h\n1 10 30.8 abc 390.0 15.4 4.7 4.5 5.1 0.001 0.01\n",
            "line 2: column `PRTT(n,0,s)`",
        ),
        (
            "1.5 10 30.8 77.0 390.0 15.4 4.7 4.5 5.1 0.001 0.01\n",
            "column `size`",
        ),
        (
            "1 1 30.8 77.0 390.0 15.4 4.7 4.5 5.1 0.001 0.01\n",
            "column `n`: 1 < 2",
        ),
        (
            "1 10 -30.8 77.0 390.0 15.4 4.7 4.5 5.1 0.001 0.01\n",
            "is not a plausible round trip",
        ),
        (
            "1 10 nan 77.0 390.0 15.4 4.7 4.5 5.1 0.001 0.01\n",
            "is not a plausible round trip",
        ),
    ];
    for (text, expected) in cases {
        let err = parse_netgauge(text).unwrap_err().to_string();
        assert!(err.contains(expected), "{text:?}: {err}");
    }
    let only_nan = "1 10 30.8 77.0 390.0 15.4 4.7 4.5 -nan -nan -nan\n";
    assert!(matches!(
        parse_netgauge(only_nan).unwrap().reported_model(),
        Err(CalibrationError::MissingMeasurement { .. })
    ));
}

proptest! {
    /// Arbitrary text never panics the reader.
    #[test]
    fn random_text_never_panics(text in "[0-9a-z#. \\-\\n]{0,300}") {
        if let Ok(run) = parse_netgauge(&text) {
            let _ = run.reported_model();
            let _ = assess_loggp(&run.samples(), &AssessmentConfig::netgauge());
        }
    }
}
