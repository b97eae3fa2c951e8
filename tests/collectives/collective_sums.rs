//! The `O(log P)` collectives sum their rounds in closed form over each affine range of the
//! model (`CommModel::p2p_affine`). Two independent oracles check them:
//!
//! * the round-by-round formulas of Thakur, Rabenseifner & Gropp (2005), written out here one
//!   `p2p` call per round;
//! * the same collectives on the same model behind a wrapper that does not describe itself as
//!   affine (the library then evaluates every round).
//!
//! And every model that gives an affine description keeps its promise: `p2p` of contiguous
//! messages anywhere in the range equals the line.
//!
//! The lags of senders that cannot keep pace (`CommModel::send_lag_affine`) are checked the
//! same way: every algorithm of every collective, on models of every kind that do and do not
//! keep pace, against the same model with its lag lines hidden (the library then compares
//! `I` and `T` round by round), to a relative 1e-12 — including a model whose lag lines slope
//! and change sign between two ranges; and every lag line against `max(0, I - T - e)` at sizes
//! across its range. The lock-step rounds of changing size (Bruck's allgather and all-to-all,
//! the recursive-doubling allgather and Rabenseifner at powers of two) are written out from
//! the send and receive constraints themselves (`lock_step`), not as a sum of lags.

use crate::common;

use std::sync::Arc;

use commcost::PiecewiseCost;
use commcost::collectives::{
    Algorithm, Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Operator, Problem, Reduce,
    Scan, Scatter,
};
use commcost::models::copy_transfer::Composition;
use commcost::models::copy_transfer::Stage;
use commcost::models::loggpo::Mechanism;
use commcost::models::loggpo::Progress;
use commcost::models::protocol::ProtocolRange;
use commcost::table::Table1D;
use commcost::{
    AffineCost, CommModel, CopyTransfer, LogGP, LogGpo, LogNP, LogP, MemoryLogP, MemoryNetworkLogP,
    Message, MlinesModel, ModelSpec, PLogP, Pram, Protocols, presets,
};
use proptest::prelude::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-300
}

fn ceil_log2(p: u64) -> u32 {
    64 - (p - 1).leading_zeros()
}

/// The end of lock-step rounds `(bytes, operator)` in which every process sends and receives
/// one piece, straight from the LogGOPS constraints (`T >= os + or`): a send starts after the
/// previous round and its predecessor's interval, `s_{k+1} = max(F_k, s_k + I_k)`; a receive
/// completes after its message, `T` after the send, and after the previous receive and the
/// message's own interval, `R_{k+1} = max(s_{k+1} + T_{k+1}, R_k + I_{k+1})`; the round ends
/// after the operator, `F = R + op`.
fn lock_step(model: &dyn CommModel, rounds: &[(u64, f64)]) -> f64 {
    let q = |bytes: u64| {
        let msg = Message::contiguous(bytes);
        (model.p2p(&msg), model.send_interval(&msg))
    };
    let Some(&(first, op)) = rounds.first() else {
        return 0.0;
    };
    let (t, mut interval) = q(first);
    let (mut send, mut recv) = (0.0f64, t);
    let mut end = recv + op;
    for &(bytes, op) in &rounds[1..] {
        let (t, i) = q(bytes);
        send = end.max(send + interval);
        recv = (send + t).max(recv + i);
        end = recv + op;
        interval = i;
    }
    end
}

/// Round-by-round costs from the published round structures (contiguous messages).
fn by_rounds(model: &dyn CommModel, name: &str, p: u64, m: u64, op: Operator) -> f64 {
    let t = |bytes: u64| model.p2p(&Message::contiguous(bytes));
    let g = |bytes: u64| model.gap(&Message::contiguous(bytes));
    // a process that sends in consecutive rounds sends them max(T + extra, I) apart: the lag
    // beyond the round's data is max(0, I - T - extra)
    let lag = |bytes: u64, extra: f64| {
        let msg = Message::contiguous(bytes);
        (model.send_interval(&msg) - model.p2p(&msg) - extra).max(0.0)
    };
    let h = ceil_log2(p);
    let hp = 63 - p.leading_zeros();
    let pow2 = p.is_power_of_two();
    // binomial scatter: round k serves a subtree of min(2^(h-k), P - 2^(h-k)) blocks
    let scatter_rounds = |unit: u64| -> f64 {
        (1..=h)
            .map(|k| {
                let half = 1u64 << (h - k);
                t(unit.saturating_mul(half.min(p - half)))
            })
            .sum()
    };
    match name {
        "scatter-allgather" => {
            let c = m.div_ceil(p);
            scatter_rounds(c) + (f64::from(h) - 1.0) * g(c) + (p - 1) as f64 * (t(c) + lag(c, 0.0))
        }
        "scatter" | "gather" => scatter_rounds(m) + (f64::from(h) - 1.0) * g(m),
        "rabenseifner" if pow2 => {
            // the reduce-scatter's rounds with the operator, the allgather's back without
            let pieces = (1..=hp).map(|k| m.div_ceil(1u64 << k));
            let rounds: Vec<(u64, f64)> = pieces
                .clone()
                .map(|c| (c, op.cost(c)))
                .chain(pieces.rev().map(|c| (c, 0.0)))
                .collect();
            lock_step(model, &rounds)
        }
        "rabenseifner" => {
            let extra = if pow2 { 0.0 } else { 1.0 };
            let halving: f64 = (1..=hp)
                .map(|k| {
                    let c = m.div_ceil(1u64 << k);
                    2.0 * t(c) + op.cost(c)
                })
                .sum();
            // after every reduce-scatter round, and after every allgather round but the last
            // (unless the result then goes back to a folded process)
            let lags: f64 = (1..=hp)
                .map(|k| {
                    let c = m.div_ceil(1u64 << k);
                    let after_allgather = if k >= 2 || !pow2 { lag(c, 0.0) } else { 0.0 };
                    lag(c, op.cost(c)) + after_allgather
                })
                .sum();
            extra * (t(m) + op.cost(m)) + halving + extra * t(m) + lags
        }
        "allgather-doubling" if pow2 => {
            let rounds: Vec<(u64, f64)> = (0..hp)
                .map(|k| (m.saturating_mul(1u64 << k), 0.0))
                .collect();
            lock_step(model, &rounds)
        }
        "allgather-doubling" => {
            let c = m.saturating_mul(p.div_ceil(1u64 << hp));
            let doubling: f64 = (0..hp).map(|k| t(c.saturating_mul(1u64 << k))).sum();
            let spaced = if pow2 { hp.saturating_sub(1) } else { hp };
            let lags: f64 = (0..spaced)
                .map(|k| lag(c.saturating_mul(1u64 << k), 0.0))
                .sum();
            if pow2 {
                doubling + lags
            } else {
                t(m) + doubling + t(m.saturating_mul(p)) + lags
            }
        }
        "allgather-bruck" => {
            let rounds: Vec<(u64, f64)> = (0..h)
                .map(|k| (m.saturating_mul((1u64 << k).min(p - (1u64 << k))), 0.0))
                .collect();
            lock_step(model, &rounds)
        }
        "alltoall-bruck" => {
            let rounds: Vec<(u64, f64)> = (0..h)
                .map(|k| {
                    // blocks whose index j < P has bit k set, counted by periods of 2^(k+1)
                    let period = 1u128 << (k + 1);
                    let n = (u128::from(p) / period) * (period / 2)
                        + (u128::from(p) % period).saturating_sub(period / 2);
                    (m.saturating_mul(n as u64), 0.0)
                })
                .collect();
            lock_step(model, &rounds)
        }
        _ => unreachable!("unknown algorithm {name}"),
    }
}

fn library(model: &dyn CommModel, name: &str, problem: &Problem) -> f64 {
    match name {
        "scatter-allgather" => Bcast::ScatterAllgather.cost(model, problem),
        "scatter" => Scatter::Binomial.cost(model, problem),
        "gather" => Gather::Binomial.cost(model, problem),
        "rabenseifner" => Allreduce::Rabenseifner.cost(model, problem),
        "allgather-doubling" => Allgather::RecursiveDoubling.cost(model, problem),
        "allgather-bruck" => Allgather::Bruck.cost(model, problem),
        "alltoall-bruck" => Alltoall::Bruck.cost(model, problem),
        _ => unreachable!("unknown algorithm {name}"),
    }
    .unwrap()
}

const NAMES: [&str; 7] = [
    "scatter-allgather",
    "scatter",
    "gather",
    "rabenseifner",
    "allgather-doubling",
    "allgather-bruck",
    "alltoall-bruck",
];

/// A protocol model of 1-4 LogGP ranges with random switch points.
/// A protocol model of 1-4 ranges with random switch points, each range LogGP (a line in
/// bytes) or LogP (a line in words of 1-4096 bytes, powers of two or not).
fn protocols() -> impl Strategy<Value = Protocols<ModelSpec>> {
    let loggp = (0.1f64..10.0, 0.1f64..5.0, 0.1f64..5.0, 0.0f64..0.05).prop_map(
        |(l, o, g, big_g)| -> ModelSpec {
            LogGP::new(l * 1e-6, o * 1e-6, g * 1e-6, big_g * 1e-6)
                .unwrap()
                .into()
        },
    );
    let logp = (
        0.1f64..10.0,
        0.1f64..5.0,
        0.1f64..5.0,
        prop::sample::select(vec![1u64, 2, 3, 8, 12, 64, 4096]),
    )
        .prop_map(|(l, o, g, w)| -> ModelSpec {
            LogP::new(l * 1e-6, o * 1e-6, g * 1e-6, w).unwrap().into()
        });
    let range = prop_oneof![loggp, logp];
    (
        range.clone(),
        prop::collection::vec((1u64..1 << 40, range), 0..4),
    )
        .prop_map(|(first, mut rest)| {
            rest.sort_by_key(|r| r.0);
            rest.dedup_by_key(|r| r.0);
            let mut starts = vec![(0u64, first)];
            starts.extend(rest);
            Protocols::from_starts(starts).unwrap()
        })
}

fn sizes() -> impl Strategy<Value = (u64, u64)> {
    // P up to 2^40 (and the edge 2^63 + 1), messages up to 2^40 bytes (and u64::MAX / 4)
    (
        prop_oneof![
            2u64..70,
            2u64..1 << 40,
            Just((1u64 << 63) + 1),
            Just(1u64 << 32)
        ],
        prop_oneof![0u64..5, 0u64..1 << 20, 0u64..1 << 40, Just(u64::MAX / 4)],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn closed_form_sums_equal_the_rounds(
        model in protocols(),
        (p, m) in sizes(),
        per_call in 0.0f64..1e-6,
        per_byte in 0.0f64..1e-9,
    ) {
        let op = Operator::new(per_call, per_byte).unwrap();
        let problem = Problem::new(p, Message::contiguous(m)).with_operator(op);
        for name in NAMES {
            let fast = library(&model, name, &problem);
            let rounds = by_rounds(&model, name, p, m, op);
            let opaque = library(&common::Forwarding::quantities_only(&model), name, &problem);
            prop_assert!(close(fast, rounds), "{name} P {p} m {m}: {fast} vs rounds {rounds}");
            prop_assert!(close(fast, opaque), "{name} P {p} m {m}: {fast} vs opaque {opaque}");
        }
    }

    #[test]
    fn affine_descriptions_keep_their_promise(
        model in protocols(),
        bytes in prop_oneof![0u64..100, 0u64..1 << 42, Just(u64::MAX)],
        at in any::<u64>(),
    ) {
        let a = model.p2p_affine(bytes).unwrap();
        prop_assert!(a.contains(bytes));
        for b in [a.first, a.last, bytes, a.first + at % (a.last - a.first).saturating_add(1)] {
            let t = model.p2p(&Message::contiguous(b));
            prop_assert!(close(t, a.at(b)), "{b}: {t} vs {}", a.at(b));
        }
    }
}

#[test]
fn every_affine_model_keeps_its_promise() {
    let memory = MemoryLogP::new(
        Table1D::new(vec![64.0, 1024.0, 65536.0], vec![2e-9, 1e-9, 0.8e-9]).unwrap(),
        None,
        8,
        8,
    )
    .unwrap();
    let constant_rate = MemoryLogP::new(Table1D::constant(1e-9).unwrap(), None, 8, 8).unwrap();
    let spec: ModelSpec = presets::nmpi_sci().into();
    let models: Vec<(&str, Box<dyn CommModel>)> = vec![
        (
            "loggp",
            Box::new(LogGP::new(5e-6, 1e-6, 3e-6, 1e-8).unwrap()),
        ),
        ("pram", Box::new(Pram::new(2e-6).unwrap())),
        ("openib", Box::new(presets::open_mpi_openib())),
        ("memory logp", Box::new(memory)),
        ("spec", Box::new(spec)),
        (
            "protocols of memory logp",
            Box::new(
                Protocols::new(vec![
                    ProtocolRange::new(0, Some(4096), constant_rate.clone()),
                    ProtocolRange::new(4096, None, constant_rate),
                ])
                .unwrap(),
            ),
        ),
    ];
    let stages = || {
        vec![
            Stage::new("pack", 2e9, 1e-6).unwrap(),
            Stage::new("wire", 1e9, 5e-6).unwrap(),
        ]
    };
    let logp = || LogP::new(5e-6, 1e-6, 2e-6, 4).unwrap();
    let more: Vec<(&str, Box<dyn CommModel>)> = vec![
        ("logp", Box::new(logp())),
        ("lognp of logp", Box::new(LogNP::from(logp()))),
        ("titan log3p", Box::new(presets::titan_log3p())),
        (
            "lognp of titan",
            Box::new(LogNP::from(presets::titan_log3p())),
        ),
        (
            "sequential copies",
            Box::new(CopyTransfer::new(stages(), Composition::Sequential, 8).unwrap()),
        ),
        (
            "pipelined copies",
            Box::new(CopyTransfer::new(stages(), Composition::Pipelined, 8).unwrap()),
        ),
    ];
    let models: Vec<_> = models.into_iter().chain(more).collect();
    let mut described = 0;
    for (name, model) in &models {
        for bytes in (0..40)
            .map(|k| (1u64 << k) - 1)
            .chain((0..40).map(|k| 3u64 << k))
        {
            let Some(a) = model.p2p_affine(bytes) else {
                continue;
            };
            described += 1;
            assert!(a.contains(bytes), "{name} {bytes}: {a:?}");
            let probes = [
                a.first,
                a.last.min(1 << 50),
                bytes,
                a.first / 2 + a.last.min(1 << 50) / 2,
            ];
            for b in probes.into_iter().filter(|&b| a.contains(b)) {
                let t = model.p2p(&Message::contiguous(b));
                assert!(close(t, a.at(b)), "{name} at {b}: {t} vs {}", a.at(b));
            }
        }
    }
    // every model here describes every size
    assert!(described == 12 * 80, "{described}");
}

#[test]
fn models_without_a_line_say_so() {
    // Mlines prices the lines a message touches: ⌈(offset + b) / L⌉ is no line in b
    let mlines = MlinesModel::new(1e-6, 1e-9, 1e-8, 64).unwrap();
    assert_eq!(mlines.p2p_affine(100), None);
    // and the per-round evaluation is what the collectives then do
    let problem = Problem::new(1 << 20, Message::contiguous(4096));
    for name in NAMES {
        let fast = library(&mlines, name, &problem);
        let rounds = by_rounds(&mlines, name, 1 << 20, 4096, Operator::FREE);
        assert!(close(fast, rounds), "{name}: {fast} vs {rounds}");
    }
}

#[test]
fn strided_pieces_are_evaluated_round_by_round() {
    // an Mlines-style layout dependence: the affine description is for contiguous messages
    // only, so a strided problem must not use it — compare with the opaque wrapper.
    let model = presets::titan_log3p();
    let problem = Problem::new(1 << 20, Message::vector(2048, 8, 1024).unwrap());
    for name in NAMES {
        let fast = library(&model, name, &problem);
        let opaque = library(&common::Forwarding::quantities_only(&model), name, &problem);
        assert!(close(fast, opaque), "{name}: {fast} vs {opaque}");
    }
}

/// Relative 1e-12 (and equal zeros).
fn very_close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// Every algorithm of every collective (the pipelined broadcast with 4 KiB segments).
fn every_algorithm(model: &dyn CommModel, problem: &Problem) -> Vec<(String, f64)> {
    fn each<A: Algorithm>(
        out: &mut Vec<(String, f64)>,
        collective: &str,
        algorithms: &[A],
        model: &dyn CommModel,
        problem: &Problem,
    ) {
        for a in algorithms {
            let cost = a.cost(model, problem).unwrap();
            out.push((format!("{collective} {}", a.name()), cost));
        }
    }
    let mut out = Vec::new();
    let broadcasts = [
        Bcast::Linear,
        Bcast::Binomial,
        Bcast::ScatterAllgather,
        Bcast::Pipelined { segment: 4096 },
    ];
    each(&mut out, "broadcast", &broadcasts, model, problem);
    each(&mut out, "scan", Scan::ALL, model, problem);
    each(&mut out, "reduce", Reduce::ALL, model, problem);
    each(&mut out, "allreduce", Allreduce::ALL, model, problem);
    each(&mut out, "allgather", Allgather::ALL, model, problem);
    each(&mut out, "gather", Gather::ALL, model, problem);
    each(&mut out, "scatter", Scatter::ALL, model, problem);
    each(&mut out, "barrier", Barrier::ALL, model, problem);
    each(&mut out, "alltoall", Alltoall::ALL, model, problem);
    out
}

/// Every algorithm on `model` equals the same with the model's lag lines hidden (the
/// collectives then compare `I` and `T` round by round) to a relative 1e-12.
fn lags_match_the_rounds(model: &dyn CommModel, problem: &Problem) -> Result<(), String> {
    let fast = every_algorithm(model, problem);
    let lag_hidden = common::Forwarding {
        lag_lines: false,
        ..common::Forwarding {
            model,
            affine: true,
            keeps_pace: true,
            lag_lines: true,
        }
    };
    let rounds = every_algorithm(&lag_hidden, problem);
    for ((name, f), (_, r)) in fast.iter().zip(&rounds) {
        if !very_close(*f, *r) {
            return Err(format!(
                "{name}, P {}, {} B: {f:e} with lag lines, {r:e} round by round",
                problem.processes,
                problem.message.bytes()
            ));
        }
    }
    Ok(())
}

/// A LogGP or LogP range whose sender may or may not keep pace: `g` up to 60 µs against
/// `2o + L` from 0.3 µs to 30 µs.
fn slow_or_fast() -> impl Strategy<Value = ModelSpec> {
    let loggp = (0.0f64..20.0, 0.1f64..5.0, 0.0f64..60.0, 0.0f64..0.05).prop_map(
        |(l, o, g, big_g)| -> ModelSpec {
            LogGP::new(l * 1e-6, o * 1e-6, g * 1e-6, big_g * 1e-6)
                .unwrap()
                .into()
        },
    );
    let logp = (
        0.0f64..20.0,
        0.1f64..5.0,
        0.0f64..60.0,
        prop::sample::select(vec![1u64, 2, 3, 8, 12, 64, 4096]),
    )
        .prop_map(|(l, o, g, w)| -> ModelSpec {
            LogP::new(l * 1e-6, o * 1e-6, g * 1e-6, w).unwrap().into()
        });
    prop_oneof![loggp, logp]
}

/// 1-4 ranges of [`slow_or_fast`] with switch points at random sizes up to 2^40 (some below
/// 2^17, inside the pieces of 64 KiB messages).
fn slow_or_fast_protocols() -> impl Strategy<Value = Protocols<ModelSpec>> {
    (
        slow_or_fast(),
        prop::collection::vec(
            (prop_oneof![1u64..1 << 17, 1u64..1 << 40], slow_or_fast()),
            0..4,
        ),
    )
        .prop_map(|(first, mut rest)| {
            rest.sort_by_key(|r| r.0);
            rest.dedup_by_key(|r| r.0);
            let mut starts = vec![(0u64, first)];
            starts.extend(rest);
            Protocols::from_starts(starts).unwrap()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn lag_lines_give_the_round_by_round_lags(
        model in slow_or_fast_protocols(),
        (p, m) in sizes(),
        per_call in prop_oneof![Just(0.0f64), 0.0f64..2e-5],
        per_byte in prop_oneof![Just(0.0f64), 0.0f64..1e-9, 0.0f64..1e-7],
    ) {
        let op = Operator::new(per_call, per_byte).unwrap();
        let problem = Problem::new(p, Message::contiguous(m)).with_operator(op);
        // the protocol model, one of its ranges alone, and the forwarding wrappers
        let single = model.ranges()[0].model().clone();
        let boxed: Box<dyn CommModel> = Box::new(model.clone());
        let shared: Arc<dyn CommModel> = Arc::new(single.clone());
        let models: [&dyn CommModel; 4] = [&model, &single, &boxed, &shared];
        for model in models {
            prop_assert!(lags_match_the_rounds(model, &problem).is_ok(), "{:?}",
                lags_match_the_rounds(model, &problem));
            // and the oracle written out round by round
            for name in NAMES {
                let fast = library(model, name, &problem);
                let rounds = by_rounds(model, name, p, m, op);
                prop_assert!(close(fast, rounds), "{name} P {p} m {m}: {fast} vs {rounds}");
            }
        }
    }

    #[test]
    fn lag_lines_keep_their_promise(
        model in slow_or_fast_protocols(),
        bytes in prop_oneof![0u64..100, 0u64..1 << 42, Just(u64::MAX)],
        at in any::<u64>(),
        extra in prop_oneof![Just(0.0f64), 0.0f64..1e-4],
    ) {
        let line = model.send_lag_affine(bytes).unwrap();
        prop_assert!(line.contains(bytes));
        let inside = line.first + at % (line.last - line.first).saturating_add(1);
        for b in [line.first, line.last, bytes, inside] {
            prop_assert!(lag_line_holds(&model, &line, b, extra), "{b}: {line:?}");
        }
    }
}

/// `max(0, I(b) - T(b) - e) = max(0, line(b) - e)` up to rounding of the terms.
fn lag_line_holds(model: &dyn CommModel, line: &AffineCost, b: u64, extra: f64) -> bool {
    let msg = Message::contiguous(b);
    let (i, t) = (model.send_interval(&msg), model.p2p(&msg));
    let rounds = (i - t - extra).max(0.0);
    let described = (line.at(b) - extra).max(0.0);
    (rounds - described).abs() <= 1e-13 * (i + t + extra) + 1e-300
}

/// One model of every kind, plain and in a `ModelSpec`: fast and slow LogGP and LogP, the
/// Table 2 presets (the openib one does not keep pace), protocol ranges of LogP, the models
/// whose lag lines came later (pLogP, LogGPO, log_n P, log_3 P) and those that describe no lag
/// (memory logP, Mlines, copy-transfer), whose collectives must not change either.
fn every_kind() -> Vec<(String, Box<dyn CommModel>)> {
    let us = 1e-6;
    let memory = MemoryLogP::new(
        Table1D::new(vec![64.0, 1024.0, 65536.0], vec![2e-9, 1e-9, 0.8e-9]).unwrap(),
        None,
        8,
        8,
    )
    .unwrap();
    let slow_logp = || LogP::new(1.0 * us, 0.5 * us, 9.0 * us, 8).unwrap();
    let stages = || {
        vec![
            Stage::new("pack", 2e9, 1e-6).unwrap(),
            Stage::new("wire", 1e9, 5e-6).unwrap(),
        ]
    };
    let specs: Vec<(&str, ModelSpec)> = vec![
        (
            "fast loggp",
            LogGP::new(5.0 * us, us, 2.0 * us, 1e-9).unwrap().into(),
        ),
        (
            "slow loggp",
            LogGP::new(us, us, 9.0 * us, 1e-9).unwrap().into(),
        ),
        (
            "fast logp",
            LogP::new(5.0 * us, us, 2.0 * us, 8).unwrap().into(),
        ),
        ("slow logp", slow_logp().into()),
        (
            "slow logp, 12-byte words",
            LogP::new(us, 0.5 * us, 9.0 * us, 12).unwrap().into(),
        ),
        ("openib", presets::open_mpi_openib().into()),
        ("gm", presets::open_mpi_gm().into()),
        ("nmpi/sci", presets::nmpi_sci().into()),
        (
            "protocols of logp",
            Protocols::from_starts(vec![
                (1, LogP::new(5.0 * us, us, 2.0 * us, 8).unwrap()),
                (4096, slow_logp()),
            ])
            .unwrap()
            .into(),
        ),
        ("pram", Pram::new(2.0 * us).unwrap().into()),
        ("memory logp", memory.clone().into()),
        (
            "memory network logp",
            MemoryNetworkLogP::new(memory.clone(), slow_logp()).into(),
        ),
        ("lognp of slow logp", LogNP::from(slow_logp()).into()),
        ("titan log3p", presets::titan_log3p().into()),
        (
            "mlines",
            MlinesModel::new(1e-6, 1e-9, 1e-8, 64).unwrap().into(),
        ),
        (
            "sequential copies",
            CopyTransfer::new(stages(), Composition::Sequential, 8)
                .unwrap()
                .into(),
        ),
        (
            "pipelined copies",
            CopyTransfer::new(stages(), Composition::Pipelined, 8)
                .unwrap()
                .into(),
        ),
        (
            "loggpo",
            LogGpo::new(
                5e-6,
                1e-9,
                12288,
                Progress::Dependent,
                Mechanism::T,
                Mechanism::Rat,
                1e-6,
                Table1D::new(vec![0.0, 65536.0], vec![1e-6, 3e-6]).unwrap(),
                Table1D::new(vec![0.0, 65536.0], vec![0.0, 2e-5]).unwrap(),
            )
            .unwrap()
            .into(),
        ),
        (
            "plogp",
            PLogP::new(
                5e-6,
                Table1D::new(vec![1.0, 65536.0], vec![1e-6, 2e-5]).unwrap(),
                Table1D::linear(1e-6, 1e-10).unwrap(),
                Table1D::new(vec![1.0, 4096.0, 262144.0], vec![1e-6, 3e-6, 2e-4]).unwrap(),
                2,
            )
            .unwrap()
            .into(),
        ),
    ];
    let mut out: Vec<(String, Box<dyn CommModel>)> = vec![
        ("openib, plain".into(), Box::new(presets::open_mpi_openib())),
        (
            "slow loggp, plain".into(),
            Box::new(LogGP::new(us, us, 9.0 * us, 1e-9).unwrap()),
        ),
        ("slow logp, plain".into(), Box::new(slow_logp())),
    ];
    out.extend(
        specs
            .into_iter()
            .map(|(name, spec)| (name.to_string(), Box::new(spec) as _)),
    );
    out
}

#[test]
fn every_kind_of_model_prices_its_lags_as_before() {
    let op = Operator::new(1e-7, 1e-10).unwrap();
    let mut slow = 0;
    for (name, model) in every_kind() {
        slow += usize::from(!model.sender_keeps_pace());
        for p in [2u64, 3, 5, 1000, (1 << 20) + 3, 1 << 32, (1 << 63) + 1] {
            for m in [0u64, 1, 7, 4096, 12288, 12289, 65536, 1 << 30] {
                for operator in [Operator::FREE, op] {
                    let problem = Problem::new(p, Message::contiguous(m)).with_operator(operator);
                    if let Err(e) = lags_match_the_rounds(model.as_ref(), &problem) {
                        panic!("{name}: {e}");
                    }
                }
            }
            // pieces of a strided message keep its layout: no lag line applies
            let strided = Problem::new(p, Message::vector(2048, 8, 1024).unwrap());
            if let Err(e) = lags_match_the_rounds(model.as_ref(), &strided) {
                panic!("{name}, strided: {e}");
            }
        }
    }
    // half of these models cannot promise I <= T
    assert!(slow >= 11, "{slow}");
}

#[test]
fn every_lag_line_keeps_its_promise() {
    let mut described = 0;
    for (name, model) in every_kind() {
        for bytes in (0..64)
            .map(|k| (1u64 << k) - 1)
            .chain((0..62).map(|k| 3u64 << k))
        {
            let Some(line) = model.send_lag_affine(bytes) else {
                continue;
            };
            described += 1;
            assert!(line.contains(bytes), "{name} {bytes}: {line:?}");
            let probes = [line.first, line.last, bytes, line.first / 2 + line.last / 2];
            for b in probes {
                for extra in [0.0, 1e-7, 1e-6, 5e-6, 2e-5] {
                    assert!(
                        lag_line_holds(model.as_ref(), &line, b, extra),
                        "{name} at {b}, e = {extra}: {line:?}"
                    );
                }
            }
        }
    }
    // LogGP, LogP, their protocols and PRAM: 13 models here (plain and in a ModelSpec); pLogP,
    // LogGPO, log_n P and log_3 P: 4
    assert_eq!(described, 17 * 126);
}

#[test]
fn the_slow_sender_lags_by_hand() {
    // LogGP with L = 1 µs, o = 1 µs, g = 9 µs, G = 1 ns/byte: a sender is g - 2o - L = 6 µs
    // behind its data. A ring allgather of P = 5 has P - 1 = 4 rounds of T(m), spaced 6 µs
    // more than T: 4 T + 3 · 6 µs.
    let slow = LogGP::new(1e-6, 1e-6, 9e-6, 1e-9).unwrap();
    let t = 3e-6 + 999.0 * 1e-9;
    let ring = Allgather::Ring
        .cost(&slow, &Problem::new(5, Message::contiguous(1000)))
        .unwrap();
    approx::assert_relative_eq!(ring, 4.0 * t + 3.0 * 6e-6, max_relative = 1e-12);
    // Rabenseifner on P = 8 with an operator of 1 µs + 1 ns/byte on m = 8000 bytes: halving
    // pieces 4000, 2000, 1000 bytes; operator 5, 3, 2 µs; lag after each reduce-scatter round
    // max(0, 6 - op) = 1, 3, 4 µs, and after the first two allgather rounds 6 µs each.
    let problem = Problem::new(8, Message::contiguous(8000))
        .with_operator(Operator::new(1e-6, 1e-9).unwrap());
    let rounds: f64 = [4000.0, 2000.0, 1000.0]
        .iter()
        .map(|x| 2.0 * (3e-6 + (x - 1.0) * 1e-9) + (1e-6 + x * 1e-9))
        .sum();
    let expected = rounds + (1e-6 + 3e-6 + 4e-6) + 2.0 * 6e-6;
    let cost = Allreduce::Rabenseifner.cost(&slow, &problem).unwrap();
    approx::assert_relative_eq!(cost, expected, max_relative = 1e-12);
}

/// A model whose sender falls behind by a line in whole units that changes at a size:
/// `T(b) = a + per_byte · b`, `I(b) = T(b) + c0 + c1 ⌈b / w⌉` with `(c0, c1)` one pair below
/// `split` and another from it on (either may be negative: behind on some sizes, ahead on
/// others). It describes exactly that as its lag lines, so the sloped-line sums are checked.
#[derive(Debug, Clone)]
struct SlopedLag {
    a: f64,
    per_byte: f64,
    split: u64,
    below: (f64, f64),
    above: (f64, f64),
    unit: u64,
}

impl SlopedLag {
    fn line(&self, bytes: u64) -> AffineCost {
        let ((c0, c1), first, last) = if bytes < self.split {
            (self.below, 0, self.split - 1)
        } else {
            (self.above, self.split, u64::MAX)
        };
        AffineCost::everywhere(c0, c1)
            .in_units_of(self.unit)
            .within(first, last)
            .unwrap()
    }
}

impl CommModel for SlopedLag {
    fn p2p(&self, msg: &Message) -> f64 {
        self.a + self.per_byte * msg.bytes() as f64
    }

    fn send_interval(&self, msg: &Message) -> f64 {
        self.p2p(msg) + self.line(msg.bytes()).at(msg.bytes())
    }

    fn piecewise(&self) -> Option<&dyn commcost::PiecewiseCost> {
        Some(self)
    }
}

impl commcost::PiecewiseCost for SlopedLag {
    fn p2p_affine(&self, _bytes: u64) -> Option<AffineCost> {
        Some(AffineCost::everywhere(self.a, self.per_byte))
    }

    fn send_lag_affine(&self, bytes: u64) -> Option<AffineCost> {
        Some(self.line(bytes))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn sloped_lag_lines_give_the_round_by_round_lags(
        a in 1e-6f64..2e-5,
        per_byte in 0.0f64..1e-9,
        split in prop_oneof![1u64..1 << 17, 1u64..1 << 40],
        below in (-2e-5f64..2e-5, -1e-9f64..1e-9),
        above in (-2e-5f64..2e-5, -1e-9f64..1e-9),
        unit in prop::sample::select(vec![1u64, 3, 8]),
        (p, m) in sizes(),
        per_call in prop_oneof![Just(0.0f64), 0.0f64..2e-5],
        op_per_byte in prop_oneof![Just(0.0f64), 0.0f64..1e-8],
    ) {
        let model = SlopedLag { a, per_byte, split, below, above, unit };
        let op = Operator::new(per_call, op_per_byte).unwrap();
        let problem = Problem::new(p, Message::contiguous(m)).with_operator(op);
        prop_assert!(lags_match_the_rounds(&model, &problem).is_ok(), "{:?}",
            lags_match_the_rounds(&model, &problem));
    }
}
