//! The simulator against LogGOPSim itself (T. Hoefler, T. Schneider, A. Lumsdaine, "LogGOPSim —
//! Simulating Large-Scale Applications in the LogGOPS Model", HPDC 2010, LSAP workshop).
//!
//! `tests/fixtures/loggopsim/goal/*.goal` were written by LogGOPSim's own Schedgen and
//! `tests/fixtures/loggopsim/out/<set>/*.txt` are LogGOPSim's outputs on them (commands, commit
//! and machine in `tests/fixtures/loggopsim/NOTE.md`). Each schedule is read with `parse_goal`
//! (calc times in ns) and simulated on `LogGP::new(L, o, g, G)` with the same parameters;
//! LogGOPSim works in integer nanoseconds, so agreement is to 1e-3 ns.
//!
//! Where the semantics agree (every message eager, any `G`, a sender slower than the network)
//! every rank's finish time must equal LogGOPSim's. The documented differences are asserted as
//! the relations they imply:
//! * simultaneous events: LogGOPSim orders them by queue insertion (kind first among
//!   operations freed together, a waiting operation before a new message), we by operation
//!   index. Reordering each rank's operations by kind and lengthening `L` by a picosecond
//!   must give LogGOPSim's result exactly, on every schedule at `G = 0`.
//! * a CPU with other work while a message streams in (`G > 0`): LogGOPSim holds the CPU for
//!   `o + (k - 1) G` from the first byte, we for `o` after the last; ours is never later.
//! * rendezvous: LogGOPSim completes a rendezvous send when the receiver matches the message's
//!   first byte; we complete it with the receive, `o + (k - 1) G` later for an idle receiver.
//! * a receive posted after its message arrived (a hand-written schedule; Schedgen posts every
//!   receive at 0): LogGOPSim takes the message on arrival, we after the posting, and move a
//!   rendezvous message only then; ours is later, by amounts derived by hand.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use commcost::LogGP;
use commcost::sim::GoalError;
use commcost::sim::{OpId, OpKind, Schedule, SimOptions, SimResult, parse_goal, simulate};

/// One nanosecond in seconds (LogGOPSim's unit, and Schedgen's calc unit with `--timemult
/// 1000`, its default).
const NS: f64 = 1e-9;

/// LogGOPSim prints integer nanoseconds; ours are f64 seconds converted back.
const AGREE_NS: f64 = 1e-3;

/// A parameter set of `gen.sh`: name, `L`, `o`, `g`, `G` (ns, ns/byte), `S` (bytes; messages
/// larger than `S` use the rendezvous protocol).
struct Set {
    name: &'static str,
    latency: u64,
    overhead: u64,
    gap: u64,
    gap_per_byte: u64,
    eager_limit: u64,
}

const EAGER_S: u64 = 2_000_000_000;

const SETS: [Set; 5] = [
    Set {
        name: "eager_G0",
        latency: 3000,
        overhead: 1000,
        gap: 2000,
        gap_per_byte: 0,
        eager_limit: EAGER_S,
    },
    Set {
        name: "eager_G1",
        latency: 3000,
        overhead: 1000,
        gap: 2000,
        gap_per_byte: 1,
        eager_limit: EAGER_S,
    },
    Set {
        name: "slow_sender",
        latency: 1000,
        overhead: 500,
        gap: 9000,
        gap_per_byte: 0,
        eager_limit: EAGER_S,
    },
    Set {
        name: "rendezvous",
        latency: 3000,
        overhead: 1000,
        gap: 2000,
        gap_per_byte: 1,
        eager_limit: 256,
    },
    Set {
        name: "rendezvous_all",
        latency: 3000,
        overhead: 1000,
        gap: 2000,
        gap_per_byte: 1,
        eager_limit: 0,
    },
];

/// Where LogGOPSim and we order simultaneous events differently (see
/// `differences_at_g0_are_ties`): every other schedule agrees exactly on every rank.
const TIES: [(&str, &str); 5] = [
    ("eager_G0", "linear_alltoall_p8_d64"),
    ("eager_G0", "linear_alltoall_p16_d64"),
    ("eager_G0", "binomialtreebcast_nb_p8_d8"),
    ("slow_sender", "binomialtreebcast_nb_p8_d8"),
    ("slow_sender", "dissemination_nb_p8_d8"),
];

/// Schedules where, at `G > 0`, a rank's CPU has other work while a message streams in (two
/// messages per round, or calcs beside the collective): LogGOPSim holds the CPU for
/// `o + (k - 1) G` from the first byte, we for `o` after the last (see
/// `cpu_held_while_streaming`).
const STREAMING: [&str; 3] = [
    "binomialtreebcast_nb_p8_d8",
    "dissemination_nb_p8_d8",
    "nwaydissemination_n2_p9_d8",
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loggopsim")
}

/// Every GOAL fixture: name (without `.goal`) and schedule.
fn schedules() -> Vec<(String, Schedule)> {
    let mut names: Vec<String> = std::fs::read_dir(dir().join("goal"))
        .expect("fixture directory")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
        .filter_map(|n| n.strip_suffix(".goal").map(str::to_owned))
        .collect();
    names.sort();
    assert_eq!(names.len(), 34, "the fixtures of gen.sh");
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir().join("goal").join(format!("{name}.goal")))
                .expect("goal fixture");
            let schedule = parse_goal(&text, NS).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, schedule)
        })
        .collect()
}

/// LogGOPSim's output: its parameter line, per-host finish times (printed for `P <= 16`), and
/// the maximum.
struct Output {
    hosts: Vec<u64>,
    max: u64,
}

fn read_output(set: &Set, name: &str, ranks: u64) -> Output {
    let path = dir().join("out").join(set.name).join(format!("{name}.txt"));
    let text = std::fs::read_to_string(&path).expect("LogGOPSim output fixture");
    let header = format!(
        "size: {ranks} (1 CPUs, 1 NICs); L={}, o={} g={}, G={}, O=0, P={ranks}, S={}",
        set.latency, set.overhead, set.gap, set.gap_per_byte, set.eager_limit
    );
    assert!(
        text.lines().next().is_some_and(|l| l.ends_with(&header)),
        "{path:?} was not run with {header}"
    );
    let mut hosts = Vec::new();
    let mut max = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Host ") {
            let (host, time) = rest.split_once(": ").expect("Host i: t");
            assert_eq!(host.parse::<usize>().expect("host"), hosts.len());
            hosts.push(time.trim().parse::<u64>().expect("time"));
        }
        if let Some(rest) = line.strip_prefix("Maximum finishing time at host ") {
            let time = rest.split(": ").nth(1).expect("time").split(' ').next();
            max = Some(time.expect("time").parse::<u64>().expect("time"));
        }
    }
    if hosts.is_empty() {
        assert!(ranks > 16, "{path:?}: LogGOPSim prints every host up to 16");
    } else {
        assert_eq!(hosts.len() as u64, ranks, "{path:?}");
        max = hosts.iter().copied().max();
    }
    Output {
        hosts,
        max: max.unwrap_or_else(|| panic!("{path:?}: no finish time")),
    }
}

fn model(set: &Set, latency_offset_ns: f64) -> LogGP {
    LogGP::new(
        (set.latency as f64 + latency_offset_ns) * NS,
        set.overhead as f64 * NS,
        set.gap as f64 * NS,
        set.gap_per_byte as f64 * NS,
    )
    .expect("valid LogGP")
}

fn run(set: &Set, schedule: &Schedule, latency_offset_ns: f64) -> SimResult {
    let options = SimOptions {
        rendezvous_above: (set.eager_limit < EAGER_S).then_some(set.eager_limit),
        ..Default::default()
    };
    simulate(schedule, &model(set, latency_offset_ns), &options).expect("simulates")
}

fn ns(seconds: f64) -> f64 {
    seconds / NS
}

/// Our makespan and every rank's finish equal LogGOPSim's to `tolerance` ns.
#[track_caller]
fn assert_same(ours: &SimResult, theirs: &Output, tolerance: f64, what: &str) {
    let close = |seconds: f64, t: u64| (ns(seconds) - t as f64).abs() <= tolerance;
    assert!(
        close(ours.makespan, theirs.max),
        "{what}: ours {} ns, LogGOPSim {} ns",
        ns(ours.makespan),
        theirs.max
    );
    for (rank, &t) in theirs.hosts.iter().enumerate() {
        assert!(
            close(ours.rank_finish[rank], t),
            "{what} rank {rank}: ours {} ns, LogGOPSim {t} ns",
            ns(ours.rank_finish[rank])
        );
    }
}

#[track_caller]
fn assert_ns(ours_seconds: f64, theirs: u64, what: &str) {
    let ours = ns(ours_seconds);
    assert!(
        (ours - theirs as f64).abs() <= AGREE_NS,
        "{what}: ours {ours} ns, LogGOPSim {theirs} ns"
    );
}

/// Every message eager (`S` above every size): equal to LogGOPSim on every rank, at `G = 0`,
/// `G = 1 ns/B` and with a sender slower than the network (`g > 2o + L`), except the
/// documented ties and, at `G > 0`, the schedules where a CPU has work while a message
/// streams in.
#[test]
fn eager_agrees_with_loggopsim_on_every_rank() {
    let schedules = schedules();
    let mut compared = 0;
    for set in SETS.iter().filter(|s| s.eager_limit == EAGER_S) {
        for (name, schedule) in &schedules {
            if TIES.contains(&(set.name, name.as_str()))
                || (set.gap_per_byte > 0 && STREAMING.contains(&name.as_str()))
            {
                continue;
            }
            let theirs = read_output(set, name, schedule.ranks());
            let ours = run(set, schedule, 0.0);
            assert_same(&ours, &theirs, AGREE_NS, &format!("{} {name}", set.name));
            compared += 1;
        }
    }
    assert_eq!(compared, 3 * 34 - TIES.len() - STREAMING.len());
}

/// At `G = 0` (and for the slow sender) every difference is one of simultaneous events.
/// LogGOPSim orders events of equal time by the stamp an operation got when it entered its
/// queue: operations freed together enter sorted by kind (sends, receives, calcs:
/// `gnp_op_comp_func`), an operation re-inserted because its CPU or NIC was busy keeps its
/// stamp, and a message gets one when its send starts. We order them by operation index.
/// Imitating LogGOPSim's order — each rank's operations reordered by kind, and every latency a
/// picosecond longer so that an operation already waiting goes before a message arriving at
/// the same instant — must reproduce LogGOPSim on every schedule, every rank.
///
/// * Linear all-to-all, `P = 8, 16` (all operations free at 0; `o = 1`, `g = 2`, `L = 3` µs):
///   the message of send `k` (at `2k` µs) arrives at `2k + 4` µs, exactly when send `k + 2`
///   gets its NIC back. LogGOPSim serves the waiting send first, we the reception (it precedes
///   that send in the program). Hand derivation of ours at `P = 8` (each rank alike): sends
///   at 0, 2; at 4 the reception [4, 5], send 5, reception of the 6 µs arrival [6, 7], send 7;
///   at 9 the reception [9, 10], send 10, reception [11, 12], send 12; at 14 the reception
///   [14, 15], send 15, receptions [16, 17] and, of the message sent at 15, [19, 20]: 20 µs
///   (LogGOPSim: sends at 0, 2, …, 12, receptions at 5, 7, …, 17: 18 µs).
/// * Non-blocking broadcast and dissemination (`--nb 20000 --nb-poll 5000`: four 5 µs calcs
///   beside the collective, all free at 0): LogGOPSim starts the sends before the first calc,
///   we the calc first (it comes first in the program).
#[test]
fn differences_at_g0_are_ties() {
    let schedules = schedules();
    for set in SETS.iter().filter(|s| s.gap_per_byte == 0) {
        for (name, schedule) in &schedules {
            let theirs = read_output(set, name, schedule.ranks());
            let what = format!("{} {name}", set.name);
            if TIES.contains(&(set.name, name.as_str())) {
                // the list is not stale: ours differs somewhere
                let ours = run(set, schedule, 0.0);
                let differs = (ns(ours.makespan) - theirs.max as f64).abs() > 1.0
                    || theirs
                        .hosts
                        .iter()
                        .enumerate()
                        .any(|(r, &t)| (ns(ours.rank_finish[r]) - t as f64).abs() > 1.0);
                assert!(differs, "{what} agrees: remove it from TIES");
            }
            // LogGOPSim's order of simultaneous events, imitated: each rank's operations
            // reordered by kind, and messages a picosecond later (so that an operation waiting
            // for its NIC or CPU goes first); at most one picosecond per hop, 100 hops
            let text = std::fs::read_to_string(dir().join("goal").join(format!("{name}.goal")))
                .expect("goal fixture");
            let reordered = parse_goal(&by_type(&text), NS).expect("reordered GOAL");
            let ours = run(set, &reordered, 1e-3);
            assert_same(&ours, &theirs, 0.1, &format!("{what}, reordered, L + 1 ps"));
        }
    }
    // hand derivation of ours for the linear all-to-all, P = 8 (first item above)
    let p8 = &schedules
        .iter()
        .find(|(n, _)| n == "linear_alltoall_p8_d64")
        .expect("fixture")
        .1;
    let ours = run(&SETS[0], p8, 0.0);
    for finish in &ours.rank_finish {
        assert_ns(*finish, 20_000, "hand derivation, P = 8");
    }
}

/// `G = 1 ns/B` on the schedules where a CPU has work while a message streams in: LogGOPSim
/// takes the message from its first byte and holds the receiver's CPU for `o + (k - 1) G`
/// (`OP_MSG`: `nexto = t + o + max((k-1) O, (k-1) G)`); we hold it for `o` once the last byte
/// is in (the NIC's window covers the streaming), so a calc or a send that becomes ready
/// meanwhile starts earlier with us. Compared in LogGOPSim's order of simultaneous events
/// (reordered by kind): ours is never later, on any rank, and earlier by at most
/// `(k - 1) G` per message the rank receives (an observation on these schedules, not a
/// theorem: list schedules are not monotone in general). At `G = 0` they agree exactly
/// (`differences_at_g0_are_ties`). With rendezvous (`S = 256`, `S = 0`) the makespan, a
/// receiver's, obeys the same bound.
#[test]
fn cpu_held_while_streaming() {
    let schedules = schedules();
    for set in SETS.iter().filter(|s| s.gap_per_byte > 0) {
        for name in STREAMING {
            let schedule = &schedules
                .iter()
                .find(|(n, _)| n == name)
                .expect("fixture")
                .1;
            let theirs = read_output(set, name, schedule.ranks());
            let text = std::fs::read_to_string(dir().join("goal").join(format!("{name}.goal")))
                .expect("goal fixture");
            let reordered = parse_goal(&by_type(&text), NS).expect("reordered GOAL");
            let ours = run(set, &reordered, 0.0);
            let what = format!("{} {name}", set.name);
            let mut receives = vec![0_u64; schedule.ranks() as usize];
            let mut largest = 0;
            for i in 0..schedule.len() {
                let op = OpId(u32::try_from(i).expect("small fixtures"));
                if schedule.kind(op) == Some(OpKind::Recv) {
                    receives[schedule.rank(op).expect("rank") as usize] += 1;
                    largest = largest.max(schedule.message(op).expect("recv").bytes());
                }
            }
            let per_message = ((largest - 1) * set.gap_per_byte) as f64;
            let bound = *receives.iter().max().expect("ranks") as f64 * per_message;
            let earlier = theirs.max as f64 - ns(ours.makespan);
            assert!(
                earlier > AGREE_NS,
                "{what}: not earlier, remove it from STREAMING"
            );
            assert!(earlier <= bound + AGREE_NS, "{what}: {earlier} ns earlier");
            if set.eager_limit < EAGER_S {
                // a rendezvous sender's own finish is later with us
                // (rendezvous_sends_complete_with_the_receive); the makespan is a receiver's
                continue;
            }
            for (rank, &t) in theirs.hosts.iter().enumerate() {
                let earlier = t as f64 - ns(ours.rank_finish[rank]);
                let bound = receives[rank] as f64 * per_message;
                assert!(
                    (-AGREE_NS..=bound + AGREE_NS).contains(&earlier),
                    "{what} rank {rank}: {earlier} ns earlier"
                );
            }
        }
    }
}

/// Sizes of the rendezvous messages each rank sends.
fn rendezvous_sizes(schedule: &Schedule, limit: u64) -> BTreeMap<u64, Vec<u64>> {
    let mut sizes: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for i in 0..schedule.len() {
        let op = OpId(u32::try_from(i).expect("small fixtures"));
        if schedule.kind(op) == Some(OpKind::Send) {
            let bytes = schedule.message(op).expect("send").bytes();
            if bytes > limit {
                sizes
                    .entry(schedule.rank(op).expect("rank"))
                    .or_default()
                    .push(bytes);
            }
        }
    }
    sizes
}

/// Rendezvous (`S = 256` and `S = 0`): LogGOPSim completes a rendezvous send when the receiver
/// matches the message (on the arrival of its first byte, the receive being posted), we when
/// the receive completes, `o + (k - 1) G` later for an idle receiver. Every makespan of these
/// schedules is a receiver's and equal; a rank's finish is LogGOPSim's or, where its last
/// operation is a rendezvous send, exactly `o + (k - 1) G` later for one of its sizes `k`.
#[test]
fn rendezvous_sends_complete_with_the_receive() {
    let schedules = schedules();
    let mut later = 0;
    for set in SETS.iter().filter(|s| s.eager_limit < EAGER_S) {
        for (name, schedule) in &schedules {
            if STREAMING.contains(&name.as_str()) {
                continue; // cpu_held_while_streaming
            }
            let theirs = read_output(set, name, schedule.ranks());
            let ours = run(set, schedule, 0.0);
            let what = format!("{} {name}", set.name);
            assert_ns(ours.makespan, theirs.max, &what);
            let sizes = rendezvous_sizes(schedule, set.eager_limit);
            for (rank, &t) in theirs.hosts.iter().enumerate() {
                let diff = ns(ours.rank_finish[rank]) - t as f64;
                if diff.abs() <= AGREE_NS {
                    continue;
                }
                let explained = sizes.get(&(rank as u64)).is_some_and(|ks| {
                    ks.iter().any(|&k| {
                        let stream = (set.overhead + (k - 1) * set.gap_per_byte) as f64;
                        (diff - stream).abs() <= AGREE_NS
                    })
                });
                assert!(explained, "{what} rank {rank}: ours {diff} ns later");
                later += 1;
            }
        }
    }
    // tree, ring and gather senders, the roots of the linear barrier and the scatter: the
    // relation is exercised, not vacuous
    assert!(later >= 100, "{later}");
}

/// Schedgen's recursive-doubling allreduce for `P = 7` sends to and receives from rank 7
/// (its pattern assumes a power of two); LogGOPSim has no range check and crashes with a
/// segmentation fault on it (NOTE.md). `parse_goal` refuses it, naming the line and the peer.
#[test]
fn schedgen_recursive_doubling_on_seven_ranks_is_refused() {
    let text = std::fs::read_to_string(dir().join("invalid/allreduce_recdoub_p7_d64.goal"))
        .expect("fixture");
    let error = parse_goal(&text, NS).expect_err("peer 7 of 7 ranks");
    // line 76: `l3: send 16b to 7 tag 0` of rank 6
    assert!(
        matches!(&error, GoalError::Syntax { line: 76, message } if message.contains("peer 7")),
        "{error:?}"
    );
}

/// A hand-written schedule (`hand/late_post.goal`, not Schedgen's: every Schedgen pattern above
/// posts its receives at 0) where a message arrives before its receive is posted: rank 0 sends
/// to 1 at 0 (arrival of the first byte at `o + L` = 4 µs); rank 1 posts that receive only
/// after its receive from rank 2, whose send follows a 10 µs calc (first byte at 14 µs).
/// `o = 1`, `g = 2`, `L = 3` µs, 1000 bytes.
///
/// * LogGOPSim takes a message (receive overhead `o + (k - 1) G` on the CPU, receiving NIC for
///   `g + (k - 1) G`) when it arrives and both are free, posted or not: rank 1 takes the early
///   message at 4 µs, the other at 14 µs, and ends at `15 + 999 G`; posting the receive later
///   costs nothing. We take it once the receive is posted, and its receiving-NIC window (the
///   last `I = max(o, g + (k - 1) G)` before `r + o`) in posting order, after the window of
///   the message from rank 2, which ends at 15 µs (`15 + 999 G`): `r = 15 + I − o`, rank 1
///   ends at `15 + I` (`15.999 + I`): 17 µs at `G = 0`, 18.998 µs at `G = 1 ns/B`.
/// * Rendezvous (`S = 0`): LogGOPSim moves the data before the receive is posted and only
///   holds the sender until the match (rank 0 ends at the posting, `15 + 999 G`; rank 2 at the
///   match of its message's first byte, 14 µs). We send the data at the posting: rank 1
///   receives at `15.999 + T` = `15.999 + 5.999` µs (the NIC window, ending at 15.999 + 2.999,
///   is free by then), rank 0's send completes with it, rank 2's with its receive, 15.999 µs.
#[test]
fn late_posted_receive() {
    let text = std::fs::read_to_string(dir().join("hand/late_post.goal")).expect("fixture");
    let schedule = parse_goal(&text, NS).expect("parses");
    // (set, LogGOPSim per rank from the fixture, ours derived by hand above)
    let cases: [(&Set, [u64; 3], [f64; 3]); 3] = [
        (&SETS[0], [1000, 15000, 11000], [1000.0, 17000.0, 11000.0]),
        (&SETS[1], [1000, 15999, 11000], [1000.0, 18998.0, 11000.0]),
        (&SETS[4], [15999, 15999, 14000], [21998.0, 21998.0, 15999.0]),
    ];
    for (set, theirs_by_hand, ours_by_hand) in cases {
        let path = dir().join(format!("hand/late_post.{}.txt", set.name));
        let out = std::fs::read_to_string(&path).expect("LogGOPSim output");
        let theirs: Vec<u64> = out
            .lines()
            .filter_map(|l| l.strip_prefix("Host "))
            .map(|l| {
                l.split_once(": ")
                    .expect("Host i: t")
                    .1
                    .parse()
                    .expect("ns")
            })
            .collect();
        assert_eq!(theirs, theirs_by_hand, "{path:?}");
        let ours = run(set, &schedule, 0.0);
        for (rank, &t) in ours_by_hand.iter().enumerate() {
            assert!(
                (ns(ours.rank_finish[rank]) - t).abs() <= AGREE_NS,
                "{} rank {rank}: {}",
                set.name,
                ns(ours.rank_finish[rank])
            );
            // later, never earlier
            assert!(ns(ours.rank_finish[rank]) >= theirs[rank] as f64 - AGREE_NS);
        }
    }
}

/// Why the receiving NIC is charged in posting order for a message that arrives before its
/// receive is posted (the difference `late_posted_receive` shows): charging it at our arrival
/// time instead serialises an early message with a later one whose data streams in at the
/// same time, in the order their streams END, where LogGOPSim serves them in the order their
/// FIRST bytes arrive. Rabenseifner's allreduce at `P = 3`, 1000 bytes (our schedule, as
/// `write_goal(&schedule, 1e-9).unwrap()` prints it), `L = 5000`, `o = 1000`, `g = 3000` ns,
/// `G = 10` ns/B, all eager; LogGOPSim (`spcl/LogGOPSim` at `76451de`, as built in
/// `fixtures/loggopsim/NOTE.md`, `LogGOPSim -L 5000 -o 1000 -g 3000 -G 10 -O 0 -S 2000000000`)
/// prints hosts 0, 1, 2 at 57960, 41970, 36970 ns.
///
/// By hand (µs; `T(k) = 2o + L + (k - 1) G`: `T(1000) = 16.99`, `T(500) = 11.99`;
/// `I(500) = g + 499 G = 7.99`): rank 2 sends its 500-byte half to rank 1 at 0 (there at
/// 10.99, before rank 1 posts that receive); rank 1 receives rank 0's 1000 bytes at 16.99,
/// sends its half to rank 2 (CPU until 17.99; rank 2 has it at 16.99 + 11.99 = 28.98), takes
/// rank 2's half after its window (`r + o - I(500) >= 16.99`: done at 24.98), sends its
/// doubling half at 24.98 (rank 2 has it at 36.97, rank 2's last operation); rank 2 sends its
/// own at 28.98 (rank 1 has it at 40.97), rank 1 sends the result to rank 0 at 40.97 (done
/// 41.97), rank 0 has it at 57.96 — LogGOPSim's three times, and the closed form's 57.96.
/// An engine charging the NIC at arrival takes rank 2's half first (its stream ends at 11.99)
/// and rank 0's message only after it, at `11.99 + I(1000) = 24.98`: every later step 7.99
/// µs later, rank 0 at 65.95 µs.
#[test]
fn an_early_unexpected_message_does_not_hold_back_a_concurrent_one() {
    use commcost::Message;
    use commcost::collectives::{Algorithm, Allreduce, Problem};
    use commcost::sim::{ToSchedule, write_goal};
    let problem = Problem::new(3, Message::contiguous(1000));
    let schedule = Allreduce::Rabenseifner.schedule(&problem).expect("builds");
    // the GOAL text LogGOPSim ran: rank 1 posts the receive of rank 2's half after the fold
    let goal = write_goal(&schedule, NS).unwrap();
    assert!(goal.contains("l1: recv 1000b from 0 tag 0\nl2: send 500b to 2 tag 1"));
    let model = LogGP::new(5000.0 * NS, 1000.0 * NS, 3000.0 * NS, 10.0 * NS).expect("model");
    let ours = simulate(&schedule, &model, &SimOptions::default()).expect("simulates");
    for (rank, theirs) in [57960.0, 41970.0, 36970.0].into_iter().enumerate() {
        assert!(
            (ns(ours.rank_finish[rank]) - theirs).abs() <= AGREE_NS,
            "rank {rank}: {}",
            ns(ours.rank_finish[rank])
        );
    }
    let closed = Allreduce::Rabenseifner
        .cost(&model, &problem)
        .expect("closed form");
    assert!((ns(closed) - 57960.0).abs() <= AGREE_NS, "{}", ns(closed));
}

/// `COMMCOST_LGS_REPORT=1 cargo test --test integration sim_loggopsim -- --nocapture` prints every
/// comparison: LogGOPSim's makespan, ours, and the ranks that differ (rank, theirs, ours; ns).
#[test]
fn report() {
    if std::env::var_os("COMMCOST_LGS_REPORT").is_none() {
        return;
    }
    let schedules = schedules();
    for set in &SETS {
        for (name, schedule) in &schedules {
            let theirs = read_output(set, name, schedule.ranks());
            let ours = run(set, schedule, 0.0);
            let differ: Vec<(usize, u64, f64)> = theirs
                .hosts
                .iter()
                .enumerate()
                .filter(|&(r, &t)| (ns(ours.rank_finish[r]) - t as f64).abs() > AGREE_NS)
                .map(|(r, &t)| (r, t, ns(ours.rank_finish[r])))
                .collect();
            println!(
                "{:14} {name:34} LogGOPSim {:7} ours {:9.1} {differ:?}",
                set.name,
                theirs.max,
                ns(ours.makespan),
            );
        }
    }
}

/// The GOAL text with each rank's operations in LogGOPSim's order of simultaneous ready
/// operations (`gnp_op_comp_func`: sends, then receives, then calcs; stable within a kind),
/// labels and dependencies unchanged: our tie rule (operation order) then coincides with
/// LogGOPSim's for operations that become ready together.
fn by_type(text: &str) -> String {
    let mut out = String::new();
    let mut block: Option<[Vec<&str>; 4]> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(parts) = block.as_mut() {
            if trimmed == "}" {
                for part in parts.iter() {
                    for l in part {
                        out.push_str(l);
                        out.push('\n');
                    }
                }
                out.push_str("}\n");
                block = None;
                continue;
            }
            let op = trimmed.split_once(": ").map_or("", |(_, op)| op);
            let slot = if op.starts_with("send ") {
                0
            } else if op.starts_with("recv ") {
                1
            } else if op.starts_with("calc ") {
                2
            } else {
                3
            };
            parts[slot].push(line);
        } else {
            out.push_str(line);
            out.push('\n');
            if trimmed.starts_with("rank ") && trimmed.ends_with('{') {
                block = Some(Default::default());
            }
        }
    }
    out
}
