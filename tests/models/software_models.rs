//! log_n P, log_3 P, memory logP and copy-transfer: the papers' numbers, exact conversions into
//! log_n P, monotonicity, and validation.

use crate::common;

use commcost::models::copy_transfer::Composition;
use commcost::models::copy_transfer::Stage;
use commcost::models::lognp::Hop;
use commcost::models::lognp::SizeCost;
use commcost::models::lognp::StrideCost;
use commcost::models::memory_logp::CacheHierarchy;
use commcost::models::memory_logp::CacheLevel;
use commcost::table::Table1D;
use commcost::table::Table2D;
use commcost::{
    CommModel, CopyTransfer, Log3P, LogGP, LogNP, LogP, MemoryLogP, MemoryNetworkLogP, Message,
    ParameterError, Pram, presets,
};
use common::{HAND_RELATIVE, SAME_PREDICTION_RELATIVE, US, assert_rel};
use proptest::prelude::*;

/// 16 KiB of doubles at a 1 KiB stride: the Titan measurement.
fn titan_message() -> Message {
    Message::vector(2048, 8, 1024).unwrap()
}

#[test]
fn titan_reproduces_the_measured_half_round_trips() {
    let titan = presets::titan_log3p();
    let msg = titan_message();
    // T01(s, d) = o_mw + l_mw + o_net = 29 + 420 + 131 = 580 µs (measured in the paper)
    assert_rel(titan.p2p(&msg), 580.0 * US, HAND_RELATIVE);
    // T00(s, d) = o_mw + l_mw + T_mem = 29 + 420 + 3 = 452 µs (measured in the paper)
    assert_rel(
        titan.send_to_self(&msg, 3.0 * US),
        452.0 * US,
        HAND_RELATIVE,
    );
    let b = titan.breakdown(&msg);
    assert_rel(b.middleware_overhead, 29.0 * US, HAND_RELATIVE);
    assert_rel(b.middleware_latency, 420.0 * US, HAND_RELATIVE);
    assert_rel(b.network_overhead, 131.0 * US, HAND_RELATIVE);
    // contiguous 16 KiB pays no middleware latency: 29 + 131 = 160 µs (the paper's T01(s))
    assert_rel(
        titan.p2p(&Message::contiguous(16384)),
        160.0 * US,
        HAND_RELATIVE,
    );
}

/// lognp §4.3.3: linear broadcast `P (o_mw/2 + l_mw/2) + o_net`, tree `h (o_mw + l_mw + o_net)`,
/// reproduced from the trait's per-message quantities (Cameron, Ge & Sun 2007, §4.3.3: `p2p + (P-2) interval` and
/// `h p2p + (h-1) gap`).
#[test]
fn titan_broadcast_formulas_follow_from_the_trait() {
    let titan = presets::titan_log3p();
    let msg = titan_message();
    let (o_mw, l_mw, o_net) = (29.0 * US, 420.0 * US, 131.0 * US);
    for p in 2u32..=64 {
        let linear = titan.p2p(&msg) + f64::from(p - 2) * titan.send_interval(&msg);
        assert_rel(
            linear,
            f64::from(p) * (o_mw / 2.0 + l_mw / 2.0) + o_net,
            HAND_RELATIVE,
        );
        let h = f64::from(p.next_power_of_two().trailing_zeros());
        let tree = h * titan.p2p(&msg) + (h - 1.0) * titan.gap(&msg);
        assert_rel(tree, h * (o_mw + l_mw + o_net), HAND_RELATIVE);
    }
}

#[test]
fn terms_match_the_papers_counts() {
    let logp = LogP::new(1.0, 1.0, 1.0, 8).unwrap();
    let loggp = LogGP::new(1.0, 1.0, 1.0, 1.0).unwrap();
    assert_eq!(LogNP::from(logp).terms(), 3);
    assert_eq!(LogNP::from(loggp).terms(), 4);
    assert_eq!(LogNP::from(Pram::unit()).terms(), 1);
    // copy-transfer: N S (1 + D) with S = 1 rate per stage and D = 3 strides
    let stage = |name| {
        Stage::new(name, 1e9, 0.0)
            .unwrap()
            .with_strided_bandwidth(vec![16.0, 64.0, 256.0], vec![8e8, 5e8, 2e8])
            .unwrap()
    };
    let chain =
        CopyTransfer::new(vec![stage("a"), stage("b")], Composition::Sequential, 8).unwrap();
    assert_eq!(LogNP::from(chain).terms(), 2 * (1 + 3));
    // log_3 P on a uniform S x D grid: 3S + 2SD (the network hop has no l table)
    let (s, d) = (4usize, 3usize);
    let sizes: Vec<f64> = (1..=s).map(|k| 1024.0 * k as f64).collect();
    let strides = vec![16.0, 64.0, 256.0];
    let o = Table1D::new(sizes.clone(), vec![1e-6; s]).unwrap();
    let l = Table2D::new(sizes.clone(), strides, vec![vec![1e-6; d]; s]).unwrap();
    let log3p = Log3P::new(o.clone(), l, o, 8).unwrap();
    assert_eq!(LogNP::from(log3p).terms(), 3 * s + 2 * s * d);
}

#[test]
fn memory_network_coupling_by_hand() {
    // o_m = 1 ns/B, l_m = 3 ns/B at stride 64; LogP L = 20 µs, g = 4 µs, w_n = 1 KiB
    let l = Table2D::new(vec![0.0], vec![8.0, 64.0], vec![vec![0.0, 3e-9]]).unwrap();
    let memory = MemoryLogP::new(Table1D::constant(1e-9).unwrap(), Some(l), 8, 8).unwrap();
    let network = LogP::new(20e-6, 2e-6, 4e-6, 1024).unwrap();
    let coupled = MemoryNetworkLogP::new(memory.clone(), network);
    // 4096 B of doubles at stride 64 (512 elements): 2 · 4096 · 4 ns + 20 + 3 · 4 µs
    // = 32.768 + 32 = 64.768 µs
    let strided = Message::vector(512, 8, 64).unwrap();
    assert_rel(coupled.p2p(&strided), 64.768e-6, HAND_RELATIVE);
    // one network word: the paper's projected cost per byte 2 (o_m + l_m) + L_n / w_n
    let one_word = Message::vector(128, 8, 64).unwrap(); // 1024 B
    assert_rel(
        coupled.p2p(&one_word) / 1024.0,
        2.0 * 4e-9 + 20e-6 / 1024.0,
        HAND_RELATIVE,
    );
    // memory logP alone: word cost w_m (o + l) = 8 · 4 ns
    assert_rel(memory.word_cost(&strided), 32e-9, HAND_RELATIVE);
}

#[test]
fn cache_predictor_by_hand() {
    // Pentium III (memory logP §6): 32 B lines, L1 16 KiB (7 cycles), L2 256 KiB (70 cycles)
    let p3 = presets::pentium3_beowulf_caches();
    let cycle = 1.0 / 933e6;
    // 4 KiB of ints at stride 64: 1024 source lines + 128 destination lines = 36 KiB > L1:
    // 1152 · 7 cycles; contiguous: 256 lines = 8 KiB fits L1: 0 → l = 8064 cycles / 4096 B
    assert_rel(
        p3.latency_per_byte(4096, 4, 64),
        8064.0 * cycle / 4096.0,
        HAND_RELATIVE,
    );
    // 128 KiB at stride 64: 32768 + 4096 lines = 1152 KiB > L2: 36864 · 77 cycles;
    // contiguous: 8192 lines = 256 KiB, fits L2 exactly but not L1: 8192 · 7 cycles
    // l = (2838528 - 57344) / 131072 = 21.21875 cycles per byte
    assert_rel(
        p3.latency_per_byte(131_072, 4, 64),
        21.21875 * cycle,
        HAND_RELATIVE,
    );
    // unit stride: nothing extra
    assert_eq!(p3.latency_per_byte(131_072, 4, 4).to_bits(), 0f64.to_bits());
    // the plateau of Fig. 5: l grows with the footprint
    let sizes = [1024u64, 4096, 16384, 65536, 262_144];
    let table = p3.latency_table(&sizes, &[4, 16, 64, 256], 4).unwrap();
    let model = MemoryLogP::new(Table1D::constant(1e-9).unwrap(), Some(table), 4, 4).unwrap();
    let cost = |s: u64| model.per_byte(&Message::vector(s / 4, 4, 64).unwrap());
    assert!(cost(262_144) > cost(16384) && cost(16384) > cost(1024));
    assert!(CacheHierarchy::new(32, vec![]).is_err());
    assert!(
        CacheHierarchy::new(
            32,
            vec![
                CacheLevel {
                    capacity_bytes: 64,
                    miss_penalty: 1.0
                },
                CacheLevel {
                    capacity_bytes: 32,
                    miss_penalty: 1.0
                },
            ]
        )
        .is_err()
    );
}

#[test]
fn crossover_of_a_measured_log3p_matches_a_scan() {
    // o_mw grows faster than o_net; l_mw at 256 B stride pushes the crossover left
    let sizes = vec![1024.0, 4096.0, 16384.0, 65536.0];
    let o_mw = Table1D::new(sizes.clone(), vec![10e-6, 20e-6, 60e-6, 230e-6]).unwrap();
    let o_net = Table1D::new(sizes.clone(), vec![30e-6, 45e-6, 100e-6, 300e-6]).unwrap();
    let l_mw = Table2D::new(
        sizes.clone(),
        vec![8.0, 256.0],
        vec![
            vec![0.0, 2e-6],
            vec![0.0, 8e-6],
            vec![0.0, 30e-6],
            vec![0.0, 100e-6],
        ],
    )
    .unwrap();
    let m = Log3P::new(o_mw, l_mw, o_net, 8).unwrap();
    for stride in [8u64, 64, 256, 1024] {
        let scan = (1024u64..=65536).find(|&s| {
            let msg = Message::vector(s, 1, stride).unwrap();
            let b = m.breakdown(&msg);
            b.middleware() > b.network_overhead
        });
        assert_eq!(m.middleware_crossover(stride), scan, "stride {stride}");
    }
}

#[test]
fn invalid_parameters_are_typed_errors() {
    // negative cost in a hop
    let negative = Table1D::new(vec![0.0, 1.0], vec![1.0, -1.0]).unwrap();
    let err = LogNP::new(vec![Hop::new(SizeCost::Table(negative.clone()))], 8).unwrap_err();
    assert!(matches!(
        err,
        ParameterError::InChain { name: "hop", index: 0, ref source }
            if matches!(**source, ParameterError::NegativeCost { index: 1, .. })
    ));
    assert!(matches!(
        Log3P::new(
            negative.clone(),
            Table2D::new(vec![0.0], vec![64.0], vec![vec![0.0]]).unwrap(),
            negative,
            8
        ),
        Err(ParameterError::NegativeCost {
            name: "middleware_overhead",
            ..
        })
    ));
    // l non-zero at unit stride
    let l = Table2D::new(vec![0.0], vec![8.0, 64.0], vec![vec![1e-6, 2e-6]]).unwrap();
    let o = Table1D::constant(1e-6).unwrap();
    assert!(matches!(
        Log3P::new(o.clone(), l.clone(), o.clone(), 8),
        Err(ParameterError::StridedCostAtUnitStride { stride: 8.0, .. })
    ));
    assert!(matches!(
        MemoryLogP::new(o.clone(), Some(l.clone()), 8, 8),
        Err(ParameterError::StridedCostAtUnitStride { .. })
    ));
    let hop = Hop::new(SizeCost::Table(o.clone())).with_strided(StrideCost::Table(l));
    assert!(LogNP::new(vec![hop], 8).is_err());
    // zero and negative bandwidths
    assert!(matches!(
        Stage::new("wire", 0.0, 0.0),
        Err(ParameterError::OutOfRange {
            name: "contiguous_bandwidth",
            ..
        })
    ));
    assert!(
        Stage::new("wire", 1e9, 0.0)
            .unwrap()
            .with_strided_bandwidth(vec![16.0], vec![0.0])
            .is_err()
    );
    assert!(matches!(
        Stage::new("wire", 1e9, 0.0)
            .unwrap()
            .with_strided_bandwidth(vec![16.0], vec![2e9]),
        Err(ParameterError::StridedFasterThanContiguous { .. })
    ));
    // a strided bandwidth at the unit stride that differs from the contiguous one
    let odd = Stage::new("pack", 1e9, 0.0)
        .unwrap()
        .with_strided_bandwidth(vec![8.0, 64.0], vec![9e8, 5e8])
        .unwrap();
    assert!(matches!(
        CopyTransfer::new(vec![odd], Composition::Sequential, 8),
        Err(ParameterError::InChain { name: "stage", .. })
    ));
    // empty chains
    assert_eq!(
        LogNP::new(vec![], 8),
        Err(ParameterError::EmptyChain { name: "hops" })
    );
    assert_eq!(
        CopyTransfer::new(vec![], Composition::Pipelined, 8),
        Err(ParameterError::EmptyChain { name: "stages" })
    );
    let zero_word = SizeCost::Words {
        first_word: 1.0,
        per_extra_word: 1.0,
        word_bytes: 0,
    };
    assert!(LogNP::new(vec![Hop::new(zero_word)], 8).is_err());
}

// ----- generators -------------------------------------------------------------------------

fn time() -> impl Strategy<Value = f64> {
    0.0..1e-4
}

/// A non-negative table on 1-6 sizes; non-decreasing when `sorted`.
fn table1d(sorted: bool, per_byte: bool) -> impl Strategy<Value = Table1D> {
    let scale = if per_byte { 1e-8 } else { 1e-4 };
    (
        prop::collection::btree_set(0u32..200_000, 1..6),
        prop::collection::vec(0.0..scale, 6),
    )
        .prop_map(move |(sizes, mut values)| {
            let n = sizes.len();
            values.truncate(n);
            if sorted {
                values.sort_by(f64::total_cmp);
            }
            Table1D::new(sizes.into_iter().map(f64::from).collect(), values).unwrap()
        })
}

/// A strided-cost grid, zero at strides <= 8 (the unit), non-decreasing in size when `sorted`.
fn table2d(sorted: bool, per_byte: bool) -> impl Strategy<Value = Table2D> {
    let scale = if per_byte { 1e-8 } else { 1e-4 };
    (
        prop::collection::btree_set(0u32..200_000, 1..5),
        prop::collection::btree_set(1u32..4096, 1..5),
        prop::collection::vec(0.0..scale, 25),
    )
        .prop_map(move |(sizes, strides, seeds)| {
            let strides: Vec<f64> = strides.into_iter().map(f64::from).collect();
            let n = sizes.len();
            let values = (0..strides.len())
                .map(|j| {
                    let mut column: Vec<f64> = (0..n)
                        .map(|i| {
                            if strides[j] <= 8.0 {
                                0.0
                            } else {
                                seeds[i * 5 + j]
                            }
                        })
                        .collect();
                    if sorted {
                        column.sort_by(f64::total_cmp);
                    }
                    column
                })
                .collect::<Vec<_>>();
            let rows = (0..n)
                .map(|i| values.iter().map(|c| c[i]).collect())
                .collect();
            Table2D::new(sizes.into_iter().map(f64::from).collect(), strides, rows).unwrap()
        })
}

fn log3p(sorted: bool) -> impl Strategy<Value = Log3P> {
    (
        table1d(sorted, false),
        table2d(sorted, false),
        table1d(sorted, false),
    )
        .prop_map(|(o, l, net)| Log3P::new(o, l, net, 8).unwrap())
}

fn memory(sorted: bool) -> impl Strategy<Value = MemoryLogP> {
    (
        table1d(sorted, true),
        prop::option::of(table2d(sorted, true)),
    )
        .prop_map(|(o, l)| MemoryLogP::new(o, l, 8, 8).unwrap())
}

fn logp() -> impl Strategy<Value = LogP> {
    (time(), time(), time(), 1u64..4096).prop_map(|(l, o, g, w)| LogP::new(l, o, g, w).unwrap())
}

fn stage() -> impl Strategy<Value = Stage> {
    (
        1e8..1e10f64,
        0.0..1e-5f64,
        prop::option::of((
            prop::collection::btree_set(9u32..4096, 1..5),
            prop::collection::vec(0.05..1.0f64, 5),
        )),
    )
        .prop_map(|(bw, startup, strided)| {
            let stage = Stage::new("stage", bw, startup).unwrap();
            match strided {
                Some((strides, fractions)) => {
                    let n = strides.len();
                    stage
                        .with_strided_bandwidth(
                            strides.into_iter().map(f64::from).collect(),
                            fractions[..n].iter().map(|f| f * bw).collect(),
                        )
                        .unwrap()
                }
                None => stage,
            }
        })
}

fn copy_transfer() -> impl Strategy<Value = CopyTransfer> {
    (prop::collection::vec(stage(), 1..5), any::<bool>()).prop_map(|(stages, pipelined)| {
        let composition = if pipelined {
            Composition::Pipelined
        } else {
            Composition::Sequential
        };
        CopyTransfer::new(stages, composition, 8).unwrap()
    })
}

/// Contiguous messages and vectors of 1-16-byte elements at strides up to 8 KiB.
fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        (0u64..300_000).prop_map(Message::contiguous),
        (1u64..20_000, 1u64..16, 0u64..8192).prop_map(|(count, block, gap)| Message::vector(
            count,
            block,
            block + gap
        )
        .unwrap()),
    ]
}

/// The conversion predicts the same times, and its hops pass LogNP's own validation.
fn assert_same(model: &dyn CommModel, converted: &LogNP, msg: &Message) {
    assert_rel(converted.p2p(msg), model.p2p(msg), SAME_PREDICTION_RELATIVE);
    assert!(LogNP::new(converted.hops().to_vec(), converted.unit_stride()).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn logp_as_lognp(m in logp(), msg in message()) {
        assert_same(&m.clone(), &LogNP::from(m), &msg);
    }

    #[test]
    fn loggp_as_lognp(l in time(), o in time(), g in time(), big_g in 0.0..1e-8f64, msg in message()) {
        let m = LogGP::new(l, o, g, big_g).unwrap();
        assert_same(&m.clone(), &LogNP::from(m), &msg);
    }

    #[test]
    fn pram_as_lognp(c in time(), msg in message()) {
        let m = Pram::new(c).unwrap();
        assert_same(&m.clone(), &LogNP::from(m), &msg);
    }

    #[test]
    fn log3p_as_lognp(m in log3p(false), msg in message()) {
        assert_same(&m.clone(), &LogNP::from(m), &msg);
    }

    #[test]
    fn memory_logp_as_lognp(mem in memory(false), net in logp(), msg in message()) {
        assert_same(&mem.clone(), &LogNP::from(mem.clone()), &msg);
        let coupled = MemoryNetworkLogP::new(mem, net);
        assert_same(&coupled.clone(), &LogNP::from(coupled), &msg);
    }

    #[test]
    fn copy_transfer_as_lognp(m in copy_transfer(), msg in message()) {
        assert_same(&m.clone(), &LogNP::from(m), &msg);
    }

    /// Non-decreasing tables give non-decreasing costs in size, at any fixed layout, and a
    /// strided message never costs less than the contiguous one of the same bytes.
    #[test]
    fn costs_are_monotone_and_strided_costs_more(
        m in log3p(true),
        mem in memory(true),
        ct in copy_transfer(),
        a in 1u64..20_000,
        b in 1u64..20_000,
        element in 1u64..16,
        gap in 0u64..4096,
    ) {
        let (small, large) = (a.min(b), a.max(b));
        let models: [&dyn CommModel; 4] = [&m, &mem, &ct, &LogNP::from(m.clone())];
        for model in models {
            let v = |count| Message::vector(count, element, element + gap).unwrap();
            let (ts, tl) = (model.p2p(&v(small)), model.p2p(&v(large)));
            prop_assert!(ts.is_finite() && ts >= 0.0);
            prop_assert!(tl >= ts, "{model:?}: {small} -> {ts}, {large} -> {tl}");
            let contiguous = model.p2p(&Message::contiguous(v(large).bytes()));
            prop_assert!(tl >= contiguous, "strided {tl} < contiguous {contiguous}");
        }
    }
}
