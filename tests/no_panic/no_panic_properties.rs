//! Property suite over the public API with hostile inputs: 0, 1, `u64::MAX`, NaN, ±inf,
//! subnormals, huge values, empty and long slices, random bytes as JSON. For every constructor,
//! calculator, parser, fit, probe plan and collective: no panic, and every `Ok` result is
//! finite and non-negative (times) or an exact count.
//!
//! 64 cases per property keep `cargo test` fast; run longer with
//! `PROPTEST_CASES=100000 cargo test --release --test integration no_panic_properties`.
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
    Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Problem, Reduce, Scan, Scatter, rank,
};
use commcost::mlines::{
    NestedLayout, columns, floor_sum, lines_touched, nested_lines, paper_column_bounds,
    paper_row_bounds, per_row_line_sum, rows, tight_column_bounds, vector_lines,
    vector_lines_by_enumeration,
};
use commcost::models::copy_transfer::Composition;
use commcost::models::copy_transfer::Stage;
use commcost::models::loggpo::Mechanism;
use commcost::models::loggpo::Progress;
use commcost::models::loggpo::Timeline;
use commcost::models::lognp::Hop;
use commcost::models::lognp::SizeCost;
use commcost::models::lognp::StrideCost;
use commcost::models::memory_logp::CacheHierarchy;
use commcost::models::memory_logp::CacheLevel;
use commcost::models::protocol::ProtocolRange;
use commcost::probe::{
    Budget, CopyKind, CopyPlan, Log3PPlan, MatrixPlan, Methodology, TcpLoopbackProber,
    measure_copies, measure_matrix_transfers,
};
use commcost::table::Table1D;
use commcost::table::Table2D;
use commcost::{
    AffineCost, CommModel, CopyTransfer, Log3P, LogGP, LogGpo, LogNP, LogP, MemoryLogP,
    MemoryNetworkLogP, Message, MlinesModel, ModelSpec, Pram, Protocols,
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
        Bcast, Scan, Reduce, Allreduce, Allgather, Gather, Scatter, Barrier, Alltoall
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
        if let Ok(m) = LogP::new(a, b, c, w) {
            check_model(&m, &msg)?;
            check_model(&LogNP::from(m.clone()), &msg)?;
            check_collectives(&m, procs, msg)?;
            prop_assert!(m.words(msg.bytes()) >= 1);
        }
        if let Ok(m) = LogGP::new(a, b, c, d) {
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
        if let Ok(m) = LogGP::new(a, b, c, d) {
            let _ = commcost::collectives::best::<Bcast>(&m, &Problem::new(procs, msg));
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
        let Ok(model) = LogGP::new(l.abs().min(1e-3), o.abs().min(1e-3), 1e-6, 1e-9) else {
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
                if let Ok(network) = LogP::new(1e-6, 1e-6, 1e-6, word) {
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

// ---- Open MPI's tuned algorithms, algorithm names, rules files and exports ----

use commcost::collectives::Algorithm;
use commcost::collectives::ompi;
use commcost::collectives::{Collective, Family};
use commcost::export::{self, OmpiRules};

/// Every algorithm of every `collectives::ompi` enum, with `segment` and `fanout` (also used
/// as the k-nomial radix and the linear-sync request limit) wherever the variant has them.
#[derive(Debug, Clone, Copy)]
enum AnyOmpi {
    Allgather(ompi::Allgather),
    Allreduce(ompi::Allreduce),
    Alltoall(ompi::Alltoall),
    Barrier(ompi::Barrier),
    Bcast(ompi::Bcast),
    Gather(ompi::Gather),
    Reduce(ompi::Reduce),
    ReduceScatter(ompi::ReduceScatter),
    Scatter(ompi::Scatter),
}

fn every_ompi_algorithm(segment: u64, fanout: u64) -> Vec<AnyOmpi> {
    use AnyOmpi as A;
    let mut out: Vec<AnyOmpi> = Vec::new();
    out.extend(ompi::Allgather::ALL.iter().map(|&a| A::Allgather(a)));
    out.extend(ompi::Barrier::ALL.iter().map(|&a| A::Barrier(a)));
    {
        use ompi::Allreduce::*;
        out.extend(
            [
                BasicLinear,
                Nonoverlapping,
                RecursiveDoubling,
                Ring,
                SegmentedRing { segment },
                Rabenseifner,
            ]
            .map(A::Allreduce),
        );
    }
    {
        use ompi::Alltoall::*;
        out.extend(
            [
                Linear,
                Pairwise,
                ModifiedBruck,
                LinearSync {
                    max_requests: fanout,
                },
                TwoProc,
            ]
            .map(A::Alltoall),
        );
    }
    {
        use ompi::Bcast::*;
        out.extend(
            [
                BasicLinear,
                Chain { segment, fanout },
                Pipeline { segment },
                SplitBinaryTree { segment },
                BinaryTree { segment },
                Binomial { segment },
                Knomial {
                    segment,
                    radix: fanout,
                },
                ScatterAllgather,
                ScatterAllgatherRing,
            ]
            .map(A::Bcast),
        );
    }
    {
        use ompi::Gather::*;
        out.extend([BasicLinear, Binomial, LinearSync { segment }].map(A::Gather));
    }
    {
        use ompi::Reduce::*;
        out.extend(
            [
                Linear,
                Chain { segment, fanout },
                Pipeline { segment },
                Binary { segment },
                Binomial { segment },
                InOrderBinary { segment },
                Rabenseifner,
            ]
            .map(A::Reduce),
        );
    }
    {
        use ompi::ReduceScatter::*;
        out.extend([NonOverlapping, RecursiveHalving, Ring, Butterfly].map(A::ReduceScatter));
    }
    {
        use ompi::Scatter::*;
        out.extend([BasicLinear, Binomial, LinearNb].map(A::Scatter));
    }
    out
}

impl AnyOmpi {
    fn cost(
        &self,
        model: &dyn CommModel,
        problem: &Problem,
    ) -> Result<f64, commcost::collectives::CollectiveError> {
        match self {
            Self::Allgather(a) => a.cost(model, problem),
            Self::Allreduce(a) => a.cost(model, problem),
            Self::Alltoall(a) => a.cost(model, problem),
            Self::Barrier(a) => a.cost(model, problem),
            Self::Bcast(a) => a.cost(model, problem),
            Self::Gather(a) => a.cost(model, problem),
            Self::Reduce(a) => a.cost(model, problem),
            Self::ReduceScatter(a) => a.cost(model, problem),
            Self::Scatter(a) => a.cost(model, problem),
        }
    }
}

/// Runs `f` on a thread and fails the case if it takes longer than `seconds` (a hang).
fn finishes<T: Send + 'static>(
    seconds: u64,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, TestCaseError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(seconds))
        .map_err(|_| TestCaseError::fail("did not finish in time (hang or panic)"))
}

/// Every Open MPI algorithm and every ranking on `model`: no panic, no hang, finite
/// non-negative costs.
fn check_ompi<M: CommModel + Clone + 'static>(
    model: &M,
    processes: u64,
    msg: Message,
    segment: u64,
    fanout: u64,
) -> Result<(), TestCaseError> {
    let model = model.clone();
    let failures = finishes(20, move || {
        let problem = Problem::new(processes, msg);
        let mut failures: Vec<String> = Vec::new();
        let mut check = |what: String, r: Result<f64, commcost::collectives::CollectiveError>| {
            if let Ok(t) = r
                && !(t.is_finite() && t >= 0.0)
            {
                failures.push(format!("{what} = {t}"));
            }
        };
        for a in every_ompi_algorithm(segment, fanout) {
            check(format!("{a:?}"), a.cost(&model, &problem));
        }
        macro_rules! each {
            ($($a:ty),*) => {$(
                if let Ok(ranking) = rank::<$a>(&model, &problem) {
                    for (a, t) in ranking {
                        check(format!("rank {a:?}"), Ok(t));
                    }
                }
            )*};
        }
        each!(
            ompi::Allgather,
            ompi::Allreduce,
            ompi::Alltoall,
            ompi::Barrier,
            ompi::Bcast,
            ompi::Gather,
            ompi::Reduce,
            ompi::ReduceScatter,
            ompi::Scatter
        );
        failures
    })?;
    prop_assert!(failures.is_empty(), "{:?}", failures);
    Ok(())
}

fn ompi_processes() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(2),
        Just(3),
        Just(5),
        Just(1 << 32),
        Just((1 << 32) + 1),
        Just(u64::MAX),
        0u64..1 << 20,
        any::<u64>()
    ]
}

/// Segment sizes and fan-outs, 0 and `u64::MAX` included.
fn ompi_parameter() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(2),
        Just(3),
        Just(32),
        Just(33),
        Just(u64::MAX),
        Just(1 << 63),
        0u64..1 << 20,
        any::<u64>()
    ]
}

/// Strings near the algorithm names: a name (or ID), optional parameters, hostile values.
fn algorithm_text() -> impl Strategy<Value = String> {
    let names = prop::sample::select(vec![
        "linear",
        "basic_linear",
        "basic-linear",
        "chain",
        "pipeline",
        "pipelined",
        "binomial",
        "knomial",
        "binary",
        "binary_tree",
        "split_binary_tree",
        "in-order_binary",
        "ring",
        "segmented_ring",
        "rabenseifner",
        "recursive_doubling",
        "nonoverlapping",
        "bruck",
        "modified_bruck",
        "linear_sync",
        "two_proc",
        "tree",
        "double_ring",
        "neighbor",
        "pairwise",
        "pairwise-exchange",
        "dissemination",
        "linear-chain",
        "scatter-allgather",
        "scatter_allgather_ring",
        "non-overlapping",
        "recursive_halving",
        "butterfly",
        "linear_nb",
        "0",
        "1",
        "2",
        "3",
        "5",
        "7",
        "9",
        "10",
        "",
        " ",
        "RING",
    ]);
    let keys = prop::sample::select(vec![
        "segment",
        "fanout",
        "radix",
        "max_requests",
        "max-requests",
        "Segment",
        "",
        "x",
    ]);
    let values = prop::sample::select(vec![
        "0",
        "1",
        "4",
        "8192",
        "18446744073709551615",
        "18446744073709551616",
        "-1",
        "",
        "x",
        " 7 ",
        "1e3",
    ]);
    prop_oneof![
        ".*",
        (names.clone(), prop::collection::vec((keys, values), 0..4)).prop_map(|(n, kv)| {
            if kv.is_empty() {
                n.to_string()
            } else {
                let params: Vec<String> = kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("{n}:{}", params.join(","))
            }
        }),
        names.prop_map(str::to_string),
    ]
}

/// Text that looks like a rules file: integers (hostile ones included), comments, noise.
fn rules_text() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("0".to_string()),
        Just("1".to_string()),
        Just("2".to_string()),
        Just("3".to_string()),
        Just("7".to_string()),
        Just("65536".to_string()),
        Just("18446744073709551615".to_string()),
        Just("99999999999999999999999".to_string()),
        Just("-1".to_string()),
        Just("# comment\n".to_string()),
        Just("\n".to_string()),
        Just("x".to_string()),
        (0u64..10).prop_map(|x| x.to_string()),
        any::<u64>().prop_map(|x| x.to_string()),
    ];
    prop_oneof![
        ".*",
        prop::collection::vec(token, 0..40).prop_map(|t| t.join(" ")),
        // a plausible header: one collective, one block, some rules
        (
            1u64..10,
            0u64..5,
            prop::collection::vec((0u64..1 << 20, 0u64..12, 0u64..40, 0u64..1 << 20), 0..5)
        )
            .prop_map(|(id, procs, rules)| {
                let mut s = format!("1\n{id} 1\n{procs} {}\n", rules.len());
                for (size, alg, fan, seg) in rules {
                    s.push_str(&format!("{size} {alg} {fan} {seg}\n"));
                }
                s
            }),
    ]
}

/// Parses `text` as `T`; an `Ok` prints and parses back to itself.
fn parses_back<T>(text: &str) -> Result<(), TestCaseError>
where
    T: std::str::FromStr + std::fmt::Display + PartialEq + std::fmt::Debug,
    T::Err: std::fmt::Debug,
{
    if let Ok(a) = text.parse::<T>() {
        let printed = a.to_string();
        let back = printed.parse::<T>();
        prop_assert!(
            back.as_ref().is_ok_and(|b| *b == a),
            "{:?} -> {:?} -> {:?} -> {:?}",
            text,
            a,
            printed,
            back
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn ompi_algorithms_on_fixed_models(procs in ompi_processes(), bytes in int(),
                                       segment in ompi_parameter(), fanout in ompi_parameter()) {
        let msg = Message::contiguous(bytes);
        check_ompi(&commcost::presets::open_mpi_openib(), procs, msg, segment, fanout)?;
        check_ompi(&commcost::presets::mpich2_tcp(), procs, msg, segment, fanout)?;
        check_ompi(&commcost::presets::titan_log3p(), procs, msg, segment, fanout)?;
    }

    #[test]
    fn ompi_algorithms_on_arbitrary_models(a in real(), b in real(), c in real(), d in real(),
                                           w in int(), msg in message(),
                                           procs in ompi_processes(),
                                           segment in ompi_parameter(),
                                           fanout in ompi_parameter()) {
        if let Ok(m) = LogP::new(a, b, c, w) {
            check_ompi(&m, procs, msg, segment, fanout)?;
        }
        if let Ok(m) = LogGP::new(a, b, c, d) {
            check_ompi(&m, procs, msg, segment, fanout)?;
        }
        if let Ok(m) = Pram::new(a) {
            check_ompi(&m, procs, msg, segment, fanout)?;
        }
    }

    #[test]
    fn algorithm_names_parse_or_fail_and_round_trip(text in algorithm_text()) {
        parses_back::<Bcast>(&text)?;
        parses_back::<Scan>(&text)?;
        parses_back::<Reduce>(&text)?;
        parses_back::<Allreduce>(&text)?;
        parses_back::<Allgather>(&text)?;
        parses_back::<Gather>(&text)?;
        parses_back::<Scatter>(&text)?;
        parses_back::<Barrier>(&text)?;
        parses_back::<Alltoall>(&text)?;
        parses_back::<ompi::Allgather>(&text)?;
        parses_back::<ompi::Allreduce>(&text)?;
        parses_back::<ompi::Alltoall>(&text)?;
        parses_back::<ompi::Barrier>(&text)?;
        parses_back::<ompi::Bcast>(&text)?;
        parses_back::<ompi::Gather>(&text)?;
        parses_back::<ompi::Reduce>(&text)?;
        parses_back::<ompi::ReduceScatter>(&text)?;
        parses_back::<ompi::Scatter>(&text)?;
        parses_back::<Collective>(&text)?;
    }

    #[test]
    fn ompi_rules_files_parse_or_fail(text in rules_text()) {
        if let Ok(rules) = text.parse::<OmpiRules>() {
            let _ = rules.lookup(Collective::Bcast, 16, 1 << 20);
            let printed = rules.to_string();
            let back = printed.parse::<OmpiRules>();
            prop_assert!(back.as_ref().is_ok_and(|b| *b == rules), "{:?} -> {:?}", text, back);
        }
    }

    #[test]
    fn exports_on_arbitrary_grids(processes in prop::collection::vec(ompi_processes(), 0..4),
                                  sizes in prop::collection::vec(int(), 0..4),
                                  which in prop::sample::subsequence(Family::Ompi.collectives(), 0..4)) {
        let out = finishes(60, move || {
            let model = commcost::presets::open_mpi_openib();
            let rules = export::ompi_rules(&model, &which, &processes, &sizes, &Default::default());
            let json = export::mpich_json(&model, &which, &processes, &sizes, &Default::default());
            (rules.map(|r| r.to_string()), json)
        })?;
        if let Ok(text) = out.0 {
            prop_assert!(text.parse::<OmpiRules>().is_ok(), "{}", text);
        }
        if let Ok(json) = out.1 {
            prop_assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok(), "{}", json);
        }
    }
}
