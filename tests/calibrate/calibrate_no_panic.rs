//! The calibration entry points never panic, whatever they are given — samples with NaN,
//! infinities, zeros, huge or subnormal values, empty input, any look-ahead, random text as a
//! Netgauge file — and every model they return predicts finite, non-negative times.

use commcost::calibrate::{
    AssessmentConfig, DetectionConfig, PrttSample, assess_loggp, detect_changes,
    detect_changes_naive, detect_changes_netgauge, parse_netgauge,
};
use commcost::{CommModel, Message};
use proptest::prelude::*;

fn any_time() -> impl Strategy<Value = f64> {
    prop_oneof![
        1e-7f64..1e-2,
        Just(0.0),
        Just(-1e-6),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::MIN_POSITIVE / 4.0),
        Just(1e300),
    ]
}

fn sample() -> impl Strategy<Value = PrttSample> {
    (
        prop_oneof![Just(1u32), Just(10), Just(16), 0u32..40],
        prop_oneof![Just(0.0), any_time()],
        prop_oneof![0u64..300_000, Just(u64::MAX)],
        any_time(),
    )
        .prop_map(|(n, delay, size, time)| PrttSample {
            n,
            delay,
            size,
            time,
        })
}

/// Consistent samples (every size has its three PRTTs) from arbitrary per-size times.
fn consistent() -> impl Strategy<Value = Vec<PrttSample>> {
    prop::collection::vec(
        (1u64..300_000, 1e-7f64..1e-3, 1.0f64..50.0, 0.5f64..3.0),
        0..40,
    )
    .prop_map(|rows| {
        rows.into_iter()
            .flat_map(|(size, single, burst, delayed)| {
                [
                    PrttSample {
                        n: 1,
                        delay: 0.0,
                        size,
                        time: single,
                    },
                    PrttSample {
                        n: 10,
                        delay: 0.0,
                        size,
                        time: single * burst,
                    },
                    PrttSample {
                        n: 10,
                        delay: single,
                        size,
                        time: single * burst * delayed,
                    },
                ]
            })
            .collect()
    })
}

fn check_models(
    result: Result<commcost::calibrate::LogGPAssessment, commcost::calibrate::CalibrationError>,
) {
    let Ok(a) = result else { return };
    for bytes in [0u64, 1, 1000, 65536, 1 << 20, u64::MAX] {
        let m = Message::contiguous(bytes);
        for t in [
            a.model.p2p(&m),
            a.model.send_interval(&m),
            a.plogp.p2p(&m),
            a.plogp.send_interval(&m),
            a.plogp.send_overhead(&m),
        ] {
            assert!(t.is_finite() && t >= 0.0, "{bytes} B: {t}");
        }
    }
}

fn any_detection() -> impl Strategy<Value = DetectionConfig> {
    (
        prop_oneof![Just(0usize), 1usize..10, Just(usize::MAX)],
        prop_oneof![Just(f64::NAN), Just(-1.0), 0.5f64..4.0],
        prop_oneof![Just(0.0), 1.0f64..6.0],
        prop_oneof![Just(f64::INFINITY), 1e-9f64..1e-3],
    )
        .prop_map(
            |(lookahead, pfact, deviation, relative_floor)| DetectionConfig {
                lookahead,
                pfact,
                deviation,
                relative_floor,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn assessment_of_arbitrary_samples_never_panics(
        samples in prop::collection::vec(sample(), 0..60),
        netgauge in any::<bool>(),
        n in 0u32..20,
    ) {
        let config = AssessmentConfig {
            n,
            netgauge_compatible: netgauge,
            ..AssessmentConfig::default()
        };
        check_models(assess_loggp(&samples, &config));
    }

    #[test]
    fn assessment_of_consistent_samples_gives_finite_models(
        samples in consistent(),
        netgauge in any::<bool>(),
    ) {
        let config = if netgauge { AssessmentConfig::netgauge() } else { AssessmentConfig::default() };
        check_models(assess_loggp(&samples, &config));
    }

    #[test]
    fn detection_never_panics(
        values in prop::collection::vec(prop_oneof![any_time(), -1.0f64..1.0], 0..80),
        config in any_detection(),
    ) {
        let sizes: Vec<f64> = (0..values.len()).map(|k| 1.0 + 1024.0 * k as f64).collect();
        let results = [
            detect_changes(&sizes, &values, &config),
            detect_changes_naive(&sizes, &values, &config),
            detect_changes_netgauge(&sizes, &values),
        ];
        for segments in results.into_iter().flatten() {
            for s in segments {
                prop_assert!(s.start < s.end && s.end <= values.len());
            }
        }
    }

    #[test]
    fn netgauge_text_never_panics(text in "[0-9a-z#.e+ \\-\\n]{0,400}") {
        if let Ok(run) = parse_netgauge(&text) {
            if let Ok(model) = run.reported_model() {
                for bytes in [0u64, 1, 65536, u64::MAX] {
                    let t = model.p2p(&Message::contiguous(bytes));
                    prop_assert!(t.is_finite() && t >= 0.0);
                }
            }
            check_models(assess_loggp(&run.samples(), &AssessmentConfig::netgauge()));
        }
    }

    #[test]
    fn netgauge_rows_with_absurd_numbers_never_panic(
        fields in prop::collection::vec(
            prop_oneof![
                Just("-nan".to_string()),
                Just("1e308".to_string()),
                Just("1e-320".to_string()),
                Just("-5".to_string()),
                (1e-3f64..1e4).prop_map(|v| format!("{v}")),
            ],
            9,
        ),
        rows in 1usize..6,
    ) {
        let mut text = String::new();
        for k in 0..rows {
            text.push_str(&format!("{} 10 {}\n", 1 + 1024 * k, fields.join(" ")));
        }
        if let Ok(run) = parse_netgauge(&text) {
            if let Ok(model) = run.reported_model() {
                for bytes in [1u64, 65536, 1 << 30] {
                    let t = model.p2p(&Message::contiguous(bytes));
                    prop_assert!(t.is_finite() && t >= 0.0, "{text}: {t}");
                }
            }
            check_models(assess_loggp(&run.samples(), &AssessmentConfig::netgauge()));
        }
    }
}

#[test]
fn usize_max_lookahead_does_not_panic() {
    let config = DetectionConfig {
        lookahead: usize::MAX,
        ..DetectionConfig::default()
    };
    let sizes: Vec<f64> = (0..20).map(f64::from).collect();
    let values: Vec<f64> = sizes.iter().map(|s| 1.0 + s).collect();
    let segments = detect_changes(&sizes, &values, &config).unwrap();
    assert_eq!(segments.len(), 1);
}

#[test]
fn invalid_configs_name_their_field() {
    let sizes = [1.0, 2.0, 3.0];
    let values = [1.0, 2.0, 3.0];
    for (config, field) in [
        (
            DetectionConfig {
                lookahead: 0,
                ..DetectionConfig::default()
            },
            "lookahead",
        ),
        (
            DetectionConfig {
                pfact: f64::NAN,
                ..DetectionConfig::default()
            },
            "pfact",
        ),
        (
            DetectionConfig {
                pfact: -2.0,
                ..DetectionConfig::default()
            },
            "pfact",
        ),
        (
            DetectionConfig {
                deviation: 0.0,
                ..DetectionConfig::default()
            },
            "deviation",
        ),
    ] {
        let err = detect_changes(&sizes, &values, &config)
            .unwrap_err()
            .to_string();
        assert!(err.contains(field), "{err}");
    }
    let err = assess_loggp(
        &[],
        &AssessmentConfig {
            n: 1,
            ..AssessmentConfig::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("`n`"), "{err}");
}

#[test]
fn configs_read_from_files_are_validated_where_used() {
    let bad = r#"{"lookahead": 0, "pfact": 2.0, "deviation": 4.0, "relative_floor": 1e-6}"#;
    let bad: DetectionConfig = serde_json::from_str(bad).unwrap();
    let err = detect_changes(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0], &bad)
        .unwrap_err()
        .to_string();
    assert!(err.contains("lookahead"), "{err}");
    let unknown =
        r#"{"lookahead": 5, "pfact": 2.0, "deviation": 4.0, "relative_floor": 1e-6, "x": 1}"#;
    assert!(serde_json::from_str::<DetectionConfig>(unknown).is_err());
    let good = r#"{"lookahead": 5, "pfact": 2.0, "deviation": 4.0, "relative_floor": 1e-6}"#;
    assert_eq!(
        serde_json::from_str::<DetectionConfig>(good).unwrap(),
        DetectionConfig::default()
    );
    let assessment = format!(r#"{{"n": 1, "detection": {good}, "netgauge_compatible": false}}"#);
    let assessment: AssessmentConfig = serde_json::from_str(&assessment).unwrap();
    let err = assess_loggp(&[], &assessment).unwrap_err().to_string();
    assert!(err.contains("`n`"), "{err}");
    let unknown =
        format!(r#"{{"n": 16, "detection": {good}, "netgauge_compatible": false, "x": 1}}"#);
    assert!(serde_json::from_str::<AssessmentConfig>(&unknown).is_err());
}

#[test]
fn empty_netgauge_run_is_an_error() {
    let run = commcost::calibrate::NetgaugeRun { rows: vec![] };
    assert!(run.reported_model().is_err());
}
