//! LogGP assessment from PRTT data (Hoefler, Lichei & Rehm, IPDPS 2007): synthetic data from the Table 2 presets, with
//! and without noise; protocol detection; the measurement plan; malformed input.

use crate::common;

use commcost::calibrate::CalibrationError;
use commcost::calibrate::{
    AssessmentConfig, DetectionConfig, PrttSample, assess_loggp, detect_changes,
    detect_changes_naive,
};
use commcost::probe::{Prober, PrttPlan, measure_prtt};
use commcost::{LogGP, Protocols, presets};
use common::{SplitMix64, assert_rel};
use proptest::prelude::*;

/// The paper's grid: 1, 512, 1024, ..., 65536 bytes.
fn grid() -> Vec<u64> {
    std::iter::once(1)
        .chain((1..=128).map(|k| 512 * k))
        .collect()
}

/// PRTT(n, d, s) of eq. (1) and (5) for a LogGP model: 2 (L + 2o + (s-1) G) + (n-1) max(o + d,
/// G_all(s)).
fn prtt(m: &LogGP, n: u32, d: f64, s: u64) -> f64 {
    let single = 2.0 * (m.latency() + 2.0 * m.overhead() + (s - 1) as f64 * m.gap_per_byte());
    let g_all = m.cumulative_gap(s);
    single + f64::from(n - 1) * (m.overhead() + d).max(g_all)
}

/// Samples for every size of `grid` from `model`, each time multiplied by an independent
/// uniform factor in [1 - noise, 1 + noise]; the delay is the (noisy) measured PRTT(1, 0, s),
/// as the method prescribes.
fn synthetic(model: &Protocols<LogGP>, noise: f64, seed: u64, n: u32) -> Vec<PrttSample> {
    let mut rng = SplitMix64(seed);
    let mut out = Vec::new();
    for s in grid() {
        let m = model.model_for(s);
        let mut noisy = |t: f64| t * rng.range(1.0 - noise, 1.0 + noise);
        let single = noisy(prtt(m, 1, 0.0, s));
        let burst = noisy(prtt(m, n, 0.0, s));
        let delayed = noisy(prtt(m, n, single, s));
        out.push(PrttSample {
            n: 1,
            delay: 0.0,
            size: s,
            time: single,
        });
        out.push(PrttSample {
            n,
            delay: 0.0,
            size: s,
            time: burst,
        });
        out.push(PrttSample {
            n,
            delay: single,
            size: s,
            time: delayed,
        });
    }
    out
}

/// `L` is compared relative to the end-to-end time `2o + L` it is part of: the Open MPI/openib
/// preset's `L` is 0 (its measured overhead overlaps the wire time, Table 2 of Hoefler, Lichei,
/// Rehm 2007: `2 · 4.72 > 5.96` µs), so noise moves it by a share of the end-to-end time.
fn assert_recovers(truth: &LogGP, got: &LogGP, gaps: f64, latency_overhead: f64) {
    assert_rel(got.gap(), truth.gap(), gaps);
    assert_rel(got.gap_per_byte(), truth.gap_per_byte(), gaps);
    let end_to_end = truth.latency() + 2.0 * truth.overhead();
    assert!(
        (got.latency() - truth.latency()).abs() <= latency_overhead * end_to_end,
        "L {} vs {}",
        got.latency(),
        truth.latency()
    );
    assert_rel(got.overhead(), truth.overhead(), latency_overhead);
}

#[test]
fn exact_data_is_recovered_exactly() {
    let truth = presets::open_mpi_openib();
    let a = assess_loggp(&synthetic(&truth, 0.0, 1, 16), &AssessmentConfig::default()).unwrap();
    assert_eq!(a.ranges.len(), 2);
    let switch: Vec<u64> = a.model.switch_points().collect();
    assert_eq!(switch, vec![12800]); // first measured size of the second protocol
    for (range, size) in [(0, 1), (1, 65536)] {
        assert_recovers(
            truth.model_for(size),
            a.model.ranges()[range].model(),
            1e-9,
            1e-9,
        );
    }
    // the model reproduces the measured half round trip: p2p(1) = PRTT(1, 0, 1) / 2, Table 2's
    // L = 5.96 µs (Hoefler, Lichei, Rehm 2007)
    assert_rel(a.end_to_end_latency, 5.96e-6, 1e-9);
    let one = commcost::Message::contiguous(1);
    assert_rel(commcost::CommModel::p2p(&a.model, &one), 5.96e-6, 1e-9);
}

#[test]
fn noisy_openib_is_recovered_within_the_tolerances() {
    // ±1 % uniform multiplicative noise on every PRTT, seed 2007 (the paper's year)
    let truth = presets::open_mpi_openib();
    let a = assess_loggp(
        &synthetic(&truth, 0.01, 2007, 16),
        &AssessmentConfig::default(),
    )
    .unwrap();
    assert_eq!(a.ranges.len(), 2, "{:#?}", a.ranges);
    let switch = a.model.switch_points().next().unwrap();
    assert!(switch > 12288 && switch <= 12800, "switch at {switch}");
    for (range, size) in [(0, 1), (1, 65536)] {
        assert_recovers(
            truth.model_for(size),
            a.model.ranges()[range].model(),
            0.03,
            0.02,
        );
    }
}

#[test]
fn noise_never_creates_a_protocol_change_on_a_single_protocol() {
    // MPICH2/TCP has one protocol; 100 seeds of ±1 % noise must all give one range
    let truth = presets::mpich2_tcp();
    for seed in 0..100 {
        let a = assess_loggp(
            &synthetic(&truth, 0.01, seed, 16),
            &AssessmentConfig::default(),
        )
        .unwrap();
        assert_eq!(a.ranges.len(), 1, "seed {seed}: {:#?}", a.ranges);
    }
}

#[test]
fn netgauge_compatible_assessment_follows_its_conventions() {
    // exact data, n = 10: Netgauge fits g + G s (its g is the paper's g - G) and reports
    // L = PRTT(1, 0, 1) / 2, the end-to-end time, which the model splits into 2o + L so that
    // p2p(1) is that time. One protocol with g > o, so that eq. (7) holds at every size
    // (MPICH2/TCP has o > g: its 1-byte burst measures o, not G_all).
    let m = LogGP::new(5e-6, 2e-6, 3e-6, 1e-9).unwrap();
    let truth = Protocols::single(m.clone());
    let a = assess_loggp(
        &synthetic(&truth, 0.0, 1, 10),
        &AssessmentConfig::netgauge(),
    )
    .unwrap();
    assert_eq!(a.ranges.len(), 1);
    let got = a.model.ranges()[0].model();
    assert_rel(got.gap(), m.gap() - m.gap_per_byte(), 1e-9);
    assert_rel(got.gap_per_byte(), m.gap_per_byte(), 1e-9);
    assert_rel(a.end_to_end_latency, m.latency() + 2.0 * m.overhead(), 1e-9);
    assert_rel(got.latency(), m.latency(), 1e-9);
    let one = commcost::Message::contiguous(1);
    assert_rel(
        commcost::CommModel::p2p(&a.model, &one),
        a.end_to_end_latency,
        1e-9,
    );
}

#[test]
fn malformed_samples_are_typed_errors() {
    let ok = PrttSample {
        n: 1,
        delay: 0.0,
        size: 1,
        time: 1e-5,
    };
    let config = AssessmentConfig::default();
    assert!(matches!(
        assess_loggp(
            &[PrttSample {
                time: f64::NAN,
                ..ok
            }],
            &config
        ),
        Err(CalibrationError::InvalidValue { .. })
    ));
    assert!(matches!(
        assess_loggp(&[PrttSample { time: -1.0, ..ok }], &config),
        Err(CalibrationError::InvalidValue { .. })
    ));
    assert!(matches!(
        assess_loggp(&[ok], &config),
        Err(CalibrationError::MissingMeasurement { size: 1, .. })
    ));
    assert!(matches!(
        assess_loggp(&[], &config),
        Err(CalibrationError::TooFew { .. })
    ));
    let bad_n = AssessmentConfig { n: 1, ..config };
    assert!(matches!(
        assess_loggp(&[ok], &bad_n),
        Err(CalibrationError::Parameters(_))
    ));
}

/// A prober that answers from a LogGP model but whose machine slows down 2.5x for 40 calls in
/// the middle of the run (a level shift seen on real loopback runs).
struct DriftingProber {
    model: Protocols<LogGP>,
    calls: usize,
}

impl Prober for DriftingProber {
    fn prtt(&mut self, n: u32, delay: f64, size: u64) -> Result<f64, commcost::probe::ProbeError> {
        self.calls += 1;
        // the pilot pass takes 258 calls; this shift hits the first measurement pass
        let slow = if (600..640).contains(&self.calls) {
            2.5
        } else {
            1.0
        };
        Ok(slow * prtt(self.model.model_for(size), n, delay, size))
    }
}

#[test]
fn shuffled_passes_hide_a_level_shift_that_sorted_order_shows() {
    let truth = presets::mpich2_tcp();
    let plan = PrttPlan {
        sizes: grid(),
        n: 16,
        passes: 5,
        seed: 42,
    };
    let mut prober = DriftingProber {
        model: truth.clone(),
        calls: 0,
    };
    let measured = measure_prtt(&mut prober, &plan).unwrap();
    let a = assess_loggp(&measured.samples, &AssessmentConfig::default()).unwrap();
    assert_eq!(a.ranges.len(), 1, "{:#?}", a.ranges);
    assert_recovers(truth.model_for(1), a.model.ranges()[0].model(), 1e-9, 1e-9);
    assert!(
        measured.spread.iter().any(|s| s.burst > 1.0),
        "the shift shows in the spread"
    );

    // the same shift hitting consecutive sizes of one sorted pass looks like a protocol
    let mut prober = DriftingProber {
        model: truth,
        calls: 0,
    };
    let mut samples = Vec::new();
    for s in grid() {
        let single = prober.prtt(1, 0.0, s).unwrap();
        samples.push(PrttSample {
            n: 1,
            delay: 0.0,
            size: s,
            time: single,
        });
        samples.push(PrttSample {
            n: 16,
            delay: 0.0,
            size: s,
            time: prober.prtt(16, 0.0, s).unwrap(),
        });
        samples.push(PrttSample {
            n: 16,
            delay: single,
            size: s,
            time: prober.prtt(16, single, s).unwrap(),
        });
    }
    let sorted = assess_loggp(&samples, &AssessmentConfig::default()).unwrap();
    let faithful = sorted.ranges.len() == 1 && sorted.sizes.iter().all(|d| !d.outlier);
    assert!(
        !faithful,
        "a level shift in sorted order must distort the result"
    );
}

// ----- detection ---------------------------------------------------------------------------

fn line(sizes: &[f64], a: f64, b: f64) -> Vec<f64> {
    sizes.iter().map(|s| a + b * s).collect()
}

#[test]
fn a_clean_line_has_no_change() {
    let sizes: Vec<f64> = (0..200).map(|k| f64::from(k) * 512.0 + 1.0).collect();
    let values = line(&sizes, 5e-6, 1e-9);
    let segments = detect_changes(&sizes, &values, &DetectionConfig::default()).unwrap();
    assert_eq!(segments.len(), 1);
    assert!(segments[0].outliers.is_empty());
}

#[test]
fn a_fourfold_jump_below_one_microsecond_is_found() {
    // a shared-memory eager limit: G_all goes from 0.2 µs to 0.8 µs (Netgauge's 0.15 µs floor
    // on the residuals hides this)
    let sizes: Vec<f64> = (0..120).map(|k| f64::from(k) * 64.0 + 1.0).collect();
    let mut rng = SplitMix64(7);
    let values: Vec<f64> = sizes
        .iter()
        .map(|&s| {
            let v = if s < 4000.0 {
                0.2e-6 + 1e-11 * s
            } else {
                0.8e-6 + 4e-11 * s
            };
            v * rng.range(0.995, 1.005)
        })
        .collect();
    let segments = detect_changes(&sizes, &values, &DetectionConfig::default()).unwrap();
    assert_eq!(segments.len(), 2, "{segments:#?}");
    assert_eq!(segments[1].start, 63); // size 4033: the first >= 4000 on the 64-byte grid
}

#[test]
fn one_outlier_in_a_noisy_line_adds_no_change() {
    let sizes: Vec<f64> = (0..150).map(|k| f64::from(k) * 512.0 + 1.0).collect();
    let mut rng = SplitMix64(11);
    for position in [2usize, 40, 77, 146] {
        let mut values: Vec<f64> = line(&sizes, 5e-6, 2e-9)
            .iter()
            .map(|v| v * rng.range(0.99, 1.01))
            .collect();
        values[position] /= 100.0;
        let segments = detect_changes(&sizes, &values, &DetectionConfig::default()).unwrap();
        assert_eq!(segments.len(), 1, "outlier at {position}: {segments:#?}");
        assert_eq!(segments[0].outliers, vec![position]);
    }
}

#[test]
fn a_short_level_shift_adds_no_change() {
    let sizes: Vec<f64> = (0..150).map(|k| f64::from(k) * 512.0 + 1.0).collect();
    let mut values = line(&sizes, 5e-6, 2e-9);
    for v in &mut values[60..63] {
        *v *= 2.5;
    }
    let segments = detect_changes(&sizes, &values, &DetectionConfig::default()).unwrap();
    assert_eq!(segments.len(), 1, "{segments:#?}");
}

#[test]
fn detection_rejects_bad_series() {
    let c = DetectionConfig::default();
    assert!(detect_changes(&[1.0, 2.0], &[1.0], &c).is_err());
    assert!(detect_changes(&[2.0, 1.0], &[1.0, 1.0], &c).is_err());
    assert!(detect_changes(&[1.0, 2.0], &[1.0, f64::NAN], &c).is_err());
    assert_eq!(detect_changes(&[], &[], &c).unwrap(), vec![]);
}

/// Piecewise-linear series with 1-4 pieces, a jump between pieces and ±1 % noise.
fn piecewise() -> impl Strategy<Value = (Vec<f64>, Vec<f64>)> {
    (
        prop::collection::vec((1e-6..1e-4f64, 0.0..1e-8f64, 8usize..40), 1..5),
        any::<u64>(),
    )
        .prop_map(|(pieces, seed)| {
            let mut rng = SplitMix64(seed);
            let (mut sizes, mut values) = (Vec::new(), Vec::new());
            let mut s = 1.0;
            for (a, b, len) in pieces {
                for _ in 0..len {
                    sizes.push(s);
                    values.push((a + b * s) * rng.range(0.99, 1.01));
                    s += 512.0;
                }
            }
            (sizes, values)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The running-sum detector decides exactly as the one that refits every window.
    #[test]
    fn fast_detection_equals_naive((sizes, values) in piecewise()) {
        let c = DetectionConfig::default();
        prop_assert_eq!(
            detect_changes(&sizes, &values, &c).unwrap(),
            detect_changes_naive(&sizes, &values, &c).unwrap()
        );
    }

    /// Random input never panics: typed errors or a result.
    #[test]
    fn random_samples_never_panic(
        raw in prop::collection::vec((0u32..20, -1e-3..1e-2f64, 0u64..100_000, -1e-3..1e-1f64), 0..60),
        n in 0u32..20,
        netgauge in any::<bool>(),
    ) {
        let samples: Vec<PrttSample> = raw
            .into_iter()
            .map(|(n, delay, size, time)| PrttSample { n, delay: delay.max(0.0), size, time })
            .collect();
        let config = AssessmentConfig { n, netgauge_compatible: netgauge, ..AssessmentConfig::default() };
        let _ = assess_loggp(&samples, &config);
    }

    /// A 4x jump of the cumulative gap (a shared-memory eager limit) is always found, at the
    /// right point, whatever its position, the absolute scale or the ±1 % noise.
    #[test]
    fn a_fourfold_jump_is_always_found(
        before in 8usize..60,
        after in 8usize..60,
        scale in prop::sample::select(vec![1e-9, 1e-7, 1e-5, 1e-3]),
        slope in 0.0..1e-3f64,
        seed in any::<u64>(),
    ) {
        let mut rng = SplitMix64(seed);
        let n = before + after;
        let sizes: Vec<f64> = (0..n).map(|k| 1.0 + 512.0 * k as f64).collect();
        let values: Vec<f64> = sizes
            .iter()
            .enumerate()
            .map(|(k, &s)| {
                let v = scale * (1.0 + slope * s / 512.0);
                let v = if k < before { v } else { 4.0 * v };
                v * rng.range(0.99, 1.01)
            })
            .collect();
        let segments = detect_changes(&sizes, &values, &DetectionConfig::default()).unwrap();
        prop_assert_eq!(segments.len(), 2, "{:?}", segments);
        prop_assert_eq!(segments[1].start, before);
    }

    /// A 5x level change in noisy data (±20 % uniform, the spread of sub-microsecond MPI
    /// gaps over shared memory) is found at the right point, upwards as well as downwards.
    /// Regression: residuals relative to each point's own level can never exceed 100 % on
    /// the higher plateau, so with this noise the detector used to miss every jump up (Open
    /// MPI's 256 B → 288 B switch, docs/ACCURACY.md).
    #[test]
    fn a_fivefold_jump_in_noisy_data_is_found(
        before in 20usize..60,
        after in 20usize..60,
        up in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut rng = SplitMix64(seed);
        let sizes: Vec<f64> = (0..before + after).map(|k| 1.0 + 32.0 * k as f64).collect();
        let (low, high) = if up { (1e-7, 5e-7) } else { (5e-7, 1e-7) };
        let values: Vec<f64> = (0..before + after)
            .map(|k| if k < before { low } else { high } * rng.range(0.8, 1.2))
            .collect();
        let segments = detect_changes(&sizes, &values, &DetectionConfig::default()).unwrap();
        prop_assert_eq!(segments.len(), 2, "{:?}", segments);
        prop_assert_eq!(segments[1].start, before);
    }

    #[test]
    fn random_series_never_panic(values in prop::collection::vec(-1e-3..1e-3f64, 0..80)) {
        let sizes: Vec<f64> = (0..values.len()).map(|k| k as f64).collect();
        let _ = detect_changes(&sizes, &values, &DetectionConfig::default());
        let _ = commcost::calibrate::detect_changes_netgauge(&sizes, &values);
    }
}

/// The same recovery over 100 seeds. `g`, `G` and the switch are recovered every time. `o` is
/// observable only through PRTT(n, d, s) ≈ 16 PRTT(1, 0, s), so ±1 % noise there is ±4.6 % of `o`
/// at each size, and `L = PRTT(1, 0, s)/2 - 2o` doubles that error: over 300 seeds `o` was within
/// 2 % in 97-99 % of the range fits and `L` in 94-97 % (docs/ACCURACY.md, `assessment_accuracy
/// 300`). The floors below guard those rates with some margin.
#[test]
fn noisy_recovery_over_many_seeds() {
    let truth = presets::open_mpi_openib();
    let (mut overhead_ok, mut latency_ok) = (0, 0);
    let seeds = 100;
    for seed in 0..seeds {
        let a = assess_loggp(
            &synthetic(&truth, 0.01, 10_000 + seed, 16),
            &AssessmentConfig::default(),
        )
        .unwrap();
        assert_eq!(a.ranges.len(), 2, "seed {seed}");
        let switch = a.model.switch_points().next().unwrap();
        assert!(
            switch > 12288 && switch <= 12800,
            "seed {seed}: switch at {switch}"
        );
        let rel = |x: f64, y: f64| ((x - y) / y).abs();
        for (range, size) in [(0, 1), (1, 65536)] {
            let (t, g) = (truth.model_for(size), a.model.ranges()[range].model());
            assert!(rel(g.gap(), t.gap()) <= 0.03, "seed {seed}: g");
            assert!(
                rel(g.gap_per_byte(), t.gap_per_byte()) <= 0.03,
                "seed {seed}: G"
            );
            overhead_ok += usize::from(rel(g.overhead(), t.overhead()) <= 0.02);
        }
        // L relative to the end-to-end time it is part of (the preset's L is 0: see
        // assert_recovers)
        let (l, t) = (a.model.ranges()[0].model(), truth.model_for(1));
        let end_to_end = t.latency() + 2.0 * t.overhead();
        latency_ok += usize::from((l.latency() - t.latency()).abs() <= 0.02 * end_to_end);
    }
    assert!(
        overhead_ok >= 180,
        "o within 2 % in {overhead_ok} of 200 range fits"
    );
    assert!(
        latency_ok >= 65,
        "L within 2 % in {latency_ok} of 100 seeds"
    );
}
