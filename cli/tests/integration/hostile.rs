//! Hostile input through the built `commcost` binary: memory the simulator would need, files
//! that never end, GOAL files that would explode, times that would overflow, grids too large
//! to compute, and malformed numbers. Every case checks the exit code, a one-line error that
//! names the option, file, line or field, that nothing panicked, that no result is `inf` or
//! `NaN`, that the run ended within a time bound, and for the memory cases that it ran under an
//! address-space limit (`prlimit --as`), so that an allocation the budget did not foresee
//! aborts the process and fails the test.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::{self, Run, write};

/// Runs the binary with `args`, under an address-space limit of `memory` bytes if given, and
/// kills it after `timeout` (the test then fails).
fn run_limited(args: &[&str], memory: Option<u64>, timeout: Duration) -> Run {
    let command = match memory {
        Some(bytes) => {
            let mut c = Command::new("prlimit");
            c.arg(format!("--as={bytes}"))
                .arg("--")
                .arg(env!("CARGO_BIN_EXE_commcost"));
            c
        }
        None => Command::new(env!("CARGO_BIN_EXE_commcost")),
    };
    support::run(command, args, timeout)
}

const SECONDS: Duration = Duration::from_secs(30);

/// The checks every failing case shares: exit code `code`, one line on stderr containing each
/// of `names`, no panic, no abort.
fn refused_with(code: i32, args: &[&str], memory: Option<u64>, names: &[&str]) -> String {
    let run = run_limited(args, memory, SECONDS);
    assert_eq!(
        run.status.code(),
        Some(code),
        "commcost {args:?}: {:?}, stderr {}",
        run.status,
        run.stderr
    );
    let err = run.stderr.trim_end();
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("commcost: error: "), "{err}");
    for name in names {
        assert!(err.contains(name), "`{name}` not named: {err}");
    }
    assert!(err.len() < 700, "a short message: {} characters", err.len());
    err.to_string()
}

/// A user's mistake found while running (exit code 1).
fn refused(args: &[&str], names: &[&str]) -> String {
    refused_with(1, args, None, names)
}

/// A value the command line's parser refuses (exit code 2, as clap's usage errors).
fn usage(args: &[&str], names: &[&str]) -> String {
    refused_with(2, args, None, names)
}

/// A success within the time bound whose output holds no `inf`, `NaN` or JSON `null` result.
fn finite(args: &[&str], memory: Option<u64>, timeout: Duration) -> String {
    let run = run_limited(args, memory, timeout);
    assert!(
        run.status.success(),
        "commcost {args:?}: {:?} {}",
        run.status,
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    let lower = run.stdout.to_ascii_lowercase();
    for bad in ["inf", "nan"] {
        assert!(
            !lower
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == bad || w == "-inf"),
            "{bad} in {}",
            run.stdout
        );
    }
    assert!(!run.stdout.contains("_seconds\": null"), "{}", run.stdout);
    assert!(run.elapsed < timeout);
    run.stdout
}

fn scratch(name: &str) -> PathBuf {
    support::scratch(&format!("hostile-{name}"))
}

const GIB: u64 = 1 << 30;

/// LogGP with a gap four times its overhead: a rank's sends wait for its NIC, not its CPU.
const SLOW_NIC: &str = r#"{"model": "loggp", "latency": 5e-6, "overhead": 1e-6, "gap": 4e-6, "gap_per_byte": 1e-9, "processors": 2}"#;

// ---- the simulator's memory ------------------------------------------------------------

#[test]
fn schedules_beyond_the_memory_budget_are_refused_before_allocating() {
    // sizes that used to abort or peak at 2.5-3 GB, under an address space of
    // 3 GiB (the default budget is 2 GiB): the budget error, never an abort
    for args in [
        "bcast --family textbook --algorithm linear --procs 16777216",
        "scatter --family textbook --algorithm binomial --procs 16777216",
        "bcast --algorithm basic-linear --procs 16777216",
        "barrier --family textbook --algorithm dissemination --procs 2097152",
        "alltoall --family textbook --algorithm pairwise-exchange --procs 8192",
        "allreduce --family textbook --algorithm ring --procs 4096",
    ] {
        let mut a: Vec<&str> = vec!["simulate"];
        a.extend(args.split(' '));
        a.extend(["--bytes", "8", "--preset", "mpich2-tcp"]);
        let err = refused_with(1, &a, Some(3 * GIB), &["memory budget", "--max-memory"]);
        assert!(err.contains("2147483648 bytes"), "{err}");
    }
}

#[test]
fn a_smaller_budget_holds_under_an_address_space_limit() {
    // a run either fits its budget (and then the address space: the estimate is an upper
    // bound) or is refused; never aborted, whatever the size
    let budget = 256u64 << 20;
    let limit = Some(budget + 512 * (1 << 20));
    let b = budget.to_string();
    let (mut fitted, mut over) = (0, 0);
    for (collective, algorithm, procs) in [
        ("allreduce", "ring", "512"),
        ("allreduce", "ring", "1024"),
        ("alltoall", "pairwise-exchange", "512"),
        ("alltoall", "pairwise-exchange", "1024"),
        ("barrier", "dissemination", "16384"),
        ("barrier", "dissemination", "65536"),
        ("bcast", "linear", "262144"),
        ("bcast", "linear", "1048576"),
        ("allreduce", "recursive-doubling", "262144"),
        ("allreduce", "recursive-doubling", "2097152"),
    ] {
        let args = [
            "simulate",
            collective,
            "--family",
            "textbook",
            "--algorithm",
            algorithm,
            "--procs",
            procs,
            "--bytes",
            "8",
            "--preset",
            "mpich2-tcp",
            "--max-memory",
            &b,
            "--json",
        ];
        let run = run_limited(&args, limit, Duration::from_secs(120));
        match run.status.code() {
            Some(0) => {
                fitted += 1;
                assert!(run.stdout.contains("makespan_seconds"), "{}", run.stdout);
            }
            Some(1) => {
                over += 1;
                assert!(
                    run.stderr.contains("memory budget of 268435456 bytes"),
                    "{args:?}: {}",
                    run.stderr
                );
                assert_eq!(run.stderr.trim_end().lines().count(), 1);
            }
            other => panic!("{args:?}: {other:?} (killed?) {}", run.stderr),
        }
    }
    // both sides of the budget were tried
    assert!(fitted >= 2 && over >= 2, "{fitted} fitted, {over} refused");
    // the same budget given as 256M, and a budget too small for anything
    refused_with(
        1,
        &[
            "simulate",
            "--family",
            "textbook",
            "allreduce",
            "--algorithm",
            "ring",
            "--procs",
            "4096",
            "--bytes",
            "8",
            "--preset",
            "mpich2-tcp",
            "--max-memory",
            "256M",
        ],
        limit,
        &["memory budget of 268435456 bytes"],
    );
    refused(
        &[
            "simulate",
            "--family",
            "textbook",
            "bcast",
            "--algorithm",
            "binomial",
            "--procs",
            "2",
            "--bytes",
            "8",
            "--preset",
            "mpich2-tcp",
            "--max-memory",
            "1",
        ],
        &["memory budget of 1 bytes"],
    );
    usage(
        &[
            "simulate",
            "--family",
            "textbook",
            "bcast",
            "--algorithm",
            "binomial",
            "--procs",
            "2",
            "--bytes",
            "8",
            "--preset",
            "mpich2-tcp",
            "--max-memory",
            "-1",
        ],
        &["--max-memory", "negative"],
    );
}

// ---- unbounded reads ------------------------------------------------------------------

#[test]
fn files_that_never_end_are_refused_before_reading() {
    for (args, names) in [
        (
            vec!["predict", "--model", "/dev/zero", "--bytes", "8"],
            vec!["/dev/zero", "not a regular file"],
        ),
        (
            vec!["simulate", "--goal", "/dev/zero", "--preset", "mpich2-tcp"],
            vec!["/dev/zero", "not a regular file"],
        ),
        (
            vec!["predict", "--model", "/dev/urandom", "--bytes", "8"],
            vec!["/dev/urandom", "not a regular file"],
        ),
        (
            vec!["predict", "--model", "/", "--bytes", "8"],
            vec!["directory"],
        ),
        (
            vec![
                "predict",
                "--model",
                "/nonexistent/model.json",
                "--bytes",
                "8",
            ],
            vec!["/nonexistent/model.json", "cannot read"],
        ),
    ] {
        refused_with(1, &args, Some(GIB), &names);
    }
    // a FIFO nobody writes to: opening it would wait forever
    let dir = scratch("fifo");
    let fifo = dir.join("model.json");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let fifo = fifo.to_string_lossy().into_owned();
    refused(
        &["predict", "--model", &fifo, "--bytes", "8"],
        &[&fifo, "not a regular file"],
    );
    refused(
        &["simulate", "--goal", &fifo, "--preset", "mpich2-tcp"],
        &[&fifo, "not a regular file"],
    );
}

#[test]
fn files_beyond_their_size_bound_are_refused() {
    let dir = scratch("big");
    // 17 MiB of white space before a valid model: more than the 16 MiB a model file may have
    let path = dir.join("big.json");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    let blank = vec![b' '; 1 << 20];
    for _ in 0..17 {
        f.write_all(&blank).expect("write");
    }
    f.write_all(br#"{"model": "pram", "unit_cost": 1e-6}"#)
        .expect("write");
    drop(f);
    let shown = path.to_string_lossy().into_owned();
    refused_with(
        1,
        &["predict", "--model", &shown, "--bytes", "8"],
        Some(GIB),
        &[&shown, "16777216 bytes a model file"],
    );
    // not UTF-8: the file and the line
    let binary = dir.join("binary.json");
    std::fs::write(&binary, b"{\n\"model\": \"pram\",\n\xff\xfe}").expect("write");
    let shown = binary.to_string_lossy().into_owned();
    refused(
        &["predict", "--model", &shown, "--bytes", "8"],
        &[&shown, "line 3", "UTF-8"],
    );
}

#[test]
fn a_byte_order_mark_is_read_as_text() {
    let dir = scratch("bom");
    let model = write(
        &dir,
        "bom.json",
        "\u{feff}{\"model\": \"pram\", \"unit_cost\": 2e-6}",
    );
    let out = finite(
        &["predict", "--model", &model, "--bytes", "8", "--json"],
        None,
        SECONDS,
    );
    assert!(out.contains("2e-6") || out.contains("0.000002"), "{out}");
    let goal = write(
        &dir,
        "bom.goal",
        "\u{feff}num_ranks 2\nrank 0 {\nl1: send 8b to 1\n}\nrank 1 {\nl1: recv 8b from 0\n}\n",
    );
    finite(
        &["simulate", "--goal", &goal, "--model", &model],
        None,
        SECONDS,
    );
}

// ---- GOAL files -----------------------------------------------------------------------

/// `pairs` sends from rank 0 to rank 1, labelled, each received in order.
fn pairs_goal(dir: &Path, name: &str, pairs: usize) -> String {
    let path = dir.join(name);
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    writeln!(f, "num_ranks 2\nrank 0 {{").expect("write");
    for i in 0..pairs {
        writeln!(f, "s{i}: send 8b to 1").expect("write");
    }
    writeln!(f, "}}\nrank 1 {{").expect("write");
    for i in 0..pairs {
        writeln!(f, "r{i}: recv 8b from 0").expect("write");
    }
    writeln!(f, "}}").expect("write");
    drop(f);
    path.to_string_lossy().into_owned()
}

#[test]
fn many_sends_waiting_for_one_nic_stay_near_linear() {
    let dir = scratch("pairs");
    let model = write(&dir, "slow-nic.json", SLOW_NIC);
    let goal = pairs_goal(&dir, "pairs.goal", 150_000);
    let out = finite(
        &["simulate", "--goal", &goal, "--model", &model, "--json"],
        Some(2 * GIB),
        Duration::from_secs(60),
    );
    // LogGP (Alexandrov, Ionescu, Schauser, Scheiman, SPAA 1995): consecutive sends of k
    // bytes start g + (k - 1) G apart, so the last of them starts at 149 999 (g + 7 G) and
    // arrives after L + 2o + 7 G; the receiver keeps pace (its NIC windows are as far apart)
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let makespan = v["makespan_seconds"].as_f64().expect("makespan");
    let (l, o, g, big_g) = (5e-6, 1e-6, 4e-6, 1e-9);
    let expected = 149_999.0 * (g + 7.0 * big_g) + l + 2.0 * o + 7.0 * big_g;
    assert!(
        (makespan - expected).abs() <= 1e-9 * expected,
        "{makespan} vs {expected}"
    );
    assert_eq!(v["operations"], 300_000);
}

#[test]
fn ten_million_labelled_operations_meet_the_budget_not_the_allocator() {
    let dir = scratch("labels");
    let path = dir.join("labels.goal");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    writeln!(f, "num_ranks 1\nrank 0 {{").expect("write");
    for i in 0..10_000_000u32 {
        writeln!(f, "l{i}: calc 1").expect("write");
    }
    writeln!(f, "}}").expect("write");
    drop(f);
    let goal = path.to_string_lossy().into_owned();
    let err = refused_with(
        1,
        &[
            "simulate",
            "--goal",
            &goal,
            "--preset",
            "mpich2-tcp",
            "--max-memory",
            "512M",
        ],
        Some(GIB + 512 * (1 << 20)),
        &[&goal, "memory budget", "--max-memory"],
    );
    assert!(!err.contains("Word("), "{err}");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn distinct_values_and_ranks_of_a_goal_file_count_against_the_budget() {
    let dir = scratch("distinct");
    // two million operations, each its own calc time, tag and size
    let path = dir.join("distinct.goal");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    writeln!(f, "num_ranks 2\nrank 0 {{").expect("write");
    for i in 0..1_000_000u64 {
        writeln!(f, "calc {i}\nsend {i}b to 1 tag {i}").expect("write");
    }
    writeln!(f, "}}\nrank 1 {{").expect("write");
    for i in 0..1_000_000u64 {
        writeln!(f, "recv {i}b from 0 tag {i}").expect("write");
    }
    writeln!(f, "}}").expect("write");
    drop(f);
    let goal = path.to_string_lossy().into_owned();
    refused_with(
        1,
        &[
            "simulate",
            "--goal",
            &goal,
            "--preset",
            "mpich2-tcp",
            "--max-memory",
            "128M",
        ],
        Some(GIB),
        &[&goal, "memory budget of 134217728 bytes"],
    );
    let _ = std::fs::remove_file(&path);
    // 2^24 ranks in a few bytes: the ranks alone are beyond the default budget
    let goal = write(&dir, "ranks.goal", "num_ranks 16777216\n");
    refused_with(
        1,
        &["simulate", "--goal", &goal, "--preset", "mpich2-tcp"],
        Some(GIB),
        &[&goal, "memory budget"],
    );
}

#[test]
fn goal_errors_name_what_was_written_and_where() {
    let dir = scratch("goal");
    let cases: &[(&str, &[&str])] = &[
        (
            "num_ranks 2\nrank 0 {\nl1: send 8b to 1\ngarbage here\n}\n",
            &["line 4", "`garbage`"],
        ),
        ("num_ranks 2\n}\n", &["line 2", "`rank`", "`}`"]),
        ("num_ranks 2\nrank 0 }\n", &["line 2", "`{`", "`}`"]),
        ("num_ranks two\n", &["line 1", "number of ranks", "`two`"]),
        (
            "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag x\n}\n",
            &["line 3", "tag", "`x`"],
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: calc 5\n}\nrank 1 {\nl1: calc 5\n}\nrank 0 {\nl2: calc 5\n}\n",
            &["line 8", "second block for rank 0", "line 2"],
        ),
        (
            "num_ranks 1\nrank 0 {\na: calc 1\nb: calc 2\nc: calc 3\nb requires a\na requires c\nc requires b\n}\n",
            &["cycle", "rank 0", "line 3", "`a`"],
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: recv 8b from -1\n}\n",
            &["line 3", "unsupported", "wildcard"],
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: send 8b to 7\n}\n",
            &["line 3", "peer 7"],
        ),
        (
            "num_ranks 1\nrank 0 {\nl1: calc 99999999999999999999999\n}\n",
            &["line 3", "64 bits"],
        ),
        (
            "num_ranks 1\nrank 0 {\nl1: calc 18446744073709551615\n}\n",
            &["line 3", "calc"],
        ),
        ("num_ranks 1\n/* never closed\n", &["line 2", "comment"]),
        (
            "num_ranks 1\nrank 0 {\nl1: calc 5\n",
            &["line 4", "missing `}`"],
        ),
        (
            "num_ranks 1\nrank 0 {\nl1: calc 5 \u{1F4A5}\n}\n",
            &["line 3", "unexpected character"],
        ),
        ("num_ranks 99999999999\n", &["ranks", "16777216"]),
        (
            "num_ranks 2\nrank 0 {\nl1: send 8b to 1\n}\n",
            &["line 3: send `l1` of rank 0", "no matching recv"],
        ),
        (
            "num_ranks 2\nrank 0 {\nsend 8b to 1\n}\nrank 1 {\ncalc 1\nr: recv 4b from 0\n}\n",
            &[
                "line 3: send of rank 0 (8 bytes)",
                "recv `r` of rank 1 at line 7",
            ],
        ),
    ];
    for (i, (text, names)) in cases.iter().enumerate() {
        let goal = write(&dir, &format!("case{i}.goal"), text);
        let mut names: Vec<&str> = names.to_vec();
        names.push(&goal);
        let err = refused(
            &["simulate", "--goal", &goal, "--preset", "mpich2-tcp"],
            &names,
        );
        for internal in ["Word(", "Int(", "Close", "Open", "MinusOne", "End"] {
            assert!(!err.contains(internal), "{internal} in {err}");
        }
    }
    // a label of 100 000 characters is not repeated whole
    let long = "x".repeat(100_000);
    let goal = write(
        &dir,
        "long.goal",
        &format!("num_ranks 1\nrank 0 {{\nl1: calc 5\nl1 requires {long}\n}}\n"),
    );
    let err = refused(
        &["simulate", "--goal", &goal, "--preset", "mpich2-tcp"],
        &["line 4", "undefined label"],
    );
    assert!(err.len() < 400, "{}", err.len());
}

/// A file of more than 1 MiB (streamed in pieces) names the line of a message without a
/// partner as a short one does.
#[test]
fn streamed_goal_errors_name_the_line() {
    let dir = scratch("goal_streamed");
    let mut text = String::from("num_ranks 2\n");
    for (rank, peer, kind) in [(0, 1, "send 8b to"), (1, 0, "recv 8b from")] {
        text += &format!("rank {rank} {{\n");
        for k in 1..=40_000 {
            text += &format!("l{k}: {kind} {peer}\n");
        }
        text += "}\n";
    }
    // the last receive of rank 1 waits for a tag never sent: rank 0's last send (line 40 002)
    // has no partner
    let text = text.replacen(
        "l40000: recv 8b from 0\n",
        "l40000: recv 8b from 0 tag 5\n",
        1,
    );
    assert!(text.len() > 1 << 20);
    let goal = write(&dir, "streamed.goal", &text);
    refused(
        &["simulate", "--goal", &goal, "--preset", "mpich2-tcp"],
        &["line 40002: send `l40000` of rank 0 (peer 1, tag 0) has no matching recv"],
    );
}

// ---- times that would overflow ----------------------------------------------------------

#[test]
fn times_are_capped_like_model_parameters() {
    let dir = scratch("times");
    let goal = write(
        &dir,
        "calc.goal",
        "num_ranks 1\nrank 0 {\nl1: calc 18446744073709551615\n}\n",
    );
    let base = [
        "simulate",
        "--family",
        "textbook",
        "allreduce",
        "--algorithm",
        "ring",
        "--procs",
        "8",
        "--bytes",
        "1M",
        "--preset",
        "mpich2-tcp",
    ];
    for (option, value) in [
        ("--noise", "1:1e307s"),
        ("--noise", "1:inf"),
        ("--noise", "1:NaN"),
        ("--noise", "1:1e10"),
        ("--operator", "1e300s,1e300s"),
        ("--operator", "1us,1e10s"),
        ("--operator", "-1us,1ns"),
    ] {
        let mut args = base.to_vec();
        args.extend([option, value]);
        refused(&args, &[option]);
    }
    for unit in ["1e300s", "inf", "NaN", "-1ns", "1e10s"] {
        refused(
            &[
                "simulate",
                "--goal",
                &goal,
                "--preset",
                "mpich2-tcp",
                "--goal-unit",
                unit,
            ],
            &["--goal-unit"],
        );
    }
    // the largest accepted times give finite results, in text and JSON
    let mut args = base.to_vec();
    args.extend(["--operator", "1e9s,1e9s", "--noise", "1:1e9s"]);
    finite(&args, None, SECONDS);
    args.push("--json");
    let out = finite(&args, None, SECONDS);
    assert!(
        !out.contains("null,") || !out.contains("makespan_ratio\": null"),
        "{out}"
    );
    // calc times in GOAL: the largest count of a unit beyond 1e9 s is refused with its line
    refused(
        &[
            "simulate",
            "--goal",
            &goal,
            "--preset",
            "mpich2-tcp",
            "--goal-unit",
            "1s",
        ],
        &["line 3", "calc"],
    );
    let fine = write(
        &dir,
        "fine.goal",
        "num_ranks 1\nrank 0 {\nl1: calc 1000000000\n}\n",
    );
    finite(
        &[
            "simulate",
            "--goal",
            &fine,
            "--preset",
            "mpich2-tcp",
            "--goal-unit",
            "1s",
            "--json",
        ],
        None,
        SECONDS,
    );
}

// ---- unbounded work ---------------------------------------------------------------------

#[test]
fn table_grids_are_bounded() {
    let list: Vec<String> = (1..=4096).map(|i| i.to_string()).collect();
    let list = list.join(",");
    refused(
        &[
            "table",
            "--family",
            "textbook",
            "bcast",
            "--preset",
            "mpich2-tcp",
            "--procs",
            &list,
            "--bytes",
            &list,
        ],
        &["--procs x --bytes", "16777216 grid points"],
    );
    let procs: Vec<String> = (2..=40).map(|i| i.to_string()).collect();
    let procs = procs.join(",");
    refused(
        &[
            "table",
            "--family",
            "textbook",
            "bcast",
            "--preset",
            "mpich2-tcp",
            "--procs",
            &procs,
            "--bytes",
            "1..1G",
            "--simulate",
        ],
        &["--simulate", "grid points"],
    );
    // doubling ranges of 11 and 13 entries, simulated where they can be,
    // refused with the point it cannot simulate, within the time bound
    let run = run_limited(
        &[
            "table",
            "--family",
            "textbook",
            "bcast",
            "--preset",
            "mpich2-tcp",
            "--procs",
            "1..1024",
            "--bytes",
            "1..4096",
            "--simulate",
            "--csv",
        ],
        Some(2 * GIB),
        Duration::from_secs(120),
    );
    assert!(matches!(run.status.code(), Some(0 | 1)), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"));
    // a list of 4097 entries is refused with the input cut short
    let long: Vec<String> = (1..=4097).map(|i| i.to_string()).collect();
    let err = usage(
        &[
            "table",
            "--family",
            "textbook",
            "bcast",
            "--preset",
            "mpich2-tcp",
            "--procs",
            &long.join(","),
        ],
        &["--procs", "4097 entries", "more than 4096"],
    );
    assert!(err.len() < 400, "{}", err.len());
}

// ---- numbers on the command line ------------------------------------------------------

#[test]
fn malformed_numbers_are_named() {
    let predict = ["predict", "--preset", "mpich2-tcp"];
    for (value, names) in [
        ("-1", &["--bytes", "negative"][..]),
        ("-0.5", &["--bytes", "negative"]),
        ("NaN", &["--bytes", "not a whole number"]),
        ("inf", &["--bytes", "not a whole number"]),
        ("4iB", &["--bytes", "suffix `iB`"]),
        ("1.5K", &["--bytes", "no fractions"]),
        ("1e3", &["--bytes", "no fractions"]),
        ("", &["--bytes", "empty"]),
        ("99999999999T", &["--bytes", "64 bits"]),
        ("4X", &["--bytes", "suffix `X`"]),
    ] {
        let mut args = predict.to_vec();
        args.extend(["--bytes", value]);
        let err = usage(&args, names);
        assert!(!err.contains("-- -1") && !err.contains("tip:"), "{err}");
    }
    // accepted spellings
    for value in ["4K", "4KiB", "4KB", "4096", "4096B", "4k"] {
        let mut args = predict.to_vec();
        args.extend(["--bytes", value, "--json"]);
        let out = finite(&args, None, SECONDS);
        assert!(out.contains("4096"), "{value}: {out}");
    }
    let table = [
        "table",
        "--family",
        "textbook",
        "bcast",
        "--preset",
        "mpich2-tcp",
    ];
    for (value, names) in [
        ("", &["--procs", "empty"][..]),
        ("2..4..8", &["--procs", "one `..`"]),
        ("1,,4", &["--procs", "empty entry"]),
        ("-4", &["--procs", "negative"]),
        ("8..2", &["--procs", "start <= end"]),
        ("0..8", &["--procs", "start <= end"]),
    ] {
        let mut args = table.to_vec();
        args.extend(["--procs", value]);
        let err = usage(&args, names);
        assert!(!err.contains("bytes"), "{err}");
    }
    usage(
        &[
            "select",
            "--family",
            "textbook",
            "bcast",
            "--preset",
            "mpich2-tcp",
            "--procs",
            "-4",
            "--bytes",
            "8",
        ],
        &["--procs", "negative"],
    );
    usage(
        &[
            "simulate",
            "--family",
            "textbook",
            "bcast",
            "--algorithm",
            "binomial",
            "--preset",
            "mpich2-tcp",
            "--procs",
            "-4",
            "--bytes",
            "8",
        ],
        &["--procs", "negative"],
    );
    usage(
        &[
            "predict",
            "--preset",
            "mpich2-tcp",
            "--count",
            "-3",
            "--block",
            "8",
            "--stride",
            "16",
        ],
        &["--count", "negative"],
    );
    // a field of 100 000 characters is echoed cut short
    let long = "7".repeat(100_000);
    let mut args = predict.to_vec();
    args.extend(["--bytes", &long]);
    let err = usage(&args, &["--bytes", "100000 characters"]);
    assert!(err.len() < 400, "{}", err.len());
    // names that are not known, 100 000 characters long: cut short in the message
    let sim = |collective: &str, algorithm: &str, noise: &str| -> Vec<String> {
        [
            "simulate",
            collective,
            "--algorithm",
            algorithm,
            "--procs",
            "4",
            "--bytes",
            "8",
            "--preset",
            "mpich2-tcp",
            "--noise",
            noise,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    for (args, option) in [
        (sim("bcast", &long, "1:1us"), "--algorithm"),
        (sim(&long, "binomial", "1:1us"), "collective"),
        (sim("bcast", "binomial", &long), "--noise"),
        (
            ["predict", "--preset", &long, "--bytes", "8"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            "preset",
        ),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = refused(&args, &[option]);
        assert!(err.len() < 600, "{}", err.len());
    }
    // an unknown option: one line, the suggestion kept
    usage(
        &["predict", "--preset", "mpich2-tcp", "--bytez", "8"],
        &["--bytez", "--bytes"],
    );
}

#[test]
fn model_files_of_another_format_version_are_refused() {
    let dir = scratch("version");
    let model = dir.join("m.json");
    let model_s = model.to_string_lossy().into_owned();
    finite(
        &[
            "calibrate",
            "osu",
            "../tests/fixtures/osu/osu_latency.txt",
            "-o",
            &model_s,
        ],
        None,
        SECONDS,
    );
    let text = std::fs::read_to_string(&model).expect("model file");
    assert!(text.contains("\"commcost_model_file\": 1"), "{text}");
    for version in ["99", "0", "2"] {
        let other = write(
            &dir,
            &format!("v{version}.json"),
            &text.replace(
                "\"commcost_model_file\": 1",
                &format!("\"commcost_model_file\": {version}"),
            ),
        );
        refused(
            &["predict", "--model", &other, "--bytes", "8"],
            &["commcost_model_file", version],
        );
    }
}

#[test]
fn overhead_shares_outside_zero_to_one_are_named_as_shares() {
    for command in [
        &["calibrate", "osu", "../tests/fixtures/osu/osu_latency.txt"][..],
        &[
            "calibrate",
            "imb",
            "../tests/fixtures/imb/imb_mpi1_2ranks.txt",
        ][..],
    ] {
        for value in ["NaN", "-0.5", "1.5", "inf", "half"] {
            let mut args = command.to_vec();
            args.extend(["--overhead-share", value]);
            let err = usage(&args, &["--overhead-share", "[0, 1]"]);
            assert!(!err.contains("seconds") && !err.contains("tip:"), "{err}");
        }
    }
}
