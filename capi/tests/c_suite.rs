//! The C test suite: compiles `tests/c/suite.c` against `libcommcost_capi.a` with the system C
//! compiler (`CC`, default `cc`), runs it, and checks every line it prints against the library
//! called from Rust — doubles bit for bit, names and IDs exactly, error codes as documented.
//!
//! The last part shares one model and one table between 4 threads (results equal, error
//! messages per thread). The expected values come from `commcost` directly (the presets, `CommModel`,
//! `collectives::{rank, best}`, `DecisionTable`, the algorithms' `FromStr`), never from this
//! crate's own code.

use std::collections::HashMap;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::process::Command;

use commcost::collectives::ompi::{self, OmpiAlgorithm};
use commcost::collectives::{
    self as coll, Algorithm, DecisionTable, MpichAlgorithm, Problem, best, rank,
};
use commcost::table::Table1D;
use commcost::{CommModel, Message, ModelSpec, PLogP, presets};

/// The directory holding the build's `libcommcost_capi.a` (the test binary is in `deps/` below it).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

/// The model behind the suite's `file` label: pLogP with size-dependent overheads and gap.
fn file_model() -> ModelSpec {
    let sizes = vec![1.0, 1024.0, 65536.0];
    let t = |v: [f64; 3]| Table1D::new(sizes.clone(), v.to_vec()).expect("table");
    PLogP::new(
        3e-6,
        t([1e-6, 2e-6, 30e-6]),
        t([1.5e-6, 2.5e-6, 25e-6]),
        t([2e-6, 4e-6, 50e-6]),
        2,
    )
    .expect("pLogP")
    .into()
}

fn models() -> HashMap<&'static str, ModelSpec> {
    HashMap::from([
        ("mpich2-tcp", presets::mpich2_tcp().into()),
        ("nmpi-sci", presets::nmpi_sci().into()),
        ("open-mpi-openib", presets::open_mpi_openib().into()),
        ("open-mpi-gm", presets::open_mpi_gm().into()),
        ("titan-log3p", presets::titan_log3p().into()),
        ("file", file_model()),
    ])
}

/// `(cost bits, ompi id, segment, fanout, name, ompi name, mpich name)` as the C side prints.
type Record = (u64, u32, u64, u64, String, String, String);

trait Names: Algorithm + Display + MpichAlgorithm + std::str::FromStr {
    fn ompi(&self) -> (u32, String, u64, u64);
}
macro_rules! ompi_names {
    ($($ty:ty),*) => {$(impl Names for $ty {
        fn ompi(&self) -> (u32, String, u64, u64) {
            (self.ompi_id(), self.ompi_name().to_string(), self.segment_size(), self.faninout())
        }
    })*};
}
ompi_names!(
    ompi::Bcast,
    ompi::Allreduce,
    ompi::Reduce,
    ompi::Allgather,
    ompi::Alltoall,
    ompi::Barrier,
    ompi::ReduceScatter,
    ompi::Gather,
    ompi::Scatter
);
macro_rules! textbook_names {
    ($($ty:ty),*) => {$(impl Names for $ty {
        fn ompi(&self) -> (u32, String, u64, u64) { (0, String::new(), 0, 0) }
    })*};
}
textbook_names!(
    coll::Bcast,
    coll::Allreduce,
    coll::Reduce,
    coll::Allgather,
    coll::Alltoall,
    coll::Barrier,
    coll::Gather,
    coll::Scatter,
    coll::Scan
);
textbook_names!(
    coll::Mpich<coll::Bcast>,
    coll::Mpich<coll::Allreduce>,
    coll::Mpich<coll::Reduce>,
    coll::Mpich<coll::Allgather>,
    coll::Mpich<coll::Alltoall>,
    coll::Mpich<coll::Barrier>,
    coll::Mpich<coll::Gather>,
    coll::Mpich<coll::Scatter>,
    coll::Mpich<coll::Scan>
);

fn rec<A: Names>(a: A, cost: f64) -> Record {
    let (id, ompi_name, segment, fanout) = a.ompi();
    (
        cost.to_bits(),
        id,
        segment,
        fanout,
        a.to_string(),
        ompi_name,
        a.mpich_name().unwrap_or("").to_string(),
    )
}

/// What the Rust library says for one `(kind, p, s, name)` query.
fn expected<A: Names>(
    model: &dyn CommModel,
    kind: &str,
    p: u64,
    s: u64,
    name: &str,
) -> Vec<Record> {
    let problem = Problem::new(p, Message::contiguous(s));
    match kind {
        "RANK" => rank::<A>(model, &problem)
            .expect("rank")
            .into_iter()
            .map(|(a, c)| rec(a, c))
            .collect(),
        "BEST" => {
            let (a, c) = best::<A>(model, &problem).expect("best");
            vec![rec(a, c)]
        }
        "COST" => {
            let a: A = name.parse().ok().expect("the C side's name parses");
            vec![rec(a, a.cost(model, &problem).expect("cost"))]
        }
        "LOOKUP" => {
            let tp = [2, 4, 64];
            let ts = [1, 1024, 65536, 1 << 20];
            let template = Problem::new(1, Message::contiguous(0));
            let table = DecisionTable::<A>::build(model, &tp, &ts, &template).expect("table");
            let a = table.lookup(p, s);
            // the grid point at or below the query (the first one below the grid)
            let gp = tp.iter().rev().find(|&&x| x <= p).copied().unwrap_or(tp[0]);
            let gs = ts.iter().rev().find(|&&x| x <= s).copied().unwrap_or(ts[0]);
            let cost = a
                .cost(model, &Problem::new(gp, Message::contiguous(gs)))
                .expect("cost");
            vec![rec(a, cost)]
        }
        other => panic!("unknown kind {other}"),
    }
}

fn expected_for(
    model: &dyn CommModel,
    family: i32,
    collective: i32,
    kind: &str,
    p: u64,
    s: u64,
    name: &str,
) -> Vec<Record> {
    macro_rules! go {
        ($ty:ty) => {
            expected::<$ty>(model, kind, p, s, name)
        };
    }
    match (family, collective) {
        (0, 0) => go!(ompi::Bcast),
        (0, 1) => go!(ompi::Allreduce),
        (0, 2) => go!(ompi::Reduce),
        (0, 3) => go!(ompi::Allgather),
        (0, 4) => go!(ompi::Alltoall),
        (0, 5) => go!(ompi::Barrier),
        (0, 6) => go!(ompi::ReduceScatter),
        (0, 7) => go!(ompi::Gather),
        (0, 8) => go!(ompi::Scatter),
        (1, 0) => go!(coll::Bcast),
        (1, 1) => go!(coll::Allreduce),
        (1, 2) => go!(coll::Reduce),
        (1, 3) => go!(coll::Allgather),
        (1, 4) => go!(coll::Alltoall),
        (1, 5) => go!(coll::Barrier),
        (1, 7) => go!(coll::Gather),
        (1, 8) => go!(coll::Scatter),
        (1, 9) => go!(coll::Scan),
        (2, 0) => go!(coll::Mpich<coll::Bcast>),
        (2, 1) => go!(coll::Mpich<coll::Allreduce>),
        (2, 2) => go!(coll::Mpich<coll::Reduce>),
        (2, 3) => go!(coll::Mpich<coll::Allgather>),
        (2, 4) => go!(coll::Mpich<coll::Alltoall>),
        (2, 5) => go!(coll::Mpich<coll::Barrier>),
        (2, 7) => go!(coll::Mpich<coll::Gather>),
        (2, 8) => go!(coll::Mpich<coll::Scatter>),
        (2, 9) => go!(coll::Mpich<coll::Scan>),
        other => panic!("no algorithms for {other:?}"),
    }
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s, 16).expect("hex bits")
}

fn num(s: &str) -> u64 {
    s.parse().expect("unsigned")
}

/// Parses a `RANK`/`COST`/`BEST`/`LOOKUP` line: `(family, collective, p, s, record)`.
fn parse_algorithm(line: &str) -> (i32, i32, u64, u64, Record) {
    let (head, names) = line.split_once(" |").expect("names");
    let f: Vec<&str> = head.split(' ').collect();
    let names: Vec<&str> = names
        .strip_suffix('|')
        .unwrap_or(names)
        .split('|')
        .collect();
    let name = f[10].to_string();
    (
        f[2].parse().expect("family"),
        f[3].parse().expect("collective"),
        num(f[4]),
        num(f[5]),
        (
            hex(f[6]),
            f[7].parse().expect("id"),
            num(f[8]),
            num(f[9]),
            name,
            names[0].to_string(),
            names[1].to_string(),
        ),
    )
}

#[test]
fn every_c_function_agrees_with_rust_bit_for_bit() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("c_suite");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let model_path = dir.join("plogp.json");
    let provenance = serde_json::json!({"measured": "", "method": "", "date": "", "host": "",
        "parameters": {}, "accuracy": {}, "tool": ""});
    let file = serde_json::json!({"commcost_model_file": 1, "provenance": provenance,
        "spec": file_model()});
    std::fs::write(&model_path, file.to_string()).expect("model file");
    // model files the C ABI must read as the CLI does (the library's one loader)
    let hostile = dir.join("hostile");
    let _ = std::fs::remove_dir_all(&hostile);
    std::fs::create_dir_all(&hostile).expect("hostile dir");
    let pram = |cost: &str| format!(r#"{{"model": "pram", "unit_cost": {cost}}}"#);
    let fifo = hostile.join("fifo.json");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    for (name, text) in [
        (
            "dup.json",
            r#"{"model": "pram", "unit_cost": 1e-6, "unit_cost": 2e-6}"#.to_string(),
        ),
        (
            "version.json",
            format!(
                r#"{{"commcost_model_file": "x", "provenance": {provenance}, "spec": {}}}"#,
                pram("1e-6")
            ),
        ),
        (
            "local.json",
            format!(
                r#"{{"commcost_model_file": 1, "provenance": {provenance}, "spec": {},
                   "local": {{"work": 1, "operator": 2, "provenance": {provenance}}}}}"#,
                pram("1e-6")
            ),
        ),
        (
            "multi.json",
            format!(
                r#"{{"preferred": "a", "models": {{"a": {}, "b": {}}}}}"#,
                pram("1e-6"),
                pram("2e-6")
            ),
        ),
        ("bom.json", format!("\u{feff}{}", pram("3e-6"))),
    ] {
        std::fs::write(hostile.join(name), text).expect("hostile file");
    }

    let lib = lib_dir().join("libcommcost_capi.a");
    assert!(
        lib.exists(),
        "{} missing: build the crate first",
        lib.display()
    );
    let exe = dir.join("suite");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg("-I")
        .arg(manifest.join("include"))
        .arg(manifest.join("tests/c/suite.c"))
        .arg(&lib)
        .args(["-pthread", "-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compiling tests/c/suite.c failed");
    let out = Command::new(&exe)
        .arg(&model_path)
        .arg(&hostile)
        .output()
        .expect("run suite");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "suite failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.ends_with("END\n"), "suite stopped early");

    let models = models();
    let mut checked: HashMap<&str, usize> = HashMap::new();
    // RANK lines of one query arrive in order; compare each to the k-th of the Rust ranking
    let mut rank_expected: Vec<Record> = Vec::new();
    let mut rank_seen = 0usize;
    let mut errors: HashMap<String, (i32, String)> = HashMap::new();
    for line in stdout.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let kind = f[0];
        *checked.entry(kind).or_default() += 1;
        match kind {
            "VERSION" => assert_eq!(f[1], env!("CARGO_PKG_VERSION")),
            "PRESET" | "JSON" => assert_eq!(f.last().copied(), Some("0"), "{line}"),
            "LOAD" => assert_eq!(f[1], "0", "{line}"),
            "THREADS" => assert_eq!(f[1], "0", "failures in the threaded part: {line}"),
            "P2P" | "P2P_MANY" | "THREAD_P2P" => {
                let m = &models[f[1]];
                let want = m.p2p(&Message::contiguous(num(f[2])));
                assert_eq!((f[3], hex(f[4])), ("0", want.to_bits()), "{line}");
            }
            "P2P_VECTOR" | "QUANTITIES" => {
                let m = &models[f[1]];
                let (count, block, stride) = (num(f[2]), num(f[3]), num(f[4]));
                let msg = Message::vector(count, block, stride)
                    .ok()
                    .filter(|_| [count, block, stride].iter().all(|&v| v <= i64::MAX as u64));
                let rc: i32 = f[5].parse().expect("rc");
                match msg {
                    None => assert_eq!(rc, 2, "invalid layout or a value above 2^63 - 1: {line}"),
                    Some(msg) => {
                        assert_eq!(rc, 0, "{line}");
                        if kind == "P2P_VECTOR" {
                            assert_eq!(hex(f[6]), m.p2p(&msg).to_bits(), "{line}");
                        } else {
                            let q = m.quantities(&msg);
                            let want = [
                                q.p2p,
                                q.send_overhead,
                                q.recv_overhead,
                                q.send_interval,
                                q.gap,
                            ]
                            .map(f64::to_bits);
                            let got = [f[6], f[7], f[8], f[9], f[10]].map(hex);
                            assert_eq!(got, want, "{line}");
                        }
                    }
                }
            }
            "RANK_COUNT" => {
                let (family, collective) = (f[2].parse().unwrap(), f[3].parse().unwrap());
                let (p, s) = (num(f[4]), num(f[5]));
                let rc: i32 = f[6].parse().unwrap();
                let supported = !matches!((family, collective), (0, 9) | (1, 6) | (2, 6));
                if !supported {
                    assert_eq!(rc, 6, "{line}");
                    continue;
                }
                rank_expected = expected_for(
                    models[f[1]].as_model(),
                    family,
                    collective,
                    "RANK",
                    p,
                    s,
                    "",
                );
                rank_seen = 0;
                let n: usize = f[7].parse().unwrap();
                assert_eq!(rc, if n == 0 { 0 } else { 8 }, "{line}");
                assert_eq!(n, rank_expected.len(), "{line}");
            }
            "RANK" => {
                let (_, _, _, _, got) = parse_algorithm(line);
                assert_eq!(got, rank_expected[rank_seen], "{line}");
                rank_seen += 1;
            }
            "COST" | "BEST" | "LOOKUP" => {
                let (family, collective, p, s, got) = parse_algorithm(line);
                let m = models[f[1]].as_model();
                let want = expected_for(m, family, collective, kind, p, s, &got.4);
                assert_eq!(got, want[0], "{line}");
            }
            "TABLE_BUILD" => {
                let supported = !matches!((f[2], f[3]), ("0", "9") | ("1", "6") | ("2", "6"));
                assert_eq!(f[4], if supported { "0" } else { "6" }, "{line}");
            }
            "ERR" => {
                let rc: i32 = f[2].parse().unwrap();
                errors.insert(f[1].to_string(), (rc, f[3..].join(" ")));
            }
            "LOGGP_NEW" => {
                let m = commcost::LogGP::new(5e-6, 1e-6, 2e-6, 1e-9).unwrap();
                let want = m.p2p(&Message::contiguous(1024)).to_bits();
                assert_eq!((f[1], hex(f[2])), ("0", want), "{line}");
            }
            "LOGP_NEW" => {
                let m = commcost::LogP::new(5e-6, 1e-6, 2e-6, 8).unwrap();
                let want = m.p2p(&Message::contiguous(20)).to_bits();
                assert_eq!((f[1], hex(f[2])), ("0", want), "{line}");
            }
            "MF_P2P" => {
                // p2p of 8 bytes under PRAM is the unit cost, as the file writes it
                let want = match f[1] {
                    "bom.json" => "3e-6",
                    "multi.json" => "1e-6",
                    "multi.json#b" => "2e-6",
                    other => panic!("{other} loaded"),
                };
                let want = want.parse::<f64>().unwrap().to_bits();
                assert_eq!((f[2], hex(f[3])), ("0", want), "{line}");
            }
            "PRAM_NEW" | "MLINES_NEW" | "PLOGP_NEW" | "RANGES_NEW" => {
                let m: ModelSpec = match kind {
                    "PRAM_NEW" => commcost::Pram::new(3e-6).unwrap().into(),
                    "MLINES_NEW" => commcost::MlinesModel::new(1e-5, 1e-9, 2e-8, 64)
                        .unwrap()
                        .into(),
                    "PLOGP_NEW" => {
                        let t = |v: [f64; 3]| {
                            Table1D::new(vec![1.0, 1024.0, 65536.0], v.to_vec()).unwrap()
                        };
                        PLogP::new(
                            3e-6,
                            t([1e-6, 2e-6, 3e-5]),
                            t([1.5e-6, 2.5e-6, 2.5e-5]),
                            t([2e-6, 4e-6, 5e-5]),
                            2,
                        )
                        .unwrap()
                        .into()
                    }
                    _ => presets::open_mpi_openib().into(),
                };
                let s = match kind {
                    "PRAM_NEW" => 1024,
                    "MLINES_NEW" => 8000,
                    "PLOGP_NEW" => 4096,
                    _ => 65536,
                };
                let want = m.p2p(&Message::contiguous(s)).to_bits();
                assert_eq!((f[1], hex(f[2])), ("0", want), "{line}");
            }
            "OK-after-error" => assert_eq!(line, "OK-after-error 0 []"),
            "END" => {}
            _ => panic!("unexpected line: {line}"),
        }
    }
    // the documented codes: 1 NULL, 2 invalid argument, 3 I/O, 4 parse, 5 unknown name,
    // 6 unsupported, 7 collective, 8 buffer too small
    let want: &[(&str, i32, &str)] = &[
        ("unknown-preset", 5, "open-mpi-openib"),
        ("null-name", 1, "name"),
        ("null-out", 1, "out"),
        ("missing-file", 3, ""),
        ("bad-json", 4, ""),
        ("bad-field", 4, "unit_cost"),
        ("not-utf8", 2, ""),
        ("null-model", 1, ""),
        ("null-result", 1, ""),
        ("null-many", 1, ""),
        ("empty-many", 0, ""),
        ("bad-family", 2, "family"),
        ("bad-collective", 2, "collective"),
        ("bad-collective-high", 2, ""),
        ("ompi-scan", 6, ""),
        ("textbook-reduce-scatter", 6, ""),
        ("zero-procs", 7, ""),
        ("unknown-algorithm", 5, ""),
        ("zero-segment", 5, ""),
        ("small-buffer", 8, ""),
        ("null-count", 1, ""),
        ("unsorted-axis", 2, "processes"),
        ("empty-axis", 2, ""),
        ("huge-axis", 2, ""),
        ("null-table", 1, ""),
        (
            "huge-size",
            2,
            "bytes: 18446744073709551615 is above 2^63 - 1",
        ),
        ("huge-procs", 2, "processes"),
        ("bad-loggp", 2, "latency"),
        ("null-plogp-gap", 1, "gap"),
        ("huge-rendezvous", 2, "rendezvous_above"),
        ("bad-mlines", 2, "line_bytes"),
        ("bad-pram", 2, "unit_cost"),
        ("mf-fifo.json", 3, "not a regular file"),
        ("mf-dev-zero", 3, "not a regular file"),
        ("mf-dup.json", 4, "duplicate key `unit_cost`"),
        ("mf-version.json", 4, "format version \"x\""),
        ("mf-local.json", 4, "at `local.work`"),
        (
            "mf-multi.json#c",
            4,
            "no model named `c`; the file has a, b",
        ),
        ("mf-bom.json", 0, ""),
        ("mf-multi.json", 0, ""),
        ("mf-multi.json#b", 0, ""),
        ("bad-logp", 2, "word_bytes"),
    ];
    for (case, code, mentions) in want {
        let (rc, message) = errors
            .get(*case)
            .unwrap_or_else(|| panic!("no line for {case}"));
        assert_eq!(rc, code, "{case}: {message}");
        assert!(
            message.contains(mentions),
            "{case}: `{message}` lacks `{mentions}`"
        );
    }
    assert_eq!(
        checked.get("THREADS"),
        Some(&1),
        "the threaded part did not run"
    );
    // every function was exercised on every model
    for kind in [
        "P2P",
        "P2P_MANY",
        "P2P_VECTOR",
        "QUANTITIES",
        "RANK",
        "COST",
        "BEST",
        "LOOKUP",
    ] {
        assert!(
            checked.get(kind).copied().unwrap_or(0) >= 6,
            "few {kind} lines"
        );
    }
}
