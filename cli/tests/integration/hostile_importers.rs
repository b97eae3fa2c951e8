//! The benchmark-file importers (`calibrate osu`, `calibrate imb`) on hostile input, run as the
//! built binary: the exit code, a one-line error naming the file and line or the option, never a
//! panic, and a bound on the time taken.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::{self, fixture, run_within, write};

const LIMIT: Duration = Duration::from_secs(20);

/// A user mistake: exit code 1 and one line on stderr containing every `needle`.
fn user_error(args: &[&str], needles: &[&str]) -> String {
    let (code, _, err) = run_within(args, LIMIT);
    assert_eq!(code, Some(1), "commcost {args:?} should fail: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    for needle in needles {
        assert!(err.contains(needle), "`{needle}` missing from: {err}");
    }
    err
}

fn accepted(args: &[&str]) -> String {
    let (code, out, err) = run_within(args, LIMIT);
    assert_eq!(code, Some(0), "commcost {args:?} failed: {err}");
    out
}

fn scratch(name: &str) -> PathBuf {
    support::scratch(&format!("hostile_{name}"))
}

const LATENCY: &str = "# OSU MPI Latency Test v5.3\n# Size          Latency (us)\n\
    1 1.00\n2 1.01\n4 1.02\n8 1.03\n16 1.05\n32 1.08\n64 1.13\n128 1.25\n";

#[test]
fn byte_order_mark_and_tabs_are_accepted() {
    let dir = scratch("bom_tabs");
    let out = dir.join("m.json").display().to_string();
    let bom = write(&dir, "bom.txt", &format!("\u{feff}{LATENCY}"));
    accepted(&["calibrate", "osu", &bom, "-o", &out]);
    // the title keeps its words: only the table is tab-separated
    let tabs = write(
        &dir,
        "tabs.txt",
        &format!(
            "# OSU MPI Latency Test v5.3\n# Size\tLatency (us)\n{}",
            LATENCY
                .lines()
                .skip(2)
                .map(|l| l.replace(' ', "\t") + "\n")
                .collect::<String>()
        ),
    );
    accepted(&["calibrate", "osu", &tabs, "-o", &out]);
    let imb = std::fs::read_to_string(fixture("imb/imb_mpi1_2ranks.txt")).unwrap();
    let imb_tabs = write(
        &dir,
        "imb_tabs.txt",
        &format!("\u{feff}{}", imb.replace("  ", "\t")),
    );
    accepted(&["calibrate", "imb", &imb_tabs, "-o", &out]);
}

#[test]
fn a_latency_title_over_a_bandwidth_header_is_rejected() {
    let dir = scratch("title_header");
    let out = dir.join("m.json").display().to_string();
    let file = write(
        &dir,
        "mixed.txt",
        "# OSU MPI Latency Test v5.3\n# Size      Bandwidth (MB/s)\n1 10.0\n2 20.0\n4 40.0\n",
    );
    user_error(
        &["calibrate", "osu", &file, "-o", &out],
        &["mixed.txt", "line 2", "Latency", "MB/s"],
    );
    // and the reverse
    let file = write(
        &dir,
        "reverse.txt",
        "# OSU MPI Bandwidth Test v5.3\n# Size          Latency (us)\n1 1.0\n2 1.1\n",
    );
    user_error(
        &["calibrate", "osu", &file, "-o", &out],
        &["reverse.txt", "line 2", "Bandwidth"],
    );
}

#[test]
fn duplicate_and_descending_sizes_are_rejected_with_their_line() {
    let dir = scratch("sizes");
    let out = dir.join("m.json").display().to_string();
    let dup = write(
        &dir,
        "dup.txt",
        "# OSU MPI Latency Test v5.3\n# Size          Latency (us)\n1 1.0\n2 1.1\n2 1.2\n4 1.3\n",
    );
    user_error(
        &["calibrate", "osu", &dup, "-o", &out],
        &["dup.txt", "line 5", "size 2"],
    );
    let desc = write(
        &dir,
        "desc.txt",
        "# OSU MPI Latency Test v5.3\n# Size          Latency (us)\n1 1.0\n4 1.1\n2 1.2\n",
    );
    user_error(
        &["calibrate", "osu", &desc, "-o", &out],
        &["desc.txt", "line 5", "size 2"],
    );
    let imb = "# Benchmarking PingPong\n# #processes = 2\n\
        #bytes #repetitions      t[usec]   Mbytes/sec\n\
        0 1000 0.20 0.00\n1 1000 0.21 4.0\n1 1000 0.22 4.0\n";
    let imb = write(&dir, "imb_dup.txt", imb);
    user_error(
        &["calibrate", "imb", &imb, "-o", &out],
        &["imb_dup.txt", "line 6", "size 1"],
    );
}

#[test]
fn the_other_benchmarks_output_is_recognised() {
    let dir = scratch("swapped");
    let out = dir.join("m.json").display().to_string();
    user_error(
        &[
            "calibrate",
            "imb",
            &fixture("osu/osu_latency.txt"),
            "-o",
            &out,
        ],
        &["osu_latency.txt", "line 1", "OSU", "calibrate osu"],
    );
    user_error(
        &[
            "calibrate",
            "osu",
            &fixture("imb/imb_mpi1_2ranks.txt"),
            "-o",
            &out,
        ],
        &[
            "imb_mpi1_2ranks.txt",
            "Intel MPI Benchmarks",
            "calibrate imb",
        ],
    );
}

#[test]
fn an_empty_file_is_named_for_the_benchmark_asked_for() {
    let dir = scratch("empty");
    let out = dir.join("m.json").display().to_string();
    let empty = write(&dir, "empty.txt", "");
    let err = user_error(
        &["calibrate", "imb", &empty, "-o", &out],
        &["empty.txt", "IMB"],
    );
    assert!(!err.contains("OSU") && !err.contains("# Size"), "{err}");
    let err = user_error(
        &["calibrate", "osu", &empty, "-o", &out],
        &["empty.txt", "OSU"],
    );
    assert!(!err.contains("IMB"), "{err}");
}

#[test]
fn a_zero_latency_names_file_and_line() {
    let dir = scratch("zero");
    let out = dir.join("m.json").display().to_string();
    let zero = write(
        &dir,
        "zero.txt",
        "# OSU MPI Latency Test v5.3\n# Size          Latency (us)\n1 1.0\n2 0.00\n4 1.2\n",
    );
    user_error(
        &["calibrate", "osu", &zero, "-o", &out],
        &["zero.txt", "line 4", "latency of 0"],
    );
    let imb = "# Benchmarking PingPong\n# #processes = 2\n\
        #bytes #repetitions      t[usec]   Mbytes/sec\n\
        0 1000 0.20 0.00\n1 1000 0.00 4.0\n";
    let imb = write(&dir, "imb_zero.txt", imb);
    user_error(
        &["calibrate", "imb", &imb, "-o", &out],
        &["imb_zero.txt", "line 5", "time of 0"],
    );
}

#[test]
fn procs_zero_is_rejected() {
    let dir = scratch("procs");
    let out = dir.join("m.json").display().to_string();
    let (code, _, err) = run_within(
        &[
            "calibrate",
            "osu",
            &fixture("osu/osu_latency.txt"),
            &fixture("osu/osu_allreduce.txt"),
            "--procs",
            "0",
            "-o",
            &out,
        ],
        LIMIT,
    );
    // a usage error, reported by the argument parser before anything is read
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.lines().next().unwrap_or("").contains("--procs"),
        "{err}"
    );
    assert!(!Path::new(&out).exists());
}

#[test]
fn devices_and_oversized_files_are_refused_without_reading_them() {
    let dir = scratch("bounded");
    let out = dir.join("m.json").display().to_string();
    for args in [["calibrate", "osu"], ["calibrate", "imb"]] {
        user_error(
            &[args[0], args[1], "/dev/zero", "-o", &out],
            &["/dev/zero", "not a regular file"],
        );
    }
    // a sparse 65 MiB file: refused by its size
    let big = dir.join("big.txt");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(65 << 20).unwrap();
    user_error(
        &["calibrate", "osu", &big.display().to_string(), "-o", &out],
        &["big.txt", "67108864 bytes a benchmark output file"],
    );
}

/// One million rows (about 20 MB): parsed, detected and fitted in seconds, not minutes.
#[test]
fn a_million_rows_finish_in_seconds() {
    let dir = scratch("million");
    let out = dir.join("m.json").display().to_string();
    let mut text = String::with_capacity(24 << 20);
    text.push_str("# OSU MPI Latency Test v5.3\n# Size          Latency (us)\n");
    for k in 1..=1_000_000u64 {
        // 2 µs + 1 ns/B with a small deterministic ripple
        let t = 2.0 + k as f64 * 1e-3 + ((k * 7919) % 13) as f64 * 1e-3;
        text.push_str(&format!("{k} {t:.3}\n"));
    }
    let file = write(&dir, "million.txt", &text);
    let (code, _, err) = run_within(
        &["calibrate", "osu", &file, "-o", &out],
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(0), "{err}");
}

/// `calibrate collectives` on forced runs at the limits of every column: communicator sizes and
/// message sizes of 2^64 - 1, segment sizes beyond the message, a one-process barrier; and times
/// no measurement has (a subnormal, 10^300 s), which are named with their line.
#[test]
fn forced_runs_at_the_limits() {
    let dir = scratch("forced_runs");
    let model = fixture("selection/vader-model-local.json");
    let header = "collective,procs,algorithm_id,segsize,bytes,count,elem_bytes,median_s\n";
    let max = u64::MAX;
    let runs = write(
        &dir,
        "runs.csv",
        &format!(
            "{header}bcast,2,1,0,8,1,8,1e-6\n\
             bcast,{max},9,{max},{max},1,8,1e6\n\
             allgather,2,6,0,0,{max},1,1e-6\n\
             allgather,3,6,0,0,2305843009213693951,8,1e-6\n\
             reduce,4294967297,7,0,{max},1,8,1e-6\n\
             barrier,1,1,0,0,0,8,1e-9\n"
        ),
    );
    let out = dir.join("out.json").display().to_string();
    let text = accepted(&[
        "calibrate",
        "collectives",
        "--model",
        &model,
        &runs,
        "-o",
        &out,
    ]);
    assert!(text.contains("call costs of 1 algorithm)"), "{text}");
    assert!(!text.contains("inf") && !text.contains("NaN"), "{text}");
    for (time, line) in [("5e-324", 2), ("1e300", 2), ("-1e-6", 2)] {
        let bad = write(
            &dir,
            "bad.csv",
            &format!("{header}bcast,2,1,0,8,1,8,{time}\n"),
        );
        user_error(
            &[
                "calibrate",
                "collectives",
                "--model",
                &model,
                &bad,
                "-o",
                &out,
            ],
            &["bad.csv", &format!("line {line}"), "median_s"],
        );
    }
}
