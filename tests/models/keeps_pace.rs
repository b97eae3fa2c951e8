//! Models that promise `I <= T` (`CommModel::sender_keeps_pace`) keep the promise, checked by
//! evaluating both quantities directly over contiguous and strided messages, and the promise
//! does not change a single collective cost: with it hidden, the collectives compare `I` and
//! `T` round by round and find every lag zero.

use crate::common;

use commcost::collectives::{Operator, Problem};
use commcost::{CommModel, Message};

/// Contiguous sizes from 0 to 2^24 bytes and a few strided layouts.
fn messages() -> Vec<Message> {
    let mut out: Vec<Message> = (0..=24u32)
        .flat_map(|k| {
            let s = 1u64 << k;
            [s - 1, s, s + 1, 3 * s / 2]
        })
        .map(Message::contiguous)
        .collect();
    for (count, block, stride) in [(10, 8, 64), (1000, 8, 8000), (3, 100, 4096), (64, 1, 1)] {
        out.push(Message::vector(count, block, stride).unwrap());
    }
    out
}

#[test]
fn the_promise_holds_for_every_message() {
    let mut promising = 0;
    for (name, model) in common::model_kinds() {
        if !model.sender_keeps_pace() {
            continue;
        }
        promising += 1;
        for m in messages() {
            let q = model.quantities(&m);
            assert!(
                q.send_interval <= q.p2p,
                "{name}, {} B: I = {:e} > T = {:e}",
                m.bytes(),
                q.send_interval,
                q.p2p
            );
        }
    }
    // memory logP, Mlines, both copy-transfer compositions, PRAM, LogP and LogGP at least
    assert!(promising >= 7, "only {promising} models promise I <= T");
}

#[test]
fn the_promise_changes_no_collective_cost() {
    let operator = Operator::new(1e-7, 1e-10).unwrap();
    for (name, model) in common::model_kinds() {
        if !model.sender_keeps_pace() {
            continue;
        }
        for p in [2u64, 3, 7, 8, 33, 1000] {
            for bytes in [0u64, 8, 1000, 65_536, 1 << 20] {
                let problem = Problem::new(p, Message::contiguous(bytes)).with_operator(operator);
                let kept = common::every_cost(model.as_ref(), &problem);
                let checked = common::every_cost(
                    &common::Forwarding {
                        model: model.as_ref(),
                        affine: true,
                        keeps_pace: false,
                        lag_lines: false,
                    },
                    &problem,
                );
                for (k, c) in kept.iter().zip(&checked) {
                    assert!(
                        (k - c).abs() <= 1e-12 * k.abs().max(c.abs()),
                        "{name}, P {p}, {bytes} B: {k:e} with the promise, {c:e} without"
                    );
                }
            }
        }
    }
}
