//! GOAL import: a hand-written file in the documented format, a binomial broadcast written the
//! way LogGOPSim's Schedgen writes it, error lines, and a write/read round trip.

use crate::common;

use commcost::collectives::{Allreduce, Problem};
use commcost::sim::GoalError;
use commcost::sim::{SimOptions, ToSchedule, parse_goal, parse_goal_within, simulate, write_goal};
use commcost::{CommModel, LogGP, Message};
use common::assert_rel;

const US: f64 = 1e-6;

fn loggp() -> LogGP {
    LogGP::new(5.0 * US, 1.0 * US, 2.0 * US, 1e-9).unwrap()
}

/// Written by hand in the format of LogGOPSim's `txt2bin.re`: comments of both kinds, optional
/// labels, `tag`, `cpu` and `nic` fields, `irequires`, a `;` separator, a forward label.
const HAND: &str = "\
// three ranks: 0 computes, then sends to 1 and 2; 2 forwards to 1
num_ranks 3

rank 0 {
  c: calc 4000 cpu 0
  s1: send 1001b to 1 tag 7 cpu 0 nic 0
  s2: send 1001b to 2 tag 7
  s1 requires c
  s2 requires c /* both after the computation */
}

rank 1 {
  r1: recv 1001b from 0 tag 7
  r2: recv 8b from 2 tag 1
}
/* rank 2 posts its receive,
   and forwards a small message once the receive has started */
rank 2 {
  f irequires r; f: send 8b to 1 tag 1
  r: recv 1001b from 0 tag 7 nic 0
}
";

#[test]
fn hand_written_goal_file() {
    let schedule = parse_goal(HAND, 1e-9).unwrap();
    assert_eq!(
        (schedule.ranks(), schedule.len(), schedule.dependencies()),
        (3, 7, 3)
    );
    let model = loggp();
    let r = simulate(&schedule, &model, &SimOptions::default()).unwrap();
    let t = |b: u64| model.p2p(&Message::contiguous(b));
    // calc 4 µs; s1 at 4 µs; s2 one interval I(1001) = max(o, g + 1000 G) = 3 µs later
    let i = model.send_interval(&Message::contiguous(1001));
    assert_rel(i, 3.0 * US, 1e-12);
    // rank 2: f starts when r is posted (t = 0): 8 bytes reach rank 1 at T(8);
    // rank 1 receives s1 at 4 µs + T(1001) (after its r2, which completed long before)
    assert_rel(r.rank_finish[1], 4.0 * US + t(1001), 1e-12);
    // rank 2 receives s2 at 4 µs + I + T(1001); its send f (overhead 1 µs at t = 0) is done
    assert_rel(r.rank_finish[2], 4.0 * US + i + t(1001), 1e-12);
    assert_rel(r.rank_finish[0], 4.0 * US + i + 1.0 * US, 1e-12);
}

/// A binomial broadcast as LogGOPSim's Schedgen writes it (`create_binomial_tree_bcast_rank`
/// in `src/Schedgen/schedgen.cpp`): round `r` sends to `vrank + 2^r` when `vrank < 2^r`,
/// receives from `vrank - 2^r` when `2^r <= vrank < 2^(r+1)`; every send requires the receive;
/// labels `l1, l2, …` and `tag 0`, one statement per line.
fn schedgen_binomial_bcast(p: u64, bytes: u64) -> String {
    let mut out = format!("num_ranks {p}\n");
    let rounds = 64 - (p - 1).leading_zeros() as u64;
    for rank in 0..p {
        out += &format!("\nrank {rank} {{\n");
        let (mut label, mut recv, mut send) = (0u64, None, None);
        for r in 0..rounds {
            let d = 1u64 << r;
            if rank < d && rank + d < p {
                label += 1;
                out += &format!("l{label}: send {bytes}b to {} tag 0\n", rank + d);
                send = Some(label);
            }
            if let (Some(s), Some(rv)) = (send, recv) {
                out += &format!("l{s} requires l{rv}\n");
            }
            if d <= rank && rank < 2 * d {
                label += 1;
                out += &format!("l{label}: recv {bytes}b from {} tag 0\n", rank - d);
                recv = Some(label);
            }
        }
        out += "}\n";
    }
    out
}

#[test]
fn schedgen_binomial_broadcast() {
    let model = loggp();
    let bytes = 1001;
    let msg = Message::contiguous(bytes);
    let (t, i) = (model.p2p(&msg), model.send_interval(&msg));
    for p in [2u64, 3, 7, 16, 33, 100] {
        let text = schedgen_binomial_bcast(p, bytes);
        let schedule = parse_goal(&text, 1e-9).unwrap();
        let r = simulate(&schedule, &model, &SimOptions::default()).unwrap();
        // oracle by recursion over the tree: rank v > 0 with highest bit 2^k has parent
        // v - 2^k, which sends its children in increasing distance; v is child number
        // k - bitlen(parent) of its parent, so it receives at recv(parent) + j I + T
        let mut recv = vec![0.0f64; p as usize];
        for v in 1..p {
            let k = 63 - v.leading_zeros() as u64;
            let parent = v - (1 << k);
            let bitlen = 64 - parent.leading_zeros() as u64;
            recv[v as usize] = recv[parent as usize] + (k - bitlen) as f64 * i + t;
        }
        let oracle = recv.iter().copied().fold(0.0, f64::max);
        assert_rel(r.makespan, oracle, 1e-12);
    }
}

#[test]
fn errors_name_the_line() {
    let line_of = |text: &str| match parse_goal(text, 1e-9) {
        Err(GoalError::Syntax { line, .. }) | Err(GoalError::Unsupported { line, .. }) => line,
        other => panic!("{other:?}"),
    };
    assert_eq!(line_of("rank 0 {\n}\n"), 1);
    assert_eq!(line_of("num_ranks 2\nrank 0 {\n l1: send 8 to 1\n}\n"), 3);
    assert_eq!(
        line_of("num_ranks 2\nrank 0 {\n\n l1: recv 8b from -1\n}\n"),
        4
    );
    assert_eq!(
        line_of("num_ranks 2\nrank 0 {\n l1: recv 8b from 1 tag -1\n}\n"),
        3
    );
    assert_eq!(
        line_of("num_ranks 2\nrank 0 {\n l1: calc 5\n l2 requires l9\n}\n"),
        4
    );
    assert_eq!(line_of("num_ranks 2\nrank 5 {\n}\n"), 2);
    assert_eq!(line_of("num_ranks 2\nrank 0 {\n l1: send 8b to 2\n}\n"), 3);
    assert_eq!(
        line_of("num_ranks 2\nrank 0 {\n l1: calc 5\n l1: calc 6\n}\n"),
        4
    );
    assert_eq!(line_of("num_ranks 2\nrank 0 {\n l1: calc 5 nic 1\n}\n"), 3);
    assert_eq!(line_of("num_ranks 1\n/* open\n\ncomment"), 2);
    assert_eq!(line_of("num_ranks 1\nrank 0 {\n l1: calc 5\n"), 4);
    assert_eq!(line_of("num_ranks 1\nrank 0 {\n l1: calc 5 %\n}"), 3);
    // a tiny file asking for 4 billion ranks is refused, not allocated
    assert!(matches!(
        parse_goal("num_ranks 4000000000\n", 1e-9),
        Err(GoalError::Schedule(commcost::sim::SimError::TooLarge {
            what: "ranks",
            ..
        }))
    ));
    // a send nobody receives: an error of the schedule, at the send's line
    assert!(matches!(
        parse_goal("num_ranks 2\nrank 0 {\nl1: send 8b to 1\n}\n", 1e-9),
        Err(GoalError::Unmatched { line: 3, .. })
    ));
}

/// A message that does not match (no partner, another size) is reported at the line of its
/// operation, with its label, by `parse_goal` and `parse_goal_within`: operations with and
/// without labels, comments, `;` and a blank line before them, a dependency on a later label.
#[test]
fn unmatched_messages_name_their_lines() {
    let text = |rank1: &str| {
        format!(
            "num_ranks 3\n\
             rank 0 {{\n\
             \x20 l1: send 8b to 1 tag 3 /* a comment\n   over two lines */\n\
             \x20 l2: calc 10; l2 requires l3\n\
             \x20 l3: send 16b to 2\n\
             }}\n\
             rank 2 {{ r: recv 16b from 0 }}\n\
             \n\
             rank 1 {{\n\
             \x20 calc 5\n\
             {rank1}\n\
             }}\n"
        )
    };
    // the statement of rank 1 is on line 12
    let read = |rank1: &str| {
        let text = text(rank1);
        let one = parse_goal(&text, 1e-9).unwrap_err();
        assert_eq!(parse_goal_within(&text, 1e-9, 1 << 30).unwrap_err(), one);
        one
    };
    assert!(parse_goal(&text("  x: recv 8b from 0 tag 3"), 1e-9).is_ok());
    // the receive of another tag: the send at line 3 has no partner (the send is first)
    let e = read("  x: recv 8b from 0 tag 4");
    assert_eq!(
        e,
        GoalError::Unmatched {
            line: 3,
            label: "l1".into(),
            kind: "send",
            rank: 0,
            peer: 1,
            tag: 3,
            missing: "recv",
        }
    );
    assert_eq!(
        e.to_string(),
        "line 3: send `l1` of rank 0 (peer 1, tag 3) has no matching recv"
    );
    // a receive without a label, from a rank that sends nothing to it
    let e = read("recv 8b from 2 tag 3; x: recv 8b from 0 tag 3");
    assert_eq!(
        e.to_string(),
        "line 12: recv of rank 1 (peer 2, tag 3) has no matching send"
    );
    // another size: the send at line 3, the receive at line 12
    let e = read("  x: recv 4b from 0 tag 3");
    assert_eq!(
        e,
        GoalError::SizeMismatch {
            line: 3,
            label: "l1".into(),
            rank: 0,
            bytes: 8,
            recv_line: 12,
            recv_label: "x".into(),
            recv_rank: 1,
            recv_bytes: 4,
        }
    );
    assert_eq!(
        e.to_string(),
        "line 3: send `l1` of rank 0 (8 bytes) matched the recv `x` of rank 1 at line 12, of 4 \
         bytes"
    );
}

#[test]
fn written_goal_reads_back_and_simulates_the_same() {
    let model = loggp();
    for p in [1u64, 5, 16] {
        let problem = Problem::new(p, Message::contiguous(4096))
            .with_operator(commcost::collectives::Operator::new(1e-6, 0.0).unwrap());
        let schedule = Allreduce::Rabenseifner.schedule(&problem).unwrap();
        let text = write_goal(&schedule, 1e-9).unwrap();
        let back = parse_goal(&text, 1e-9).unwrap();
        assert_eq!(back.len(), schedule.len());
        assert_eq!(back.dependencies(), schedule.dependencies());
        let a = simulate(&schedule, &model, &SimOptions::default()).unwrap();
        let b = simulate(&back, &model, &SimOptions::default()).unwrap();
        assert_rel(b.makespan, a.makespan, 1e-12);
    }
}

/// A GOAL file of more than 16 MiB (read by two threads, a half each): the text as written,
/// the same schedule as the short text; a byte that is not UTF-8 in its second half is
/// reported at its line; a bound below its size refuses it.
#[test]
fn large_goal_file_reads_as_written() {
    use commcost::{FileError, limits};

    let dir = std::env::temp_dir().join(format!("commcost-large-goal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("large.goal");
    // 17 MiB of comment lines of 63 `x` after the hand-written file
    let lines = (17 << 20) / 64;
    let mut text = String::from(HAND);
    text.push_str("/*\n");
    for _ in 0..lines {
        text.push_str(&"x".repeat(63));
        text.push('\n');
    }
    text.push_str("*/\n");
    std::fs::write(&path, &text).unwrap();
    let read = limits::read_text_file(&path, "GOAL file", limits::MAX_GOAL_FILE_BYTES).unwrap();
    assert!(read == text);
    let model = loggp();
    let short = simulate(
        &parse_goal(HAND, 1e-9).unwrap(),
        &model,
        &SimOptions::default(),
    );
    let long = simulate(
        &parse_goal(&read, 1e-9).unwrap(),
        &model,
        &SimOptions::default(),
    );
    assert_eq!(short.unwrap().rank_finish, long.unwrap().rank_finish);

    // a byte that is not UTF-8 on the comment line three quarters of the way in
    let mut bytes = text.into_bytes();
    let hand_lines = HAND.lines().count() + 1;
    let bad_line = hand_lines + 1 + lines * 3 / 4;
    let at = HAND.len() + 3 + (bad_line - hand_lines - 1) * 64 + 10;
    bytes[at] = 0xff;
    std::fs::write(&path, &bytes).unwrap();
    assert!(matches!(
        limits::read_text_file(&path, "GOAL file", limits::MAX_GOAL_FILE_BYTES),
        Err(FileError::NotText { line, .. }) if line == bad_line
    ));
    assert!(matches!(
        limits::read_text_file(&path, "GOAL file", 16 << 20),
        Err(FileError::TooLarge { limit, .. }) if limit == 16 << 20
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A GOAL text of more than 16 MiB (read in two halves, split before a `rank` line near the
/// middle): `ranks` ranks in a ring, each block with named and numbered labels, a calc with a
/// `cpu` field, an `irequires`, a dependency on a label defined later, and `pad` comment lines
/// of 63 bytes. `indent` puts two spaces before each `rank`, which leaves no line starting
/// with `rank` to split at: the text is then read from the start.
fn large_ring(ranks: u64, steps: u64, pad: usize, indent: bool) -> String {
    let mut out = format!("num_ranks {ranks}\n");
    let comment = format!("// {}\n", "x".repeat(60));
    for r in 0..ranks {
        let (next, prev) = ((r + 1) % ranks, (r + ranks - 1) % ranks);
        out += &format!("{}rank {r} {{\n", if indent { "  " } else { "" });
        out += "start: calc 100 cpu 0\n";
        out += "l1 requires start\n";
        for s in 0..steps {
            let (send, recv) = (2 * s + 1, 2 * s + 2);
            out += &format!("l{send}: send {}b to {next} tag {s}\n", 8 + s);
            out += &format!("l{recv}: recv {}b from {prev} tag {s}\n", 8 + s);
            if s > 0 {
                out += &format!("l{send} requires l{}\n", recv - 2);
            }
        }
        out += &format!("l{} irequires l{}\n", 2 * steps + 1, 2 * steps);
        out += &format!("l{}: calc {}\n", 2 * steps + 1, 10 * r);
        out += &format!("late requires l{}\n", 2 * steps + 1);
        out += "late: calc 5\n";
        for _ in 0..pad {
            out += &comment;
        }
        out += "}\n";
    }
    out
}

/// Every operation of `a` and `b` alike: kind, rank, peer, tag, message, calc time, partner,
/// dependents.
fn same_schedule(a: &commcost::sim::Schedule, b: &commcost::sim::Schedule) {
    use commcost::sim::OpId;
    assert_eq!(
        (a.ranks(), a.len(), a.dependencies()),
        (b.ranks(), b.len(), b.dependencies())
    );
    assert_eq!(a.messages(), b.messages());
    for i in 0..a.len() as u32 {
        let op = OpId(i);
        assert_eq!(a.kind(op), b.kind(op));
        assert_eq!(a.rank(op), b.rank(op));
        assert_eq!(a.peer(op), b.peer(op));
        assert_eq!(a.tag(op), b.tag(op));
        assert_eq!(a.message(op), b.message(op));
        assert_eq!(
            a.calc_seconds(op).map(f64::to_bits),
            b.calc_seconds(op).map(f64::to_bits)
        );
        assert_eq!(a.partner(op), b.partner(op));
        assert!(a.dependents(op).eq(b.dependents(op)));
    }
}

/// Read in two halves, a large text gives the schedule (and the simulation) it gives read
/// from the start; its errors are those of the reading from the start, with their lines.
#[test]
fn large_goal_text_in_halves_is_read_as_from_the_start() {
    let (ranks, steps, pad) = (48, 40, 5600);
    let halves = large_ring(ranks, steps, pad, false);
    let whole = large_ring(ranks, steps, pad, true);
    assert!(halves.len() > 16 << 20);
    let (a, b) = (
        parse_goal(&halves, 1e-9).unwrap(),
        parse_goal(&whole, 1e-9).unwrap(),
    );
    assert_eq!(a.len() as u64, ranks * (2 * steps + 3));
    same_schedule(&a, &b);
    let model = loggp();
    let (ra, rb) = (
        simulate(&a, &model, &SimOptions::default()).unwrap(),
        simulate(&b, &model, &SimOptions::default()).unwrap(),
    );
    assert_eq!(ra.makespan.to_bits(), rb.makespan.to_bits());
    assert_eq!(ra.rank_finish, rb.rank_finish);

    // the errors: `text` with `from` replaced by `to` once, in the block of rank `rank`
    let broken = |text: &str, rank: u64, from: &str, to: &str| {
        let at = text.find(&format!("rank {rank} {{")).unwrap();
        let within = at + text[at..].find(from).unwrap();
        format!("{}{to}{}", &text[..within], &text[within + from.len()..])
    };
    let cases = [
        // an undefined label late in the second half, and in the first
        (ranks - 2, "late requires", "lost requires"),
        (1, "late requires", "lost requires"),
        // a cycle in the second half
        (
            ranks - 1,
            "l1 requires start",
            "start requires l1\nl1 requires start",
        ),
        // a message unmatched (its size)
        (ranks - 3, "send 8b", "send 9b"),
        // a second block for rank 0, in the second half
        (ranks - 1, &format!("rank {} {{", ranks - 1), "rank 0 {"),
    ];
    for (rank, from, to) in cases {
        let e_halves = parse_goal(&broken(&halves, rank, from, to), 1e-9).unwrap_err();
        let e_whole = parse_goal(&broken(&whole, rank, from, to), 1e-9).unwrap_err();
        assert_eq!(e_halves.to_string(), e_whole.to_string(), "{from} -> {to}");
    }
    // a line `rank …` inside a comment across the middle: read from the start
    let mid = halves.len() / 2;
    let open = halves[..mid].rfind("\n// ").unwrap() + 1;
    let commented = format!(
        "{}/*\n{}*/\n{}",
        &halves[..open],
        format!("{}rank 0 {{\n}}\n", "y\n".repeat(1000)).repeat(1000),
        &halves[open..]
    );
    same_schedule(&parse_goal(&commented, 1e-9).unwrap(), &b);
}
