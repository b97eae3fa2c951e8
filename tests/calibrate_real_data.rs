//! The calibration on real measurements: PRTT samples measured over Open MPI 4.1.4 on this
//! project's machine, over shared memory (vader) and TCP loopback, on Netgauge's size grid
//! (`tests/fixtures/mpi/README.md` says how). The oracle is the measurement itself: the
//! measured `PRTT(1, 0, s) / 2` (Hoefler, Lichei, Rehm 2007, §3.4: the paper's `L` is
//! `PRTT(1, 0, 1) / 2`).

use commcost::calibrate::{AssessmentConfig, LogGPAssessment, PrttSample, assess_loggp};
use commcost::{CommModel, Message};

fn load(name: &str) -> Vec<PrttSample> {
    let path = format!(
        "{}/tests/fixtures/mpi/{name}.prtt",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("fixture");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            PrttSample {
                size: f[0].parse().unwrap(),
                n: f[1].parse().unwrap(),
                delay: f[2].parse::<f64>().unwrap() * 1e-6,
                time: f[3].parse::<f64>().unwrap() * 1e-6,
            }
        })
        .collect()
}

const FIXTURES: [&str; 3] = ["vader-shuffled", "vader-in-order", "tcp-in-order"];

fn single(samples: &[PrttSample], size: u64) -> f64 {
    samples
        .iter()
        .find(|s| s.size == size && s.n == 1)
        .expect("PRTT(1, 0, s)")
        .time
}

fn assessments() -> Vec<(String, Vec<PrttSample>, LogGPAssessment)> {
    let mut out = Vec::new();
    for name in FIXTURES {
        let samples = load(name);
        // the default config says n = 16; the samples carry Netgauge's n = 10, which counts
        for (mode, config) in [
            ("default", AssessmentConfig::default()),
            ("netgauge", AssessmentConfig::netgauge()),
        ] {
            let a =
                assess_loggp(&samples, &config).unwrap_or_else(|e| panic!("{name} {mode}: {e}"));
            println!("{name} ({mode}):\n{a}");
            out.push((format!("{name} {mode}"), samples.clone(), a));
        }
    }
    out
}

#[test]
fn one_byte_time_is_the_measured_half_round_trip() {
    for (name, samples, a) in assessments() {
        let measured = single(&samples, 1) / 2.0;
        let one = Message::contiguous(1);
        for (model, t) in [("LogGP", a.model.p2p(&one)), ("pLogP", a.plogp.p2p(&one))] {
            assert!(
                ((t - measured) / measured).abs() < 1e-9,
                "{name} {model}: p2p(1 B) = {t:e}, measured {measured:e}"
            );
        }
    }
}

#[test]
fn every_parameter_is_finite_and_every_adjustment_reported() {
    for (name, _, a) in assessments() {
        for r in a.model.ranges() {
            let m = r.model();
            for v in [m.latency(), m.overhead(), m.gap(), m.gap_per_byte()] {
                assert!(v.is_finite() && v >= 0.0, "{name}: {m:?}");
            }
        }
        for (k, r) in a.ranges.iter().enumerate() {
            for name_clamped in &r.clamped {
                assert!(
                    a.adjustments
                        .iter()
                        .any(|adj| adj.range == Some(k) && adj.parameter == *name_clamped),
                    "{name}: range {k} {name_clamped} adjusted without a report"
                );
            }
        }
        for adj in &a.adjustments {
            assert!(adj.used.is_finite() && adj.used >= 0.0, "{name}: {adj:?}");
        }
    }
}

#[test]
fn plogp_follows_the_one_message_time_as_well_as_a_direct_fit() {
    for (name, _, a) in assessments() {
        let w = a.one_way;
        println!("{name}: {w:?}");
        assert!(
            w.plogp_median <= 1.2 * w.baseline_median,
            "{name}: pLogP median {} vs direct two-piece fit {}",
            w.plogp_median,
            w.baseline_median
        );
    }
}
