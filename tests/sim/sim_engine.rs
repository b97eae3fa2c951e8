//! The simulator's semantics on small schedules, against hand calculations.

use crate::common;

use commcost::collectives::{Bcast, Problem, Scan};
use commcost::sim::SimError;
use commcost::sim::{Noise, OpKind, ScheduleBuilder, SimOptions, ToSchedule, simulate};
use commcost::{CommModel, LogGP, Message};
use common::assert_rel;

const US: f64 = 1e-6;

/// L = 5 µs, o = 1 µs, g = 2 µs, G = 1 ns/byte.
fn loggp() -> LogGP {
    LogGP::new(5.0 * US, 1.0 * US, 2.0 * US, 1e-9).unwrap()
}

/// T(s) = 2o + L + (s - 1) G.
fn t(bytes: u64) -> f64 {
    7.0 * US + (bytes as f64 - 1.0) * 1e-9
}

fn run(b: ScheduleBuilder, options: &SimOptions) -> commcost::sim::SimResult {
    simulate(&b.build().unwrap(), &loggp(), options).unwrap()
}

#[test]
fn one_message_costs_the_end_to_end_time() {
    let mut b = ScheduleBuilder::new(2);
    b.send(0, 1, 0, 1001);
    b.recv(1, 0, 0, 1001);
    let r = run(b, &SimOptions::default());
    assert_rel(r.makespan, t(1001), 1e-12);
    // the sender is done after its overhead
    assert_rel(r.rank_finish[0], 1.0 * US, 1e-12);
}

#[test]
fn consecutive_sends_are_one_interval_apart() {
    // three 1001-byte sends from rank 0: I = max(o, g + 1000 G) = 3 µs
    let mut b = ScheduleBuilder::new(4);
    for peer in 1..4 {
        b.send(0, peer, 0, 1001);
        b.recv(peer, 0, 0, 1001);
    }
    let r = run(b, &SimOptions::default());
    for peer in 1..4 {
        assert_rel(
            r.rank_finish[peer],
            (peer as f64 - 1.0) * 3.0 * US + t(1001),
            1e-12,
        );
    }
}

#[test]
fn a_receiver_processes_messages_one_at_a_time() {
    // three ranks send 1 byte to rank 0 at once: arrivals at T - o = 6 µs; the receiving NIC
    // and CPU take max(I, o) = 2 µs per message: completions at 7, 9, 11 µs
    let mut b = ScheduleBuilder::new(4);
    for peer in 1..4 {
        b.send(peer, 0, 0, 1);
        b.recv(0, peer, 0, 1);
    }
    let r = run(
        b,
        &SimOptions {
            timeline: true,
            ..SimOptions::default()
        },
    );
    let ends = r.ends.unwrap();
    let mut recv_ends: Vec<f64> = (0..6).filter(|i| i % 2 == 1).map(|i| ends[i]).collect();
    recv_ends.sort_by(f64::total_cmp);
    for (k, e) in recv_ends.iter().enumerate() {
        assert_rel(*e, (7.0 + 2.0 * k as f64) * US, 1e-12);
    }
}

#[test]
fn requires_waits_for_the_end_and_irequires_for_the_start() {
    for (start_dependency, expected) in [(false, 2.0 * t(8)), (true, t(8))] {
        // rank 1 sends to rank 0; rank 0 forwards to rank 2 after its receive completes
        // (requires) or once it is posted (irequires)
        let mut b = ScheduleBuilder::new(3);
        b.send(1, 0, 0, 8);
        let recv = b.recv(0, 1, 0, 8);
        let fwd = b.send(0, 2, 0, 8);
        if start_dependency {
            b.irequires(fwd, recv);
        } else {
            b.requires(fwd, recv);
        }
        b.recv(2, 0, 0, 8);
        let r = run(b, &SimOptions::default());
        assert_rel(r.rank_finish[2], expected, 1e-12);
    }
}

#[test]
fn calc_holds_the_cpu() {
    // rank 1 computes 20 µs, then receives; the message waits (eager) or does not leave before
    // the receive is posted (rendezvous)
    let build = || {
        let mut b = ScheduleBuilder::new(2);
        b.send(0, 1, 0, 100_001);
        let c = b.calc(1, 20.0 * US);
        let r = b.recv(1, 0, 0, 100_001);
        b.requires(r, c);
        b
    };
    // eager: arrival at T - o = 106 µs > 20 µs: completes at T
    let eager = run(build(), &SimOptions::default());
    assert_rel(eager.makespan, t(100_001), 1e-12);
    assert_rel(eager.rank_finish[0], 1.0 * US, 1e-12);
    // rendezvous: the transfer starts when the receive is posted at 20 µs
    let rendezvous = run(
        build(),
        &SimOptions {
            rendezvous_above: Some(65536),
            ..SimOptions::default()
        },
    );
    assert_rel(rendezvous.makespan, 20.0 * US + t(100_001), 1e-12);
    // and the send completes with the receive
    assert_rel(rendezvous.rank_finish[0], rendezvous.makespan, 1e-12);
}

#[test]
fn critical_path_of_a_binomial_broadcast() {
    let problem = Problem::new(8, Message::contiguous(1001));
    let schedule = Bcast::Binomial.schedule(&problem).unwrap();
    let r = simulate(
        &schedule,
        &loggp(),
        &SimOptions {
            critical_path: true,
            ..SimOptions::default()
        },
    )
    .unwrap();
    // 0 → 4 → 6 → 7: three messages of T each
    assert_rel(r.makespan, 3.0 * t(1001), 1e-12);
    let path = r.critical_path.unwrap();
    assert_eq!(path.messages(), 3);
    assert_eq!(path.ranks_visited(), 4);
    let ranks: Vec<u64> = path.steps.iter().map(|s| s.rank).collect();
    assert_eq!(ranks, vec![0, 4, 4, 6, 6, 7]);
    assert_eq!(path.steps.last().unwrap().kind, OpKind::Recv);
    assert_rel(path.steps.last().unwrap().end, r.makespan, 1e-15);
}

#[test]
fn timeline_csv_has_one_line_per_operation() {
    let problem = Problem::new(5, Message::contiguous(64));
    let schedule = Scan::LinearChain.schedule(&problem).unwrap();
    let r = simulate(
        &schedule,
        &loggp(),
        &SimOptions {
            timeline: true,
            ..SimOptions::default()
        },
    )
    .unwrap();
    let mut out = Vec::new();
    r.timeline_csv(&schedule, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "rank,op,kind,peer,bytes,start,end");
    assert_eq!(lines.len(), schedule.len() + 1);
    assert!(lines[1].starts_with("0,0,send,1,64,"));
}

#[test]
fn noise_is_deterministic_and_only_delays() {
    let problem = Problem::new(33, Message::contiguous(4096));
    let schedule = Scan::LinearChain.schedule(&problem).unwrap();
    let with = |noise| {
        simulate(
            &schedule,
            &loggp(),
            &SimOptions {
                noise,
                ..SimOptions::default()
            },
        )
        .unwrap()
        .makespan
    };
    let quiet = with(None);
    let a = with(Some(Noise::exponential(1, 1.0 * US).unwrap()));
    let b = with(Some(Noise::exponential(1, 1.0 * US).unwrap()));
    let c = with(Some(Noise::exponential(2, 1.0 * US).unwrap()));
    assert_eq!(a.to_bits(), b.to_bits());
    assert_ne!(a.to_bits(), c.to_bits());
    // a chain: every delay is on the path
    assert!(a > quiet && c > quiet);
    assert_rel(
        with(Some(Noise::exponential(1, 0.0).unwrap())),
        quiet,
        1e-15,
    );
    assert!(Noise::exponential(1, -1.0).is_err());
}

#[test]
fn invalid_schedules_are_typed_errors() {
    let mut b = ScheduleBuilder::new(2);
    b.send(0, 2, 0, 8);
    assert!(matches!(
        b.build(),
        Err(SimError::RankOutOfRange {
            what: "peer",
            rank: 2,
            ranks: 2
        })
    ));

    let mut b = ScheduleBuilder::new(2);
    b.send(0, 1, 0, 8);
    assert!(matches!(
        b.build(),
        Err(SimError::Unmatched { kind: "send", .. })
    ));

    let mut b = ScheduleBuilder::new(2);
    b.send(0, 1, 0, 8);
    b.recv(1, 0, 0, 16);
    assert!(matches!(
        b.build(),
        Err(SimError::SizeMismatch {
            send_bytes: 8,
            recv_bytes: 16,
            ..
        })
    ));

    let mut b = ScheduleBuilder::new(1);
    let x = b.calc(0, 1.0);
    let y = b.calc(0, 1.0);
    b.requires(x, y);
    b.requires(y, x);
    assert!(matches!(b.build(), Err(SimError::Cycle { rank: 0, .. })));

    let mut b = ScheduleBuilder::new(2);
    let x = b.calc(0, 1.0);
    let y = b.calc(1, 1.0);
    b.requires(x, y);
    assert!(matches!(
        b.build(),
        Err(SimError::CrossRankDependency { .. })
    ));

    let mut b = ScheduleBuilder::new(1);
    let x = b.calc(0, 1.0);
    b.requires(x, commcost::sim::OpId(7));
    assert!(matches!(
        b.build(),
        Err(SimError::UnknownOperation { on: 7, .. })
    ));

    let mut b = ScheduleBuilder::new(1);
    b.calc(0, f64::NAN);
    assert!(matches!(b.build(), Err(SimError::InvalidTime { .. })));

    assert!(matches!(
        ScheduleBuilder::new(0).build(),
        Err(SimError::NoRanks)
    ));
    assert!(
        Bcast::Binomial
            .schedule(&Problem::new(0, Message::contiguous(1)))
            .is_err()
    );
    assert!(
        Bcast::Pipelined { segment: 0 }
            .schedule(&Problem::new(4, Message::contiguous(1)))
            .is_err()
    );
    // a pairwise exchange on 2^20 processes has 2^41 operations
    assert!(matches!(
        commcost::collectives::Alltoall::PairwiseExchange
            .schedule(&Problem::new(1 << 20, Message::contiguous(1))),
        Err(SimError::TooLarge { .. })
    ));
    // a ring allreduce on 18 000 processes: 4 (P - 1) P ≈ 1.3e9 operations, below the index
    // limit but some 40 GB — refused before anything is allocated (it used to reserve it all
    // and abort)
    let ring = Problem::new(18_000, Message::contiguous(1 << 20));
    const { assert!(4 * 17_999 * 18_000 > commcost::sim::MAX_BUILT_OPERATIONS) };
    assert!(matches!(
        commcost::collectives::Allreduce::Ring.schedule(&ring),
        Err(SimError::TooLarge { .. })
    ));
    assert!(matches!(
        commcost::collectives::ompi::Allreduce::Ring.schedule(&ring),
        Err(SimError::TooLarge { .. })
    ));
}

#[test]
fn waiting_in_a_circle_is_a_deadlock() {
    // each rank receives before it sends
    let mut b = ScheduleBuilder::new(2);
    for (me, other) in [(0, 1), (1, 0)] {
        let r = b.recv(me, other, 0, 8);
        let s = b.send(me, other, 0, 8);
        b.requires(s, r);
    }
    let err = simulate(&b.build().unwrap(), &loggp(), &SimOptions::default()).unwrap_err();
    assert!(matches!(err, SimError::Deadlock { stuck: 4, .. }), "{err}");
}

#[derive(Debug)]
struct Broken;

impl CommModel for Broken {
    fn p2p(&self, _: &Message) -> f64 {
        f64::NAN
    }
}

#[test]
fn a_model_returning_nan_is_an_error() {
    let mut b = ScheduleBuilder::new(2);
    b.send(0, 1, 0, 8);
    b.recv(1, 0, 0, 8);
    let err = simulate(&b.build().unwrap(), &Broken, &SimOptions::default()).unwrap_err();
    assert!(matches!(err, SimError::InvalidTime { name: "p2p", .. }));
}

#[test]
fn one_rank_and_empty_schedules_cost_nothing() {
    let r = simulate(
        &ScheduleBuilder::new(3).build().unwrap(),
        &loggp(),
        &SimOptions {
            critical_path: true,
            ..SimOptions::default()
        },
    )
    .unwrap();
    assert_eq!(r.makespan.to_bits(), 0.0f64.to_bits());
    assert!(
        r.rank_finish
            .iter()
            .all(|f| f.to_bits() == 0.0f64.to_bits())
    );
    assert!(r.critical_path.unwrap().steps.is_empty());
}

#[test]
fn an_operator_calc_costs_per_call_plus_per_byte() {
    // 1 µs per call + 1 ns per byte on 1000 bytes: 2 µs
    let mut b = ScheduleBuilder::new(1);
    b.calc_operator(
        0,
        1000,
        commcost::collectives::Operator::new(1.0 * US, 1e-9).unwrap(),
    );
    let schedule = b.build().unwrap();
    assert_rel(
        schedule.calc_seconds(commcost::sim::OpId(0)).unwrap(),
        2.0 * US,
        1e-12,
    );
    let r = simulate(&schedule, &loggp(), &SimOptions::default()).unwrap();
    assert_rel(r.makespan, 2.0 * US, 1e-12);
}

/// LogGP with `L = 3`, `o = 1`, `g = 10` µs, `G = 0`: `T = 2o + L = 5` µs, `I = g = 10` µs, a
/// NIC much slower than the CPU.
fn slow_nic() -> LogGP {
    LogGP::new(3.0 * US, 1.0 * US, 10.0 * US, 0.0).unwrap()
}

#[test]
fn a_send_waiting_for_its_nic_leaves_the_cpu_to_a_receive() {
    // rank 0 sends A and B to rank 1 and receives C from rank 1, all ready at 0.
    // A: CPU [0, 1], NIC [0, 10]. B waits for the NIC until 10 without holding the CPU
    // (LogGOPSim re-inserts it at max(next o, next g)), so C, which arrives at T - o = 4,
    // is received at once: [4, 5]. B then runs at [10, 11]. (A send that held the CPU from
    // 1 to 11 would push C's completion to 12.)
    let mut b = ScheduleBuilder::new(2);
    let send_a = b.send(0, 1, 0, 1);
    let send_b = b.send(0, 1, 0, 1);
    let recv_c = b.recv(0, 1, 1, 1);
    b.recv(1, 0, 0, 1);
    b.recv(1, 0, 0, 1);
    b.send(1, 0, 1, 1);
    let options = SimOptions {
        timeline: true,
        ..SimOptions::default()
    };
    let r = simulate(&b.build().unwrap(), &slow_nic(), &options).unwrap();
    let (starts, ends) = (r.starts.unwrap(), r.ends.unwrap());
    assert_rel(starts[send_a.index()], 0.0 * US, 1e-12);
    assert_rel(ends[recv_c.index()], 5.0 * US, 1e-12);
    assert_rel(starts[send_b.index()], 10.0 * US, 1e-12);
    assert_rel(ends[send_b.index()], 11.0 * US, 1e-12);
    // rank 1: A received [4, 5]; B arrives at 10 + 4 = 14, its window [5 + 10 - 1, ...]:
    // received [14, 15]
    assert_rel(r.rank_finish[1], 15.0 * US, 1e-12);
    // six operations made ready, three messages delivered; B's second try is not an event
    assert_eq!(r.events, 9);
}

#[test]
fn a_receive_waiting_for_its_nic_leaves_the_cpu_to_a_calc() {
    // ranks 0 and 2 each send 1 byte to rank 1 at 0 (arrival 4 µs); rank 1 computes 2 µs after
    // the first receive. X is received [4, 5]; Y's NIC window must follow X's: it completes
    // no earlier than 5 + I = 15, so it is received [14, 15] and the CPU is free meanwhile:
    // the calc runs [5, 7] (a receive holding the CPU from 5 would push it to [15, 17]).
    let mut b = ScheduleBuilder::new(3);
    b.send(0, 1, 0, 1);
    b.send(2, 1, 0, 1);
    let recv_x = b.recv(1, 0, 0, 1);
    let recv_y = b.recv(1, 2, 0, 1);
    let calc = b.calc(1, 2.0 * US);
    b.requires(calc, recv_x);
    let options = SimOptions {
        timeline: true,
        ..SimOptions::default()
    };
    let r = simulate(&b.build().unwrap(), &slow_nic(), &options).unwrap();
    let (starts, ends) = (r.starts.unwrap(), r.ends.unwrap());
    assert_rel(ends[recv_x.index()], 5.0 * US, 1e-12);
    assert_rel(starts[calc.index()], 5.0 * US, 1e-12);
    assert_rel(ends[calc.index()], 7.0 * US, 1e-12);
    assert_rel(ends[recv_y.index()], 15.0 * US, 1e-12);
    assert_rel(r.makespan, 15.0 * US, 1e-12);
}

/// Rank 1 computes 100 µs before it posts its receive; rank 0 sends at once. On the Open
/// MPI/openib preset (Hoefler, Lichei & Rehm, IPDPS 2007, Table 2: rendezvous range from 12289
/// bytes with `G = 0.00103` µs/B; the preset splits the measured end-to-end 5.96 µs into
/// `o = 2.98` µs and `L = 0`): with the model's protocols a 20000-byte message leaves only when
/// the receive is posted and arrives complete `T = 2o + L + 19999 G = 26.55897` µs later, and
/// its send completes with the receive; an eager one waits at the receiver, which pays `o` once
/// posted.
fn late_receiver(bytes: u64, options: &SimOptions) -> commcost::sim::SimResult {
    let mut b = ScheduleBuilder::new(2);
    b.send(0, 1, 0, bytes);
    let work = b.calc(1, 100.0 * US);
    let recv = b.recv(1, 0, 0, bytes);
    b.requires(recv, work);
    let model = commcost::presets::open_mpi_openib();
    simulate(&b.build().unwrap(), &model, options).unwrap()
}

#[test]
fn the_model_says_which_messages_are_rendezvous() {
    let model = commcost::presets::open_mpi_openib();
    let protocols = SimOptions::default().with_protocols_of(&model);
    assert_eq!(protocols.rendezvous_above, Some(12288));
    let r = late_receiver(20_000, &protocols);
    assert_rel(r.rank_finish[1], (100.0 + 26.55897) * US, 1e-12);
    assert_rel(r.rank_finish[0], (100.0 + 26.55897) * US, 1e-12);
    // eager (the default options): posted at 100, the message is there, or = 2.98 µs
    let r = late_receiver(20_000, &SimOptions::default());
    assert_rel(r.rank_finish[1], 102.98 * US, 1e-12);
    assert_rel(r.rank_finish[0], 2.98 * US, 1e-12);
    // 8 KiB is eager on openib: the same with the model's protocols
    let r = late_receiver(8192, &protocols);
    assert_rel(r.rank_finish[1], 102.98 * US, 1e-12);
    assert_rel(r.rank_finish[0], 2.98 * US, 1e-12);
}

/// A message that arrives before its receive is posted is received once the receive is posted,
/// its receiving-NIC window placed then, after the previous reception's. Ranks 1 and 2 each
/// send 1 byte to rank 0 at 0, both arriving at `T - o` = 4 µs (`slow_nic`: `T = 5`, `o = 1`,
/// `I = 10` µs). X's receive is posted at 0: received [4, 5], its window ends at 5. Y's
/// receive is posted after a calc of `d` µs that follows X's receive; Y's window must end no
/// earlier than `5 + I` = 15, so it can be received from 14 at the earliest.
///
/// * `d = 5`: posted at 10; it waits for the NIC, the CPU free, and is received [14, 15].
/// * `d = 15`: posted at 20, when the NIC is long free: received [20, 21].
#[test]
fn a_late_posted_receive_waits_for_a_busy_nic() {
    for (d, y_end) in [(5.0, 15.0), (15.0, 21.0)] {
        let mut b = ScheduleBuilder::new(3);
        b.send(1, 0, 0, 1);
        b.send(2, 0, 0, 1);
        let recv_x = b.recv(0, 1, 0, 1);
        let work = b.calc(0, d * US);
        let recv_y = b.recv(0, 2, 0, 1);
        b.requires(work, recv_x);
        b.requires(recv_y, work);
        let options = SimOptions {
            timeline: true,
            ..SimOptions::default()
        };
        let r = simulate(&b.build().unwrap(), &slow_nic(), &options).unwrap();
        let (starts, ends) = (r.starts.unwrap(), r.ends.unwrap());
        assert_rel(ends[recv_x.index()], 5.0 * US, 1e-12);
        assert_rel(starts[recv_y.index()], (5.0 + d) * US, 1e-12);
        assert_rel(ends[recv_y.index()], y_end * US, 1e-12);
        // five operations made ready, two messages delivered; a second try is no event
        assert_eq!(r.events, 7, "d = {d}");
    }
}

/// A ring whose receives are all posted at the start (as Schedgen writes its ring allreduce):
/// the simulator posts such receives in one pass when many operations are ready at the start
/// (at least an eighth of them). The same ring beside a long chain of empty calcs on a rank of
/// its own (so that few operations are ready at the start and the receives go through the
/// ready list one by one) gives every operation of the ring the same start and end, the same
/// critical path and one event more per calc.
#[test]
fn receives_posted_at_the_start_in_one_pass_or_one_by_one_agree() {
    let (p, steps) = (16u64, 8);
    let ring = |extra: u64| {
        let ranks = if extra > 0 { p + 1 } else { p };
        let mut b = ScheduleBuilder::new(ranks);
        for r in 0..p {
            let mut last_recv = None;
            for _ in 0..steps {
                let send = b.send(r, (r + 1) % p, 0, 1024);
                if let Some(recv) = last_recv {
                    b.requires(send, recv);
                }
                let recv = b.recv(r, (r + p - 1) % p, 0, 1024);
                b.calc(r, 0.5 * US);
                last_recv = Some(recv);
            }
        }
        let mut prev = None;
        for _ in 0..extra {
            let c = b.calc(p, 0.0);
            if let Some(x) = prev {
                b.requires(c, x);
            }
            prev = Some(c);
        }
        b.build().unwrap()
    };
    let options = SimOptions {
        timeline: true,
        critical_path: true,
        ..SimOptions::default()
    };
    let alone = ring(0);
    // 16 x 8 receives and 16 first sends and 16 x 8 calcs ready at the start: 272 of 384
    let chained = ring(8 * 400);
    let a = simulate(&alone, &loggp(), &options).unwrap();
    let c = simulate(&chained, &loggp(), &options).unwrap();
    let n = alone.len();
    let (a_starts, c_starts) = (a.starts.clone().unwrap(), c.starts.clone().unwrap());
    let (a_ends, c_ends) = (a.ends.clone().unwrap(), c.ends.clone().unwrap());
    assert_eq!(a_starts[..], c_starts[..n]);
    assert_eq!(a_ends[..], c_ends[..n]);
    assert_eq!(a.rank_finish[..], c.rank_finish[..p as usize]);
    assert_eq!(a.makespan.to_bits(), c.makespan.to_bits());
    assert_eq!(a.events + 8 * 400, c.events);
    let steps_of = |r: &commcost::sim::SimResult| {
        r.critical_path
            .as_ref()
            .unwrap()
            .steps
            .iter()
            .map(|s| (s.op, s.start, s.end))
            .collect::<Vec<_>>()
    };
    assert_eq!(steps_of(&a), steps_of(&c));
}

/// A rendezvous send that completes at its handshake (`RendezvousCompletion::AtHandshake`):
/// the request (`p2p(1 B)` = 7 µs) reaches rank 1, which posts its receive after a 100 µs
/// calc; the acknowledgement takes another 7 µs: the send completes at 107 µs, while the
/// 20001-byte message leaves at 100 µs and is received at 100 + T(20001) = 127 µs. With the
/// receive posted at once, the send completes at 7 + 7 = 14 µs, the receive at T = 27 µs.
#[test]
fn a_rendezvous_send_can_complete_at_its_handshake() {
    use commcost::sim::RendezvousCompletion;
    let options = |completion| SimOptions {
        rendezvous_above: Some(1000),
        rendezvous_completion: completion,
        ..SimOptions::default()
    };
    let late = || {
        let mut b = ScheduleBuilder::new(2);
        b.send(0, 1, 0, 20001);
        let c = b.calc(1, 100.0 * US);
        let r = b.recv(1, 0, 0, 20001);
        b.requires(r, c);
        b
    };
    let r = run(late(), &options(RendezvousCompletion::AtHandshake));
    assert_rel(r.rank_finish[0], 107.0 * US, 1e-12);
    assert_rel(r.rank_finish[1], 100.0 * US + t(20001), 1e-12);
    let r = run(late(), &options(RendezvousCompletion::WithReceive));
    assert_rel(r.rank_finish[0], 100.0 * US + t(20001), 1e-12);
    let mut b = ScheduleBuilder::new(2);
    b.send(0, 1, 0, 20001);
    b.recv(1, 0, 0, 20001);
    let r = run(b, &options(RendezvousCompletion::AtHandshake));
    assert_rel(r.rank_finish[0], 14.0 * US, 1e-12);
    assert_rel(r.rank_finish[1], t(20001), 1e-12);
}

/// Four ranks computing 10 µs each on two shared cores: two at a time.
#[test]
fn shared_cores_serve_the_ranks_cpu_work_in_turn() {
    let four = || {
        let mut b = ScheduleBuilder::new(4);
        for r in 0..4 {
            b.calc(r, 10.0 * US);
        }
        b
    };
    let shared = SimOptions {
        cores: Some(2),
        ..SimOptions::default()
    };
    let r = run(four(), &shared);
    assert_eq!(
        r.rank_finish
            .iter()
            .map(|f| (f / US).round() as u32)
            .collect::<Vec<_>>(),
        [10, 10, 20, 20]
    );
    assert_rel(
        run(four(), &SimOptions::default()).makespan,
        10.0 * US,
        1e-12,
    );
    let none = SimOptions {
        cores: Some(0),
        ..SimOptions::default()
    };
    assert!(matches!(
        simulate(&four().build().unwrap(), &loggp(), &none),
        Err(SimError::InvalidOption { name: "cores", .. })
    ));
}

/// A token bucket of 10000 bytes on every NIC. A lone 10001-byte message crosses without its
/// 10000 G = 10 µs of serialisation: received at T(1) = 7 µs. Two back to back: the first
/// spends the sender's credit (its NIC is free again at I - 10 µs = 2 µs), the second leaves
/// at 2 µs and pays its G: received at 2 + T(10001) = 19 µs (without credit: I = 12 µs apart,
/// 12 + 17 = 29 µs).
#[test]
fn a_shaped_link_passes_a_lone_message_at_line_speed_and_holds_a_train_to_the_rate() {
    let shaped = SimOptions {
        link_burst: Some(10000),
        ..SimOptions::default()
    };
    let mut b = ScheduleBuilder::new(2);
    b.send(0, 1, 0, 10001);
    b.recv(1, 0, 0, 10001);
    assert_rel(run(b, &shaped).makespan, t(1), 1e-12);
    let train = || {
        let mut b = ScheduleBuilder::new(2);
        for _ in 0..2 {
            b.send(0, 1, 0, 10001);
            b.recv(1, 0, 0, 10001);
        }
        b
    };
    assert_rel(run(train(), &shaped).makespan, 2.0 * US + t(10001), 1e-12);
    assert_rel(
        run(train(), &SimOptions::default()).makespan,
        12.0 * US + t(10001),
        1e-12,
    );
}

/// Rendezvous acknowledgements behind the receiver's sends (`SimOptions::ack_behind_sends`):
/// two ranks each post two receives, then send two messages of `m` = 1 000 001 bytes to each
/// other, all rendezvous. `I = g + (m - 1) G` = 1002 µs, `T(m)` = 1007 µs, `h = T(1)` = 7 µs.
///
/// Without the term the directions overlap: each rank's second send starts at `I`, the receiver
/// takes it `I` after the first, done at `I + T(m)` = 2009 µs.
///
/// With it: each rank's two sends are handed to its NIC at 0, a backlog up to `2I`. Rank 0's
/// first send is handled first: rank 1 has handed nothing yet, so its acknowledgement leaves at
/// once. Rank 1's first send then asks rank 0, whose backlog ends at `2I`: the acknowledgement
/// leaves at `2I` instead of at `h`, its data `2I - h` later than it would have: received at
/// rank 0 at `2I - h + T(m)` = 3004 µs. The second sends (started at `I`, asked at `I + h`)
/// find both backlogs at `2I`: their data leaves `I - h` late, at `2I - h` as well; rank 0's is
/// received by rank 1 at 3004 µs, rank 1's arrives at rank 0 together with rank 1's first, and
/// rank 0 takes it `I` after that one: `3I - h + T(m)` = 4006 µs, each send completing with its
/// receive. About twice the time without the term: one link's rate for both directions.
#[test]
fn rendezvous_acknowledgements_behind_the_receivers_sends_make_an_exchange_take_turns() {
    let m = 1_000_001;
    let exchange = || {
        let mut b = ScheduleBuilder::new(2);
        for r in 0..2 {
            b.recv(r, 1 - r, 0, m);
            b.recv(r, 1 - r, 0, m);
            b.send(r, 1 - r, 0, m);
            b.send(r, 1 - r, 0, m);
        }
        b
    };
    let interval = 2.0 * US + (m - 1) as f64 * 1e-9;
    let h = t(1);
    let plain = SimOptions {
        rendezvous_above: Some(1000),
        ..SimOptions::default()
    };
    let queued = SimOptions {
        ack_behind_sends: true,
        ..plain
    };
    let r = run(exchange(), &plain);
    assert_rel(r.makespan, interval + t(m), 1e-12);
    let r = run(exchange(), &queued);
    assert_rel(r.rank_finish[0], 3.0 * interval - h + t(m), 1e-12);
    assert_rel(r.rank_finish[1], 3.0 * interval - h + t(m), 1e-12);
    assert_rel(r.makespan, 4006.0 * US, 1e-9);
    // eager messages have no acknowledgement: the term changes nothing
    let eager = SimOptions {
        rendezvous_above: None,
        ..queued
    };
    assert_rel(run(exchange(), &eager).makespan, interval + t(m), 1e-12);
}

/// Completion at the handshake with the acknowledgement behind the receiver's sends: one
/// rendezvous message each way (`m`, `I`, `T`, `h` as above). Rank 0's acknowledgement to
/// rank 1 leaves behind rank 0's own send, at `I` instead of `h`: rank 1's send completes when
/// it arrives, `I + h` = 1009 µs (without the term `2h` = 14 µs; rank 1's receive completes at
/// `T(m)` = 1007 µs), and its data is received by rank 0 at `I - h + T(m)` = 2002 µs; rank 0's
/// send, acknowledged at once, completes at `2h`.
#[test]
fn an_acknowledgement_behind_the_receivers_send_delays_completion_at_the_handshake() {
    use commcost::sim::RendezvousCompletion;
    let m = 1_000_001;
    let mut b = ScheduleBuilder::new(2);
    let mut sends = Vec::new();
    for r in 0..2 {
        b.recv(r, 1 - r, 0, m);
        sends.push(b.send(r, 1 - r, 0, m));
    }
    let options = SimOptions {
        rendezvous_above: Some(1000),
        rendezvous_completion: RendezvousCompletion::AtHandshake,
        ack_behind_sends: true,
        timeline: true,
        ..SimOptions::default()
    };
    let interval = 2.0 * US + (m - 1) as f64 * 1e-9;
    let h = t(1);
    let r = run(b, &options);
    let ends = r.ends.as_ref().unwrap();
    assert_rel(ends[sends[0].index()], 2.0 * h, 1e-12);
    assert_rel(ends[sends[1].index()], interval + h, 1e-12);
    assert_rel(r.rank_finish[0], interval - h + t(m), 1e-12);
    assert_rel(r.rank_finish[1], interval + h, 1e-12);
}
