//! The Fortran module (`capi/fortran/commcost.f90`) function by function: `tests/fortran/suite.f90`
//! calls each one and prints its result; every time is compared bit for bit with the Rust
//! library, every algorithm record field by field. Needs gfortran: without it the test says so
//! and passes, unless `COMMCOST_REQUIRE_FORTRAN` is set (CI sets it).

use std::path::{Path, PathBuf};
use std::process::Command;

use commcost::collectives::{Choice, Collective, Family, Problem, best_in, cost_in, rank_in};
use commcost::table::Table1D;
use commcost::{CommModel, LogGP, LogP, Message, MlinesModel, PLogP, Pram, presets};

/// The directory holding the build's `libcommcost_capi.a` (the test binary is in `deps/` below it).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

/// `rc bits id segment fanout name [ompi name] [mpich name]` as the suite prints a record.
fn record(c: &Choice) -> String {
    let (id, name, segment, fanout) = c
        .ompi
        .map_or((0, "", 0, 0), |o| (o.id, o.name, o.segment, o.fanout));
    format!(
        "0 {:016X} {id} {segment} {fanout} {} [{name}] [{}]",
        c.cost.to_bits(),
        c.name,
        c.mpich_name.unwrap_or("")
    )
}

fn bits(x: f64) -> String {
    format!("0 {:016X}", x.to_bits())
}

#[test]
fn every_fortran_function_agrees_with_rust() {
    let gfortran = std::env::var("FC").unwrap_or_else(|_| "gfortran".into());
    if Command::new(&gfortran).arg("--version").output().is_err() {
        assert!(
            std::env::var_os("COMMCOST_REQUIRE_FORTRAN").is_none(),
            "{gfortran} not found"
        );
        eprintln!("skipped: {gfortran} not found (set FC)");
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fortran_suite");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let lib = lib_dir().join("libcommcost_capi.a");
    assert!(
        lib.exists(),
        "{} missing: build the crate first",
        lib.display()
    );
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = dir.join("suite");
    let status = Command::new(&gfortran)
        .args(["-Wall", "-Werror", "-J"])
        .arg(&dir)
        .arg(manifest.join("fortran/commcost.f90"))
        .arg(manifest.join("tests/fortran/suite.f90"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .status()
        .expect("run gfortran");
    assert!(status.success(), "compiling tests/fortran/suite.f90 failed");
    let model_path = dir.join("mpich2-tcp.json");
    std::fs::write(
        &model_path,
        serde_json::to_string(&commcost::ModelSpec::from(presets::mpich2_tcp())).unwrap(),
    )
    .expect("model file");
    let out = Command::new(&exe)
        .arg(&model_path)
        .output()
        .expect("run suite");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "suite failed: {stdout}");

    let openib = presets::open_mpi_openib();
    let vector = Message::vector(16, 8, 1024).unwrap();
    let q = openib.quantities(&vector);
    let problem = |p: u64, s: u64| Problem::new(p, Message::contiguous(s));
    let ranked = rank_in(
        &openib,
        Family::Ompi,
        Collective::Allreduce,
        &problem(16, 1 << 20),
    )
    .expect("rank");
    let loggp = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9).unwrap();
    let logp = LogP::new(5e-6, 1e-6, 2e-6, 8).unwrap();
    let p2p = |m: &dyn CommModel, s: u64| m.p2p(&Message::contiguous(s));
    let table = |v: [f64; 3]| Table1D::new(vec![1.0, 1024.0, 65536.0], v.to_vec()).unwrap();
    let plogp = PLogP::new(
        3e-6,
        table([1e-6, 2e-6, 3e-5]),
        table([1.5e-6, 2.5e-6, 2.5e-5]),
        table([2e-6, 4e-6, 5e-5]),
        2,
    )
    .unwrap();
    let want: Vec<(&str, String)> = vec![
        ("VERSION", env!("CARGO_PKG_VERSION").to_string()),
        ("PRESET", "0".into()),
        ("P2P", bits(p2p(&openib, 1024))),
        ("P2P_VECTOR", bits(openib.p2p(&vector))),
        ("P2P_MANY_1", bits(p2p(&openib, 8))),
        ("P2P_MANY_2", bits(p2p(&openib, 65536))),
        ("P2P_MANY_3", bits(p2p(&openib, 1 << 20))),
        ("Q_P2P", bits(q.p2p)),
        ("Q_SEND_OVERHEAD", bits(q.send_overhead)),
        ("Q_RECV_OVERHEAD", bits(q.recv_overhead)),
        ("Q_SEND_INTERVAL", bits(q.send_interval)),
        ("Q_GAP", bits(q.gap)),
        ("RANK_COUNT", format!("0 {}", ranked.len())),
        ("RANK_FIRST", record(&ranked[0])),
        ("RANK_LAST", record(&ranked[ranked.len() - 1])),
        (
            "BEST",
            record(
                &best_in(
                    &openib,
                    Family::Ompi,
                    Collective::Bcast,
                    &problem(64, 65536),
                )
                .unwrap(),
            ),
        ),
        (
            "COST",
            record(
                &cost_in(
                    &openib,
                    Family::Ompi,
                    Collective::Bcast,
                    "chain:segment=8192,fanout=4",
                    &problem(64, 65536),
                )
                .unwrap(),
            ),
        ),
        ("TABLE_BUILD", "0".into()),
        // 2 MB on 64 processes: the grid cell (64, 1 MiB) of the table
        (
            "LOOKUP",
            record(
                &best_in(
                    &openib,
                    Family::Textbook,
                    Collective::Allreduce,
                    &problem(64, 1 << 20),
                )
                .unwrap(),
            ),
        ),
        ("LOGGP_NEW", bits(p2p(&loggp, 1024))),
        ("LOGP_NEW", bits(p2p(&logp, 20))),
        ("PRAM_NEW", bits(p2p(&Pram::new(3e-6).unwrap(), 1024))),
        (
            "MLINES_NEW",
            bits(p2p(&MlinesModel::new(1e-5, 1e-9, 2e-8, 64).unwrap(), 8000)),
        ),
        ("PLOGP_NEW", bits(p2p(&plogp, 4096))),
        ("RANGES_NEW_1", bits(p2p(&presets::open_mpi_openib(), 1024))),
        (
            "RANGES_NEW_2",
            bits(p2p(&presets::open_mpi_openib(), 65536)),
        ),
        ("FROM_JSON", bits(p2p(&loggp, 1024))),
        ("LOAD", bits(p2p(&presets::mpich2_tcp(), 1024))),
    ];
    let lines: Vec<&str> = stdout.lines().collect();
    for (key, value) in &want {
        let line = lines
            .iter()
            .find(|l| l.split(' ').next() == Some(key))
            .unwrap_or_else(|| panic!("no {key} line in:\n{stdout}"));
        assert_eq!(line.trim_end(), format!("{key} {value}"), "{key}");
    }
    // errors: the documented codes (1 NULL, 2 invalid argument, 3 I/O, 5 unknown name) and a
    // message naming the argument
    for (key, code, mentions) in [
        ("ERR_PRESET", 5, "open-mpi-openib"),
        ("ERR_LOAD", 3, ""),
        ("ERR_LOGGP", 2, "latency"),
        ("ERR_NULL", 1, ""),
        ("ERR_NEGATIVE", 2, "bytes"),
        ("ERR_RANGES", 2, "range"),
        ("ERR_PLOGP", 2, "gap"),
    ] {
        let line = lines
            .iter()
            .find(|l| l.split(' ').next() == Some(key))
            .unwrap_or_else(|| panic!("no {key} line"));
        let f: Vec<&str> = line.splitn(3, ' ').collect();
        assert_eq!(f[1], code.to_string(), "{line}");
        assert!(line.contains(mentions), "{line}");
    }
    assert_eq!(lines.last(), Some(&"END"));
}
