//! `commcost calibrate mpi` between two ranks (feature `mpi`): each model it offers is written,
//! loads back in `commcost predict`, and predicts a finite, positive time that grows with the
//! message.
//!
//! `cargo test -p commcost-cli --features mpi --test calibrate_mpi` needs an MPI library: the
//! test starts the binary under `mpirun -np 2` (shared memory), with `--quick` and
//! `--max-size 64K` so that each run takes seconds.
#![cfg(feature = "mpi")]

use std::path::PathBuf;
use std::process::Command;

fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("calibrate_mpi");
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
