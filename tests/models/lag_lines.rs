//! The lag promises of pLogP, LogGPO, log_n P and log_3 P (`CommModel::sender_keeps_pace`,
//! `CommModel::send_lag_affine`) against their definition, `I(b) - T(b)` evaluated from the
//! model's own `send_interval` and `p2p`:
//!
//! * a lag line around `b` must equal `I - T` wherever that is positive and be `<= 0` wherever
//!   it is not, everywhere on its range — checked at the range's ends, at `b`, inside, and at
//!   every table breakpoint, root of the gap table, power of two (±1), 0 and `u64::MAX`;
//! * a promise to keep pace must hold at all those sizes (and on strided messages), and on the
//!   parameter sets worked out by hand to lag, the promise must be absent and a lagging size
//!   found;
//! * the promises change no collective's cost: every algorithm of every collective on each
//!   model against the same model behind a wrapper that hides them (the library then compares
//!   `I` and `T` round by round), to a relative 1e-12.

use crate::common;

use commcost::PiecewiseCost;
use commcost::collectives::{Algorithm, Allgather, Allreduce, Operator, Problem};
use commcost::models::loggpo::Mechanism;
use commcost::models::loggpo::Progress;
use commcost::models::lognp::Hop;
use commcost::models::lognp::SizeCost;
use commcost::table::Table1D;
use commcost::table::Table2D;
use commcost::{AffineCost, CommModel, Log3P, LogGP, LogGpo, LogNP, LogP, Message, PLogP, presets};

const US: f64 = 1e-6;
/// 2^-30 seconds: values in multiples of it are exact in binary.
const U: f64 = 1.0 / (1u64 << 30) as f64;

/// A model with what a hand analysis of its definition says about its sender.
struct Case {
    name: String,
    model: Box<dyn CommModel>,
    /// `I <= T` on every size, worked out by hand from the parameters.
    keeps_pace: bool,
    /// Sizes (bytes) where the formulas change: table points, roots, protocol switches.
    breakpoints: Vec<f64>,
}

fn table(sizes: &[f64], values: &[f64]) -> Table1D {
    Table1D::new(sizes.to_vec(), values.to_vec()).unwrap()
}

fn plogp(latency: f64, send: Table1D, gap: Table1D) -> Box<dyn CommModel> {
    Box::new(PLogP::new(latency, send, Table1D::constant(US).unwrap(), gap, 2).unwrap())
}

/// pLogP: `I - T = max(0, o_s⁺ - g⁺) - L` (`x⁺ = max(0, x)`), worked out per set.
fn plogp_cases() -> Vec<Case> {
    vec![
        // o_s <= g everywhere (Kielmann et al.'s measurements): I = g, T = L + g
        Case {
            name: "plogp, overhead below gap".into(),
            model: plogp(
                5.0 * US,
                table(&[0.0, 65536.0], &[US, 33.768 * US]),
                table(
                    &[0.0, 65536.0, 1048576.0],
                    &[2.0 * US, 67.536 * US, 559.056 * US],
                ),
            ),
            keeps_pace: true,
            breakpoints: vec![65536.0, 1048576.0],
        },
        // o_s - g - L = 3 µs + 1 ns/B > 0 on every size
        Case {
            name: "plogp, slow sender everywhere".into(),
            model: plogp(
                5.0 * US,
                Table1D::linear(10.0 * US, 2e-9).unwrap(),
                Table1D::linear(2.0 * US, 1e-9).unwrap(),
            ),
            keeps_pace: false,
            breakpoints: vec![],
        },
        // o_s = 10 µs flat against L + g = 3 µs + 1 ns/B: lags below 7000 bytes only
        Case {
            name: "plogp, slow sender for small messages".into(),
            model: plogp(
                US,
                Table1D::constant(10.0 * US).unwrap(),
                Table1D::linear(2.0 * US, 1e-9).unwrap(),
            ),
            keeps_pace: false,
            breakpoints: vec![7000.0],
        },
        // equal at one point only: o_s - g - L = -|b - 4096| u, never positive
        // (in units u = 2^-30 s, about 0.93 ns, so that every value and slope is exact)
        Case {
            name: "plogp, sender just keeps pace at one size".into(),
            model: plogp(
                1024.0 * U,
                table(
                    &[0.0, 4096.0, 8192.0],
                    &[4096.0 * U, 8192.0 * U, 8192.0 * U],
                ),
                table(
                    &[0.0, 4096.0, 8192.0],
                    &[7168.0 * U, 7168.0 * U, 11264.0 * U],
                ),
            ),
            keeps_pace: true,
            breakpoints: vec![4096.0, 8192.0],
        },
        // the gap table falls to 0 at 2500 bytes and below it after: clamped to 0 there, so
        // I - T = o_s - L = 0.5 µs > 0 beyond 2500 bytes, though o_s - g - L < 0 before
        Case {
            name: "plogp, gap extrapolated below 0, lags".into(),
            model: plogp(
                0.5 * US,
                Table1D::constant(US).unwrap(),
                table(&[0.0, 1000.0, 2000.0], &[5.0 * US, 3.0 * US, US]),
            ),
            keeps_pace: false,
            breakpoints: vec![1000.0, 2000.0, 2250.0, 2500.0],
        },
        // the same gap, but o_s <= L: the clamp never lets the sender lag (a check of
        // o_s - g <= L alone would refuse the promise beyond 2500 bytes)
        Case {
            name: "plogp, gap extrapolated below 0, keeps pace".into(),
            model: plogp(
                2.0 * US,
                Table1D::constant(1.5 * US).unwrap(),
                table(&[0.0, 1000.0, 2000.0], &[5.0 * US, 3.0 * US, US]),
            ),
            keeps_pace: true,
            breakpoints: vec![1000.0, 2000.0, 2500.0],
        },
        // rising gap that is negative below 100.5 bytes (first segment extrapolated down),
        // o_s with a non-integer breakpoint and a falling end; L = 0: where g is clamped to 0
        // the sender lags by o_s; beyond, o_s - g < 0
        Case {
            name: "plogp, gap extrapolated below 0 near 0, non-integer points".into(),
            model: plogp(
                0.0,
                table(&[0.0, 300.25, 5000.0], &[2.0 * US, 3.0 * US, 0.5 * US]),
                table(&[201.0, 301.5], &[US, 2.0 * US]),
            ),
            keeps_pace: false,
            breakpoints: vec![100.5, 201.0, 300.25, 301.5, 5000.0, 5939.95],
        },
        // a one-point (constant) gap table and an overhead that overtakes L + g at 1e6 bytes
        // and keeps growing
        Case {
            name: "plogp, overhead outgrows the network".into(),
            model: plogp(
                5.0 * US,
                table(&[0.0, 1e6], &[US, 17.0 * US]),
                Table1D::constant(12.0 * US).unwrap(),
            ),
            keeps_pace: false,
            breakpoints: vec![1e6],
        },
    ]
}

fn loggpo(latency: f64, gap_per_byte: f64, eager_limit: u64, progress: Progress) -> Case {
    let rendezvous = match progress {
        Progress::Dependent => Mechanism::Rat,
        Progress::Independent => Mechanism::Rta,
    };
    Case {
        name: format!("loggpo, L {latency:e}, G {gap_per_byte:e}, S {eager_limit}, {progress:?}"),
        model: Box::new(
            LogGpo::new(
                latency,
                gap_per_byte,
                eager_limit,
                progress,
                Mechanism::T,
                rendezvous,
                2.0 * US,
                table(&[0.0, 65536.0], &[US, 3.0 * US]),
                table(&[0.0, 65536.0], &[0.0, 20.0 * US]),
            )
            .unwrap(),
        ),
        // I - T = max(G - L, Os - Tc) = G - L (Os - Tc <= -L eager and independent, -O' - 2L
        // dependent): the sender keeps pace iff G <= L
        keeps_pace: gap_per_byte <= latency,
        breakpoints: vec![eager_limit as f64, eager_limit as f64 + 1.0, 65536.0],
    }
}

fn loggpo_cases() -> Vec<Case> {
    let mut out = Vec::new();
    for progress in [Progress::Dependent, Progress::Independent] {
        for eager_limit in [0, 16384, u64::MAX] {
            out.push(loggpo(5.0 * US, 1e-9, eager_limit, progress));
            // G = 2 ns/B above L = 1 ns: 1 ns behind on every size
            out.push(loggpo(1e-9, 2e-9, eager_limit, progress));
            // G = L: never behind, never ahead by more than rounding
            out.push(loggpo(1e-9, 1e-9, eager_limit, progress));
        }
    }
    out
}

/// log_n P and log_3 P: `I` is one hop (the slowest, or half the middleware), `T` the sum of
/// all, none negative, so every parameter set keeps pace — including those converted from
/// LogP and LogGP whose own senders lag.
fn lognp_cases() -> Vec<Case> {
    let slow_loggp = LogGP::new(US, US, 9.0 * US, 1e-9).unwrap();
    assert!(!slow_loggp.sender_keeps_pace());
    let slow_logp = LogP::new(US, 0.5 * US, 9.0 * US, 8).unwrap();
    let gapped = LogNP::new(
        vec![
            Hop::new(SizeCost::Linear {
                fixed: US,
                per_byte: 1e-9,
            })
            .with_gap(SizeCost::Table(table(
                &[0.0, 4096.0],
                &[20.0 * US, 2.0 * US],
            ))),
            Hop::new(SizeCost::Words {
                first_word: 3.0 * US,
                per_extra_word: 0.25 * US,
                word_bytes: 8,
            }),
            Hop::new(SizeCost::PerByte(table(&[64.0, 1024.0], &[2e-9, 1e-9]))).with_strided(
                commcost::models::lognp::StrideCost::Table(
                    Table2D::new(
                        vec![0.0, 65536.0],
                        vec![8.0, 64.0],
                        vec![vec![0.0, US], vec![0.0, 50.0 * US]],
                    )
                    .unwrap(),
                ),
            ),
        ],
        8,
    )
    .unwrap();
    let log3p = Log3P::new(
        table(&[0.0, 65536.0], &[10.0 * US, 80.0 * US]),
        Table2D::new(
            vec![0.0, 65536.0],
            vec![8.0, 1024.0],
            vec![vec![0.0, 5.0 * US], vec![0.0, 400.0 * US]],
        )
        .unwrap(),
        table(&[1024.0, 16384.0], &[20.0 * US, 131.0 * US]),
        8,
    )
    .unwrap();
    vec![
        Case {
            name: "lognp of slow loggp".into(),
            model: Box::new(LogNP::from(slow_loggp)),
            keeps_pace: true,
            breakpoints: vec![],
        },
        Case {
            name: "lognp of slow logp".into(),
            model: Box::new(LogNP::from(slow_logp)),
            keeps_pace: true,
            breakpoints: vec![8.0, 9.0],
        },
        Case {
            name: "lognp with a gap, words, per-byte and strided costs".into(),
            model: Box::new(gapped),
            keeps_pace: true,
            breakpoints: vec![64.0, 1024.0, 4096.0, 65536.0],
        },
        Case {
            name: "lognp of log3p".into(),
            model: Box::new(LogNP::from(log3p.clone())),
            keeps_pace: true,
            breakpoints: vec![1024.0, 16384.0, 65536.0],
        },
        Case {
            name: "titan log3p".into(),
            model: Box::new(presets::titan_log3p()),
            keeps_pace: true,
            breakpoints: vec![16384.0],
        },
        Case {
            name: "log3p of tables".into(),
            model: Box::new(log3p),
            keeps_pace: true,
            breakpoints: vec![1024.0, 16384.0, 65536.0],
        },
    ]
}

fn every_case() -> Vec<Case> {
    let mut out = plogp_cases();
    out.extend(loggpo_cases());
    out.extend(lognp_cases());
    out
}

/// Sizes to probe: 0, 1, 2, each breakpoint and its neighbours, powers of two ±1, `3 · 2^k`,
/// pseudo-random sizes of every magnitude, and the top of `u64`.
fn probe_sizes(breakpoints: &[f64]) -> Vec<u64> {
    let mut out = vec![
        0u64,
        1,
        2,
        3,
        1 << 53,
        (1 << 53) + 1,
        1 << 63,
        u64::MAX - 1,
        u64::MAX,
    ];
    for &x in breakpoints {
        let (lo, hi) = (x.floor() as u64, x.ceil() as u64);
        for b in [lo.saturating_sub(1), lo, hi, hi.saturating_add(1)] {
            out.push(b);
        }
    }
    for k in 0..64 {
        let p = 1u64 << k;
        out.extend([p - 1, p, p.saturating_add(1), (3u64 << k.min(62)) / 2]);
    }
    let mut rng = common::SplitMix64(7);
    for _ in 0..200 {
        let bits = rng.int(0, 64) as u32;
        out.push(if bits == 64 {
            rng.next_u64()
        } else {
            rng.next_u64() % (1u64 << bits)
        });
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// `I(b) - T(b)` and the scale of the terms it is computed from.
fn lag(model: &dyn CommModel, b: u64) -> (f64, f64) {
    let msg = Message::contiguous(b);
    let (i, t) = (model.send_interval(&msg), model.p2p(&msg));
    (i - t, i.abs() + t.abs())
}

/// The contract of `send_lag_affine` at `b`: `line(b) = I - T` where that is positive and
/// `line(b) <= 0` where it is not, up to rounding of the terms (relative 1e-12).
fn line_holds_at(model: &dyn CommModel, line: &AffineCost, b: u64) -> Result<(), String> {
    let (lag, scale) = lag(model, b);
    let described = line.at(b);
    let tolerance = 1e-12 * (scale + described.abs()) + 1e-300;
    let holds = if lag > tolerance {
        (described - lag).abs() <= tolerance
    } else {
        described <= tolerance
    };
    if holds {
        Ok(())
    } else {
        Err(format!(
            "at {b}: I - T = {lag:e}, line {described:e} ({line:?})"
        ))
    }
}

#[test]
fn every_lag_line_is_the_lag_on_its_whole_range() {
    let mut rng = common::SplitMix64(11);
    for case in every_case() {
        let model = case.model.as_ref();
        let sizes = probe_sizes(&case.breakpoints);
        for &bytes in &sizes {
            let line = model
                .send_lag_affine(bytes)
                .unwrap_or_else(|| panic!("{}: no lag line at {bytes}", case.name));
            assert!(line.contains(bytes), "{} at {bytes}: {line:?}", case.name);
            assert_eq!(line.unit, 1, "{}", case.name);
            // the ends, `bytes`, random points inside, and every probe size in the range
            let span = line.last - line.first;
            let inside = (0..8).map(|_| line.first + rng.next_u64() % span.saturating_add(1));
            let probes = [line.first, line.last, bytes]
                .into_iter()
                .chain(inside)
                .chain(sizes.iter().copied().filter(|b| line.contains(*b)));
            for b in probes {
                if let Err(e) = line_holds_at(model, &line, b) {
                    panic!("{}, line around {bytes}: {e}", case.name);
                }
            }
        }
    }
}

/// pLogP and LogGPO describe `T` of contiguous messages as lines too
/// (`CommModel::p2p_affine`): each must be `p2p` on its whole range.
#[test]
fn every_one_message_line_is_the_one_message_time_on_its_whole_range() {
    let mut rng = common::SplitMix64(13);
    let mut described = 0;
    for case in plogp_cases().into_iter().chain(loggpo_cases()) {
        let model = case.model.as_ref();
        let sizes = probe_sizes(&case.breakpoints);
        for &bytes in &sizes {
            let line = model
                .p2p_affine(bytes)
                .unwrap_or_else(|| panic!("{}: no line at {bytes}", case.name));
            described += 1;
            assert!(line.contains(bytes), "{} at {bytes}: {line:?}", case.name);
            let span = line.last - line.first;
            let inside = (0..8).map(|_| line.first + rng.next_u64() % span.saturating_add(1));
            let probes = [line.first, line.last, bytes]
                .into_iter()
                .chain(inside)
                .chain(sizes.iter().copied().filter(|b| line.contains(*b)));
            for b in probes {
                let t = model.p2p(&Message::contiguous(b));
                assert!(
                    (line.at(b) - t).abs() <= 1e-12 * t,
                    "{}, line around {bytes}: at {b}, T = {t:e}, line {:e} ({line:?})",
                    case.name,
                    line.at(b)
                );
            }
        }
    }
    assert!(described > 1000, "{described}");
}

#[test]
fn the_lag_lines_cover_every_size_in_a_few_ranges() {
    for case in every_case() {
        let mut bytes = 0u64;
        let mut ranges = 0;
        loop {
            let line = case.model.send_lag_affine(bytes).unwrap();
            // neighbouring ranges may share their end (a table point)
            assert!(
                line.contains(bytes),
                "{}: {line:?} misses {bytes}",
                case.name
            );
            ranges += 1;
            assert!(ranges <= 16, "{}: more ranges than breakpoints", case.name);
            match line.last.checked_add(1) {
                Some(next) => bytes = next,
                None => break,
            }
        }
    }
}

#[test]
fn the_promise_to_keep_pace_is_given_exactly_where_the_hand_analysis_says() {
    let strided = [
        Message::vector(2048, 8, 1024).unwrap(),
        Message::vector(10, 8, 64).unwrap(),
        Message::vector(3, 100, 4096).unwrap(),
    ];
    let (mut kept, mut lagged) = (0, 0);
    for case in every_case() {
        let model = case.model.as_ref();
        assert_eq!(model.sender_keeps_pace(), case.keeps_pace, "{}", case.name);
        let sizes = probe_sizes(&case.breakpoints);
        let worst = sizes
            .iter()
            .map(|&b| {
                let (lag, scale) = lag(model, b);
                (lag - 1e-12 * scale, b)
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap();
        if case.keeps_pace {
            kept += 1;
            assert!(worst.0 <= 0.0, "{}: I > T at {} B", case.name, worst.1);
            for msg in &strided {
                let q = model.quantities(msg);
                let slack = 1e-12 * (q.send_interval + q.p2p);
                assert!(q.send_interval <= q.p2p + slack, "{}: {msg:?}", case.name);
            }
        } else {
            lagged += 1;
            assert!(worst.0 > 0.0, "{}: no size found where I > T", case.name);
        }
    }
    assert!(kept >= 10 && lagged >= 10, "{kept} keep pace, {lagged} lag");
}

#[test]
fn the_promises_change_no_collective_cost() {
    let operator = Operator::new(1e-7, 1e-10).unwrap();
    let mut compared = 0usize;
    for case in every_case() {
        let model = case.model.as_ref();
        // hidden: no promise and no line (round by round); lines only (the promise hidden)
        let hidden = common::Forwarding::quantities_only(model);
        let lines_only = common::Forwarding {
            affine: true,
            lag_lines: true,
            ..hidden
        };
        for p in [2u64, 3, 7, 8, 33, 1000, 1 << 20, (1 << 32) + 5, 1 << 40] {
            for bytes in [0u64, 1, 8, 1000, 7000, 12289, 65_536, 1 << 20, 1 << 30] {
                for op in [Operator::FREE, operator] {
                    let problem = Problem::new(p, Message::contiguous(bytes)).with_operator(op);
                    let promised = common::every_cost(model, &problem);
                    let reference = common::every_cost(&hidden, &problem);
                    let by_lines = common::every_cost(&lines_only, &problem);
                    for ((a, c), l) in promised.iter().zip(&reference).zip(&by_lines) {
                        for (what, x) in [("promises", a), ("lag lines", l)] {
                            assert!(
                                (x - c).abs() <= 1e-12 * x.abs().max(c.abs()),
                                "{}, P {p}, {bytes} B: {x:e} with the {what}, {c:e} without",
                                case.name
                            );
                        }
                        compared += 1;
                    }
                }
            }
        }
    }
    assert!(compared > 10_000, "{compared}");
}

/// The two collectives of the brief by hand, on a pLogP whose sender lags on every size by
/// `o_s - g - L = 3 µs + 1 ns/B`: Bruck's allgather at `P = 4` sends `m` then `2m` bytes,
/// the second round waiting for the sender's interval rather than the first round's data.
#[test]
fn bruck_allgather_on_a_lagging_plogp_by_hand() {
    let cases = plogp_cases();
    let model = cases[1].model.as_ref();
    let m = 1000u64;
    let problem = Problem::new(4, Message::contiguous(m));
    // T(b) = L + g(b) = 7 µs + 1 ns/B; I(b) = o_s(b) = 10 µs + 2 ns/B
    let t = |b: f64| 7.0 * US + 1e-9 * b;
    let i = |b: f64| 10.0 * US + 2e-9 * b;
    // round 1 sends m at 0, received at T(m); round 2 sends 2m at max(T(m), I(m)) = I(m),
    // received T(2m) later, but not before the first receive plus the message's interval
    let second_send = t(1000.0).max(i(1000.0));
    let expected = (second_send + t(2000.0)).max(t(1000.0) + i(2000.0));
    let with = Allgather::Bruck.cost(model, &problem).unwrap();
    common::assert_rel(with, expected, 1e-12);
    let hidden = common::Forwarding::quantities_only(model);
    common::assert_rel(
        Allgather::Bruck.cost(&hidden, &problem).unwrap(),
        with,
        1e-12,
    );
    common::assert_rel(
        Allreduce::Rabenseifner.cost(model, &problem).unwrap(),
        Allreduce::Rabenseifner.cost(&hidden, &problem).unwrap(),
        1e-12,
    );
}
