//! Property suite over the public API with hostile inputs: 0, 1, `u64::MAX`, NaN, ±inf,
//! subnormals, huge values, empty and long slices, random bytes as JSON. For every constructor,
//! calculator, parser, fit, probe plan and collective: no panic, and every `Ok` result is
//! finite and non-negative (times) or an exact count.
//!
//! 64 cases per property keep `cargo test` fast; run longer with
//! `PROPTEST_CASES=100000 cargo test --release --test no_panic_properties`.
//!
//! Not covered here: the calibration of LogGP from PRTT measurements, change detection and the
//! Netgauge parser (their modules carry their own hostile-input tests).

use std::time::Duration;

use commcost::calibrate::{
    CopyMeasurements, FeatureSet, Log3PMeasurements, MlinesSample, Order, RegressionVariant,
    derive_log3p, derive_memory_logp, fit_mlines_model, fit_regression, least_squares,
    relative_errors,
};
use commcost::collectives::{
    Allgather, Allreduce, Alltoall, Barrier, Broadcast, Gather, Problem, Reduce, Scan, Scatter,
    rank,
};
use commcost::mlines::{
    NestedLayout, columns, floor_sum, lines_touched, nested_lines, paper_column_bounds,
    paper_row_bounds, per_row_line_sum, rows, tight_column_bounds, vector_lines,
    vector_lines_by_enumeration,
};
use commcost::probe::{
    Budget, CopyKind, CopyPlan, Log3PPlan, MatrixPlan, Methodology, TcpLoopbackProber,
    measure_copies, measure_matrix_transfers,
};
use commcost::{
    AffineCost, CacheHierarchy, CacheLevel, CommModel, Composition, CopyTransfer, Hop, Log3P,
    LogGP, LogGpo, LogNP, LogP, Mechanism, MemoryLogP, MemoryNetworkLogP, Message, MlinesModel,
    ModelSpec, Pram, Progress, ProtocolRange, Protocols, SizeCost, Stage, StrideCost, Table1D,
    Table2D, Timeline,
};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Any f64, with the hostile ones over-represented.
fn real() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(1.0),
        Just(-1.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(1e-320),
        Just(f64::MIN_POSITIVE),
        Just(f64::MAX),
        Just(1e300),
        Just(1e9),
        any::<f64>(),
        0.0..1e-3,
        0.0..1e-3,
        0.0..1e12,
    ]
}

/// Any u64, with the edges over-represented.
fn int() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(2),
        Just(8),
        Just(64),
        Just(u64::MAX),
        Just(u64::MAX - 1),
        Just(1 << 32),
        Just(1 << 40),
        Just(1 << 63),
        any::<u64>(),
        0u64..4096,
        0u64..4096,
    ]
}

fn reals(max: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(real(), 0..max)
}

fn ints(max: usize) -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(int(), 0..max)
}

/// Increasing axes of plausible sizes (so that many tables are valid).
fn axis() -> impl Strategy<Value = Vec<f64>> {
    prop_oneof![
        reals(5),
        prop::collection::btree_set(0u64..1 << 20, 1..5)
            .prop_map(|s| s.into_iter().map(|x| x as f64).collect()),
    ]
}

fn table1d() -> impl Strategy<Value = Result<Table1D, commcost::ParameterError>> {
    (axis(), reals(5)).prop_flat_map(|(sizes, values)| {
        let n = sizes.len();
        prop_oneof![
            Just(Table1D::new(sizes.clone(), values)),
            prop::collection::vec(prop_oneof![real(), 0.0..1e-3], n)
                .prop_map(move |v| Table1D::new(sizes.clone(), v)),
        ]
    })
}

fn table2d() -> impl Strategy<Value = Result<Table2D, commcost::ParameterError>> {
    (axis(), axis()).prop_flat_map(|(sizes, strides)| {
        let (n, m) = (sizes.len(), strides.len());
        prop::collection::vec(
            prop::collection::vec(prop_oneof![real(), Just(0.0), 0.0..1e-3], m),
            n,
        )
        .prop_map(move |v| Table2D::new(sizes.clone(), strides.clone(), v))
    })
}

fn message() -> impl Strategy<Value = Message> {
    (int(), int(), int(), int()).prop_map(|(count, block, stride, offset)| {
        Message::vector(count, block, stride)
            .unwrap_or(Message::contiguous(block))
            .with_offset(offset)
    })
}

fn fixed_messages() -> Vec<Message> {
    let mut out: Vec<Message> = [0, 1, 8, 4096, 12289, 1 << 40, u64::MAX]
        .into_iter()
        .map(Message::contiguous)
        .collect();
    out.push(Message::vector(1000, 8, 64).unwrap());
    out.push(Message::vector(u64::MAX / 16, 8, 16).unwrap());
    out.push(Message::vector(2, u64::MAX / 2, u64::MAX / 2).unwrap());
    out
}

fn time_ok(what: &str, t: f64) -> Result<(), TestCaseError> {
    prop_assert!(t.is_finite() && t >= 0.0, "{} = {}", what, t);
    Ok(())
}

/// Every per-message quantity of a model is finite and non-negative, and its affine pieces
/// evaluate to finite numbers.
fn check_model(model: &dyn CommModel, extra: &Message) -> Result<(), TestCaseError> {
    for msg in fixed_messages().iter().chain(std::iter::once(extra)) {
        let q = model.quantities(msg);
        time_ok("p2p", q.p2p)?;
        time_ok("send_overhead", q.send_overhead)?;
        time_ok("recv_overhead", q.recv_overhead)?;
        time_ok("send_interval", q.send_interval)?;
        time_ok("gap", q.gap)?;
        time_ok("p2p (direct)", model.p2p(msg))?;
        if let Some(line) = model.p2p_affine(msg.bytes()) {
            prop_assert!(line.at(msg.bytes()).is_finite());
            prop_assert!(line.first <= line.last);
        }
    }
    let _ = model.size_breakpoints();
    Ok(())
}

fn check_collectives(
    model: &dyn CommModel,
    processes: u64,
    msg: Message,
) -> Result<(), TestCaseError> {
    let problem = Problem::new(processes, msg);
    macro_rules! each {
        ($($a:ty),*) => {$(
            if let Ok(ranking) = rank::<$a>(model, &problem) {
                for (a, t) in ranking {
                    prop_assert!(t.is_finite() && t >= 0.0, "{:?}: {}", a, t);
                }
            }
        )*};
    }
    each!(
        Broadcast, Scan, Reduce, Allreduce, Allgather, Gather, Scatter, Barrier, Alltoall
    );
    Ok(())
}

fn processes() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(2),
        Just(3),
        Just(64),
        Just(u64::MAX),
        0u64..1 << 20,
        any::<u64>()
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn scalar_models(a in real(), b in real(), c in real(), d in real(), p in int(), w in int(),
                     msg in message(), procs in processes()) {
        if let Ok(m) = LogP::new(a, b, c, p, w) {
            check_model(&m, &msg)?;
            check_model(&LogNP::from(m.clone()), &msg)?;
            check_collectives(&m, procs, msg)?;
            prop_assert!(m.words(msg.bytes()) >= 1);
        }
        if let Ok(m) = LogGP::new(a, b, c, d, p) {
            check_model(&m, &msg)?;
            check_model(&LogNP::from(m.clone()), &msg)?;
            check_collectives(&m, procs, msg)?;
            time_ok("cumulative_gap", m.cumulative_gap(msg.bytes()))?;
        }
        if let Ok(m) = Pram::new(a) {
            check_model(&m, &msg)?;
            check_collectives(&m, procs, msg)?;
        }
        if let Ok(m) = MlinesModel::new(a, b, c, p) {
            check_model(&m, &msg)?;
            let _ = m.lines(&msg);
            check_collectives(&m, procs, msg)?;
        }
        let _ = Table1D::constant(a).map(|t| t.eval(msg.bytes() as f64));
        let _ = Table1D::linear(a, b).map(|t| t.eval(msg.bytes() as f64));
        let _ = MemoryLogP::constant_overhead(a);
        let _ = msg.strided_access(w);
        let _ = (msg.bytes(), msg.extent(), msg.count(), msg.stride(), msg.is_contiguous());
        let _ = commcost::calibrate::MlinesSample::from_message(&msg, p, a);
        if let Ok(m) = LogGP::new(a, b, c, d, p) {
            let _ = commcost::collectives::best::<Broadcast>(&m, &Problem::new(procs, msg));
        }
        if let Ok(stage) = Stage::new("s", a, b) {
            let _ = stage.time_per_byte(Some(w));
            let _ = stage.clone().with_strided_bandwidth(vec![16.0, 64.0], vec![c, d]);
            for composition in [Composition::Sequential, Composition::Pipelined] {
                if let Ok(m) = CopyTransfer::new(vec![stage.clone()], composition, w) {
                    check_model(&m, &msg)?;
                    for t in m.stage_times(&msg) {
                        time_ok("stage time", t)?;
                    }
                    check_model(&LogNP::from(m), &msg)?;
                }
            }
        }
    }

    #[test]
    fn protocol_lists(starts in ints(5), ends in prop::collection::vec(prop::option::of(int()), 0..5),
                      l in real(), o in real(), msg in message()) {
        let Ok(model) = LogGP::new(l.abs().min(1e-3), o.abs().min(1e-3), 1e-6, 1e-9, 2) else {
            return Ok(());
        };
        let ranges: Vec<_> = starts
            .iter()
            .zip(&ends)
            .map(|(&s, &e)| ProtocolRange::new(s, e, model.clone()))
            .collect();
        if let Ok(p) = Protocols::new(ranges) {
            check_model(&p, &msg)?;
            check_model(p.model_for(msg.bytes()), &msg)?;
            let _ = p.range_index(msg.bytes());
            let _ = p.switch_points().count();
        }
        let pairs: Vec<_> = starts.iter().map(|&s| (s, model.clone())).collect();
        if let Ok(p) = Protocols::from_starts(pairs) {
            check_model(&p, &msg)?;
        }
    }

    #[test]
    fn tables(t in table1d(), u in table2d(), x in real(), y in real(), bytes in int()) {
        if let Ok(t) = t {
            prop_assert!(t.eval(bytes as f64).is_finite());
            let _ = t.eval(x);
            let line = t.affine_piece(bytes);
            prop_assert!(line.at(bytes).is_finite());
            let _ = t.non_negative_affine_piece(bytes);
            if t.check_non_negative("t").is_ok() {
                let hop = Hop::new(SizeCost::Table(t.clone())).with_gap(SizeCost::PerByte(t.clone()));
                let m = LogNP::new(vec![hop], 0).unwrap();
                check_model(&m, &Message::contiguous(bytes))?;
            }
        }
        if let Ok(u) = u {
            prop_assert!(u.eval(bytes as f64, y.abs().min(1e20)).is_finite());
            let _ = u.eval(x, y);
        }
    }

    #[test]
    fn lognp_hops(fixed in real(), per_byte in real(), words in int(), t in table1d(), u in table2d(),
                  unit in int(), msg in message(), procs in processes()) {
        let mut hops = vec![
            Hop::new(SizeCost::Linear { fixed, per_byte }),
            Hop::new(SizeCost::LongMessage { first_byte: fixed, per_byte }),
            Hop::new(SizeCost::Words { first_word: fixed, per_extra_word: per_byte, word_bytes: words }),
        ];
        if let Ok(t) = t {
            hops.push(Hop::new(SizeCost::PerByte(t.clone())).with_gap(SizeCost::Table(t)));
        }
        if let Ok(u) = u {
            hops.push(Hop::new(SizeCost::Linear { fixed: 0.0, per_byte: 0.0 })
                .with_strided(StrideCost::PerByte(u.clone())));
            hops.push(Hop::new(SizeCost::Linear { fixed: 0.0, per_byte: 0.0 })
                .with_strided(StrideCost::Table(u)));
        }
        // unvalidated parts evaluate without panicking (public enums)
        for h in &hops {
            let _ = h.cost(&msg, unit);
            let _ = h.overhead.eval(msg.bytes());
            let _ = h.overhead.affine_piece(msg.bytes());
        }
        for hop in hops.clone() {
            if let Ok(m) = LogNP::new(vec![hop], unit) {
                check_model(&m, &msg)?;
                let _ = m.terms();
            }
        }
        if let Ok(m) = LogNP::new(hops, unit) {
            check_model(&m, &msg)?;
            for t in m.hop_costs(&msg) {
                time_ok("hop cost", t)?;
            }
            check_collectives(&m, procs, msg)?;
        }
    }

    #[test]
    fn log3p_and_memory_logp(a in table1d(), b in table2d(), c in table1d(), unit in int(), word in int(),
                             msg in message(), x in real(), y in real(), z in real(), s in int(), d in int()) {
        if let (Ok(a), Ok(b), Ok(c)) = (a.clone(), b.clone(), c) {
            if let Ok(m) = Log3P::new(a.clone(), b.clone(), c, unit) {
                check_model(&m, &msg)?;
                time_ok("send_to_self", m.send_to_self(&msg, 0.0))?;
                let _ = m.middleware_crossover(d);
                check_model(&LogNP::from(m), &msg)?;
            }
            if let Ok(m) = MemoryLogP::new(a, Some(b), word, unit) {
                check_model(&m, &msg)?;
                check_model(&LogNP::from(m.clone()), &msg)?;
                time_ok("per_byte", m.per_byte(&msg))?;
                let _ = m.word_cost(&msg);
                if let Ok(network) = LogP::new(1e-6, 1e-6, 1e-6, 2, word) {
                    check_model(&MemoryNetworkLogP::new(m, network), &msg)?;
                }
            }
        }
        if let Ok(m) = Log3P::from_constants(x, y, z, s, d, unit) {
            check_model(&m, &msg)?;
        }
    }

    #[test]
    fn loggpo(l in real(), g in real(), eager in int(), c in real(), t1 in table1d(), t2 in table1d(),
              dep in any::<bool>(), e in 0usize..4, r in 0usize..4, msg in message(),
              times in prop::array::uniform5(real()), ratio in real()) {
        let mechanisms = [Mechanism::T, Mechanism::TA, Mechanism::Rat, Mechanism::Rta];
        let progress = if dep { Progress::Dependent } else { Progress::Independent };
        let (Ok(t1), Ok(t2)) = (t1, t2) else { return Ok(()) };
        if let Ok(m) = LogGpo::new(l, g, eager, progress, mechanisms[e], mechanisms[r], c, t1, t2) {
            check_model(&m, &msg)?;
            let timeline = Timeline { isend: times[0], irecv: times[1], send_wait: times[2],
                                      recv_wait: times[3], computation: times[4] };
            for t in [timeline, Timeline::balanced(times[4])] {
                if let Ok(o) = m.timeline(&msg, &t) {
                    for (what, v) in [("send_overhead", o.send_overhead), ("recv_overhead", o.recv_overhead),
                                      ("send_wait_overhead", o.send_wait_overhead),
                                      ("recv_wait_overhead", o.recv_wait_overhead), ("total", o.total)] {
                        time_ok(what, v)?;
                    }
                    prop_assert!(o.send_overlap.is_finite() && o.recv_overlap.is_finite());
                }
            }
            let _ = m.timeline(&msg, &Timeline::balanced(times[4]));
            if let Ok(comp) = m.computation_for_send_overlap(&msg, ratio) {
                time_ok("computation", comp)?;
            }
            if let Ok(t) = m.exposed_send_time(&msg, times[4]) {
                time_ok("exposed", t)?;
            }
        }
    }

    #[test]
    fn cache_hierarchies(line in int(), caps in ints(4), penalties in reals(4), bytes in int(),
                         element in int(), stride in int(), sizes in ints(4), strides in ints(4)) {
        let levels: Vec<_> = caps.iter().zip(&penalties)
            .map(|(&capacity_bytes, &miss_penalty)| CacheLevel { capacity_bytes, miss_penalty })
            .collect();
        if let Ok(h) = CacheHierarchy::new(line, levels) {
            time_ok("copy_time", h.copy_time(bytes, element, stride))?;
            time_ok("latency_per_byte", h.latency_per_byte(bytes, element, stride))?;
            time_ok("access_penalty", h.access_penalty(u128::from(bytes)))?;
            if let Ok(t) = h.latency_table(&sizes, &strides, element) {
                prop_assert!(t.num_entries() == sizes.len() * strides.len());
            }
        }
    }

    #[test]
    fn lines_calculators(n in int(), m in int(), a in int(), b in int(), c in int(), d in int(),
                         msg in message(), planes in int()) {
        let _ = floor_sum(n, m, a, b);
        // small inputs: exact against direct summation
        if n < 4096 && m > 0 && m < 1 << 20 {
            let direct: u128 = (0..n).map(|i| (u128::from(a) * u128::from(i) + u128::from(b)) / u128::from(m)).sum();
            prop_assert_eq!(floor_sum(n, m, a, b), Some(direct));
        }
        let _ = vector_lines(n, a, b, c, m);
        let _ = lines_touched(&msg, m);
        let _ = rows(n, a, b, c, d, m);
        let _ = columns(n, a, b, c, d, m);
        let _ = paper_row_bounds(n, a, m);
        let _ = paper_column_bounds(n, a, b, m);
        let _ = tight_column_bounds(n, a, b, m);
        let _ = per_row_line_sum(n, a, b, c, m);
        if let Ok(count) = vector_lines_by_enumeration(n % (1 << 12), a, b, c, m) {
            prop_assert_eq!(Ok(count), vector_lines(n % (1 << 12), a, b, c, m));
        }
        // block 0: nothing to walk
        prop_assert!(n <= 1 << 28 || a == 0 || vector_lines_by_enumeration(n, a, b, c, m).is_err());
        let layout = NestedLayout { planes, plane_stride: d, rows: n, row_stride: a, block: b, offset: c };
        let _ = nested_lines(&layout, m);
        // a plane of two rows with a long period, many planes: exact, quickly
        let layout = NestedLayout { planes, plane_stride: u64::MAX, rows: 2, row_stride: 1 << 40, block: 1 + a % 64, offset: c };
        let _ = nested_lines(&layout, 1 + m % (1 << 40));
    }

    #[test]
    fn affine_costs(intercept in real(), per_unit in real(), first in int(), last in int(), unit in int(), bytes in int()) {
        let line = AffineCost { intercept, first, per_unit, last, unit };
        let _ = line.at(bytes);
        let _ = line.contains(bytes);
        let _ = line.within(first, bytes);
        let _ = line.plus(AffineCost::everywhere(intercept, per_unit).in_units_of(unit));
    }

    #[test]
    fn fits(design in reals(24), columns in prop_oneof![Just(0usize), Just(1), Just(2), Just(3), Just(usize::MAX), 0usize..8],
            observations in reals(12), samples in prop::collection::vec(prop::array::uniform5(real()), 0..12),
            line in int(), split in 0usize..12) {
        if let Ok(fit) = least_squares(&design, columns, &observations) {
            prop_assert!(fit.coefficients().iter().all(|c| c.is_finite()));
            let _ = fit.predict(&design[..columns.min(design.len())]);
            let _ = fit.evaluate(&design, &observations);
        }
        let samples: Vec<MlinesSample> = samples.iter().map(|s| MlinesSample {
            messages: s[0], bytes: s[1], lines: s[2], operations: s[3], time: s[4],
        }).collect();
        let (training, test) = samples.split_at(split.min(samples.len()));
        for features in [FeatureSet::Standard, FeatureSet::Lines] {
            for (order, operations) in [(Order::First, false), (Order::Squares, true), (Order::CrossProducts, false)] {
                let variant = RegressionVariant { features, order, operations };
                if let Ok(fit) = fit_regression(variant, line, training, test) {
                    prop_assert!(fit.coefficients().iter().all(|c| c.is_finite()));
                    check_model(&fit, &Message::vector(100, 8, 64).unwrap())?;
                    let _ = fit.evaluate(test);
                }
            }
        }
        if let Ok(model) = fit_mlines_model(&samples, line) {
            check_model(&model, &Message::vector(100, 8, 64).unwrap())?;
        }
        let pairs: Vec<(f64, f64)> = observations.iter().zip(&design).map(|(&a, &b)| (a, b)).collect();
        if let Some((median, p90)) = relative_errors(&pairs) {
            prop_assert!(median.is_finite() && median >= 0.0 && p90.is_finite() && p90 >= median);
        }
    }

    #[test]
    fn derivations(sizes in ints(4), strides in ints(3), times in reals(16), unit in int(), msg in message()) {
        let n = sizes.len();
        let row = |k: usize| times.iter().cycle().skip(k).take(n).copied().collect::<Vec<f64>>();
        let m = Log3PMeasurements {
            sizes: sizes.clone(),
            self_contiguous: row(0),
            remote_contiguous: row(1),
            memory_copy: row(2),
            strides: strides.clone(),
            self_strided: (0..n).map(|i| times.iter().cycle().skip(i).take(strides.len()).copied().collect()).collect(),
            unit_stride: unit,
        };
        if let Ok(model) = derive_log3p(&m) {
            check_model(&model, &msg)?;
        }
        let c = CopyMeasurements {
            sizes,
            contiguous: row(3),
            strides: strides.clone(),
            strided: (0..n).map(|i| times.iter().cycle().skip(i + 1).take(strides.len()).copied().collect()).collect(),
            element: unit,
        };
        if let Ok(model) = derive_memory_logp(&c) {
            check_model(&model, &msg)?;
        }
    }

    #[test]
    fn probe_plans(element in int(), sizes in ints(4), strides in ints(4), times in reals(40),
                   copies in reals(4), h in int(), w in int(), k in int(), max in int(), span in int()) {
        let plan = Log3PPlan { sizes: sizes.clone(), strides: strides.clone(), element };
        let _ = plan.layouts();
        let _ = plan.span();
        let _ = plan.measurements(&times, &copies);
        let _ = plan.remote_strided(&times);
        // a budget of 0 bytes: every plan is refused before anything is measured
        let budget = Budget::new(Duration::from_millis(10), 0);
        let methodology = Methodology::quick();
        let copy = CopyPlan { element, sizes, strides, kinds: vec![CopyKind::Pack, CopyKind::Contiguous] };
        let r = measure_copies(&copy, &methodology, &budget, &mut |_, _, _| ());
        prop_assert!(r.is_err());
        let matrix = MatrixPlan { height: h, width: w, shapes: 3, max_k: k, seed: 1 };
        let r = measure_matrix_transfers(&matrix, &methodology, &budget, &mut |_, _, _| ());
        prop_assert!(r.is_err());
        prop_assert!(TcpLoopbackProber::start_with_span(max.max(1), span, methodology, budget).is_err());
    }

    #[test]
    fn model_files_from_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = serde_json::from_slice::<ModelSpec>(&bytes);
        let _ = ModelSpec::deserialize_with_path(&mut serde_json::Deserializer::from_slice(&bytes));
    }

    #[test]
    fn model_files_from_random_json(
        tag in prop_oneof![Just("logp"), Just("loggp"), Just("pram"), Just("mlines"), Just("lognp"),
                           Just("log3p"), Just("loggp_protocols"), Just("copy_transfer"), Just("loggpo"),
                           Just("memory_logp"), Just("memory_network_logp"), Just("logp_protocols")],
        keys in prop::collection::vec(prop_oneof![Just("latency"), Just("overhead"), Just("gap"),
            Just("gap_per_byte"), Just("processors"), Just("word_bytes"), Just("unit_cost"), Just("per_message"),
            Just("per_byte"), Just("per_line"), Just("line_bytes"), Just("unit_stride"), Just("hops"), Just("ranges")], 0..8),
        values in prop::collection::vec(prop_oneof![
            real().prop_map(|x| if x.is_finite() { format!("{x:e}") } else { "\"NaN\"".into() }),
            int().prop_map(|x| x.to_string()),
            Just("[]".to_string()), Just("{}".to_string()), Just("null".to_string()),
            Just("[{\"overhead\": {\"form\": \"linear\", \"fixed\": 1e-320, \"per_byte\": 0}}]".to_string()),
        ], 8),
        msg in message(),
    ) {
        let body: Vec<String> = keys.iter().zip(&values).map(|(k, v)| format!("\"{k}\": {v}")).collect();
        let text = format!("{{\"model\": \"{tag}\"{}{}}}", if body.is_empty() { "" } else { ", " }, body.join(", "));
        if let Ok(spec) = ModelSpec::deserialize_with_path(&mut serde_json::Deserializer::from_str(&text)) {
            check_model(&spec, &msg)?;
        }
    }
}
