//! `commcost tune`'s options, checked before anything is measured (the measuring itself runs
//! under `mpirun` in `cli/tests/calibrate_mpi.rs`, feature `mpi`): every bad option is one line
//! naming it, and no file is written.

use std::time::Duration;

use crate::support::{run_within, scratch};

#[test]
fn bad_options_are_named_before_measuring() {
    let dir = scratch("tune_options");
    let out = dir.join("r.rules").display().to_string();
    let base = ["tune", "--preset", "open-mpi-openib", "-o", &out];
    for (extra, needle) in [
        (vec!["--procs", "2", "--budget", "0"], "--budget"),
        (vec!["--procs", "1,4"], "--procs"),
        (vec!["--procs", "2", "--sizes", "12"], "--sizes"),
        (
            vec!["--procs", "2", "--collectives", "scan"],
            "--collectives",
        ),
        (
            vec!["--procs", "2", "--collectives", "bcast,bcast"],
            "--collectives",
        ),
        (
            vec!["--procs", "2", "--collectives", "reduce_scatter"],
            "--collectives",
        ),
        (vec!["--procs", "2", "--margin", "-1"], "--margin"),
        (vec!["--procs", "2", "--mpirun", "mpirun -np 4"], "-np"),
        (vec!["--procs", "2", "--mpirun", "mpirun 'x"], "--mpirun"),
        (vec!["--procs", "2", "--run-timeout", "0"], "--run-timeout"),
        // nodes of 4 cannot hold 6 ranks; a platform without the model between nodes
        (
            vec![
                "--procs",
                "4,6",
                "--ranks-per-node",
                "4",
                "--inter-preset",
                "mpich2-tcp",
            ],
            "--ranks-per-node",
        ),
        (
            vec!["--procs", "4", "--ranks-per-node", "2"],
            "--inter-model",
        ),
        (
            vec![
                "--procs",
                "4",
                "--closed-form",
                "--ranks-per-node",
                "2",
                "--inter-preset",
                "mpich2-tcp",
            ],
            "--closed-form",
        ),
    ] {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        let (code, _, err) = run_within(&args, Duration::from_secs(20));
        assert_eq!(code, Some(1), "{extra:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{extra:?}: {err}");
        assert!(err.contains(needle), "{extra:?}: {err}");
        assert!(!dir.join("r.rules").exists(), "{extra:?}");
    }
}
