//! Regression tests for hostile and careless inputs through the public API: each used to panic,
//! hang or be accepted, and must now be a typed error or a correct value. Expected values are
//! hand calculations or brute-force enumeration.

use std::sync::mpsc;
use std::time::Duration;

use commcost::calibrate::FitError;
use commcost::calibrate::least_squares;
use commcost::mlines::{
    LinesError, MAX_NESTED_STEPS, NestedLayout, floor_sum, nested_lines, vector_lines,
};
use commcost::models::copy_transfer::Composition;
use commcost::models::copy_transfer::Stage;
use commcost::models::lognp::SizeCost;
use commcost::models::memory_logp::CacheHierarchy;
use commcost::models::memory_logp::CacheLevel;
use commcost::probe::{
    Budget, CopyKind, CopyPlan, Log3PPlan, MatrixPlan, Methodology, ProbeError, TcpLoopbackProber,
    measure_copies, measure_matrix_transfers,
};
use commcost::table::Table1D;
use commcost::table::Table2D;
use commcost::{
    AffineCost, CommModel, CopyTransfer, LogGP, LogNP, Message, ParameterError, limits,
};

/// Runs `f` on a thread and fails the test if it takes longer than `seconds`.
fn within<T: Send + 'static>(seconds: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(seconds))
        .expect("call did not finish in time (hang)")
}

#[test]
fn cache_hierarchy_with_a_level_of_u64_max_bytes_is_an_error() {
    let level = |capacity_bytes| CacheLevel {
        capacity_bytes,
        miss_penalty: 1e-9,
    };
    let r = CacheHierarchy::new(64, vec![level(u64::MAX), level(u64::MAX)]);
    assert!(
        matches!(r, Err(ParameterError::InChain { index: 1, .. })),
        "{r:?}"
    );
    // a single level of u64::MAX bytes is fine
    assert!(CacheHierarchy::new(64, vec![level(u64::MAX)]).is_ok());
}

#[test]
fn cache_hierarchy_copy_time_with_huge_lines_and_strides_is_finite() {
    let level = CacheLevel {
        capacity_bytes: 1024,
        miss_penalty: 1e-9,
    };
    let h = CacheHierarchy::new(u64::MAX, vec![level]).unwrap();
    for (bytes, element, stride) in [
        (u64::MAX, 1, u64::MAX),
        (u64::MAX, u64::MAX, u64::MAX),
        (1 << 40, 8, u64::MAX),
    ] {
        let t = h.copy_time(bytes, element, stride);
        assert!(t.is_finite() && t >= 0.0, "{t}");
        let l = h.latency_per_byte(bytes, element, stride);
        assert!(l.is_finite() && l >= 0.0, "{l}");
    }
}

#[test]
fn log3p_plan_with_zero_element_or_short_times_is_an_error() {
    let zero = Log3PPlan {
        sizes: vec![64],
        strides: vec![128],
        element: 0,
    };
    assert!(matches!(
        zero.remote_strided(&[1.0; 4]),
        Err(ProbeError::InvalidPlan(_))
    ));
    assert!(matches!(
        zero.measurements(&[1.0; 4], &[1.0]),
        Err(ProbeError::InvalidPlan(_))
    ));
    let plan = Log3PPlan {
        sizes: vec![64],
        strides: vec![128],
        element: 8,
    };
    // 1 size x (1 + 1 strides) x 2 = 4 times; an empty or short slice is an error
    assert!(matches!(
        plan.remote_strided(&[]),
        Err(ProbeError::InvalidPlan(_))
    ));
    assert!(matches!(
        plan.remote_strided(&[1.0; 3]),
        Err(ProbeError::InvalidPlan(_))
    ));
    let remote = plan.remote_strided(&[1.0, 2.0, 3.0, 4.0]).unwrap();
    // the remote strided time is the last of the four (size 0, stride 1, to the peer)
    assert_eq!(remote.len(), 1);
    approx::assert_relative_eq!(remote[0].1, 4.0, max_relative = 1e-15);
    let empty = Log3PPlan {
        sizes: vec![],
        strides: vec![],
        element: 8,
    };
    assert!(empty.measurements(&[], &[]).is_err());
}

#[test]
fn word_cost_with_zero_byte_words_counts_bytes() {
    let words = SizeCost::Words {
        first_word: 1.0,
        per_extra_word: 0.5,
        word_bytes: 0,
    };
    // read as 1-byte words: 1 + (10 - 1) · 0.5
    approx::assert_relative_eq!(words.eval(10), 5.5, max_relative = 1e-15);
    approx::assert_relative_eq!(words.eval(0), 1.0, max_relative = 1e-15);
    assert!(LogNP::new(vec![commcost::models::lognp::Hop::new(words)], 0).is_err());
}

#[test]
fn affine_cost_with_unit_zero_is_per_byte() {
    let line = AffineCost {
        intercept: 1.0,
        first: 0,
        per_unit: 0.25,
        last: u64::MAX,
        unit: 0,
    };
    approx::assert_relative_eq!(line.at(8), 3.0, max_relative = 1e-15);
    approx::assert_relative_eq!(line.at(0), 1.0, max_relative = 1e-15);
    approx::assert_relative_eq!(
        line.at(u64::MAX),
        1.0 + 0.25 * u64::MAX as f64,
        max_relative = 1e-15
    );
}

fn budget() -> Budget {
    Budget::new(Duration::from_secs(5), u64::MAX)
}

#[test]
fn memory_probe_plan_that_overflows_is_invalid() {
    let plan = CopyPlan {
        element: 8,
        sizes: vec![u64::MAX - 7],
        strides: vec![1 << 62],
        kinds: vec![CopyKind::Pack],
    };
    let r = measure_copies(&plan, &Methodology::quick(), &budget(), &mut |_, _, _| {});
    assert!(matches!(r, Err(ProbeError::InvalidPlan(_))), "{r:?}");
}

#[test]
fn matrix_probe_plan_that_overflows_is_invalid() {
    let plan = MatrixPlan {
        height: 1 << 40,
        width: 1 << 40,
        shapes: 1,
        max_k: 1 << 40,
        seed: 1,
    };
    let r = measure_matrix_transfers(&plan, &Methodology::quick(), &budget(), &mut |_, _, _| {});
    assert!(matches!(r, Err(ProbeError::InvalidPlan(_))), "{r:?}");
}

#[test]
fn tcp_prober_buffers_that_overflow_are_invalid() {
    let r = TcpLoopbackProber::start(u64::MAX / 2, Methodology::quick(), budget());
    assert!(matches!(r, Err(ProbeError::InvalidPlan(_))), "{r:?}");
    let r = TcpLoopbackProber::start_with_span(1, u64::MAX, Methodology::quick(), budget());
    assert!(matches!(r, Err(ProbeError::InvalidPlan(_))), "{r:?}");
}

#[test]
fn least_squares_with_absurd_dimensions_is_an_error() {
    let r = least_squares(&[], usize::MAX, &[1.0, 2.0]);
    assert!(
        matches!(r, Err(FitError::DimensionMismatch { .. })),
        "{r:?}"
    );
    let r = least_squares(&[1.0, 2.0], usize::MAX, &[]);
    assert!(r.is_err());
}

#[test]
fn floor_sum_that_does_not_fit_in_u128_is_none() {
    // Σ_{i < 2^33} (2^64 - 1) i = (2^64 - 1) 2^33 (2^33 - 1) / 2 > 2^128
    assert_eq!(floor_sum(1 << 33, 1, u64::MAX, 0), None);
    // the largest sum of this family that fits: n = 2^32, (2^64 - 1) 2^32 (2^32 - 1) / 2 < 2^127
    let n: u128 = 1 << 32;
    assert_eq!(
        floor_sum(1 << 32, 1, u64::MAX, 0),
        Some(u128::from(u64::MAX) * (n * (n - 1) / 2))
    );
    // b's quotient: n · ⌊b / m⌋ = 2^64 · ... must not wrap either
    assert_eq!(
        floor_sum(u64::MAX, 1, 0, u64::MAX),
        Some(u128::from(u64::MAX) * u128::from(u64::MAX))
    );
}

#[test]
fn pipelined_copy_transfer_with_unit_stride_u64_max_converts() {
    let stage = Stage::new("wire", 1e9, 1e-6)
        .unwrap()
        .with_strided_bandwidth(vec![16.0], vec![1e9])
        .unwrap();
    let m = CopyTransfer::new(vec![stage], Composition::Pipelined, u64::MAX).unwrap();
    let as_lognp = LogNP::from(m.clone());
    let msg = Message::contiguous(1000);
    // 1 µs + 1000 bytes / 1 GB/s
    assert!((as_lognp.p2p(&msg) - 2e-6).abs() < 1e-18);
    assert!((m.p2p(&msg) - 2e-6).abs() < 1e-18);
}

/// Distinct lines of a nested layout by enumerating every block.
fn nested_by_enumeration(n: &NestedLayout, line: u64) -> u128 {
    let mut lines = std::collections::BTreeSet::new();
    for j in 0..n.planes {
        for i in 0..n.rows {
            let start = n.offset + j * n.plane_stride + i * n.row_stride;
            if n.block > 0 {
                for l in start / line..=(start + n.block - 1) / line {
                    lines.insert(l);
                }
            }
        }
    }
    lines.len() as u128
}

#[test]
fn nested_lines_row_by_row_matches_enumeration() {
    // case B planes (row gaps of at least a line), few rows and many planes with a long offset
    // period: the row-by-row evaluation
    let mut checked = 0;
    for line in [16u64, 64] {
        for block in [1u64, 5, 16, 33] {
            for row_stride in [block + line - 1, block + line + 3, 3 * line + 7] {
                for rows in [2u64, 3] {
                    let extent = (rows - 1) * row_stride + block;
                    for gap in [0u64, 1, 5, line - 1, line + 3] {
                        for offset in [0u64, 3, line - 1] {
                            let n = NestedLayout {
                                planes: 40,
                                plane_stride: extent + gap,
                                rows,
                                row_stride,
                                block,
                                offset,
                            };
                            assert_eq!(
                                nested_lines(&n, line).unwrap(),
                                nested_by_enumeration(&n, line),
                                "{n:?} line {line}"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 500);
}

#[test]
fn nested_lines_never_hangs() {
    // 2^40-byte lines, an odd plane stride: the plane offsets repeat only every 2^40 planes,
    // which the plane-by-plane evaluation used to walk; two rows per plane are summed row by row
    let huge = NestedLayout {
        planes: u64::MAX,
        plane_stride: (3 << 41) + 1,
        rows: 2,
        row_stride: 1 << 41,
        block: 1,
        offset: 0,
    };
    let r = within(10, move || nested_lines(&huge, 1 << 40));
    // one line per block (block of 1 byte), and no two blocks share a line (gaps > L):
    // 2 (2^64 - 1) lines
    assert_eq!(r, Ok(2 * u128::from(u64::MAX)));
    // 1e8 planes of 100 rows, 2^30-byte lines, odd plane stride
    let many = NestedLayout {
        planes: 100_000_000,
        plane_stride: (100 << 31) + 1,
        rows: 100,
        row_stride: 1 << 31,
        block: 8,
        offset: 0,
    };
    // each 8-byte block at an offset mod 2^30 that is a multiple of... every block's 8 bytes
    // stay inside one line unless it starts in the last 7 bytes of a line: row starts are
    // multiples of 2^31 plus j (the plane index), so a block crosses a line iff j mod 2^30 >=
    // 2^30 - 7, which no j < 1e8 reaches: one line per block
    assert_eq!(
        within(10, move || nested_lines(&many, 1 << 30)),
        Ok(100 * 100_000_000)
    );
    // both evaluations long (2^21 + 1 rows, offsets with period 2^40): counted in closed form
    // now. One-byte blocks touch one line each, rows 2^40 + 2 bytes apart and planes far apart
    // (P - E > L) share none: (2^21 + 1)(2^64 - 1) lines
    let wide = NestedLayout {
        planes: u64::MAX,
        plane_stride: (1 << 62) + 1,
        rows: (1 << 21) + 1,
        row_stride: (1 << 40) + 2,
        block: 1,
        offset: 0,
    };
    let r = within(10, move || nested_lines(&wide, 1 << 40));
    assert_eq!(r, Ok(((1u128 << 21) + 1) * u128::from(u64::MAX)));
    // a leftover rectangle long on both sides (odd residues mod 2^32, 2^22 + 1 rows,
    // 2^31 - 5 planes) and in its window of large offsets (2^31-byte blocks): refused with the
    // step limit, not run for minutes
    let both_long = NestedLayout {
        planes: (1 << 31) - 5,
        plane_stride: (1 << 62) + 1,
        rows: (1 << 22) + 1,
        row_stride: (1 << 33) + 3,
        block: 1 << 31,
        offset: 0,
    };
    let r = within(10, move || nested_lines(&both_long, 1 << 32));
    assert!(
        matches!(r, Err(LinesError::TooManySteps { limit, .. }) if limit == MAX_NESTED_STEPS),
        "{r:?}"
    );
}

#[test]
fn nested_lines_one_plane_is_the_vector_count() {
    let n = NestedLayout {
        planes: 1,
        plane_stride: 0,
        rows: 7,
        row_stride: 100,
        block: 9,
        offset: 5,
    };
    assert_eq!(
        nested_lines(&n, 64).unwrap(),
        vector_lines(7, 9, 100, 5, 64).unwrap()
    );
}

#[test]
fn subnormal_and_absurd_parameters_are_rejected() {
    assert!(LogGP::new(1e-320, 1e-6, 1e-6, 1e-9).is_err());
    assert!(LogGP::new(1e-6, 1e-6, 1e-6, 1e300).is_err());
    assert!(LogGP::new(1e-6, 1e-6, 1e-6, limits::MAX_SECONDS).is_ok());
    assert!(Stage::new("wire", 1e-320, 0.0).is_err());
    assert!(Stage::new("wire", f64::MIN_POSITIVE, 0.0).is_err());
    assert!(Stage::new("wire", limits::MIN_BANDWIDTH, 0.0).is_ok());
    // an axis of 1e-320, points closer than MIN_AXIS_STEP, values beyond MAX_TABLE_VALUE
    assert!(Table1D::new(vec![0.0, 1e-320], vec![1.0, 1.0]).is_err());
    assert!(Table1D::new(vec![1e-320], vec![1.0]).is_err());
    assert!(Table1D::new(vec![0.0, 1e-9], vec![1.0, 2.0]).is_err());
    assert!(Table1D::new(vec![0.0, 1.0], vec![0.0, 1e300]).is_err());
    assert!(Table1D::new(vec![0.0, 1e22], vec![0.0, 1.0]).is_err());
    assert!(Table1D::new(vec![0.0], vec![1e-320]).is_err());
    assert!(Table2D::new(vec![0.0], vec![1.0], vec![vec![1e-320]]).is_err());
    assert!(Table2D::new(vec![0.0, 1e-320], vec![1.0], vec![vec![0.0], vec![1.0]]).is_err());
}

#[test]
fn extreme_accepted_tables_predict_finite_times() {
    // the steepest accepted table: values ±MAX_TABLE_VALUE, MIN_AXIS_STEP apart, at the axis end
    let a = limits::MAX_AXIS;
    let steep = Table1D::new(
        vec![-a, -a + limits::MIN_AXIS_STEP * 1e6],
        vec![-limits::MAX_TABLE_VALUE, limits::MAX_TABLE_VALUE],
    );
    // -1e21 + 1 is representable only as a step of 2^17: rejected as not increasing, or accepted
    if let Ok(t) = steep {
        assert!(t.eval(u64::MAX as f64).is_finite());
    }
    let t = Table1D::new(
        vec![0.0, limits::MIN_AXIS_STEP],
        vec![0.0, limits::MAX_TABLE_VALUE],
    )
    .unwrap();
    let v = t.eval(u64::MAX as f64);
    assert!(v.is_finite() && v > 0.0);
    let hop = commcost::models::lognp::Hop::new(SizeCost::PerByte(t));
    let m = LogNP::new(vec![hop.clone(), hop], 0).unwrap();
    let p = m.p2p(&Message::contiguous(u64::MAX));
    assert!(p.is_finite() && p > 0.0, "{p}");
}

#[test]
fn mlines_regression_with_absurd_times_is_an_error_not_infinite_predictions() {
    use commcost::calibrate::{FeatureSet, MlinesSample, Order, RegressionVariant, fit_regression};
    // times of 1e300 s: the fitted per-message coefficient would be ~1e300, and a message of
    // 2^64 bytes would be predicted at an infinite time
    let samples: Vec<MlinesSample> = (1..10)
        .map(|i| MlinesSample {
            messages: 1.0,
            bytes: f64::from(i) * 64.0,
            lines: f64::from(i * i % 7 + i),
            operations: 0.0,
            time: 1e300 * f64::from(i),
        })
        .collect();
    let variant = RegressionVariant {
        features: FeatureSet::Lines,
        order: Order::First,
        operations: false,
    };
    let r = fit_regression(variant, 64, &samples, &samples);
    assert!(matches!(r, Err(FitError::InvalidParameters(_))), "{r:?}");
}

#[test]
fn least_squares_whose_solution_overflows_is_an_error() {
    // y ~ 1e300 explained by a column of ~1e-150 needs a coefficient of ~1e450
    let design = [1.0, 1e-150, 1.0, 2e-150, 1.0, 4e-150];
    let r = least_squares(&design, 2, &[1e300, 3e300, 2e300]);
    assert!(matches!(r, Err(FitError::NonFinite { .. })), "{r:?}");
}

#[test]
fn relative_errors_against_zero_measurements_are_undefined() {
    use commcost::calibrate::relative_errors;
    assert_eq!(relative_errors(&[(1.0, 0.0)]), None);
    assert_eq!(relative_errors(&[(1.0, 1e-320)]), None);
    assert_eq!(relative_errors(&[(f64::NAN, 1.0)]), None);
    let (median, p90) = relative_errors(&[(1.5, 1.0), (1.0, 1.0), (2.0, 1.0)]).unwrap();
    approx::assert_relative_eq!(median, 0.5, max_relative = 1e-15);
    approx::assert_relative_eq!(p90, 1.0, max_relative = 1e-15);
}

#[test]
fn probe_buffers_beyond_the_address_space_are_out_of_memory_not_an_abort() {
    // an unlimited budget, buffers of 2^60 bytes: more than any address space holds
    let unlimited = Budget::new(Duration::from_secs(5), u64::MAX);
    let r = TcpLoopbackProber::start_with_span(1 << 60, 1 << 60, Methodology::quick(), unlimited);
    assert!(matches!(r, Err(ProbeError::OutOfMemory { .. })), "{r:?}");
    let plan = CopyPlan {
        element: 8,
        sizes: vec![1 << 60],
        strides: vec![16],
        kinds: vec![CopyKind::Pack],
    };
    let r = measure_copies(&plan, &Methodology::quick(), &budget(), &mut |_, _, _| {});
    assert!(matches!(r, Err(ProbeError::OutOfMemory { .. })), "{r:?}");
    let plan = MatrixPlan {
        height: 1 << 29,
        width: 1 << 29,
        shapes: 1,
        max_k: 1,
        seed: 1,
    };
    let r = measure_matrix_transfers(&plan, &Methodology::quick(), &budget(), &mut |_, _, _| {});
    assert!(matches!(r, Err(ProbeError::OutOfMemory { .. })), "{r:?}");
}

#[test]
fn line_walking_reference_count_refuses_huge_vectors() {
    use commcost::mlines::{MAX_ENUMERATED_BLOCKS, vector_lines_by_enumeration};
    let r = within(10, || {
        vector_lines_by_enumeration(u64::MAX, 1, 1 << 20, 0, 64)
    });
    assert!(
        matches!(r, Err(LinesError::TooManySteps { limit, .. }) if limit == MAX_ENUMERATED_BLOCKS),
        "{r:?}"
    );
    // small vectors: the reference count, here one line per 1-byte block 2^20 bytes apart
    assert_eq!(
        vector_lines_by_enumeration(1000, 1, 1 << 20, 0, 64),
        Ok(1000)
    );
}

#[test]
fn loggpo_timelines_at_the_ends_of_the_f64_range_give_finite_times_or_errors() {
    use commcost::LogGpo;
    use commcost::models::loggpo::Mechanism;
    use commcost::models::loggpo::Progress;
    use commcost::models::loggpo::Timeline;
    let m = LogGpo::new(
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
    .unwrap();
    for (isend, irecv, send_wait, recv_wait, computation) in [
        (-1e308, 1e308, 1.7e308, 1.7e308, 1.7e308),
        (-1.7e308, -1.7e308, 1.7e308, 1.7e308, 0.0),
        (0.0, 1.7e308, 1.7e308, 1.7e308, 1.7e308),
    ] {
        let t = Timeline {
            isend,
            irecv,
            send_wait,
            recv_wait,
            computation,
        };
        for msg in [Message::contiguous(8), Message::contiguous(1 << 20)] {
            if let Ok(o) = m.timeline(&msg, &t) {
                for v in [
                    o.send_overhead,
                    o.recv_overhead,
                    o.send_wait_overhead,
                    o.recv_wait_overhead,
                    o.total,
                    o.send_overlap,
                    o.recv_overlap,
                ] {
                    assert!(v.is_finite(), "{t:?} {msg:?}: {o:?}");
                }
            }
        }
    }
}

/// A model whose affine description counts in units of 0 bytes (the field is public, so a
/// custom model can write it): `p2p(b) = 1 µs + 1 ns · b` everywhere.
#[derive(Debug)]
struct ZeroUnitModel;

impl CommModel for ZeroUnitModel {
    fn p2p(&self, msg: &Message) -> f64 {
        1e-6 + 1e-9 * msg.bytes() as f64
    }

    fn piecewise(&self) -> Option<&dyn commcost::PiecewiseCost> {
        Some(self)
    }
}

impl commcost::PiecewiseCost for ZeroUnitModel {
    fn p2p_affine(&self, _bytes: u64) -> Option<AffineCost> {
        Some(AffineCost {
            unit: 0,
            ..AffineCost::everywhere(1e-6, 1e-9)
        })
    }
}

/// The same costs without an affine description: every round evaluated (the oracle).
#[derive(Debug)]
struct PlainModel;

impl CommModel for PlainModel {
    fn p2p(&self, msg: &Message) -> f64 {
        1e-6 + 1e-9 * msg.bytes() as f64
    }
}

#[test]
fn collectives_on_a_model_with_affine_unit_zero_count_bytes() {
    use commcost::collectives::{self, Problem, ompi};
    fn same<A: collectives::Algorithm>(p: u64, m: u64) {
        let problem = Problem::new(p, Message::contiguous(m));
        // `rank` divided by the unit of 0 (panicked) before
        let ranked = collectives::rank::<A>(&ZeroUnitModel, &problem).unwrap();
        assert!(!ranked.is_empty());
        for a in A::candidates(&PlainModel, &problem) {
            let t = a.cost(&ZeroUnitModel, &problem).unwrap();
            let u = a.cost(&PlainModel, &problem).unwrap();
            approx::assert_relative_eq!(t, u, max_relative = 1e-9);
        }
    }
    for (p, m) in [
        (2, 0),
        (3, 1),
        (8, 1000),
        (13, 4096),
        (1000, 0),
        (1 << 20, 12345),
    ] {
        same::<collectives::Allreduce>(p, m);
        same::<collectives::Allgather>(p, m);
        same::<collectives::Alltoall>(p, m);
        same::<collectives::Bcast>(p, m);
        same::<collectives::Reduce>(p, m);
        same::<collectives::Gather>(p, m);
        same::<collectives::Scatter>(p, m);
        same::<collectives::Barrier>(p, m);
        same::<collectives::Scan>(p, m);
        same::<ompi::Allreduce>(p, m);
        same::<ompi::Allgather>(p, m);
        same::<ompi::Alltoall>(p, m);
        same::<ompi::Bcast>(p, m);
        same::<ompi::Reduce>(p, m);
        same::<ompi::ReduceScatter>(p, m);
    }
}

/// A model whose every quantity is `value` and whose affine pieces (of `p2p` and of the lag)
/// are `piece` as given (a range that may not hold the size asked about, or be empty).
#[derive(Debug, Clone, Copy)]
struct HostileModel {
    value: f64,
    piece: Option<AffineCost>,
}

impl CommModel for HostileModel {
    fn p2p(&self, _: &Message) -> f64 {
        self.value
    }

    fn send_overhead(&self, _: &Message) -> f64 {
        self.value
    }

    fn recv_overhead(&self, _: &Message) -> f64 {
        self.value
    }

    fn send_interval(&self, _: &Message) -> f64 {
        self.value
    }

    fn gap(&self, _: &Message) -> f64 {
        self.value
    }

    fn piecewise(&self) -> Option<&dyn commcost::PiecewiseCost> {
        Some(self)
    }
}

impl commcost::PiecewiseCost for HostileModel {
    fn size_breakpoints(&self) -> Vec<u64> {
        vec![0, 1, u64::MAX, 12289]
    }

    fn p2p_affine(&self, _: u64) -> Option<AffineCost> {
        self.piece
    }

    fn send_lag_affine(&self, _: u64) -> Option<AffineCost> {
        self.piece
    }
}

#[test]
fn collectives_on_hostile_models_do_not_panic_or_hang() {
    use commcost::collectives::{self, Problem, ompi};
    fn all<A: collectives::Algorithm>(model: &HostileModel, p: u64, m: u64) {
        let problem = Problem::new(p, Message::contiguous(m));
        // garbage in, garbage out, but an answer
        let _ = collectives::rank::<A>(model, &problem);
        let _ = collectives::best::<A>(model, &problem);
        for a in A::candidates(model, &problem) {
            let _ = a.cost(model, &problem);
        }
    }
    let values = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, 0.0, 1e300];
    let line = |intercept, per_unit, first, last, unit| AffineCost {
        intercept,
        per_unit,
        first,
        last,
        unit,
    };
    let pieces = [
        None,
        Some(line(f64::NAN, f64::NAN, 0, u64::MAX, 0)),
        Some(line(-1.0, -1.0, 0, u64::MAX, 3)),
        Some(line(1.0, f64::INFINITY, 0, u64::MAX, u64::MAX)),
        // inconsistent ranges: first > last, first beyond any size, a single size
        Some(line(1e-6, 1e-9, 100, 10, 1)),
        Some(line(1e-6, 1e-9, u64::MAX, u64::MAX, 1)),
        Some(line(1e-6, 1e-9, 4096, 4096, 7)),
        Some(line(1e-6, 1e-9, 1, 1, 1 << 63)),
    ];
    within(60, move || {
        for value in values {
            for piece in pieces {
                let model = HostileModel { value, piece };
                for (p, m) in [(2, 0), (3, 4096), (1 << 20, 1), (u64::MAX, u64::MAX)] {
                    all::<collectives::Allreduce>(&model, p, m);
                    all::<collectives::Allgather>(&model, p, m);
                    all::<collectives::Alltoall>(&model, p, m);
                    all::<collectives::Bcast>(&model, p, m);
                    all::<collectives::Reduce>(&model, p, m);
                    all::<collectives::Gather>(&model, p, m);
                    all::<collectives::Scatter>(&model, p, m);
                    all::<collectives::Barrier>(&model, p, m);
                    all::<collectives::Scan>(&model, p, m);
                    all::<ompi::Allreduce>(&model, p, m);
                    all::<ompi::Allgather>(&model, p, m);
                    all::<ompi::Alltoall>(&model, p, m);
                    all::<ompi::Barrier>(&model, p, m);
                    all::<ompi::Bcast>(&model, p, m);
                    all::<ompi::Gather>(&model, p, m);
                    all::<ompi::Reduce>(&model, p, m);
                    all::<ompi::ReduceScatter>(&model, p, m);
                    all::<ompi::Scatter>(&model, p, m);
                }
                let problem = Problem::new(16, Message::contiguous(1));
                let _ = collectives::crossover(
                    &model,
                    collectives::Bcast::Binomial,
                    collectives::Bcast::ScatterAllgather,
                    &problem,
                    0..=u64::MAX,
                );
                let _ = commcost::export::ompi_rules(
                    &model,
                    &commcost::collectives::Family::Ompi.collectives(),
                    &[2, 3, 64, u64::MAX],
                    &[0, 1, 1 << 20, u64::MAX],
                    &Default::default(),
                );
            }
        }
    });
}
