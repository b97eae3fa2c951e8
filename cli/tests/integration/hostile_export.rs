//! `commcost export` on hostile input, run as the built binary: a collective given twice,
//! communicator sizes no MPI `int` holds, grids too large to price, unknown MPICH versions.
//! Each must end within a time bound with exit code 1 and one line naming the option — never
//! a panic, never a file with a collective twice.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::run_within;

/// Runs the binary, killing it after `limit`; `(exit code, stdout, stderr)`. An MPICH export
/// without `--mpich-version` gets `--mpich-version 4.0`: the tests do not depend on which MPICH
/// (if any) `mpichversion` finds on the machine.
fn run(args: &[&str], limit: Duration) -> (Option<i32>, String, String) {
    let mut args = args.to_vec();
    if args.contains(&"mpich-json") && !args.contains(&"--mpich-version") {
        args.extend(["--mpich-version", "4.0"]);
    }
    run_within(&args, limit)
}

const LIMIT: Duration = Duration::from_secs(30);

/// Exit code 1, one line on stderr, naming `option`, no panic.
fn refused(args: &[&str], option: &str) -> String {
    let (code, out, err) = run(args, LIMIT);
    assert_eq!(code, Some(1), "commcost {args:?}: {err}");
    assert!(out.is_empty(), "nothing written to stdout: {out}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(option), "`{option}` named: {err}");
    assert!(err.len() < 300, "short: {err}");
    err
}

const FORMATS: [&str; 2] = ["ompi-rules", "mpich-json"];

#[test]
fn a_collective_given_twice_is_refused() {
    for format in FORMATS {
        for list in ["bcast,bcast", "allreduce,bcast,allreduce", "bcast,Bcast"] {
            let err = refused(
                &[
                    "export",
                    format,
                    "--preset",
                    "open-mpi-openib",
                    "--procs",
                    "2,4",
                    "--collectives",
                    list,
                ],
                "--collectives",
            );
            assert!(err.contains("twice"), "{err}");
        }
    }
}

#[test]
fn communicator_sizes_above_an_mpi_int_are_refused() {
    for format in FORMATS {
        for procs in ["2,2147483648", "1099511627776", "2..4294967296"] {
            let err = refused(
                &[
                    "export",
                    format,
                    "--preset",
                    "open-mpi-openib",
                    "--procs",
                    procs,
                    "--collectives",
                    "bcast",
                ],
                "--procs",
            );
            assert!(err.contains("2147483647"), "{err}");
        }
        // the largest an `int` holds is accepted
        let (code, out, err) = run(
            &[
                "export",
                format,
                "--preset",
                "open-mpi-openib",
                "--procs",
                "2147483647",
                "--bytes",
                "1,1M",
                "--collectives",
                "bcast",
            ],
            LIMIT,
        );
        assert_eq!(code, Some(0), "{err}");
        assert!(!out.contains("inf") && !out.contains("NaN"), "{out}");
    }
}

#[test]
fn grids_too_large_to_price_are_refused_quickly() {
    let procs: Vec<String> = (2..4098).map(|p| p.to_string()).collect();
    let procs = procs.join(",");
    for format in FORMATS {
        let start = Instant::now();
        let err = refused(
            &[
                "export",
                format,
                "--preset",
                "open-mpi-openib",
                "--procs",
                &procs,
                "--bytes",
                "1..4M",
            ],
            "--procs × --bytes × --collectives",
        );
        assert!(err.contains("200000"), "{err}");
        assert!(start.elapsed() < Duration::from_secs(10), "{err}");
    }
}

#[test]
fn the_doubling_grid_that_took_a_minute_is_written() {
    for format in FORMATS {
        let (code, out, err) = run(
            &[
                "export",
                format,
                "--preset",
                "open-mpi-openib",
                "--procs",
                "2..4097",
                "--bytes",
                "1..4096",
            ],
            LIMIT,
        );
        assert_eq!(code, Some(0), "{err}");
        assert!(out.len() > 100, "{out}");
    }
}

#[test]
fn unknown_mpich_versions_are_refused() {
    for version in [
        "3.4.3",
        "4",
        "5.0",
        "",
        "4.0.2; rm -rf /",
        &"9".repeat(5000),
    ] {
        let err = refused(
            &[
                "export",
                "mpich-json",
                "--preset",
                "open-mpi-openib",
                "--procs",
                "2,4",
                "--mpich-version",
                version,
            ],
            "--mpich-version",
        );
        assert!(err.contains("4.0, 4.1, 4.2"), "{err}");
    }
    refused(
        &[
            "export",
            "ompi-rules",
            "--preset",
            "open-mpi-openib",
            "--procs",
            "2,4",
            "--mpich-version",
            "4.0",
        ],
        "--mpich-version",
    );
}

/// The MPICH version comes from `mpichversion` on the PATH when not given: a fake one reporting
/// 4.1.2 gives 4.1's barrier, one reporting 3.4.3 is an error naming the option, none gives 4.0.
#[test]
fn the_mpich_version_defaults_to_what_mpichversion_reports() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fake-mpichversion");
    let _ = std::fs::remove_dir_all(&dir);
    let export = |path: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_commcost"))
            .args([
                "export",
                "mpich-json",
                "--preset",
                "open-mpi-openib",
                "--procs",
                "2,4",
                "--collectives",
                "barrier",
            ])
            .env("PATH", path)
            .output()
            .expect("the binary runs")
    };
    for (version, expected) in [
        (Some("4.1.2"), Ok("MPIR_Barrier_intra_k_dissemination")),
        (
            Some("4.0.2"),
            Ok("\"algorithm=MPIR_Barrier_intra_dissemination\""),
        ),
        (Some("3.4.3"), Err("--mpich-version")),
        (None, Ok("\"algorithm=MPIR_Barrier_intra_dissemination\"")),
    ] {
        let bin = dir.join(version.unwrap_or("none"));
        std::fs::create_dir_all(&bin).expect("scratch dir");
        if let Some(v) = version {
            let script = bin.join("mpichversion");
            std::fs::write(
                &script,
                format!("#!/bin/sh\necho 'MPICH Version:    \t{v}'\n"),
            )
            .expect("write");
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
        }
        let out = export(&bin);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        match expected {
            Ok(text) => {
                assert!(out.status.success(), "{version:?}: {stderr}");
                assert!(stdout.contains(text), "{version:?}: {stdout}");
            }
            Err(option) => {
                assert_eq!(out.status.code(), Some(1), "{version:?}");
                assert!(
                    stderr.contains(option) && stderr.contains("3.4.3"),
                    "{stderr}"
                );
                assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
            }
        }
    }
}
