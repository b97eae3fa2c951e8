//! Level-step detection on the OSU size grid (1 byte to 4 MiB, 23 sizes): synthetic steps of
//! 1.5x, 2x, 2.5x and 6x at every position, under uniform multiplicative noise of ±1 %, ±3 %
//! and ±5 %, and smooth convex curves without steps; and the LogGP fit on the same smooth
//! series: one range on a LogGP line, no range where a convex curve is still flat. The expected
//! answers are the ones the series were built with, not the detector's output.

use commcost::calibrate::{
    BenchmarkFitConfig, BenchmarkPoint, BenchmarkSeries, SeriesKind, StepConfig, detect_steps,
    fit_loggp_from_benchmarks,
};

/// The OSU point-to-point grid without its 0-byte row.
fn osu_grid() -> Vec<u64> {
    (0..23).map(|k| 1u64 << k).collect()
}

/// A small deterministic generator (64-bit LCG, Knuth's MMIX constants) for the noise.
struct Lcg(u64);

impl Lcg {
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A factor uniform in `[1 - a, 1 + a]`.
    fn factor(&mut self, a: f64) -> f64 {
        1.0 + a * (2.0 * self.unit() - 1.0)
    }
}

/// LogGP-shaped bases `a + b s` (seconds): a shared-memory-like, a TCP-like and a slow
/// network-like one.
const BASES: [(f64, f64); 3] = [(0.2e-6, 0.1e-9), (3.5e-6, 0.25e-9), (1e-6, 1e-9)];

#[test]
fn every_step_is_found_at_its_size_and_nothing_else() {
    let sizes = osu_grid();
    let config = StepConfig::default();
    let mut failures = Vec::new();
    let mut cases = 0;
    for (b, &(a, per_byte)) in BASES.iter().enumerate() {
        for factor in [1.5, 2.0, 2.5, 6.0] {
            for position in 1..sizes.len() {
                for noise in [0.01, 0.03, 0.05] {
                    for draw in 0..3u64 {
                        let mut rng = Lcg(draw * 7919 + position as u64 * 31 + b as u64);
                        let times: Vec<f64> = sizes
                            .iter()
                            .enumerate()
                            .map(|(i, &s)| {
                                let step = if i >= position { factor } else { 1.0 };
                                (a + per_byte * s as f64) * step * rng.factor(noise)
                            })
                            .collect();
                        cases += 1;
                        let steps = detect_steps(&sizes, &times, &config).unwrap();
                        let found: Vec<usize> = steps.iter().map(|s| s.index).collect();
                        if found != [position] {
                            failures.push(format!(
                                "base {b}, x{factor} at {} B, ±{:.0} %, draw {draw}: found {found:?}",
                                sizes[position],
                                noise * 100.0
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} cases wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Smooth convex curves: LogGP lines, and lines with an extra `c s^p` term (`p` 1.1 to 1.3,
/// reaching 0.5x to 2x the linear term at 4 MiB), the shape of a per-byte time that grows
/// gradually with the message. No step may be found.
#[test]
fn smooth_convex_curves_have_no_step() {
    let sizes = osu_grid();
    let top = *sizes.last().unwrap() as f64;
    let config = StepConfig::default();
    let mut failures = Vec::new();
    for (b, &(a, per_byte)) in BASES.iter().enumerate() {
        for p in [1.0, 1.1, 1.2, 1.3] {
            for share in [0.5, 1.0, 2.0] {
                // c s^p equals share · b s at the largest size
                let c = share * per_byte * top / top.powf(p);
                for noise in [0.0, 0.01, 0.03, 0.05] {
                    for draw in 0..5u64 {
                        let mut rng = Lcg(draw * 104_729 + b as u64);
                        let times: Vec<f64> = sizes
                            .iter()
                            .map(|&s| {
                                let s = s as f64;
                                let extra = if p > 1.0 { c * s.powf(p) } else { 0.0 };
                                (a + per_byte * s + extra) * rng.factor(noise)
                            })
                            .collect();
                        let steps = detect_steps(&sizes, &times, &config).unwrap();
                        if !steps.is_empty() {
                            failures.push(format!(
                                "base {b}, p {p}, share {share}, ±{:.0} %, draw {draw}: {steps:?}",
                                noise * 100.0
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A latency series of the OSU grid with `time(s)` seconds at `s` bytes.
fn series(mut time: impl FnMut(u64) -> f64) -> BenchmarkSeries {
    BenchmarkSeries {
        title: "synthetic".into(),
        kind: SeriesKind::Latency,
        processes: None,
        points: osu_grid()
            .into_iter()
            .map(|bytes| BenchmarkPoint {
                bytes,
                value: time(bytes),
                min: None,
                max: None,
                repetitions: None,
            })
            .collect(),
    }
}

/// The smooth families of `smooth_convex_curves_have_no_step` through the LogGP fit: no level
/// step; a LogGP line is one range at every noise level; and no range starts where the
/// noise-free curve is still within 5 % of its 1-byte time (a slope range there would fit
/// noise, not the curve).
#[test]
fn the_fit_adds_no_range_on_a_line_and_none_where_a_curve_is_flat() {
    let top = *osu_grid().last().unwrap() as f64;
    let config = BenchmarkFitConfig::default();
    let mut failures = Vec::new();
    let mut fits = 0;
    for (b, &(a, per_byte)) in BASES.iter().enumerate() {
        for p in [1.0, 1.1, 1.2, 1.3] {
            for share in [0.5, 1.0, 2.0] {
                let c = share * per_byte * top / top.powf(p);
                let clean = |s: f64| a + per_byte * s + if p > 1.0 { c * s.powf(p) } else { 0.0 };
                for noise in [0.0, 0.01, 0.03, 0.05] {
                    for draw in 0..5u64 {
                        let mut rng = Lcg(draw * 104_729 + b as u64);
                        let lat = series(|s| clean(s as f64) * rng.factor(noise));
                        let fit = fit_loggp_from_benchmarks(&lat, None, &config).unwrap();
                        fits += 1;
                        let starts: Vec<u64> = fit.ranges.iter().map(|r| r.start).collect();
                        let case = format!(
                            "base {b}, p {p}, share {share}, ±{:.0} %, draw {draw}: ranges from \
                             {starts:?}, steps {:?}",
                            noise * 100.0,
                            fit.steps
                        );
                        // a line is one range
                        if !fit.steps.is_empty() || (p <= 1.0 && fit.ranges.len() > 1) {
                            failures.push(case);
                            continue;
                        }
                        let flat = fit
                            .ranges
                            .iter()
                            .skip(1)
                            .any(|r| clean(r.measured_sizes.0 as f64) < 1.05 * clean(1.0));
                        if flat {
                            failures.push(case);
                        }
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {fits} fits:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn invalid_input_is_an_error_naming_it() {
    let config = StepConfig::default();
    let err = detect_steps(&[1, 2], &[1e-6], &config).unwrap_err();
    assert!(err.to_string().contains("sizes and times"), "{err}");
    let err = detect_steps(&[2, 2, 4], &[1e-6; 3], &config).unwrap_err();
    assert!(err.to_string().contains("size"), "{err}");
    let err = detect_steps(&[1, 2, 4], &[1e-6, 0.0, 1e-6], &config).unwrap_err();
    assert!(err.to_string().contains("time"), "{err}");
    let bad = StepConfig {
        min_ratio: 1.0,
        ..config
    };
    let err = detect_steps(&[1, 2, 4], &[1e-6; 3], &bad).unwrap_err();
    assert!(err.to_string().contains("min_ratio"), "{err}");
    // too short to see anything: no step, no error
    assert!(
        detect_steps(&[1, 2], &[1e-6, 9e-6], &config)
            .unwrap()
            .is_empty()
    );
}
