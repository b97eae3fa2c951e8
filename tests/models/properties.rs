//! Invariants of the foundation models and tables, checked with proptest.

use crate::common;

use commcost::models::protocol::ProtocolRange;
use commcost::table::Table1D;
use commcost::table::Table2D;
use commcost::{CommModel, LogGP, LogP, Message, Pram, Protocols};
use common::{SAME_PREDICTION_RELATIVE, assert_rel};
use proptest::prelude::*;

/// Times between 0 and 1 ms, as a calibrated model would hold.
fn time() -> impl Strategy<Value = f64> {
    0.0..1e-3
}

fn logp() -> impl Strategy<Value = LogP> {
    (time(), time(), time(), 1u64..4096).prop_map(|(l, o, g, w)| LogP::new(l, o, g, w).unwrap())
}

fn loggp() -> impl Strategy<Value = LogGP> {
    (time(), time(), time(), 0.0..1e-7)
        .prop_map(|(l, o, g, big_g)| LogGP::new(l, o, g, big_g).unwrap())
}

/// 1 to 8 ranges of LogGP with random increasing switch points.
fn protocols() -> impl Strategy<Value = Protocols<LogGP>> {
    (
        prop::collection::vec(loggp(), 1..8),
        prop::collection::btree_set(2u64..1 << 24, 7),
        0u64..2,
    )
        .prop_map(|(models, switches, first)| {
            let starts = std::iter::once(first).chain(switches);
            Protocols::from_starts(starts.zip(models).collect()).unwrap()
        })
}

/// The bit patterns of every quantity, for exact comparisons.
fn every_quantity_bits(model: &dyn CommModel, msg: &Message) -> [u64; 5] {
    every_quantity(model, msg).map(f64::to_bits)
}

fn every_quantity(model: &dyn CommModel, msg: &Message) -> [f64; 5] {
    [
        model.p2p(msg),
        model.send_overhead(msg),
        model.recv_overhead(msg),
        model.send_interval(msg),
        model.gap(msg),
    ]
}

fn assert_finite_non_negative_monotone(model: &dyn CommModel, a: u64, b: u64) {
    let (small, large) = (a.min(b), a.max(b));
    let qs = every_quantity(model, &Message::contiguous(small));
    let ql = every_quantity(model, &Message::contiguous(large));
    for (s, l) in qs.iter().zip(&ql) {
        assert!(s.is_finite() && *s >= 0.0, "{model:?}: {s}");
        assert!(l.is_finite() && *l >= 0.0, "{model:?}: {l}");
        assert!(l >= s, "{model:?}: {small} B -> {s}, {large} B -> {l}");
    }
}

proptest! {
    #[test]
    fn logp_is_finite_non_negative_monotone(m in logp(), a in 0u64..1 << 40, b in 0u64..1 << 40) {
        assert_finite_non_negative_monotone(&m, a, b);
    }

    #[test]
    fn loggp_is_finite_non_negative_monotone(m in loggp(), a in 0u64..1 << 40, b in 0u64..1 << 40) {
        assert_finite_non_negative_monotone(&m, a, b);
    }

    #[test]
    fn pram_is_finite_non_negative_monotone(c in time(), a in 0u64..1 << 40, b in 0u64..1 << 40) {
        assert_finite_non_negative_monotone(&Pram::new(c).unwrap(), a, b);
    }

    /// A protocol list is monotone inside each range (not across a switch).
    #[test]
    fn protocols_are_monotone_within_each_range(p in protocols(), a in 0u64..1 << 25, b in 0u64..1 << 25) {
        if p.range_index(a) == p.range_index(b) {
            assert_finite_non_negative_monotone(&p, a, b);
        }
    }

    /// Culler et al., PPoPP 1993 for long messages, checked against a simulation of the word-by-word injection:
    /// word k leaves the sender at k * max(g, o) (after its overhead), the last word arrives L
    /// later and costs the receiver o.
    #[test]
    fn logp_long_messages_inject_word_by_word(m in logp(), bytes in 0u64..100_000) {
        let words = bytes.div_ceil(m.word_bytes()).max(1);
        let mut last_injection_end = 0.0;
        for k in 0..words {
            let start = k as f64 * m.gap().max(m.overhead());
            last_injection_end = start + m.overhead();
        }
        let arrival = last_injection_end + m.latency() + m.overhead();
        assert_rel(m.p2p(&Message::contiguous(bytes)), arrival, SAME_PREDICTION_RELATIVE);
    }

    /// LogGP with G = 0 and LogP with w = 1 agree on one-message sizes (0 and 1 byte).
    #[test]
    fn loggp_without_g_is_logp_with_one_byte_words(
        l in time(), o in time(), g in time(), bytes in 0u64..2
    ) {
        let gp = LogGP::new(l, o, g, 0.0).unwrap();
        let lp = LogP::new(l, o, g, 1).unwrap();
        let msg = Message::contiguous(bytes);
        for (a, b) in every_quantity(&gp, &msg).iter().zip(&every_quantity(&lp, &msg)) {
            assert_rel(*a, *b, SAME_PREDICTION_RELATIVE);
        }
    }

    /// A protocol list with one range is its model, for every quantity.
    #[test]
    fn one_range_is_its_model(m in loggp(), first in 0u64..2, bytes in 0u64..1 << 40) {
        let msg = Message::contiguous(bytes);
        let expected = every_quantity_bits(&m, &msg);
        let single = Protocols::single(m.clone());
        let from_new = Protocols::new(vec![ProtocolRange::new(first, None, m)]).unwrap();
        assert_eq!(every_quantity_bits(&single, &msg), expected);
        assert_eq!(every_quantity_bits(&from_new, &msg), expected);
    }

    /// The range picked for a size is the one that contains it.
    #[test]
    fn range_lookup_contains_the_size(p in protocols(), bytes in 1u64..1 << 25) {
        assert!(p.ranges()[p.range_index(bytes)].contains(bytes));
    }

    /// Interpolation reproduces every measured point exactly and stays between neighbours.
    #[test]
    fn table1d_hits_points_and_stays_between_neighbours(
        points in prop::collection::btree_map(0u32..1_000_000, -1e3..1e3f64, 1..64),
        t in 0.0..1.0f64,
    ) {
        let (sizes, values): (Vec<f64>, Vec<f64>) =
            points.iter().map(|(s, v)| (f64::from(*s), *v)).unzip();
        let table = Table1D::new(sizes.clone(), values.clone()).unwrap();
        for (s, v) in sizes.iter().zip(&values) {
            assert_eq!(table.eval(*s).to_bits(), v.to_bits());
        }
        for k in 0..sizes.len().saturating_sub(1) {
            let x = sizes[k] + t * (sizes[k + 1] - sizes[k]);
            let y = table.eval(x);
            let (lo, hi) = (values[k].min(values[k + 1]), values[k].max(values[k + 1]));
            let slack = 4.0 * f64::EPSILON * hi.abs().max(lo.abs());
            assert!(y >= lo - slack && y <= hi + slack, "{y} outside [{lo}, {hi}]");
        }
    }

    /// The same for a grid: grid points exactly, bilinear values inside each cell's range.
    #[test]
    fn table2d_hits_points_and_stays_between_neighbours(
        sizes in prop::collection::btree_set(0u32..1_000_000, 1..8),
        strides in prop::collection::btree_set(1u32..100_000, 1..8),
        seed_values in prop::collection::vec(-1e3..1e3f64, 64),
        t in 0.0..1.0f64,
        u in 0.0..1.0f64,
    ) {
        let sizes: Vec<f64> = sizes.into_iter().map(f64::from).collect();
        let strides: Vec<f64> = strides.into_iter().map(f64::from).collect();
        let values: Vec<Vec<f64>> = (0..sizes.len())
            .map(|i| (0..strides.len()).map(|j| seed_values[i * 8 + j]).collect())
            .collect();
        let table = Table2D::new(sizes.clone(), strides.clone(), values.clone()).unwrap();
        for (i, s) in sizes.iter().enumerate() {
            for (j, d) in strides.iter().enumerate() {
                assert_eq!(table.eval(*s, *d).to_bits(), values[i][j].to_bits());
            }
        }
        for i in 0..sizes.len().saturating_sub(1) {
            for j in 0..strides.len().saturating_sub(1) {
                let s = sizes[i] + t * (sizes[i + 1] - sizes[i]);
                let d = strides[j] + u * (strides[j + 1] - strides[j]);
                let corners = [values[i][j], values[i + 1][j], values[i][j + 1], values[i + 1][j + 1]];
                let lo = corners.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = corners.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let slack = 8.0 * f64::EPSILON * hi.abs().max(lo.abs());
                let y = table.eval(s, d);
                assert!(y >= lo - slack && y <= hi + slack, "{y} outside [{lo}, {hi}]");
            }
        }
        // outside the stride grid the nearest stride column is used
        let last = *strides.last().unwrap();
        assert_eq!(table.eval(sizes[0], last * 2.0).to_bits(), values[0][strides.len() - 1].to_bits());
        assert_eq!(table.eval(sizes[0], 0.0).to_bits(), values[0][0].to_bits());
    }
}

#[test]
fn logp_long_message_by_hand() {
    // L = 10 µs, o = 2 µs, g = 4 µs, w = 8 B; 100 B = 13 words:
    // 2o + L + 12 max(g, o) = 4 + 10 + 48 = 62 µs (the memory-logP paper's form, with 13
    // intervals, would give 66 µs).
    let m = LogP::new(10e-6, 2e-6, 4e-6, 8).unwrap();
    assert_rel(
        m.p2p(&Message::contiguous(100)),
        62e-6,
        SAME_PREDICTION_RELATIVE,
    );
    // exactly one word: 2o + L = 14 µs; nine bytes are two words: 18 µs
    assert_rel(
        m.p2p(&Message::contiguous(8)),
        14e-6,
        SAME_PREDICTION_RELATIVE,
    );
    assert_rel(
        m.p2p(&Message::contiguous(9)),
        18e-6,
        SAME_PREDICTION_RELATIVE,
    );
    // overhead-bound injection: g = 1 µs < o = 2 µs, 3 words: 4 + 10 + 2 * 2 = 18 µs
    let o_bound = LogP::new(10e-6, 2e-6, 1e-6, 8).unwrap();
    assert_rel(
        o_bound.p2p(&Message::contiguous(24)),
        18e-6,
        SAME_PREDICTION_RELATIVE,
    );
}

#[test]
fn table_extrapolates_linearly_beyond_both_ends() {
    // points (10, 1), (20, 3), (40, 4): slope 0.2 on the left, 0.05 on the right
    let t = Table1D::new(vec![10.0, 20.0, 40.0], vec![1.0, 3.0, 4.0]).unwrap();
    assert_rel(t.eval(0.0), -1.0, SAME_PREDICTION_RELATIVE); // 1 - 10 * 0.2
    assert_rel(t.eval(15.0), 2.0, SAME_PREDICTION_RELATIVE);
    assert_rel(t.eval(30.0), 3.5, SAME_PREDICTION_RELATIVE);
    assert_rel(t.eval(100.0), 7.0, SAME_PREDICTION_RELATIVE); // 4 + 60 * 0.05
    assert_rel(
        Table1D::constant(2.5).unwrap().eval(1e9),
        2.5,
        SAME_PREDICTION_RELATIVE,
    );
    assert_rel(
        Table1D::linear(1.0, 0.5).unwrap().eval(10.0),
        6.0,
        SAME_PREDICTION_RELATIVE,
    );
}
