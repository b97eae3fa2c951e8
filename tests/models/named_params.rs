//! Named-parameter and unit-safe constructors, and the wrong-unit check of loaded models.

use approx::assert_relative_eq;
use commcost::models::log3p::Log3PPoint;
use commcost::models::loggp::LogGPParams;
use commcost::models::logp::LogPParams;
use commcost::models::mlines::MlinesParams;
use commcost::{Log3P, LogGP, LogP, MlinesModel, ModelSpec, presets};

/// Table 2 of Hoefler, Lichei & Rehm (IPDPS 2007), in µs, through the crate's split of the
/// measured end-to-end latency (`L = L_e2e - 2o`, and where `2o > L_e2e`, `L = 0`,
/// `o = L_e2e / 2`): Open MPI/openib has `L_e2e = 5.96`, `o(1) = 4.72`, so `2o = 9.44 > 5.96`
/// and the model holds `L = 0`, `o = 2.98` — the same model as the embedded preset.
#[test]
fn from_micros_matches_the_published_table() {
    let openib_eager = LogGP::from_micros(LogGPParams {
        latency: 0.0,
        overhead: 2.98,
        gap: 5.14,
        gap_per_byte: 0.00073,
        processors: Some(2),
    })
    .unwrap();
    assert_eq!(
        &openib_eager,
        presets::open_mpi_openib().ranges()[0].model()
    );
    // the round trip through the named form
    assert_eq!(
        LogGP::try_from(openib_eager.params()).unwrap(),
        openib_eager
    );
}

#[test]
fn named_constructors_validate_like_new() {
    let bad = LogGPParams {
        latency: -1.0,
        overhead: 0.0,
        gap: 0.0,
        gap_per_byte: 0.0,
        processors: None,
    };
    assert_eq!(LogGP::from_params(bad), LogGP::new(-1.0, 0.0, 0.0, 0.0));
    assert!(LogGP::from_params(bad).is_err());
    let p = LogPParams {
        latency: 5.0,
        overhead: 1.0,
        gap: 2.0,
        processors: Some(0),
        word_bytes: 8,
    };
    assert!(LogP::from_micros(p).is_err()); // P = 0
    let m = MlinesParams {
        per_message: 1e-6,
        per_byte: 0.0,
        per_line: 3e-9,
        line_bytes: 0,
    };
    assert!(MlinesModel::from_params(m).is_err()); // 0-byte lines
    // the Titan point in µs equals the preset (Cameron, Ge & Sun 2007, §4.1)
    let titan = Log3P::from_point_micros(Log3PPoint {
        middleware_overhead: 29.0,
        middleware_latency: 420.0,
        network_overhead: 131.0,
        size: 16 * 1024,
        stride: 1024,
        unit_stride: 8,
    })
    .unwrap();
    assert_eq!(titan, presets::titan_log3p());
}

#[test]
fn unit_warnings_flag_microseconds_written_as_seconds() {
    for (name, preset) in presets::table2_transports() {
        assert!(ModelSpec::from(preset).unit_warnings().is_empty(), "{name}");
    }
    assert!(
        ModelSpec::from(presets::titan_log3p())
            .unit_warnings()
            .is_empty()
    );
    // MPICH2/TCP typed in µs, read as seconds: 52.66 s for one byte, 8.49 ms per byte
    let typo = LogGP::new(45.74, 3.46, 0.915, 0.00849).unwrap();
    let warnings = ModelSpec::from(typo).unit_warnings();
    assert_eq!(warnings.len(), 2);
    assert_relative_eq!(warnings[0].value, 52.66, max_relative = 1e-12);
    assert_relative_eq!(warnings[1].value, 0.00849, max_relative = 1e-9);
    // only the latency wrong (seconds for L, µs/byte correctly converted for G)
    let half = LogGP::new(45.74, 3.46e-6, 0.915e-6, 0.00849e-6).unwrap();
    assert_eq!(ModelSpec::from(half).unit_warnings().len(), 1);
}
