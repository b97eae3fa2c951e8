//! The probes measure real memory traffic and a real TCP stack on tiny grids: values must be
//! finite, positive and plausible (no timing thresholds), limits and cancellation must hold.

use std::time::Duration;

use commcost::calibrate::{AssessmentConfig, assess_loggp};
use commcost::probe::{
    Budget, CopyKind, CopyPlan, MatrixPlan, Methodology, ProbeError, TcpLoopbackProber,
    measure_copies, measure_matrix_transfers,
};
use commcost::probe::{Prober, PrttPlan, measure_prtt};

fn budget() -> Budget {
    Budget::new(Duration::from_secs(60), 64 << 20)
}

/// Seconds per byte of any copy on any machine this crate runs on: between 1 ps and 1 µs.
fn plausible(time: f64, bytes: u64) -> bool {
    let per_byte = time / bytes as f64;
    time.is_finite() && time > 0.0 && (1e-12..1e-6).contains(&per_byte)
}

#[test]
fn memory_copies_are_measured() {
    for element in [4u64, 8] {
        let plan = CopyPlan {
            element,
            sizes: vec![1024, 8192],
            strides: vec![4 * element, 64 * element],
            kinds: vec![
                CopyKind::Contiguous,
                CopyKind::Pack,
                CopyKind::Unpack,
                CopyKind::Strided,
            ],
        };
        let mut calls = 0;
        let samples = measure_copies(
            &plan,
            &Methodology::quick(),
            &budget(),
            &mut |_, done, total| {
                calls += 1;
                assert!(done <= total);
            },
        )
        .unwrap();
        // contiguous once per size, each strided kind per size and stride
        assert_eq!(samples.len(), 2 + 3 * 2 * 2);
        assert_eq!(calls, samples.len() * Methodology::quick().passes);
        for s in &samples {
            assert!(plausible(s.time, s.size), "{s:?}");
            assert_eq!(s.element, element);
        }
    }
}

#[test]
fn limits_and_cancellation_hold() {
    let plan = CopyPlan {
        element: 8,
        sizes: vec![1 << 20],
        strides: vec![4096],
        kinds: vec![CopyKind::Pack],
    };
    // the strided source spans 512 MiB: over a 64 MiB budget
    assert!(matches!(
        measure_copies(&plan, &Methodology::quick(), &budget(), &mut |_, _, _| {}),
        Err(ProbeError::OutOfMemory { .. })
    ));
    let small = CopyPlan {
        sizes: vec![1024],
        strides: vec![64],
        ..plan
    };
    let cancelled = budget();
    cancelled
        .cancel_flag()
        .store(true, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(
        measure_copies(&small, &Methodology::quick(), &cancelled, &mut |_, _, _| {}),
        Err(ProbeError::Cancelled)
    );
    let expired = Budget::new(Duration::ZERO, 1 << 20);
    std::thread::sleep(Duration::from_millis(1));
    assert!(matches!(
        measure_copies(&small, &Methodology::quick(), &expired, &mut |_, _, _| {}),
        Err(ProbeError::OutOfTime { .. })
    ));
    for bad in [
        CopyPlan {
            element: 3,
            ..small.clone()
        },
        CopyPlan {
            sizes: vec![],
            ..small.clone()
        },
        CopyPlan {
            sizes: vec![1023],
            ..small.clone()
        },
        CopyPlan {
            strides: vec![8],
            ..small.clone()
        },
        CopyPlan {
            strides: vec![],
            ..small.clone()
        },
    ] {
        assert!(matches!(
            measure_copies(&bad, &Methodology::quick(), &budget(), &mut |_, _, _| {}),
            Err(ProbeError::InvalidPlan(_))
        ));
    }
}

#[test]
fn row_and_column_transfers_are_measured() {
    let plan = MatrixPlan {
        height: 256,
        width: 512,
        shapes: 8,
        max_k: 8,
        seed: 3,
    };
    let samples =
        measure_matrix_transfers(&plan, &Methodology::quick(), &budget(), &mut |_, _, _| {})
            .unwrap();
    assert_eq!(samples.len(), 8);
    for s in &samples {
        assert!(plausible(s.time, s.message.bytes()), "{s:?}");
        assert!((1..=8).contains(&s.k));
        if s.rows {
            assert!(s.message.is_contiguous());
            assert_eq!(s.message.bytes(), s.k * 512 * 4);
        } else {
            assert_eq!((s.message.count(), s.message.block_len()), (256, s.k * 4));
        }
    }
    assert!(samples.iter().any(|s| s.rows) && samples.iter().any(|s| !s.rows));
    let bad = MatrixPlan {
        max_k: 1000,
        ..plan
    };
    assert!(
        measure_matrix_transfers(&bad, &Methodology::quick(), &budget(), &mut |_, _, _| {})
            .is_err()
    );
}

#[test]
fn tcp_round_trips_grow_with_n_and_size() {
    let mut prober = TcpLoopbackProber::start(1 << 16, Methodology::quick(), budget()).unwrap();
    let one = prober.prtt(1, 0.0, 1 << 16).unwrap();
    let sixteen = prober.prtt(16, 0.0, 1 << 16).unwrap();
    assert!(one.is_finite() && one > 0.0 && one < 1.0);
    assert!(sixteen > one, "16 messages {sixteen} vs one {one}");
    // a delay between the sends adds at least (n - 1) d
    let delayed = prober.prtt(4, 1e-4, 8).unwrap();
    assert!(delayed >= 3e-4, "{delayed}");
    assert!(prober.prtt(0, 0.0, 8).is_err());
    assert!(prober.prtt(1, 0.0, 0).is_err());
    assert!(prober.prtt(1, 0.0, (1 << 16) + 1).is_err());
    assert!(prober.prtt(1, f64::NAN, 8).is_err());
}

#[test]
fn strided_half_round_trips_remote_and_to_self() {
    use commcost::Message;
    let mut prober = TcpLoopbackProber::start(1 << 14, Methodology::quick(), budget()).unwrap();
    let layouts = [
        (Message::contiguous(8192), false),
        (Message::contiguous(8192), true),
        (Message::vector(1024, 8, 80).unwrap(), false),
        (Message::vector(1024, 8, 80).unwrap(), true),
    ];
    let times = commcost::probe::measure_layouts(
        &mut prober,
        &layouts,
        &Methodology::quick(),
        &budget(),
        &mut |_, _, _| {},
    )
    .unwrap();
    for (t, (m, _)) in times.iter().zip(&layouts) {
        assert!(plausible(*t, m.bytes()), "{t} for {m:?}");
    }
    // a layout beyond the buffers is refused
    let too_wide = Message::vector(1 << 14, 8, 1 << 10).unwrap();
    assert!(matches!(
        prober.half_round_trip(&too_wide, true),
        Err(ProbeError::InvalidPlan(_))
    ));
    assert!(
        prober
            .half_round_trip(&Message::contiguous(0), false)
            .is_err()
    );
}

#[test]
fn tcp_measurements_feed_the_assessment() {
    let mut prober = TcpLoopbackProber::start(1 << 14, Methodology::quick(), budget()).unwrap();
    let plan = PrttPlan {
        sizes: (0..10).map(|k| 1 + 1024 * k).collect(),
        n: 8,
        passes: 2,
        seed: 5,
    };
    let measured = measure_prtt(&mut prober, &plan).unwrap();
    assert_eq!(measured.samples.len(), 3 * 10);
    let config = AssessmentConfig {
        n: 8,
        ..AssessmentConfig::default()
    };
    let a = assess_loggp(&measured.samples, &config).unwrap();
    assert!(!a.ranges.is_empty());
    for range in a.model.ranges() {
        let m = range.model();
        for v in [m.latency(), m.overhead(), m.gap(), m.gap_per_byte()] {
            assert!(v.is_finite() && v >= 0.0);
        }
    }
}

#[test]
fn log3p_plan_orders_layouts_and_assembles_measurements() {
    use commcost::calibrate::derive_log3p;
    use commcost::probe::Log3PPlan;
    use commcost::{CommModel, Message};
    let plan = Log3PPlan {
        sizes: vec![16384],
        strides: vec![1024],
        element: 8,
    };
    let layouts = plan.layouts().unwrap();
    let strided = Message::vector(2048, 8, 1024).unwrap();
    assert_eq!(
        layouts,
        vec![
            (Message::contiguous(16384), true),
            (Message::contiguous(16384), false),
            (strided, true),
            (strided, false),
        ]
    );
    assert_eq!(plan.span(), strided.extent());
    // the Titan point in µs: T00(s) = 32, T01(s) = 160, T00(s, d) = 452, T01(s, d) = 580,
    // T_mem = 3
    let us = 1e-6;
    let times = [32.0 * us, 160.0 * us, 452.0 * us, 580.0 * us];
    let (m, cleaning) = plan.measurements(&times, &[3.0 * us]).unwrap();
    assert_eq!(
        cleaning.strided_faster + cleaning.copy_slower + cleaning.remote_faster,
        0
    );
    let log3p = derive_log3p(&m).unwrap();
    let validation = plan.remote_strided(&times).unwrap();
    assert_eq!(validation.len(), 1);
    assert_eq!(validation[0].0, strided);
    let predicted = log3p.p2p(&strided);
    assert!((predicted - 580.0 * us).abs() < 1e-12 && (validation[0].1 - 580.0 * us).abs() < 1e-18);
    // a memcpy slower than the send to self, and a strided send to self faster than the
    // contiguous one, are both adjusted and counted
    let odd = [32.0 * us, 160.0 * us, 30.0 * us, 580.0 * us];
    let (m, cleaning) = plan.measurements(&odd, &[40.0 * us]).unwrap();
    assert_eq!((cleaning.strided_faster, cleaning.copy_slower), (1, 1));
    assert!((m.memory_copy[0] - 32.0 * us).abs() < 1e-18);
    assert!((m.self_strided[0][0] - 32.0 * us).abs() < 1e-18);
    // a remote transfer faster than the middleware overhead (T00 - T_mem = 29 µs) is raised
    // to it: o_net = 0 there, and the derivation goes through
    let noisy = [32.0 * us, 20.0 * us, 452.0 * us, 580.0 * us];
    let (m, cleaning) = plan.measurements(&noisy, &[3.0 * us]).unwrap();
    assert_eq!(cleaning.remote_faster, 1);
    assert!((m.remote_contiguous[0] - 29.0 * us).abs() < 1e-18);
    assert!(derive_log3p(&m).is_ok());
    assert!(plan.measurements(&times[..3], &[3.0 * us]).is_err());
    assert!(
        Log3PPlan {
            sizes: vec![12],
            strides: vec![16],
            element: 8
        }
        .layouts()
        .is_err()
    );
}
