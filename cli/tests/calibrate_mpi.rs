//! `commcost calibrate mpi` between two ranks (feature `mpi`): each model it offers is written,
//! loads back in `commcost predict`, and predicts a finite, positive time that grows with the
//! message.
//!
//! `cargo test -p commcost-cli --features mpi --test calibrate_mpi` needs an MPI library: the
//! test starts the binary under `mpirun -np 2` (shared memory), with `--quick` and
//! `--max-size 64K` so that each run takes seconds.
//!
//! `commcost calibrate collectives-measure` starts its own `mpirun`s (one per forced Open MPI
//! algorithm): the test runs it with `--quick` on two collectives and checks the CSV it writes.
#![cfg(feature = "mpi")]

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn scratch() -> PathBuf {
    scratch_named("calibrate_mpi")
}

/// An empty directory of its own for each test (they run in parallel).
fn scratch_named(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Runs `mpirun -np 2 commcost calibrate mpi ARGS -o FILE` and returns rank 0's output.
fn calibrate(file: &PathBuf, args: &[&str]) -> String {
    let out = Command::new("mpirun")
        .args([
            "--allow-run-as-root",
            "--oversubscribe",
            "--mca",
            "btl",
            "self,vader",
            "-np",
            "2",
        ])
        .arg(env!("CARGO_BIN_EXE_commcost"))
        .args(["calibrate", "mpi", "--quick", "--max-size", "64K"])
        .args(args)
        .arg("-o")
        .arg(file)
        .output()
        .expect("mpirun must be installed for the mpi feature's tests");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "calibrate mpi {args:?} failed: {}\n{stdout}\n{stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    stdout
}

/// `commcost predict --model FILE --bytes BYTES --json`'s point-to-point time.
fn p2p(model: &str, bytes: &str) -> f64 {
    let out = Command::new(env!("CARGO_BIN_EXE_commcost"))
        .args(["predict", "--model", model, "--bytes", bytes, "--json"])
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "predict --model {model}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["p2p_seconds"].as_f64().expect("p2p_seconds")
}

#[test]
fn every_model_is_written_and_loads_back() {
    let dir = scratch();
    for (model, kind, extra) in [
        ("loggp", "loggp_protocols", None),
        ("plogp", "plogp", Some("--separate-buffers")),
        ("shaped", "loggp", None),
        ("log3p", "log3p", None),
    ] {
        let file = dir.join(format!("{model}.json"));
        let mut args = vec!["--model", model];
        args.extend(extra);
        calibrate(&file, &args);
        let text = std::fs::read_to_string(&file).expect("rank 0 wrote the model file");
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(v["spec"]["model"], kind, "{model}: {text}");
        let shown = file.display().to_string();
        let (small, large) = (p2p(&shown, "1"), p2p(&shown, "64K"));
        assert!(
            small.is_finite() && small > 0.0 && large > small && large < 1.0,
            "{model}: p2p(1 B) = {small} s, p2p(64 KiB) = {large} s"
        );
    }
}

/// Open MPI 4.1.4's forced algorithms (`ompi_info --param coll tuned --level 9`): bcast 1-9,
/// allreduce 1-6; with the default, every (collective, algorithm) must have a row per size.
#[test]
fn collectives_measure_writes_every_forced_algorithm() {
    let dir = scratch_named("collectives_measure");
    let file = dir.join("runs.csv");
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_commcost"))
        .args([
            "calibrate",
            "collectives-measure",
            "--quick",
            "--only",
            "bcast,allreduce",
            "--sizes",
            "8,512,4K",
            "--budget",
            "60",
            "-o",
        ])
        .arg(&file)
        .output()
        .expect("the binary runs");
    let elapsed = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    // the budget of 60 s, plus the start-up of the binary
    assert!(elapsed < Duration::from_secs(65), "{elapsed:?}");
    assert!(!stderr.contains("not started"), "{stderr}");
    let text = std::fs::read_to_string(&file).expect("the CSV was written");
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "collective,ompi_coll_id,procs,algorithm_id,algorithm,segsize,bytes,count,elem_bytes,calls,min_s,median_s,reps,pipelined_s,rank_mean_s,rank_max_s"
        )
    );
    let mut seen = std::collections::BTreeSet::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 16, "{line}");
        let (collective, coll_id) = (f[0], f[1]);
        assert!(
            matches!((collective, coll_id), ("bcast", "7") | ("allreduce", "2")),
            "{line}"
        );
        assert_eq!(
            (f[2], f[5], f[8]),
            ("2", "0", "8"),
            "procs, segsize, elem_bytes: {line}"
        );
        let count: u64 = f[7].parse().expect("count");
        assert_eq!(f[6], (8 * count).to_string(), "bytes = 8 count: {line}");
        assert!(!f[4].is_empty(), "{line}");
        for k in [10, 11, 13, 14, 15] {
            let t: f64 = f[k].parse().expect("a time");
            assert!(t.is_finite() && t > 0.0 && t < 1.0, "column {k}: {line}");
        }
        // each rank's own mean: the ranks' average is at most their maximum
        let (mean, max): (f64, f64) = (f[14].parse().unwrap(), f[15].parse().unwrap());
        assert!(mean <= max * (1.0 + 1e-9), "{line}");
        let min: f64 = f[10].parse().expect("min");
        let median: f64 = f[11].parse().expect("median");
        assert!(min <= median, "{line}");
        let reps: u32 = f[12].parse().expect("reps");
        assert!((1..=1000).contains(&reps), "{line}");
        seen.insert((collective.to_string(), f[3].to_string(), count));
    }
    for (collective, max) in [("bcast", 9), ("allreduce", 6)] {
        let ids = (1..=max)
            .map(|i| i.to_string())
            .chain(["default".to_string()]);
        for id in ids {
            for count in [1, 64, 512] {
                assert!(
                    seen.contains(&(collective.to_string(), id.clone(), count)),
                    "no row for {collective} algorithm {id}, {count} elements:\n{text}"
                );
            }
        }
    }
    assert_eq!(seen.len(), (9 + 1 + 6 + 1) * 3, "{text}");
}

/// A launcher that does not exist: one line naming `--mpirun`, exit code 1, quickly.
#[test]
fn collectives_measure_without_a_launcher_names_the_option() {
    let dir = scratch_named("collectives_measure_bad");
    let out = Command::new(env!("CARGO_BIN_EXE_commcost"))
        .args([
            "calibrate",
            "collectives-measure",
            "--mpirun",
            "commcost-no-such-launcher -np 2",
            "-o",
        ])
        .arg(dir.join("runs.csv"))
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--mpirun"), "{stderr}");
    assert!(!dir.join("runs.csv").exists());
}

/// `calibrate collectives --measure`: measures (quick), fits and writes the call costs into the
/// model file, and the file still loads.
#[test]
fn calibrate_collectives_measures_and_fits() {
    let dir = scratch_named("calibrate_collectives_measure");
    let model = dir.join("mine.json");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/selection/vader-model-local.json"
        ),
        &model,
    )
    .expect("copy the model");
    let runs = dir.join("runs.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_commcost"))
        .args([
            "calibrate",
            "collectives",
            "--measure",
            "--quick",
            "--model",
        ])
        .arg(&model)
        .arg(&runs)
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{}: {stderr}", out.status);
    assert!(stdout.contains("call costs of"), "{stdout}");
    assert!(stdout.contains("held-out runs:"), "{stdout}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let calls = file["local"]["work"]["calls"].as_array().expect("calls");
    assert!(calls.len() >= 40, "{}", calls.len());
    assert!(std::fs::read_to_string(&runs).unwrap().lines().count() > 100);
    assert!(p2p(&model.display().to_string(), "1K") > 0.0);
}

/// `commcost tune` over shared memory: measures within its budget and writes a rules file that
/// Open MPI's format reader takes, and a CSV of every measurement.
#[test]
fn tune_writes_a_rules_file_from_measurements() {
    let dir = scratch_named("tune");
    let rules = dir.join("tuned.rules");
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_commcost"))
        .args(["tune", "--preset", "open-mpi-openib", "--procs", "2,4"])
        .args([
            "--collectives",
            "bcast",
            "--sizes",
            "8,64K",
            "--budget",
            "25",
            "-o",
        ])
        .arg(&rules)
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // the budget holds (a run is not started after it; the launch of the last one is slack)
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
    let text = std::fs::read_to_string(&rules).unwrap();
    let parsed: commcost::export::OmpiRules = text.parse().expect("a valid rules file");
    assert!(
        parsed
            .lookup(commcost::collectives::Collective::Bcast, 2, 8)
            .is_some()
    );
    let csv = std::fs::read_to_string(dir.join("tuned.rules.csv")).unwrap();
    assert!(csv.lines().count() > 2, "{csv}");
    assert!(
        csv.lines()
            .skip(1)
            .any(|l| l.starts_with("bcast,2,\"default\",0,") && !l.ends_with(',')),
        "a timed default: {csv}"
    );
    assert!(stdout.contains("runs in"), "{stdout}");
}

/// `commcost tune` with a launcher that cannot start: one line naming `--mpirun`, no file.
#[test]
fn tune_without_a_launcher_names_the_option() {
    let dir = scratch_named("tune_bad");
    for (launcher, needle) in [
        ("commcost-no-such-launcher", "--mpirun"),
        ("mpirun -np 2", "-np"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_commcost"))
            .args(["tune", "--preset", "open-mpi-openib", "--procs", "2"])
            .args(["--collectives", "bcast", "--sizes", "8", "--budget", "10"])
            .args(["--mpirun", launcher, "-o"])
            .arg(dir.join("r.rules"))
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{launcher}: {stderr}");
        let last = stderr.trim_end().lines().last().unwrap_or("");
        assert!(last.contains(needle), "{launcher}: {stderr}");
        assert!(!dir.join("r.rules").exists());
    }
}

/// `commcost tune` where every launch hangs (hosts that do not answer): each run is killed at
/// `--run-timeout`, the tuning gives up after the first two, and says why in one line.
#[test]
fn tune_gives_up_on_a_launcher_that_hangs() {
    let dir = scratch_named("tune_hang");
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_commcost"))
        .args(["tune", "--preset", "open-mpi-openib", "--procs", "2,4"])
        .args(["--collectives", "bcast,reduce", "--sizes", "8,64K"])
        .args(["--run-timeout", "1", "--mpirun", "bash -c 'sleep 30'", "-o"])
        .arg(dir.join("r.rules"))
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let last = stderr.trim_end().lines().last().unwrap_or("");
    assert!(
        last.contains("--mpirun") && last.contains("killed after"),
        "{stderr}"
    );
    // two runs of one second, not one per planned run
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "{:?}",
        start.elapsed()
    );
    assert!(!dir.join("r.rules").exists());
}

/// `commcost tune` interrupted with Ctrl-C (SIGINT) while measuring leaves the old rules file
/// as it was and writes nothing else.
#[test]
fn tune_interrupted_leaves_the_old_file() {
    let dir = scratch_named("tune_interrupt");
    let rules = dir.join("r.rules");
    std::fs::write(&rules, "the old file\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_commcost"))
        .args(["tune", "--preset", "open-mpi-openib", "--procs", "2"])
        .args(["--collectives", "bcast", "--sizes", "8"])
        .args([
            "--run-timeout",
            "60",
            "--mpirun",
            "bash -c 'sleep 30'",
            "-o",
        ])
        .arg(&rules)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the binary runs");
    std::thread::sleep(Duration::from_millis(1500));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "SIGINT ignored");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!status.success());
    assert_eq!(std::fs::read_to_string(&rules).unwrap(), "the old file\n");
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("r.rules")]);
}

/// `commcost calibrate platform` over shared memory: one file with the link, the local work and
/// per-call costs, which `predict` and `select` read; a launcher that fails leaves no file.
#[test]
fn calibrate_platform_writes_one_complete_file() {
    let dir = scratch_named("platform");
    let file = dir.join("node.json");
    let out = Command::new(env!("CARGO_BIN_EXE_commcost"))
        .args([
            "calibrate",
            "platform",
            "--quick",
            "--max-size",
            "64K",
            "-o",
        ])
        .arg(&file)
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let text = std::fs::read_to_string(&file).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    // the link (over shared memory the shaped link misses held-out round trips: LogGP with
    // protocol ranges), the local work with per-call costs
    assert!(json["spec"].is_object(), "{text}");
    assert!(
        stderr.contains("1/3 the link") && stderr.contains("3/3 per-call costs"),
        "{stderr}"
    );
    assert!(json["local"]["work"]["copy"].is_object(), "{text}");
    assert!(json["local"]["operator"].is_object(), "{text}");
    let calls = json["local"]["work"]["calls"]
        .as_array()
        .expect("per-call costs");
    assert!(!calls.is_empty(), "{text}");
    assert!(p2p(&file.display().to_string(), "1K") > 0.0);

    // -np given, a launcher that fails, one that hangs (a node that does not answer)
    for (launcher, needle) in [
        ("mpirun -np 2", "-np"),
        ("false", "--mpirun"),
        ("bash -c 'sleep 30'", "--timeout"),
    ] {
        let bad = dir.join("bad.json");
        let out = Command::new(env!("CARGO_BIN_EXE_commcost"))
            .args(["calibrate", "platform", "--quick", "--timeout", "2"])
            .args(["--mpirun", launcher, "-o"])
            .arg(&bad)
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{launcher}: {stderr}");
        let last = stderr.trim_end().lines().last().unwrap_or("");
        assert!(last.contains(needle), "{launcher}: {stderr}");
        assert!(!bad.exists(), "{launcher}");
    }
}
