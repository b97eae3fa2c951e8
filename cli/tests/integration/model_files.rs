//! Model files of several named models (the `mpi_calibrate` example's map of names to models,
//! with or without a `preferred` mark) in the CLI's `--model`: `FILE` loads the preferred
//! model, `FILE#NAME` a named one; single-model files keep loading.

use std::path::PathBuf;
use std::process::Command;

fn commcost(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_commcost"))
        .args(args)
        .output()
        .expect("the binary runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        err,
    )
}

/// A one-range LogGP spec with `L` µs and no other cost: `p2p(1 byte) = L`.
fn loggp(latency_us: f64) -> serde_json::Value {
    serde_json::json!({
        "model": "loggp_protocols",
        "ranges": [{"start": 1, "end": null, "model": {
            "latency": latency_us * 1e-6, "overhead": 0.0, "gap": 0.0,
            "gap_per_byte": 0.0, "processors": 2}}]
    })
}

fn p2p_seconds(model: &str) -> f64 {
    let (code, out, err) = commcost(&["predict", "--model", model, "--bytes", "1", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    v["p2p_seconds"].as_f64().expect("p2p_seconds")
}

fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("model_files");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn named_and_preferred_models_load_in_every_command() {
    let dir = scratch();
    // mpi_calibrate's layout: a map of names to models, no mark
    let map = dir.join("mpi.json");
    std::fs::write(
        &map,
        serde_json::json!({"loggp_mpi": loggp(3.0), "plogp_mpi": loggp(5.0)}).to_string(),
    )
    .unwrap();
    let map = map.display().to_string();
    assert!(
        (p2p_seconds(&map) - 3e-6).abs() < 1e-15,
        "loggp_mpi by default"
    );
    assert!((p2p_seconds(&format!("{map}#plogp_mpi")) - 5e-6).abs() < 1e-15);
    // a mark picks the preferred one
    let marked = dir.join("marked.json");
    std::fs::write(
        &marked,
        serde_json::json!({"preferred": "b", "models": {"a": loggp(1.0), "b": loggp(2.0)}})
            .to_string(),
    )
    .unwrap();
    let marked = marked.display().to_string();
    assert!((p2p_seconds(&marked) - 2e-6).abs() < 1e-15);
    assert!((p2p_seconds(&format!("{marked}#a")) - 1e-6).abs() < 1e-15);
    // an unknown name: one line naming the file and the names it has
    let (code, _, err) = commcost(&["predict", "--model", &format!("{map}#nope"), "--bytes", "1"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("nope") && err.contains("loggp_mpi, plogp_mpi"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    // several models without a mark nor a known name: asks for FILE#NAME
    let unmarked = dir.join("unmarked.json");
    std::fs::write(
        &unmarked,
        serde_json::json!({"x": loggp(1.0), "y": loggp(2.0)}).to_string(),
    )
    .unwrap();
    let (code, _, err) = commcost(&[
        "predict",
        "--model",
        &unmarked.display().to_string(),
        "--bytes",
        "1",
    ]);
    assert_eq!(code, Some(1));
    assert!(err.contains("#NAME"), "{err}");
    // every command that takes --model loads it
    let svg = dir.join("p.svg").display().to_string();
    let rules = dir.join("rules.conf").display().to_string();
    let named = format!("{map}#plogp_mpi");
    for args in [
        vec![
            "select", "--family", "textbook", "bcast", "--model", &named, "--procs", "4",
            "--bytes", "1K",
        ],
        vec![
            "table", "--family", "textbook", "bcast", "--model", &named, "--procs", "4", "--bytes",
            "1..1K",
        ],
        vec![
            "simulate",
            "--family",
            "textbook",
            "bcast",
            "--algorithm",
            "binomial",
            "--model",
            &named,
            "--procs",
            "4",
            "--bytes",
            "8",
        ],
        vec![
            "export",
            "ompi-rules",
            "--model",
            &named,
            "--procs",
            "2..8",
            "-o",
            &rules,
        ],
        vec!["plot", "--model", &named, "--model", &map, "-o", &svg],
    ] {
        let (code, _, err) = commcost(&args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
    }
    // a single bare spec still loads; a selector on it is an error
    let bare = dir.join("bare.json");
    std::fs::write(&bare, loggp(4.0).to_string()).unwrap();
    let bare = bare.display().to_string();
    assert!((p2p_seconds(&bare) - 4e-6).abs() < 1e-15);
    let (code, _, err) = commcost(&["predict", "--model", &format!("{bare}#x"), "--bytes", "1"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("one model"), "{err}");
}

/// `calibrate osu --model plogp` writes pLogP, states what the benchmarks do not determine, and
/// reports the LogGP fit's error next to its own; `--model loggp` the reverse.
#[test]
fn calibrate_osu_writes_plogp_or_loggp_with_the_other_for_comparison() {
    let dir = scratch_named("plogp");
    let fixture = |f: &str| {
        format!(
            "{}/../tests/fixtures/osu/runs/{f}",
            env!("CARGO_MANIFEST_DIR")
        )
    };
    let (lat, bw) = (
        fixture("osu_latency_tcp_1.txt"),
        fixture("osu_bw_tcp_1.txt"),
    );
    for (which, tag, other) in [
        ("plogp", "plogp", "loggp_for_comparison"),
        ("loggp", "loggp_protocols", "plogp_for_comparison"),
    ] {
        let out = dir.join(format!("{which}.json")).display().to_string();
        let (code, text, err) =
            commcost(&["calibrate", "osu", &lat, &bw, "--model", which, "-o", &out]);
        assert_eq!(code, Some(0), "{err}");
        assert!(
            text.contains("pLogP (g(m) from the bandwidth series)"),
            "{text}"
        );
        let file: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(file["spec"]["model"], tag);
        let accuracy = &file["provenance"]["accuracy"];
        assert!(accuracy["latency_series"]["median_relative_error"].is_f64());
        assert!(accuracy[other]["latency_series"]["median_relative_error"].is_f64());
        if which == "plogp" {
            let role = file["provenance"]["parameters"]["send_overhead"]
                .as_str()
                .unwrap();
            assert!(role.contains("not determined"), "{role}");
        }
    }
}

fn scratch_named(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("model_files_{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A model file's `platform` is what `simulate`, `select --simulate` and `table --simulate`
/// run on: the same output as the plain model with the platform's flags; flags override it.
#[test]
fn a_model_files_platform_is_simulated_as_its_flags() {
    let dir = scratch().join("platform");
    std::fs::create_dir_all(&dir).unwrap();
    let provenance = serde_json::json!({"measured": "", "method": "", "date": "", "host": "",
        "parameters": {}, "accuracy": {}, "tool": ""});
    let file = |platform: Option<serde_json::Value>| {
        let mut v = serde_json::json!({"commcost_model_file": 1, "provenance": provenance,
            "spec": {"model": "loggp", "latency": 20e-6, "overhead": 5e-6, "gap": 10e-6,
                     "gap_per_byte": 40e-9}});
        if let Some(p) = platform {
            v["platform"] = p;
        }
        v.to_string()
    };
    let plain = dir.join("plain.json");
    std::fs::write(&plain, file(None)).unwrap();
    let shaped = dir.join("shaped.json");
    std::fs::write(
        &shaped,
        file(Some(serde_json::json!({"rendezvous_above": 4096,
            "rendezvous_completion": "at_handshake", "cores": 2, "link_burst": 9000}))),
    )
    .unwrap();
    let (plain, shaped) = (plain.display().to_string(), shaped.display().to_string());
    let flags = [
        "--rendezvous-above",
        "4096",
        "--handshake",
        "--cores",
        "2",
        "--link-burst",
        "9000",
    ];
    let run = |args: &[&str]| {
        let (code, out, err) = commcost(args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        out
    };
    let sim = [
        "simulate",
        "allgather",
        "--algorithm",
        "ring",
        "--procs",
        "8",
        "--bytes",
        "64K",
    ];
    let sim_json = [&sim[..], &["--json"]].concat();
    let from_file = run(&[&sim_json[..], &["--model", &shaped]].concat());
    let from_flags = run(&[&sim_json[..], &["--model", &plain], &flags[..]].concat());
    let bare = run(&[&sim_json[..], &["--model", &plain]].concat());
    let makespan = |out: &str| {
        let v: serde_json::Value = serde_json::from_str(out).unwrap();
        v["makespan_seconds"].as_f64().unwrap()
    };
    assert_eq!(makespan(&from_file), makespan(&from_flags));
    assert!(
        makespan(&from_file) != makespan(&bare),
        "the platform changes the simulation"
    );
    // a flag on top of the file wins
    let one_core = run(&[&sim_json[..], &["--model", &shaped, "--cores", "1"]].concat());
    let one_core_flags = run(&[
        &sim_json[..],
        &[
            "--model",
            &plain,
            "--rendezvous-above",
            "4096",
            "--handshake",
        ],
        &["--cores", "1", "--link-burst", "9000"],
    ]
    .concat());
    assert_eq!(makespan(&one_core), makespan(&one_core_flags));
    // select and table --simulate: the same rankings from the file as from the flags
    for command in [
        vec![
            "select",
            "allreduce",
            "--procs",
            "8",
            "--bytes",
            "64K",
            "--simulate",
        ],
        vec![
            "table",
            "allreduce",
            "--procs",
            "4,8",
            "--bytes",
            "1K..64K",
            "--simulate",
        ],
    ] {
        let from_file = run(&[&command[..], &["--model", &shaped]].concat());
        let from_flags = run(&[&command[..], &["--model", &plain], &flags[..]].concat());
        let strip = |out: &str| out.replace("plain", "shaped");
        assert_eq!(strip(&from_flags), from_file, "{command:?}");
    }
}
