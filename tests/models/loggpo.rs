//! LogGPO (Chen et al., Sci. China F 2009): every formula against hand computations, the protocol switch, the
//! unsupported combinations, and invariants.
//!
//! Parameters of the hand computations (µs): L = 5, G = 0.001 µs/B, S = 16384 B, O' = 2,
//! Oi(K) = 1 + 0.0001 K, Oc(K) = 0.0005 K.

use crate::common;

use commcost::models::loggpo::Mechanism;
use commcost::models::loggpo::Progress;
use commcost::models::loggpo::ProtocolKind;
use commcost::models::loggpo::RendezvousCase;
use commcost::models::loggpo::Timeline;
use commcost::models::loggpo::TimelineError;
use commcost::table::Table1D;
use commcost::{CommModel, LogGpo, Message, ParameterError};
use common::{HAND_RELATIVE, US, assert_rel};
use proptest::prelude::*;

fn model(progress: Progress, rendezvous: Mechanism) -> LogGpo {
    LogGpo::new(
        5.0 * US,
        0.001 * US,
        16384,
        progress,
        Mechanism::T,
        rendezvous,
        2.0 * US,
        Table1D::linear(1.0 * US, 0.0001 * US).unwrap(),
        Table1D::linear(0.0, 0.0005 * US).unwrap(),
    )
    .unwrap()
}

fn dcp() -> LogGpo {
    model(Progress::Dependent, Mechanism::Rat)
}

fn icp() -> LogGpo {
    model(Progress::Independent, Mechanism::Rta)
}

fn at(isend: f64, irecv: f64, send_wait: f64, recv_wait: f64, computation: f64) -> Timeline {
    Timeline {
        isend: isend * US,
        irecv: irecv * US,
        send_wait: send_wait * US,
        recv_wait: recv_wait * US,
        computation: computation * US,
    }
}

#[test]
fn eager() {
    // K = 8192: Oi = 1 + 0.8192 = 1.8192, Oc = 4.096, G(K-1) = 8.191
    // Tc = 1.8192 + 8.191 + 5 + 4.096 = 19.1062; Os = Oi, Or = Orw = Oc, Osw = 0
    let o = dcp()
        .timeline(&Message::contiguous(8192), &at(0.0, 0.0, 10.0, 10.0, 10.0))
        .unwrap();
    assert_eq!((o.protocol, o.case), (ProtocolKind::Eager, None));
    assert_rel(o.total, 19.1062 * US, HAND_RELATIVE);
    assert_rel(o.send_overhead, 1.8192 * US, HAND_RELATIVE);
    assert_rel(o.recv_overhead, 4.096 * US, HAND_RELATIVE);
    assert_rel(o.recv_wait_overhead, 4.096 * US, HAND_RELATIVE);
    assert_eq!(o.send_wait_overhead.to_bits(), 0f64.to_bits());
    // Rso = 10 / (10 + 1.8192), Rro = 10 / (10 + 4.096)
    assert_rel(o.send_overlap, 10.0 / 11.8192, HAND_RELATIVE);
    assert_rel(o.recv_overlap, 10.0 / 14.096, HAND_RELATIVE);
    // progress makes no difference for eager messages
    let i = icp()
        .timeline(&Message::contiguous(8192), &at(0.0, 0.0, 10.0, 10.0, 10.0))
        .unwrap();
    assert_eq!(i, o);
}

#[test]
fn rendezvous_dependent_late_receiver() {
    // K = 65536: Oi = 1 + 6.5536 = 7.5536, G(K-1) = 65.535.
    // Ts = 0, Tr = 10 > Ts + O' + L = 7: case (a). Tsw = 4: blocking Tr - Tsw = 6.
    // Osw = 6 + 4 + 5 + 7.5536 + 65.535 = 88.0886, Os = 2 + Osw = 90.0886,
    // Orw = 0, Or = 2O' = 4, Tc = 8 + 15 + 6 + 7.5536 + 65.535 = 102.0886
    let o = dcp()
        .timeline(&Message::contiguous(65536), &at(0.0, 10.0, 4.0, 12.0, 4.0))
        .unwrap();
    assert_eq!(
        (o.protocol, o.case),
        (ProtocolKind::Rendezvous, Some(RendezvousCase::LateReceiver))
    );
    assert_rel(o.send_wait_overhead, 88.0886 * US, HAND_RELATIVE);
    assert_rel(o.send_overhead, 90.0886 * US, HAND_RELATIVE);
    assert_eq!(o.recv_wait_overhead.to_bits(), 0f64.to_bits());
    assert_rel(o.recv_overhead, 4.0 * US, HAND_RELATIVE);
    assert_rel(o.total, 102.0886 * US, HAND_RELATIVE);
    assert_rel(o.send_overlap, 4.0 / 94.0886, HAND_RELATIVE);
    assert_rel(o.recv_overlap, 4.0 / 8.0, HAND_RELATIVE);
}

#[test]
fn rendezvous_dependent_early_receiver_uses_the_receivers_wait() {
    // Tr = 3 <= 7: case (b). Tsw = 4, Trw = 20: the sender blocks until the receiver's wait,
    // Trw - Tsw = 16 (correction of the paper's case (b); the paper's (Tr - Tsw) = -1 would clamp to 0).
    // Osw = 16 + 4 + 5 + 7.5536 + 65.535 = 98.0886, Os = 100.0886,
    // Orw = 4 + 5 + 7.5536 + 65.535 = 82.0886, Or = 84.0886,
    // Tc = 8 + 15 + 16 + 7.5536 + 65.535 = 112.0886
    let o = dcp()
        .timeline(&Message::contiguous(65536), &at(0.0, 3.0, 4.0, 20.0, 4.0))
        .unwrap();
    assert_eq!(o.case, Some(RendezvousCase::EarlyReceiver));
    assert_rel(o.send_wait_overhead, 98.0886 * US, HAND_RELATIVE);
    assert_rel(o.send_overhead, 100.0886 * US, HAND_RELATIVE);
    assert_rel(o.recv_wait_overhead, 82.0886 * US, HAND_RELATIVE);
    assert_rel(o.recv_overhead, 84.0886 * US, HAND_RELATIVE);
    assert_rel(o.total, 112.0886 * US, HAND_RELATIVE);
    // a receiver already waiting when the sender waits: no blocking (clamped at 0)
    let o = dcp()
        .timeline(&Message::contiguous(65536), &at(0.0, 3.0, 30.0, 20.0, 4.0))
        .unwrap();
    assert_rel(o.total, 96.0886 * US, HAND_RELATIVE);
}

#[test]
fn rendezvous_case_boundary_is_exact() {
    // Tr = Ts + O' + L exactly (computed as the model does: Ts + O' + L in that order): case (b).
    // Tsw = 4, Trw = 9: blocking Trw - Tsw = 5, Tc = 8 + 15 + 5 + 7.5536 + 65.535 = 101.0886
    let m = dcp();
    let msg = Message::contiguous(65536);
    let boundary = 0.0 + m.control_overhead() + m.latency();
    let t = Timeline {
        irecv: boundary,
        ..at(0.0, 0.0, 4.0, 9.0, 4.0)
    };
    let o = m.timeline(&msg, &t).unwrap();
    assert_eq!(o.case, Some(RendezvousCase::EarlyReceiver));
    assert_rel(o.total, 101.0886 * US, HAND_RELATIVE);
    // one ulp later: case (a), blocking Tr - Tsw = 3: Tc = 8 + 15 + 3 + 7.5536 + 65.535 = 99.0886
    let just_after = f64::from_bits(boundary.to_bits() + 1);
    let o = m
        .timeline(
            &msg,
            &Timeline {
                irecv: just_after,
                ..t
            },
        )
        .unwrap();
    assert_eq!(o.case, Some(RendezvousCase::LateReceiver));
    assert_rel(o.total, 99.0886 * US, HAND_RELATIVE);
}

#[test]
fn rendezvous_independent() {
    // Os = 2O' = 4, Osw = 2, Or = 2O' + Oi = 11.5536, Orw = 9.5536,
    // Tc = 8 + 15 + 7.5536 + 65.535 = 96.0886, whatever the arrivals
    for t in [at(0.0, 10.0, 4.0, 12.0, 4.0), at(0.0, 3.0, 4.0, 20.0, 4.0)] {
        let o = icp().timeline(&Message::contiguous(65536), &t).unwrap();
        assert_eq!((o.protocol, o.case), (ProtocolKind::Rendezvous, None));
        assert_rel(o.send_overhead, 4.0 * US, HAND_RELATIVE);
        assert_rel(o.send_wait_overhead, 2.0 * US, HAND_RELATIVE);
        assert_rel(o.recv_overhead, 11.5536 * US, HAND_RELATIVE);
        assert_rel(o.recv_wait_overhead, 9.5536 * US, HAND_RELATIVE);
        assert_rel(o.total, 96.0886 * US, HAND_RELATIVE);
    }
}

#[test]
fn protocol_switch_at_s() {
    let m = dcp();
    // K = S = 16384, eager: 2.6384 + 16.383 + 5 + 8.192 = 32.2134
    assert_rel(
        m.p2p(&Message::contiguous(16384)),
        32.2134 * US,
        HAND_RELATIVE,
    );
    // K = S + 1, rendezvous (balanced, no blocking): 8 + 15 + 2.6385 + 16.384 = 42.0225
    assert_rel(
        m.p2p(&Message::contiguous(16385)),
        42.0225 * US,
        HAND_RELATIVE,
    );
    assert_eq!(m.protocol(16384), ProtocolKind::Eager);
    assert_eq!(m.protocol(16385), ProtocolKind::Rendezvous);
    // the trait's overheads are the balanced Os / Or: eager Oi and Oc
    assert_rel(
        m.send_overhead(&Message::contiguous(16384)),
        2.6384 * US,
        HAND_RELATIVE,
    );
    assert_rel(
        m.recv_overhead(&Message::contiguous(16384)),
        8.192 * US,
        HAND_RELATIVE,
    );
}

#[test]
fn overlap_helpers() {
    let m = dcp();
    let big = Message::contiguous(65536);
    // balanced case (b): Os = 2 + (4 + 5 + 7.5536 + 65.535) = 84.0886, Tc = 96.0886
    assert_rel(
        m.exposed_send_time(&big, 200.0 * US).unwrap(),
        84.0886 * US,
        HAND_RELATIVE,
    );
    assert_rel(
        m.exposed_send_time(&big, 10.0 * US).unwrap(),
        86.0886 * US,
        HAND_RELATIVE,
    );
    // Rso = 0.5 needs comp = Os
    let comp = m.computation_for_send_overlap(&big, 0.5).unwrap();
    assert_rel(comp, 84.0886 * US, HAND_RELATIVE);
    let reached = m.timeline(&big, &Timeline::balanced(comp)).unwrap();
    assert_rel(reached.send_overlap, 0.5, HAND_RELATIVE);
    assert!(matches!(
        m.computation_for_send_overlap(&big, 1.0),
        Err(TimelineError::UnreachableRatio { .. })
    ));
    assert!(m.computation_for_send_overlap(&big, 1.5).is_err());
    assert!(m.computation_for_send_overlap(&big, f64::NAN).is_err());
    assert_eq!(m.computation_for_send_overlap(&big, 0.0), Ok(0.0));
}

#[test]
fn unsupported_combinations_are_rejected() {
    let build = |progress, eager, rendezvous| {
        LogGpo::new(
            5e-6,
            1e-9,
            16384,
            progress,
            eager,
            rendezvous,
            2e-6,
            Table1D::constant(1e-6).unwrap(),
            Table1D::constant(1e-6).unwrap(),
        )
    };
    use Mechanism::{Rat, Rta, T, TA};
    use Progress::{Dependent, Independent};
    for (progress, eager, rendezvous, expected) in [
        (Dependent, TA, Rat, ("eager", "dependent", "TA")),
        (Independent, Rat, Rta, ("eager", "independent", "RAT")),
        (Dependent, T, Rta, ("rendezvous", "dependent", "RTA")),
        (Independent, T, Rat, ("rendezvous", "independent", "RAT")),
        (Dependent, T, T, ("rendezvous", "dependent", "T")),
        (Independent, T, TA, ("rendezvous", "independent", "TA")),
    ] {
        match build(progress, eager, rendezvous) {
            Err(ParameterError::UnsupportedCombination {
                protocol,
                progress,
                mechanism,
            }) => {
                assert_eq!((protocol, progress, mechanism), expected)
            }
            other => panic!("{expected:?}: expected an error, got {other:?}"),
        }
    }
    assert!(build(Dependent, T, Rat).is_ok());
    assert!(build(Independent, T, Rta).is_ok());
}

#[test]
fn bad_timelines_are_typed_errors() {
    let m = dcp();
    let msg = Message::contiguous(1024);
    assert!(matches!(
        m.timeline(&msg, &at(0.0, f64::NAN, 1.0, 1.0, 0.0)),
        Err(TimelineError::OutOfRange { name: "irecv", .. })
    ));
    assert!(matches!(
        m.timeline(&msg, &at(5.0, 0.0, 4.0, 1.0, 0.0)),
        Err(TimelineError::WaitBeforeStart {
            wait: "send_wait",
            ..
        })
    ));
    assert!(matches!(
        m.timeline(&msg, &at(0.0, 0.0, 1.0, 1.0, -1.0)),
        Err(TimelineError::OutOfRange {
            name: "computation",
            ..
        })
    ));
    assert!(m.exposed_send_time(&msg, f64::INFINITY).is_err());
}

fn any_model() -> impl Strategy<Value = LogGpo> {
    (
        0.0..1e-4f64,
        0.0..1e-8f64,
        0u64..1 << 20,
        any::<bool>(),
        0.0..1e-5f64,
        (0.0..1e-5f64, 0.0..1e-9f64),
        (0.0..1e-5f64, 0.0..1e-9f64),
    )
        .prop_map(|(l, g, s, independent, o, (oi0, oi1), (oc0, oc1))| {
            let (progress, mechanism) = if independent {
                (Progress::Independent, Mechanism::Rta)
            } else {
                (Progress::Dependent, Mechanism::Rat)
            };
            LogGpo::new(
                l,
                g,
                s,
                progress,
                Mechanism::T,
                mechanism,
                o,
                Table1D::linear(oi0, oi1).unwrap(),
                Table1D::linear(oc0, oc1).unwrap(),
            )
            .unwrap()
        })
}

fn any_timeline() -> impl Strategy<Value = Timeline> {
    (
        0.0..1e-3f64,
        0.0..1e-3f64,
        0.0..1e-3f64,
        0.0..1e-3f64,
        0.0..1e-3f64,
    )
        .prop_map(|(ts, tr, ds, dr, comp)| Timeline {
            isend: ts,
            irecv: tr,
            send_wait: ts + ds,
            recv_wait: tr + dr,
            computation: comp,
        })
}

proptest! {
    // two properties reject cases whose model has the wrong protocol or progress (up to half
    // of them): allow that many rejects also when PROPTEST_CASES asks for thousands of cases
    #![proptest_config(ProptestConfig { max_global_rejects: 1 << 20, ..ProptestConfig::default() })]

    #[test]
    fn outputs_are_finite_non_negative_and_ratios_bounded(
        m in any_model(), k in 0u64..1 << 22, t in any_timeline()
    ) {
        let o = m.timeline(&Message::contiguous(k), &t).unwrap();
        for v in [o.send_overhead, o.recv_overhead, o.send_wait_overhead, o.recv_wait_overhead, o.total] {
            prop_assert!(v.is_finite() && v >= 0.0, "{o:?}");
        }
        for r in [o.send_overlap, o.recv_overlap] {
            prop_assert!((0.0..=1.0).contains(&r), "{o:?}");
        }
    }

    /// Within one protocol, a larger message never costs less (balanced timeline).
    #[test]
    fn total_is_monotone_within_a_protocol(m in any_model(), a in 0u64..1 << 22, b in 0u64..1 << 22) {
        let (small, large) = (a.min(b), a.max(b));
        prop_assume!(m.protocol(small) == m.protocol(large));
        prop_assert!(m.p2p(&Message::contiguous(large)) >= m.p2p(&Message::contiguous(small)));
    }

    /// In case (a), a later receiver never makes the communication cheaper.
    #[test]
    fn later_receiver_never_reduces_case_a_cost(
        m in any_model(),
        extra in 1u64..1 << 20,
        t in any_timeline(),
        late in 1e-9..1e-3f64,
        delay in 0.0..1e-3f64,
    ) {
        prop_assume!(m.progress() == Progress::Dependent);
        let msg = Message::contiguous(m.eager_limit() + extra);
        // the receiver posts after the request arrived: case (a)
        let irecv = t.isend + m.control_overhead() + m.latency() + late;
        let t = Timeline { irecv, recv_wait: irecv + (t.recv_wait - t.irecv), ..t };
        let first = m.timeline(&msg, &t).unwrap();
        prop_assert_eq!(first.case, Some(RendezvousCase::LateReceiver));
        let later = Timeline { irecv: t.irecv + delay, recv_wait: t.recv_wait + delay, ..t };
        let second = m.timeline(&msg, &later).unwrap();
        prop_assert_eq!(second.case, Some(RendezvousCase::LateReceiver));
        prop_assert!(second.total >= first.total);
    }
}

#[test]
fn the_eager_limit_is_the_rendezvous_threshold_of_the_trait() {
    // S = 16384 B: K <= S eager, K > S rendezvous (the model's own protocol switch)
    let m = dcp();
    assert_eq!(CommModel::rendezvous_above(&m), Some(16384));
    assert_eq!(m.protocol(16384), ProtocolKind::Eager);
    assert_eq!(m.protocol(16385), ProtocolKind::Rendezvous);
}
