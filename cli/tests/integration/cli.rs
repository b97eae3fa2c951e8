//! Every `commcost` subcommand, run as the built binary, checked against published numbers,
//! hand calculations and the measured benchmark output under `tests/fixtures/`.

use std::process::{Command, Output};

use approx::assert_relative_eq;

use crate::support::{fixture, scratch, write};

fn commcost(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_commcost"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn ok(args: &[&str]) -> String {
    let out = commcost(args);
    assert!(
        out.status.success(),
        "commcost {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// A user mistake: exit code 1, one line on stderr naming what is wrong, no panic.
fn user_error(args: &[&str]) -> String {
    let out = commcost(args);
    assert_eq!(out.status.code(), Some(1), "commcost {args:?} should fail");
    let err = String::from_utf8(out.stderr).expect("UTF-8");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("valid JSON")
}

/// One entry of `select --json`'s ranking: algorithm, Open MPI ID and segment size (0 for
/// another family), seconds.
#[derive(Debug)]
struct Ranked {
    algorithm: String,
    id: u64,
    segsize: u64,
    seconds: f64,
}

/// `select --json`'s ranking, cheapest first.
fn ranked(v: &serde_json::Value) -> Vec<Ranked> {
    v["ranking"]
        .as_array()
        .expect("a ranking")
        .iter()
        .map(|r| Ranked {
            algorithm: r["algorithm"].as_str().expect("an algorithm").to_string(),
            id: r["ompi"]["id"].as_u64().unwrap_or(0),
            segsize: r["ompi"]["segsize"].as_u64().unwrap_or(0),
            seconds: r["seconds"].as_f64().expect("seconds"),
        })
        .collect()
}

/// L = 5 µs, o = 1 µs, g = 2 µs, G = 0.3 ns/B: the hand calculations below use these.
const LOGGP: &str = r#"{"model": "loggp", "latency": 5e-6, "overhead": 1e-6, "gap": 2e-6,
    "gap_per_byte": 0.3e-9, "processors": 64}"#;

#[test]
fn presets_lists_every_embedded_set() {
    let out = ok(&["presets"]);
    for name in [
        "mpich2-tcp",
        "nmpi-sci",
        "open-mpi-openib",
        "open-mpi-gm",
        "titan-log3p",
    ] {
        assert!(out.contains(name), "{name} missing from\n{out}");
    }
    assert!(out.contains("IPDPS 2007"));
    let list = json(&ok(&["presets", "--json"]));
    assert_eq!(list.as_array().map(Vec::len), Some(5));
    assert_eq!(list[2]["spec"]["model"], "loggp_protocols");
}

#[test]
fn predict_reproduces_published_numbers() {
    // Hoefler et al. 2007, Table 2, Open MPI/openib, 64 KiB in the rendezvous range: the
    // measured 1-byte time L_e2e = 5.96 µs plus (s - 1) G = 65535 * 0.00103 µs = 73.46105 µs
    // (with 2o(1) = 9.44 > L_e2e the model holds L = 0, o = L_e2e / 2 = 2.98)
    let out = ok(&["predict", "--preset", "open-mpi-openib", "--bytes", "64K"]);
    assert!(out.contains("73.461 µs"), "{out}");
    let j = json(&ok(&[
        "predict",
        "--preset",
        "open-mpi-openib",
        "--bytes",
        "65536",
        "--json",
    ]));
    assert_relative_eq!(
        j["p2p_seconds"].as_f64().unwrap(),
        73.46105e-6,
        max_relative = 1e-12
    );
    // Cameron, Ge & Sun 2007 §4.1: 16 KiB of doubles at 1 KiB stride on Titan take 580 µs
    let j = json(&ok(&[
        "predict",
        "--preset",
        "titan-log3p",
        "--count",
        "2048",
        "--block",
        "8",
        "--stride",
        "1K",
        "--json",
    ]));
    assert_relative_eq!(
        j["p2p_seconds"].as_f64().unwrap(),
        580e-6,
        max_relative = 1e-12
    );
}

#[test]
fn predict_user_errors_are_one_line() {
    let dir = scratch("predict_errors");
    assert!(
        user_error(&["predict", "--preset", "nope", "--bytes", "8"])
            .contains("unknown preset `nope`")
    );
    let negative = write(&dir, "neg.json", &LOGGP.replace("5e-6", "-5e-6"));
    let err = user_error(&["predict", "--model", &negative, "--bytes", "8"]);
    assert!(err.contains("neg.json") && err.contains("latency"), "{err}");
    let unknown = write(&dir, "unknown.json", &LOGGP.replace("\"gap\"", "\"gapp\""));
    let err = user_error(&["predict", "--model", &unknown, "--bytes", "8"]);
    assert!(
        err.contains("unknown.json") && err.contains("gapp"),
        "{err}"
    );
    let err = user_error(&["predict", "--model", "/nonexistent/m.json", "--bytes", "8"]);
    assert!(err.contains("/nonexistent/m.json"), "{err}");
    user_error(&["predict", "--preset", "mpich2-tcp"]);
    // a stride shorter than the block
    assert!(
        user_error(&[
            "predict",
            "--preset",
            "mpich2-tcp",
            "--count",
            "4",
            "--block",
            "16",
            "--stride",
            "8"
        ])
        .contains("--stride")
    );
    // clap's own usage errors exit with 2 and no panic
    let out = commcost(&["predict", "--preset", "mpich2-tcp", "--bytes", "1X"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn predict_warns_about_microseconds_written_as_seconds() {
    let dir = scratch("units");
    // Table 2's MPICH2/TCP row typed in µs
    let typo = write(
        &dir,
        "typo.json",
        r#"{"model": "loggp", "latency": 45.74, "overhead": 3.46, "gap": 0.915,
            "gap_per_byte": 0.00849, "processors": 2}"#,
    );
    let out = commcost(&["predict", "--model", &typo, "--bytes", "1"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning") && err.contains("microseconds written as seconds"),
        "{err}"
    );
    let fine = write(&dir, "fine.json", LOGGP);
    let out = commcost(&["predict", "--model", &fine, "--bytes", "1"]);
    assert!(out.stderr.is_empty());
}

#[test]
fn select_ranks_broadcasts_as_calculated_by_hand() {
    let dir = scratch("select");
    let model = write(&dir, "loggp.json", LOGGP);
    let j = json(&ok(&[
        "select", "--family", "textbook", "bcast", "--model", &model, "--procs", "8", "--bytes",
        "8", "--json",
    ]));
    let ranking = j["ranking"].as_array().unwrap();
    // P = 8, s = 8: p2p = 2o + L + 7G = 7.0021 µs, interval = g + 7G = 2.0021 µs
    // linear   = p2p + (P - 2) interval = 19.0147 µs
    // binomial = 3 p2p + 2 g            = 25.0063 µs
    assert_eq!(ranking[0]["algorithm"], "linear");
    assert_relative_eq!(
        ranking[0]["seconds"].as_f64().unwrap(),
        19.0147e-6,
        max_relative = 1e-9
    );
    assert_eq!(ranking[1]["algorithm"], "binomial");
    assert_relative_eq!(
        ranking[1]["seconds"].as_f64().unwrap(),
        25.0063e-6,
        max_relative = 1e-9
    );
    assert_relative_eq!(
        ranking[1]["ratio_to_best"].as_f64().unwrap(),
        25.0063 / 19.0147,
        max_relative = 1e-9
    );
    assert_eq!(ranking.len(), 4);
    // the names are the algorithms' own, read back by their FromStr
    for row in ranking {
        let name = row["algorithm"].as_str().unwrap();
        assert!(
            name.parse::<commcost::collectives::Bcast>().is_ok(),
            "{name}"
        );
    }
    let text = ok(&[
        "select",
        "--family",
        "textbook",
        "allreduce",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "64",
        "--bytes",
        "1M",
    ]);
    assert!(
        text.contains("rabenseifner") && text.contains("1.000"),
        "{text}"
    );
    assert!(
        user_error(&[
            "select", "--family", "textbook", "bcast", "--model", &model, "--procs", "0",
            "--bytes", "8"
        ])
        .contains("--procs")
    );
}

#[test]
fn table_switch_point_is_exact() {
    let dir = scratch("table");
    let model = write(&dir, "loggp.json", LOGGP);
    let csv = ok(&[
        "table",
        "--family",
        "textbook",
        "broadcast",
        "--model",
        &model,
        "--procs",
        "4",
        "--bytes",
        "1K..32K",
        "--csv",
    ]);
    // P = 4, x = (s - 1) G: linear = 11 µs + 3x, binomial = 16 µs + 2x; binomial is strictly
    // faster once x > 5 µs, i.e. s - 1 > 16666.7: from 16668 bytes on
    assert_eq!(
        csv.lines().collect::<Vec<_>>(),
        [
            "processes,first_bytes,last_bytes,algorithm",
            "4,1024,16667,\"linear\"",
            "4,16668,32768,\"binomial\"",
        ]
    );
    let text = ok(&[
        "table",
        "--family",
        "textbook",
        "allreduce",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "4,64",
        "--bytes",
        "8..4M",
    ]);
    assert!(text.contains("P = 4") && text.contains("P = 64") && text.contains("rabenseifner"));
    user_error(&[
        "table",
        "--family",
        "textbook",
        "allreduce",
        "--model",
        &model,
        "--procs",
        "0,4",
    ]);
}

#[test]
fn calibrate_osu_writes_a_model_with_provenance() {
    let dir = scratch("osu");
    let out_file = dir.join("mine.json").display().to_string();
    let text = ok(&[
        "calibrate",
        "osu",
        &fixture("osu/osu_latency.txt"),
        &fixture("osu/osu_bw.txt"),
        &fixture("osu/osu_allreduce_full.txt"),
        &fixture("osu/osu_bcast.txt"),
        "-o",
        &out_file,
    ]);
    assert!(text.contains("accuracy on latency series"), "{text}");
    let file = json(&std::fs::read_to_string(&out_file).unwrap());
    let p = &file["provenance"];
    assert!(
        p["measured"]
            .as_str()
            .unwrap()
            .contains("OSU MPI Latency Test v5.3")
    );
    assert!(p["date"].as_str().unwrap().starts_with("20"));
    assert!(!p["host"].as_str().unwrap().is_empty());
    assert!(
        p["parameters"]["latency"]
            .as_str()
            .unwrap()
            .starts_with("L:")
    );
    assert!(
        p["accuracy"]["latency_series"]["median_relative_error"]
            .as_f64()
            .unwrap()
            < 0.1
    );
    // the measured collectives are reported against the model's best algorithm
    for key in [
        "allreduce_2_processes_best_algorithm",
        "broadcast_2_processes_best_algorithm",
    ] {
        let e = &p["accuracy"][key]["median_relative_error"];
        assert!(e.as_f64().unwrap().is_finite(), "{key}");
    }
    assert_eq!(file["spec"]["model"], "loggp_protocols");
    // Open MPI 4.1's shared-memory eager limit (4096 bytes with the header): the second
    // protocol starts after the 2 KiB measurement
    let ranges = file["spec"]["ranges"].as_array().unwrap();
    assert!(ranges.iter().any(|r| r["start"] == 2049), "{ranges:?}");
    // the model file is usable, and predicts the measured 1-byte latency (0.15 µs)
    let j = json(&ok(&[
        "predict", "--model", &out_file, "--bytes", "1", "--json",
    ]));
    assert_relative_eq!(
        j["p2p_seconds"].as_f64().unwrap(),
        0.15e-6,
        max_relative = 0.2
    );
    // only bandwidth output: no latency series
    let err = user_error(&[
        "calibrate",
        "osu",
        &fixture("osu/osu_bw.txt"),
        "-o",
        &out_file,
    ]);
    assert!(err.contains("osu_latency"), "{err}");
    // a broken file names its line
    let bad = write(
        &dir,
        "bad.txt",
        "# OSU MPI Latency Test v5.3\n# Size          Latency (us)\n1 0.1\n2 x\n",
    );
    let err = user_error(&["calibrate", "osu", &bad, "-o", &out_file]);
    assert!(err.contains("bad.txt") && err.contains("line 4"), "{err}");
}

#[test]
fn calibrate_imb_and_netgauge() {
    let dir = scratch("imb_netgauge");
    let out_file = dir.join("imb.json").display().to_string();
    ok(&[
        "calibrate",
        "imb",
        &fixture("imb/imb_mpi1_2ranks.txt"),
        "-o",
        &out_file,
    ]);
    let file = json(&std::fs::read_to_string(&out_file).unwrap());
    assert_eq!(file["provenance"]["measured"], "IMB PingPong");
    let accuracy = &file["provenance"]["accuracy"];
    assert!(accuracy["allreduce_2_processes_best_algorithm"].is_object());
    assert!(accuracy["bcast_2_processes_best_algorithm"].is_object());
    // Netgauge output made from LogGP's PRTT formula (Hoefler, Lichei & Rehm 2007, eq. (1),
    // (5)): PRTT(n, d, s) = 2 (L + 2o + (s - 1) G) + (n - 1) max(o + d, g + (s - 1) G),
    // L = 5, o = 1.5, g = 3 µs, G = 0.002 µs/B, n = 10, d = PRTT(1, 0, s)
    let (l, o, g, big_g, n) = (5.0, 1.5, 3.0, 0.002, 10.0);
    let mut text =
        String::from("# size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu\n");
    for s in std::iter::once(1).chain((1..=32).map(|k| k * 1024)) {
        let x = (s - 1) as f64 * big_g;
        let prtt = |n: f64, d: f64| 2.0 * (l + 2.0 * o + x) + (n - 1.0) * f64::max(o + d, g + x);
        let single = prtt(1.0, 0.0);
        text += &format!(
            "{s} 10 {single} {} {} {l} {o} {o} -nan -nan -nan\n",
            prtt(n, 0.0),
            prtt(n, single)
        );
    }
    let ng = write(&dir, "ng.out", &text);
    let out_file = dir.join("ng.json").display().to_string();
    ok(&["calibrate", "netgauge", &ng, "-o", &out_file]);
    let file = json(&std::fs::read_to_string(&out_file).unwrap());
    let m = &file["spec"]["ranges"][0]["model"];
    assert_relative_eq!(m["latency"].as_f64().unwrap(), 5e-6, max_relative = 1e-6);
    assert_relative_eq!(m["overhead"].as_f64().unwrap(), 1.5e-6, max_relative = 1e-6);
    assert_relative_eq!(
        m["gap_per_byte"].as_f64().unwrap(),
        0.002e-6,
        max_relative = 1e-6
    );
    assert!(
        user_error(&[
            "calibrate",
            "netgauge",
            "/nonexistent/ng.out",
            "-o",
            &out_file
        ])
        .contains("ng.out")
    );
}

#[test]
fn calibrate_on_this_machine_host_and_tcp() {
    let dir = scratch("machine");
    for what in ["host", "tcp"] {
        let out_file = dir.join(format!("{what}.json")).display().to_string();
        let text = ok(&["calibrate", what, "--quick", "-o", &out_file]);
        assert!(text.contains("accuracy on held out"), "{text}");
        let file = json(&std::fs::read_to_string(&out_file).unwrap());
        assert!(
            file["provenance"]["method"]
                .as_str()
                .unwrap()
                .contains("IPDPS")
        );
        ok(&["predict", "--model", &out_file, "--bytes", "4K"]);
    }
    // without the `mpi` feature the message says how to get it (with it, the command needs
    // mpirun: cli/tests/calibrate_mpi.rs)
    if cfg!(not(feature = "mpi")) {
        assert!(user_error(&["calibrate", "mpi"]).contains("--features mpi"));
    }
    assert!(user_error(&["calibrate", "host"]).contains("-o FILE"));
}

/// The elements of an SVG that the plot draws: model curves (2 px polylines), switch-point
/// markers (0.4-opacity polylines) and measured points (circles). Panics unless the file is
/// well-formed XML with an `<svg>` root.
fn svg_parts(path: &str) -> (usize, usize, usize) {
    let text = std::fs::read_to_string(path).expect("plot written");
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let polylines = || doc.descendants().filter(|n| n.has_tag_name("polyline"));
    let curves = polylines()
        .filter(|n| n.attribute("stroke-width") == Some("2"))
        .count();
    let switches = polylines()
        .filter(|n| n.attribute("opacity") == Some("0.4"))
        .count();
    let points = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    (curves, switches, points)
}

#[test]
fn plot_is_a_valid_svg_with_curves_switches_and_measurements() {
    let dir = scratch("plot");
    // two presets: one curve each; openib and gm have one protocol switch each in range
    let two = dir.join("two.svg").display().to_string();
    ok(&[
        "plot",
        "--preset",
        "open-mpi-openib",
        "--preset",
        "open-mpi-gm",
        "-o",
        &two,
    ]);
    assert_eq!(svg_parts(&two), (2, 2, 0));
    // the OSU fit with the 23 measured latencies of at least 1 byte as points
    let model = dir.join("mine.json").display().to_string();
    ok(&[
        "calibrate",
        "osu",
        &fixture("osu/osu_latency.txt"),
        &fixture("osu/osu_bw.txt"),
        "-o",
        &model,
    ]);
    let fit = dir.join("fit.svg").display().to_string();
    let text = ok(&[
        "plot",
        "--model",
        &model,
        "--measured",
        &fixture("osu/osu_latency.txt"),
        "-o",
        &fit,
    ]);
    assert!(text.contains("1 curves, 1 measured series"), "{text}");
    let (curves, switches, points) = svg_parts(&fit);
    // the 23 measured latencies, and their 23 model / measured ratios in the residual panel
    assert_eq!((curves, points), (1, 46));
    assert!(switches >= 1);
    // a collective: one curve per allreduce algorithm, IMB's measured allreduce as points
    let ar = dir.join("allreduce.svg").display().to_string();
    ok(&[
        "plot",
        "--family",
        "textbook",
        "--model",
        &model,
        "--collective",
        "allreduce",
        "--procs",
        "2",
        "--bytes",
        "4..1M",
        "--measured",
        &fixture("imb/imb_mpi1_2ranks.txt"),
        "-o",
        &ar,
    ]);
    let (curves, _, points) = svg_parts(&ar);
    assert_eq!(curves, 3); // recursive doubling, ring, Rabenseifner
    assert_eq!(points, 19); // IMB Allreduce rows of 4 bytes .. 1 MiB
    // measurements without a matching series
    let err = user_error(&[
        "plot",
        "--preset",
        "mpich2-tcp",
        "--measured",
        &fixture("osu/osu_bw.txt"),
        "-o",
        &ar,
    ]);
    assert!(err.contains("osu_bw.txt"), "{err}");
}

#[test]
fn export_writes_tuning_files_that_read_back() {
    let dir = scratch("export");
    let rules_file = dir.join("rules.conf").display().to_string();
    let text = ok(&[
        "export",
        "ompi-rules",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "4,64",
        "--bytes",
        "1..1M",
        "--collectives",
        "bcast,allreduce",
        "-o",
        &rules_file,
    ]);
    assert!(text.contains("2 collectives"), "{text}");
    let rules: commcost::export::OmpiRules = std::fs::read_to_string(&rules_file)
        .unwrap()
        .parse()
        .expect("Open MPI rules file");
    assert_eq!(rules.collectives.len(), 2);
    // Open MPI rejects a block whose first rule is not at message size 0
    assert!(
        rules
            .collectives
            .iter()
            .all(|c| c.blocks.iter().all(|b| b.rules[0].size == 0))
    );
    // the same choice as `table`: Rabenseifner (Open MPI ID 6) for 1 MiB allreduce on 64
    let rule = rules
        .lookup(commcost::collectives::Collective::Allreduce, 64, 1 << 20)
        .unwrap();
    assert_eq!(rule.algorithm, 6);
    // on 4 processes several broadcast algorithms send an 8-byte message along the same
    // tree (the library's own test checks where ties are): the default `--on-tie defer`
    // leaves those cells to Open MPI (algorithm 0), `--on-tie first` names one
    let bcast_small = rules
        .lookup(commcost::collectives::Collective::Bcast, 4, 8)
        .unwrap();
    assert_eq!(bcast_small.algorithm, 0);
    let first_file = dir.join("first.conf").display().to_string();
    ok(&[
        "export",
        "ompi-rules",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "4,64",
        "--collectives",
        "bcast",
        "--on-tie",
        "first",
        "-o",
        &first_file,
    ]);
    let first: commcost::export::OmpiRules = std::fs::read_to_string(&first_file)
        .unwrap()
        .parse()
        .unwrap();
    assert_ne!(
        first
            .lookup(commcost::collectives::Collective::Bcast, 4, 8)
            .unwrap()
            .algorithm,
        0
    );
    let table = ok(&[
        "table",
        "--family",
        "textbook",
        "allreduce",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "64",
        "--bytes",
        "1M",
    ]);
    assert!(table.contains("rabenseifner"), "{table}");
    // MPICH: well-formed JSON with the collective's selection tree
    let mpich = ok(&[
        "export",
        "mpich-json",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "2..8",
        "--collectives",
        "allreduce",
    ]);
    let tree = json(&mpich);
    assert!(tree["collective=allreduce"]["comm_type=intra"].is_object());
    assert!(
        user_error(&[
            "export",
            "mpich-json",
            "--preset",
            "mpich2-tcp",
            "--procs",
            "4",
            "--collectives",
            "nope"
        ])
        .contains("nope")
    );
}

/// `commcost table ... | head`: a reader that stops early is not an error and not a panic.
#[test]
fn a_closed_output_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    // 4000 process counts: about 128 KB of CSV, twice what a pipe buffers, so the tool is still
    // writing when the reader leaves
    let procs: Vec<String> = (2..4002).map(|p| p.to_string()).collect();
    let procs = procs.join(",");
    let mut child = Command::new(env!("CARGO_BIN_EXE_commcost"))
        .args([
            "table",
            "bcast",
            "--preset",
            "open-mpi-openib",
            "--procs",
            &procs,
            "--bytes",
            "1..1M",
            "--csv",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first.trim(), "processes,first_bytes,last_bytes,algorithm");
    // the reader is gone now
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

/// One message of 1001 bytes between two ranks, as LogGOPSim's GOAL text.
const GOAL_ONE_MESSAGE: &str = "num_ranks 2
rank 0 {
  l1: send 1001b to 1 tag 0
}
rank 1 {
  l1: recv 1001b from 0 tag 0
}
";

/// The simulation's time in seconds of a JSON field.
fn seconds(j: &serde_json::Value, path: &[&str]) -> f64 {
    let mut v = j;
    for key in path {
        v = &v[*key];
    }
    v.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number in {j}"))
}

#[test]
fn simulate_goal_one_message_as_calculated_by_hand() {
    let dir = scratch("simulate_goal");
    let goal = write(&dir, "one.goal", GOAL_ONE_MESSAGE);
    // Hoefler, Lichei & Rehm, IPDPS 2007, Table 2, MPICH2/TCP: L_e2e = 45.74 µs, o = 3.46 µs,
    // G = 0.00849 µs/B. 1001 bytes: T = L_e2e + (s - 1) G = 45.74 + 1000 * 0.00849 = 54.23 µs;
    // the eager send completes after its overhead o = 3.46 µs, the receive at T.
    let (t, o) = (54.23e-6, 3.46e-6);
    let j = json(&ok(&[
        "simulate",
        "--goal",
        &goal,
        "--preset",
        "mpich2-tcp",
        "--json",
    ]));
    assert_relative_eq!(seconds(&j, &["makespan_seconds"]), t, max_relative = 1e-9);
    assert_relative_eq!(
        seconds(&j, &["rank_finish", "min_seconds"]),
        o,
        max_relative = 1e-9
    );
    assert_relative_eq!(
        seconds(&j, &["rank_finish", "median_seconds"]),
        (o + t) / 2.0,
        max_relative = 1e-9
    );
    assert_eq!(j["rank_finish"]["last_rank"], 1);
    assert_eq!(j["ranks"], 2);
    assert_eq!(j["operations"], 2);
    assert!(j["closed_form"].is_null());
    // the path: the send (o), its message, the receive (posted at 0, done at T)
    assert_eq!(j["critical_path"]["messages"], 1);
    assert_eq!(j["critical_path"]["ranks_visited"], 2);
    assert_relative_eq!(
        seconds(&j, &["critical_path", "send_seconds"]),
        o,
        max_relative = 1e-9
    );
    assert_relative_eq!(
        seconds(&j, &["critical_path", "recv_seconds"]),
        t,
        max_relative = 1e-9
    );
    // rendezvous above 1000 bytes: the send completes with the receive, both ranks at T
    let j = json(&ok(&[
        "simulate",
        "--goal",
        &goal,
        "--preset",
        "mpich2-tcp",
        "--rendezvous-above",
        "1000",
        "--json",
    ]));
    assert_relative_eq!(
        seconds(&j, &["rank_finish", "min_seconds"]),
        t,
        max_relative = 1e-9
    );
    assert_eq!(j["rank_finish"]["last_rank"], 0);
    assert_eq!(j["options"]["rendezvous_above_bytes"], 1000);
    // seeded noise: only ever adds time, and the same seed gives the same run
    let noisy = [
        "simulate",
        "--goal",
        &goal,
        "--preset",
        "mpich2-tcp",
        "--noise",
        "42:1us",
        "--json",
    ];
    let first = ok(&noisy);
    assert_eq!(first, ok(&noisy));
    let j = json(&first);
    assert!(seconds(&j, &["makespan_seconds"]) > t);
    assert_eq!(j["options"]["noise"]["seed"], 42);
    assert_relative_eq!(
        seconds(&j, &["options", "noise", "mean_seconds"]),
        1e-6,
        max_relative = 1e-12
    );
    // the text report
    let text = ok(&["simulate", "--goal", &goal, "--preset", "mpich2-tcp"]);
    assert!(
        text.contains("54.230 µs") && text.contains("rank 1 is last"),
        "{text}"
    );
}

#[test]
fn simulate_binomial_broadcast_is_the_closed_form_minus_the_tree_gaps() {
    use commcost::collectives::{Algorithm, Bcast, Problem};
    use commcost::sim::{SimOptions, ToSchedule, simulate};
    use commcost::{CommModel, Message};
    let args = [
        "simulate",
        "--family",
        "textbook",
        "bcast",
        "--algorithm",
        "binomial",
        "--preset",
        "mpich2-tcp",
        "--procs",
        "8",
        "--bytes",
        "8",
        "--json",
    ];
    let j = json(&ok(&args));
    // MPICH2/TCP (Hoefler, Lichei & Rehm, IPDPS 2007, Table 2): T(8) = 45.74 + 7 * 0.00849 =
    // 45.79943 µs, g = 0.915 µs. The tree 0 -> 4 -> 6 -> 7 is three messages back to back:
    // 3 T = 137.39829 µs; the closed form (Alexandrov et al., LogGP, SPAA 1995) adds
    // (h - 1) g = 2 g between the rounds: 139.22829 µs.
    let (sim, closed) = (137.39829e-6, 139.22829e-6);
    assert_relative_eq!(seconds(&j, &["makespan_seconds"]), sim, max_relative = 1e-9);
    assert_relative_eq!(
        seconds(&j, &["closed_form", "seconds"]),
        closed,
        max_relative = 1e-9
    );
    assert_relative_eq!(
        seconds(&j, &["closed_form", "makespan_ratio"]),
        sim / closed,
        max_relative = 1e-9
    );
    assert_eq!(j["closed_form"]["exact"], false);
    assert_eq!(j["rank_finish"]["last_rank"], 7);
    assert_eq!(j["critical_path"]["messages"], 3);
    assert_eq!(j["critical_path"]["ranks_visited"], 4);
    assert_eq!(j["operations"], 14);
    // the library called directly, not through the tool
    let model = commcost::presets::mpich2_tcp();
    let problem = Problem::new(8, Message::contiguous(8));
    let schedule = Bcast::Binomial.schedule(&problem).unwrap();
    let run = simulate(&schedule, &model, &SimOptions::default()).unwrap();
    let g = model.gap(&Message::contiguous(8));
    assert_relative_eq!(run.makespan, sim, max_relative = 1e-12);
    assert_relative_eq!(
        Bcast::Binomial.cost(&model, &problem).unwrap() - 2.0 * g,
        run.makespan,
        max_relative = 1e-12
    );
    assert_eq!(j["events"], run.events);
    // an Open MPI algorithm by its parameterised name: the chain with fan-out 1 is a
    // pipeline; 8 KiB in 8 segments of 1 KiB on 4 processes
    let j = json(&ok(&[
        "simulate",
        "bcast",
        "--family",
        "ompi",
        "--algorithm",
        "pipeline:segment=1024",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "4",
        "--bytes",
        "8K",
        "--json",
    ]));
    let a: commcost::collectives::ompi::Bcast = "pipeline:segment=1024".parse().unwrap();
    let model = commcost::presets::open_mpi_openib();
    let problem = Problem::new(4, Message::contiguous(8192));
    let run = simulate(
        &a.schedule(&problem).unwrap(),
        &model,
        &SimOptions::default(),
    )
    .unwrap();
    assert_relative_eq!(
        seconds(&j, &["makespan_seconds"]),
        run.makespan,
        max_relative = 1e-12
    );
    assert_eq!(j["schedule"]["algorithm"], a.to_string());
    assert_eq!(j["schedule"]["family"], "ompi");
}

#[test]
fn simulate_writes_a_timeline_and_a_gantt_chart() {
    let dir = scratch("simulate_files");
    let csv = dir.join("bcast.csv").display().to_string();
    let svg = dir.join("bcast.svg").display().to_string();
    let text = ok(&[
        "simulate",
        "--family",
        "textbook",
        "bcast",
        "--algorithm",
        "binomial",
        "--preset",
        "mpich2-tcp",
        "--procs",
        "8",
        "--bytes",
        "8",
        "--timeline",
        &csv,
        "--svg",
        &svg,
    ]);
    assert!(text.contains("137.398 µs"), "{text}");
    // a header and one line per operation: 7 sends and 7 receives
    let timeline = std::fs::read_to_string(&csv).expect("timeline written");
    let lines: Vec<&str> = timeline.lines().collect();
    assert_eq!(lines[0], "rank,op,kind,peer,bytes,start,end");
    assert_eq!(lines.len(), 1 + 14);
    let mut latest = 0.0f64;
    let mut kinds = (0, 0);
    for (i, line) in lines[1..].iter().enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 7, "{line}");
        assert_eq!(f[1], i.to_string());
        assert_eq!(f[4], "8");
        match f[2] {
            "send" => kinds.0 += 1,
            "recv" => kinds.1 += 1,
            other => panic!("kind {other}"),
        }
        let (start, end): (f64, f64) = (f[5].parse().unwrap(), f[6].parse().unwrap());
        assert!(0.0 <= start && start <= end, "{line}");
        latest = latest.max(end);
    }
    assert_eq!(kinds, (7, 7));
    assert_relative_eq!(latest, 137.39829e-6, max_relative = 1e-9);
    // the chart: well-formed SVG, a bar per operation (and one in the legend), the critical
    // path's 6 steps (send, then receive, on ranks 0, 4, 6, 7) outlined, and in the legend
    let chart = std::fs::read_to_string(&svg).expect("chart written");
    let doc = roxmltree::Document::parse(&chart).expect("well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let rects = |attr: &str, value: &str| {
        doc.descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute(attr) == Some(value))
            .count()
    };
    assert_eq!(rects("fill", "#1F77B4"), 7 + 1);
    assert_eq!(rects("fill", "#2CA02C"), 7 + 1);
    assert_eq!(rects("stroke", "#D62728"), 6 + 1);
    assert!(chart.contains("rank") && chart.contains("critical path"));
    // above 512 ranks the chart draws the first 512 and says so
    let big = dir.join("big.svg").display().to_string();
    let text = ok(&[
        "simulate",
        "--family",
        "textbook",
        "barrier",
        "--algorithm",
        "dissemination",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "600",
        "--bytes",
        "0",
        "--svg",
        &big,
    ]);
    assert!(text.contains("the first 512 of 600 ranks"), "{text}");
    roxmltree::Document::parse(&std::fs::read_to_string(&big).unwrap()).expect("well-formed");
}

#[test]
fn simulate_user_errors_are_one_line() {
    let dir = scratch("simulate_errors");
    let base = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["simulate", "bcast", "--preset", "mpich2-tcp"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let run = |extra: &[&str]| {
        let v = base(extra);
        let args: Vec<&str> = v.iter().map(String::as_str).collect();
        user_error(&args)
    };
    let err = run(&[
        "--family",
        "textbook",
        "--algorithm",
        "fastest",
        "--procs",
        "8",
        "--bytes",
        "8",
    ]);
    assert!(
        err.contains("--algorithm") && err.contains("fastest") && err.contains("binomial"),
        "{err}"
    );
    // in Open MPI's family (the default) the valid names are Open MPI's
    let err = run(&["--algorithm", "fastest", "--procs", "8", "--bytes", "8"]);
    assert!(err.contains("split-binary-tree"), "{err}");
    let err = run(&["--algorithm", "binomial", "--procs", "0", "--bytes", "8"]);
    assert!(err.contains("--procs"), "{err}");
    let err = run(&["--algorithm", "binomial", "--bytes", "8"]);
    assert!(err.contains("--procs"), "{err}");
    let err = run(&[
        "--algorithm",
        "binomial",
        "--procs",
        "8",
        "--bytes",
        "8",
        "--noise",
        "42",
    ]);
    assert!(
        err.contains("--noise") && err.contains("SEED:MEAN"),
        "{err}"
    );
    let err = run(&[
        "--algorithm",
        "binomial",
        "--procs",
        "8",
        "--bytes",
        "8",
        "--noise",
        "42:-1us",
    ]);
    assert!(err.contains("--noise"), "{err}");
    let err = run(&[
        "--algorithm",
        "binomial",
        "--procs",
        "8",
        "--bytes",
        "8",
        "--operator",
        "1us",
    ]);
    assert!(err.contains("--operator"), "{err}");
    // beyond the builders' limit of 2^27 operations: the library's typed error, at once
    let err = user_error(&[
        "simulate",
        "--family",
        "textbook",
        "alltoall",
        "--algorithm",
        "pairwise-exchange",
        "--preset",
        "mpich2-tcp",
        "--procs",
        "100000",
        "--bytes",
        "1",
    ]);
    assert!(err.contains("exceeds the limit"), "{err}");
    let err = user_error(&[
        "simulate",
        "--family",
        "textbook",
        "reduce-scatter",
        "--algorithm",
        "ring",
        "--preset",
        "mpich2-tcp",
        "--procs",
        "4",
        "--bytes",
        "8",
    ]);
    assert!(
        err.contains("reduce-scatter") && err.contains("--family"),
        "{err}"
    );
    // GOAL: the line of a malformed statement; a collective and a GOAL file together
    let bad = write(
        &dir,
        "bad.goal",
        &GOAL_ONE_MESSAGE.replace("send 1001b to 1", "send 1001b too 1"),
    );
    let err = user_error(&["simulate", "--goal", &bad, "--preset", "mpich2-tcp"]);
    assert!(err.contains("bad.goal") && err.contains("line 3"), "{err}");
    let good = write(&dir, "one.goal", GOAL_ONE_MESSAGE);
    let err = user_error(&[
        "simulate",
        "--goal",
        &good,
        "--preset",
        "mpich2-tcp",
        "--procs",
        "4",
    ]);
    assert!(err.contains("--procs"), "{err}");
    let err = user_error(&["simulate", "--family", "textbook", "--preset", "mpich2-tcp"]);
    assert!(err.contains("--goal"), "{err}");
}

/// Beyond the simulator's limits (1024 processes by default) `select --simulate` keeps the
/// closed forms; where one is only an upper bound (the binomial and scatter-allgather
/// broadcasts at a `P` that is not a power of two, docs/SIMULATOR.md) it says so, in the text
/// and as `closed_form_exact` in JSON; the linear broadcast's exact closed form gets no note,
/// and a simulated ranking (P = 8) none at all.
#[test]
fn select_simulate_notes_closed_forms_that_are_only_bounds() {
    let args = |p: &'static str, json: bool| {
        let mut a = vec![
            "select",
            "--family",
            "textbook",
            "bcast",
            "--preset",
            "mpich2-tcp",
            "--procs",
            p,
            "--bytes",
            "8",
            "--simulate",
        ];
        if json {
            a.push("--json");
        }
        a
    };
    let text = ok(&args("2000", false));
    let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("note:")).collect();
    assert_eq!(notes.len(), 2, "{text}");
    assert!(
        notes
            .iter()
            .any(|l| l.contains("`binomial`") && l.contains("upper bound"))
    );
    assert!(notes.iter().any(|l| l.contains("`scatter-allgather`")));
    assert!(!text.contains("`linear`"), "{text}");
    let j = json(&ok(&args("2000", true)));
    for r in j["ranking"].as_array().unwrap() {
        assert_eq!(r["source"], "closed form");
        let bound = r["algorithm"] == "binomial" || r["algorithm"] == "scatter-allgather";
        assert_eq!(r["closed_form_exact"], !bound, "{r}");
    }
    assert!(!ok(&args("8", false)).contains("note:"));
}

#[test]
fn select_simulate_marks_simulated_entries() {
    let j = json(&ok(&[
        "select",
        "--family",
        "textbook",
        "bcast",
        "--preset",
        "mpich2-tcp",
        "--procs",
        "8",
        "--bytes",
        "8",
        "--simulate",
        "--json",
    ]));
    assert_eq!(j["simulated"], true);
    let ranking = j["ranking"].as_array().unwrap();
    assert_eq!(ranking.len(), 4);
    let entry = |name: &str| {
        ranking
            .iter()
            .find(|r| r["algorithm"] == name)
            .unwrap_or_else(|| panic!("{name} missing"))
    };
    // the binomial tree: simulated 3 T(8), closed form 3 T(8) + 2 g (see the broadcast test)
    let binomial = entry("binomial");
    assert_eq!(binomial["source"], "simulated");
    assert_relative_eq!(
        seconds(binomial, &["seconds"]),
        137.39829e-6,
        max_relative = 1e-9
    );
    assert_relative_eq!(
        seconds(binomial, &["closed_form_seconds"]),
        139.22829e-6,
        max_relative = 1e-9
    );
    // the linear broadcast's closed form is exact: kept, and carried as its own cost
    let linear = entry("linear");
    assert_eq!(linear["source"], "closed form");
    assert_eq!(linear["seconds"], linear["closed_form_seconds"]);
    // sorted by the cost used
    let costs: Vec<f64> = ranking.iter().map(|r| seconds(r, &["seconds"])).collect();
    assert!(costs.windows(2).all(|w| w[0] <= w[1]), "{costs:?}");
    let text = ok(&[
        "select",
        "--family",
        "textbook",
        "bcast",
        "--preset",
        "mpich2-tcp",
        "--procs",
        "8",
        "--bytes",
        "8",
        "--simulate",
    ]);
    assert!(
        text.contains("simulated") && text.contains("closed form") && text.contains("139.228 µs"),
        "{text}"
    );
    // without the flag the output stays closed-form only
    let plain = ok(&[
        "select",
        "--family",
        "textbook",
        "bcast",
        "--preset",
        "mpich2-tcp",
        "--procs",
        "8",
        "--bytes",
        "8",
    ]);
    assert!(!plain.contains("simulated"), "{plain}");
}

#[test]
fn simulate_goal_calc_times_are_read_in_the_given_unit() {
    let dir = scratch("simulate_goal_unit");
    let goal = write(
        &dir,
        "calc.goal",
        "num_ranks 1\nrank 0 {\n  l1: calc 1000\n}\n",
    );
    // 1000 units: 1 µs in nanoseconds (the default), 1 ms in microseconds
    for (unit, expected) in [(None, 1e-6), (Some("1us"), 1e-3)] {
        let mut args = vec![
            "simulate",
            "--goal",
            &goal,
            "--preset",
            "mpich2-tcp",
            "--json",
        ];
        if let Some(u) = unit {
            args.extend(["--goal-unit", u]);
        }
        let j = json(&ok(&args));
        assert_relative_eq!(
            seconds(&j, &["makespan_seconds"]),
            expected,
            max_relative = 1e-12
        );
        assert_relative_eq!(
            seconds(&j, &["critical_path", "calc_seconds"]),
            expected,
            max_relative = 1e-12
        );
    }
    let err = user_error(&[
        "simulate",
        "--goal",
        &goal,
        "--preset",
        "mpich2-tcp",
        "--goal-unit",
        "5h",
    ]);
    assert!(err.contains("--goal-unit"), "{err}");
}

#[test]
fn simulate_with_the_models_protocols() {
    // open-mpi-openib (Hoefler, Lichei & Rehm, IPDPS 2007, Table 2; rendezvous above 12288 B,
    // Sec. 5), 20000 bytes from rank 0 to rank 1: T = 2 * 2.98 + 19999 * 0.00103 = 26.55897 µs.
    // Eager, rank 0 is done after its overhead o = 2.98 µs; rendezvous, its send completes with
    // the receive, at T.
    let args = |extra: &'static str| {
        let mut v = vec![
            "simulate",
            "--family",
            "textbook",
            "bcast",
            "--algorithm",
            "binomial",
            "--preset",
            "open-mpi-openib",
            "--procs",
            "2",
            "--bytes",
            "20000",
            "--json",
        ];
        if !extra.is_empty() {
            v.push(extra);
        }
        v
    };
    let eager = json(&ok(&args("")));
    assert_relative_eq!(
        seconds(&eager, &["rank_finish", "min_seconds"]),
        2.98e-6,
        max_relative = 1e-9
    );
    let model = json(&ok(&args("--model-protocols")));
    assert_relative_eq!(
        seconds(&model, &["rank_finish", "min_seconds"]),
        26.55897e-6,
        max_relative = 1e-9
    );
    assert_relative_eq!(
        seconds(&model, &["makespan_seconds"]),
        26.55897e-6,
        max_relative = 1e-9
    );
    assert_eq!(model["options"]["rendezvous_above_bytes"], 12288);
    // the two ways of saying it exclude each other
    let out = commcost(&[
        "simulate",
        "--family",
        "textbook",
        "bcast",
        "--algorithm",
        "binomial",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "2",
        "--bytes",
        "8",
        "--model-protocols",
        "--rendezvous-above",
        "100",
    ]);
    assert!(!out.status.success());
}

/// The rows of a `table --csv` output after its header, as fields with quotes removed.
fn csv_rows(csv: &str) -> Vec<Vec<String>> {
    csv.lines()
        .skip(1)
        .map(|line| {
            line.split(',')
                .map(|f| f.trim_matches('"').to_string())
                .collect()
        })
        .collect()
}

/// `1, 2, 4, ..., hi`: the sizes `--bytes 1..hi` samples when `hi` is a power of two.
fn doubling_sizes(hi: u64) -> Vec<u64> {
    std::iter::successors(Some(1u64), |&s| (s < hi).then_some(2 * s)).collect()
}

/// Consecutive equal winners merged: `(first, last, winner)` per run.
fn merge_runs(winners: &[(u64, String)]) -> Vec<(u64, u64, String)> {
    let mut runs: Vec<(u64, u64, String)> = Vec::new();
    for (size, winner) in winners {
        match runs.last_mut() {
            Some(run) if run.2 == *winner => run.1 = *size,
            _ => runs.push((*size, *size, winner.clone())),
        }
    }
    runs
}

#[test]
fn table_simulate_agrees_with_the_exact_table_at_the_sampled_sizes() {
    // every closed form is exact here (allgather on powers of two, alltoall on any P), so the
    // simulated table must be the plain table's exact spans read at the sampled sizes
    for (collective, preset, procs) in [
        ("allgather", "open-mpi-openib", "4,16,64"),
        ("alltoall", "open-mpi-gm", "5,24,100"),
    ] {
        let args = [
            "table", "--family", "textbook", collective, "--preset", preset, "--procs", procs,
            "--bytes", "1..4M", "--csv",
        ];
        let exact = csv_rows(&ok(&args));
        let sampled_csv = ok(&[&args[..], &["--simulate"]].concat());
        assert_eq!(
            sampled_csv.lines().next(),
            Some("processes,first_bytes,last_bytes,algorithm,source")
        );
        let mut expected = Vec::new();
        for p in procs.split(',') {
            let winners: Vec<(u64, String)> = doubling_sizes(4 << 20)
                .into_iter()
                .map(|s| {
                    let row = exact
                        .iter()
                        .find(|r| {
                            r[0] == p
                                && r[1].parse::<u64>().unwrap() <= s
                                && s <= r[2].parse::<u64>().unwrap()
                        })
                        .unwrap_or_else(|| panic!("no exact span holds P = {p}, {s} bytes"));
                    (s, row[3].clone())
                })
                .collect();
            for (first, last, winner) in merge_runs(&winners) {
                expected.push(vec![
                    p.to_string(),
                    first.to_string(),
                    last.to_string(),
                    winner,
                    "closed form".to_string(),
                ]);
            }
        }
        // the exact tables switch several times: the comparison is not between single rows
        assert!(expected.len() >= 9, "{collective}: {expected:?}");
        assert_eq!(csv_rows(&sampled_csv), expected, "{collective}");
        let text = ok(&[&args[..args.len() - 1], &["--simulate"]].concat());
        assert!(
            text.contains("switch points between sampled sizes"),
            "{text}"
        );
        assert!(!text.contains("(simulated)"), "{text}");
    }
}

#[test]
fn table_simulate_lets_the_simulator_decide_off_powers_of_two() {
    // broadcast on 6 and 24 processes: the binomial tree's closed form charges the LogGP gap
    // between rounds that its schedule does not have, so where it wins the simulator decided
    let args = [
        "table",
        "--family",
        "textbook",
        "bcast",
        "--preset",
        "mpich2-tcp",
        "--procs",
        "6,24",
        "--bytes",
        "1..4M",
        "--simulate",
    ];
    let text = ok(&args);
    assert!(text.contains("binomial (simulated)"), "{text}");
    let rows = csv_rows(&ok(&[&args[..], &["--csv"]].concat()));
    assert!(rows.iter().any(|r| r[4] == "simulated"), "{rows:?}");
    // an independent path: `select --simulate` at every sampled size of every span
    let sizes = doubling_sizes(4 << 20);
    for row in &rows {
        let (first, last) = (
            row[1].parse::<u64>().unwrap(),
            row[2].parse::<u64>().unwrap(),
        );
        let mut any_simulated = false;
        for s in sizes.iter().filter(|&&s| first <= s && s <= last) {
            let j = json(&ok(&[
                "select",
                "--family",
                "textbook",
                "bcast",
                "--preset",
                "mpich2-tcp",
                "--procs",
                &row[0],
                "--bytes",
                &s.to_string(),
                "--simulate",
                "--json",
            ]));
            assert_eq!(
                j["ranking"][0]["algorithm"],
                row[3].as_str(),
                "P = {}, {s}",
                row[0]
            );
            any_simulated |= j["ranking"][0]["source"] == "simulated";
        }
        assert_eq!(row[4] == "simulated", any_simulated, "{row:?}");
    }
    // the gather on 6 processes: the closed forms pick the linear gather for one byte, the
    // simulated binomial tree beats it
    let gather = |simulate: &[&str]| {
        let out = ok(&[
            &[
                "table",
                "--family",
                "textbook",
                "gather",
                "--preset",
                "open-mpi-gm",
                "--procs",
                "6",
                "--bytes",
                "1",
                "--csv",
            ][..],
            simulate,
        ]
        .concat());
        csv_rows(&out)[0][3].clone()
    };
    assert_eq!(gather(&[]), "linear");
    assert_eq!(gather(&["--simulate"]), "binomial");
}

#[test]
fn table_simulate_beyond_the_simulator_limits_is_a_clean_error() {
    let refused = |collective: &str, procs: &str| {
        let args = [
            "table",
            "--family",
            "textbook",
            collective,
            "--preset",
            "mpich2-tcp",
            "--procs",
            procs,
            "--bytes",
            "1,8",
            "--simulate",
        ];
        let out = commcost(&args);
        assert!(out.stdout.is_empty(), "no partial table");
        user_error(&args)
    };
    // more processes than the simulator takes: the binomial broadcast is not exact there
    let err = refused("bcast", "4,2000");
    assert!(
        err.contains("P = 2000, 1 bytes") && err.contains("1024 processes"),
        "{err}"
    );
    let err = refused("allreduce", "18446744073709551615");
    assert!(err.contains("P = 18446744073709551615, 1 bytes"), "{err}");
    // 768 processes, but the scatter-allgather broadcast's schedule has more than 2^20
    // operations: its allgather ring alone has 768 · 767 sends and as many receives
    let err = refused("bcast", "768");
    assert!(
        err.contains("P = 768, 1 bytes") && err.contains("1048576 operations"),
        "{err}"
    );
    assert!(refused("bcast", "0,4").contains("--procs"));
    // exact closed forms need no simulation: any P is fine
    let out = ok(&[
        "table",
        "--family",
        "textbook",
        "alltoall",
        "--preset",
        "mpich2-tcp",
        "--procs",
        "18446744073709551615",
        "--bytes",
        "1",
        "--simulate",
    ]);
    assert!(out.contains("bruck"), "{out}");
}

#[test]
fn export_defers_to_open_mpis_fixed_decision_below_a_gain() {
    use commcost::collectives::{Collective, Family};
    let dir = scratch("export-min-gain");
    let read = |path: &str| -> commcost::export::OmpiRules {
        std::fs::read_to_string(path).unwrap().parse().unwrap()
    };
    // Open MPI 4.1.4's fixed decisions as a file: `coll_tuned_decision_fixed.c` runs the
    // binary tree (5) for a 64 KiB broadcast on fewer than 4 processes and Rabenseifner (6)
    // for an 8 KiB allreduce on 4 to 7 processes
    let fixed_file = dir.join("fixed.conf").display().to_string();
    ok(&[
        "export",
        "ompi-fixed",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "2,4",
        "-o",
        &fixed_file,
    ]);
    let fixed = read(&fixed_file);
    let bcast = fixed.lookup(Collective::Bcast, 2, 65536).unwrap();
    assert_eq!((bcast.algorithm, bcast.segment, bcast.faninout), (5, 0, 0));
    let allreduce = fixed.lookup(Collective::Allreduce, 4, 8192).unwrap();
    assert_eq!(allreduce.algorithm, 6);
    // a larger required gain can only turn rules into deferrals (algorithm 0)
    let mut deferred = Vec::new();
    for gain in ["0", "0.5", "0.99"] {
        let file = dir.join(format!("gain-{gain}.conf")).display().to_string();
        ok(&[
            "export",
            "ompi-rules",
            "--preset",
            "open-mpi-openib",
            "--procs",
            "4,64",
            "--bytes",
            "1..1M",
            "--min-gain",
            gain,
            "-o",
            &file,
        ]);
        let rules = read(&file);
        let mut zero = 0;
        for c in Family::Ompi.collectives() {
            for k in 0..=20 {
                for p in [4, 64] {
                    let size = c.ompi_rules_size(1 << k, p);
                    if rules.lookup(c, p, size).is_some_and(|r| r.algorithm == 0) {
                        zero += 1;
                    }
                }
            }
        }
        deferred.push(zero);
    }
    assert!(deferred.windows(2).all(|w| w[0] <= w[1]), "{deferred:?}");
    assert!(deferred[2] > deferred[0], "{deferred:?}");
    // bad values name the option
    for bad in ["1", "-0.1", "nan"] {
        let err = user_error(&[
            "export",
            "ompi-rules",
            "--preset",
            "open-mpi-openib",
            "--procs",
            "4",
            "--min-gain",
            bad,
        ]);
        assert!(err.contains("--min-gain"), "{err}");
    }
    let err = user_error(&[
        "export",
        "mpich-json",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "4",
        "--min-gain",
        "0.1",
    ]);
    assert!(err.contains("--min-gain"), "{err}");
}

#[test]
fn calibrate_local_adds_measured_local_work_that_export_uses() {
    let dir = scratch("local");
    let model = dir.join("mine.json").display().to_string();
    ok(&[
        "calibrate",
        "osu",
        &fixture("osu/osu_latency.txt"),
        &fixture("osu/osu_bw.txt"),
        "-o",
        &model,
    ]);
    let text = ok(&["calibrate", "local", "--quick", "--into", &model]);
    assert!(text.contains("temporary buffer"), "{text}");
    let file = json(&std::fs::read_to_string(&model).unwrap());
    // the point-to-point model is kept, the section added with its provenance
    assert_eq!(file["spec"]["model"], "loggp_protocols");
    let local = &file["local"];
    let classes = local["work"]["copy"]["classes"].as_array().unwrap();
    assert!(!classes.is_empty() && classes[0][0] == 0, "{local}");
    for c in classes {
        let rate = c[1].as_f64().unwrap();
        // a copy between 0 and 10 ns per byte: any machine this runs on
        assert!((0.0..1e-8).contains(&rate), "{local}");
    }
    assert!(local["work"]["temp_buffer"].as_f64().unwrap() > 0.0);
    assert!(local["operator"]["per_byte"].as_f64().unwrap() > 0.0);
    assert!(local["provenance"]["accuracy"]["held_out_copies"].is_object());
    // the file loads everywhere, and export prices the local work
    let rules = dir.join("rules.conf").display().to_string();
    ok(&[
        "export",
        "ompi-rules",
        "--model",
        &model,
        "--procs",
        "2,8",
        "-o",
        &rules,
    ]);
    // not a model file: the error names the option and the file
    let err = user_error(&[
        "calibrate",
        "local",
        "--quick",
        "--into",
        &fixture("osu/osu_bw.txt"),
    ]);
    assert!(err.contains("--into"), "{err}");
}

/// `calibrate collectives` on the committed forced runs: call costs written into the file's
/// local section with their provenance, the held-out report printed, the file used by export,
/// and `calibrate local` afterwards keeps them.
#[test]
fn calibrate_collectives_writes_call_costs_that_export_uses() {
    let dir = scratch("collectives");
    let model = dir.join("mine.json").display().to_string();
    let runs = fixture("collectives/ompi_runs.csv");
    let text = ok(&[
        "calibrate",
        "collectives",
        "--model",
        &format!(
            "{}#plogp_mpi",
            fixture("collectives/mpi_calibrate_2ranks_plogp.json")
        ),
        &runs,
        "--check",
        &runs,
        "-o",
        &model,
    ]);
    assert!(text.contains("call costs of 48 algorithms"), "{text}");
    assert!(text.contains("held out, 2 processes: 299 runs"), "{text}");
    assert!(text.contains("separate runs"), "{text}");
    let file = json(&std::fs::read_to_string(&model).unwrap());
    assert_eq!(file["spec"]["model"], "plogp");
    let calls = file["local"]["work"]["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 48);
    assert!(calls.iter().all(|c| c["seconds"].as_f64().unwrap() >= 0.0));
    let accuracy = &file["local"]["calls_provenance"]["accuracy"];
    assert!(
        accuracy["held_out_runs"]["cells"].as_u64().unwrap() > 100,
        "{accuracy}"
    );
    // a commcost model file is updated in place; local work measured later keeps the costs
    ok(&["calibrate", "collectives", "--model", &model, &runs]);
    ok(&["calibrate", "local", "--quick", "--into", &model]);
    let file = json(&std::fs::read_to_string(&model).unwrap());
    assert_eq!(file["local"]["work"]["calls"].as_array().unwrap().len(), 48);
    let rules = dir.join("rules.conf").display().to_string();
    ok(&[
        "export",
        "ompi-rules",
        "--model",
        &model,
        "--procs",
        "2",
        "-o",
        &rules,
    ]);
    // a model that cannot be written back: refused before anything is measured
    let err = user_error(&[
        "calibrate",
        "collectives",
        "--measure",
        "--model",
        &format!(
            "{}#plogp_mpi",
            fixture("collectives/mpi_calibrate_2ranks_plogp.json")
        ),
    ]);
    assert!(err.contains("-o FILE"), "{err}");
    // no runs: the error says what to give; bad rows name the file and line
    let err = user_error(&["calibrate", "collectives", "--model", &model]);
    assert!(err.contains("--measure") || err.contains("RUNS"), "{err}");
    let bad = dir.join("bad.csv");
    std::fs::write(
        &bad,
        "collective,procs,algorithm_id,segsize,bytes,count,elem_bytes,median_s\nbcast,2,12,0,8,1,8,1e-6\n",
    )
    .unwrap();
    let err = user_error(&[
        "calibrate",
        "collectives",
        "--model",
        &model,
        &bad.display().to_string(),
    ]);
    assert!(err.contains("bad.csv") && err.contains("line 2"), "{err}");
}

/// The rules files the selection measurements of docs/ACCURACY.md ran with are what `export`
/// writes today from the committed models: a change of the model or the exporter that changes
/// them fails here, and the measurements must be taken again. The one known exception: the
/// files were written before Open MPI's binomial reduce was priced on the in-order binomial
/// tree it runs, which moves the reduce rules at P = 4 and 8, so the reduce section is left out.
#[test]
fn committed_selection_rules_are_what_export_writes() {
    // the file without its reduce section: from `11 # reduce` to the next collective's header
    // (`ID # name`, one number before the comment)
    fn without_reduce(text: &str) -> String {
        let (mut rest, mut inside) = (String::new(), false);
        for line in text.lines() {
            let header = line.split_whitespace().count() == 3 && line.contains(" # ");
            if header {
                inside = line.ends_with(" # reduce");
            }
            if !inside {
                rest.push_str(line);
                rest.push('\n');
            }
        }
        rest
    }
    let dir = scratch("selection-rules");
    for (model, procs, committed) in [
        (
            "selection/cluster-1gbit-model.json",
            "4,8",
            "selection/cluster-1gbit-gain2.rules",
        ),
        (
            "selection/vader-model-local.json",
            "2",
            "selection/vader-gain.rules",
        ),
        (
            "selection/vader-model-calls.json",
            "2",
            "selection/vader-calls-gain.rules",
        ),
    ] {
        let out = dir.join("rules.conf").display().to_string();
        ok(&[
            "export",
            "ompi-rules",
            "--model",
            &fixture(model),
            "--procs",
            procs,
            "--bytes",
            "1..4M",
            "--min-gain",
            "0.1",
            "-o",
            &out,
        ]);
        let written = without_reduce(&std::fs::read_to_string(&out).unwrap());
        let expected = without_reduce(&std::fs::read_to_string(fixture(committed)).unwrap());
        assert!(expected.contains("# bcast"), "{committed}");
        assert_eq!(written, expected, "{committed}");
    }
}

/// LogGOPSim's parameters of `tests/fixtures/loggopsim` (set `eager_G1`): L = 3 µs, o = 1 µs,
/// g = 2 µs, G = 1 ns/B.
const LOGGOPSIM_G1: &str = r#"{"model": "loggp", "latency": 3e-6, "overhead": 1e-6, "gap": 2e-6,
    "gap_per_byte": 1e-9, "processors": 16}"#;

#[test]
fn goal_writes_schedgen_patterns_and_simulate_writes_its_schedule() {
    let dir = scratch("goal_cli");
    let model = write(&dir, "m.json", LOGGOPSIM_G1);
    let makespan = |goal: &str| {
        json(&ok(&[
            "simulate", "--goal", goal, "--model", &model, "--json",
        ]))["makespan_seconds"]
            .as_f64()
            .expect("makespan")
    };
    // ours, written by `commcost goal`, and Schedgen's own file: both give LogGOPSim's
    // 20028 ns (tests/fixtures/loggopsim/out/eager_G1/binomialtreebcast_p16_d8.txt)
    let ours = dir.join("bcast.goal").display().to_string();
    ok(&[
        "goal",
        "binomialtreebcast",
        "--procs",
        "16",
        "--bytes",
        "8",
        "-o",
        &ours,
    ]);
    let schedgen = fixture("loggopsim/goal/binomialtreebcast_p16_d8.goal");
    assert_relative_eq!(makespan(&ours), 20028e-9, max_relative = 1e-9);
    assert_relative_eq!(makespan(&schedgen), 20028e-9, max_relative = 1e-9);
    // to standard output, Schedgen's style
    let text = ok(&["goal", "allreduce_ring", "--procs", "4", "--bytes", "1024"]);
    assert!(
        text.starts_with("num_ranks 4\n\nrank 0 {\nl1: send 256b to 1 tag 0\n"),
        "{text}"
    );
    // a crate algorithm's schedule, written while simulated, simulates to the same makespan
    let written = dir.join("rab.goal").display().to_string();
    let direct = json(&ok(&[
        "simulate",
        "--family",
        "textbook",
        "allreduce",
        "--algorithm",
        "rabenseifner",
        "--model",
        &model,
        "--procs",
        "16",
        "--bytes",
        "64K",
        "--json",
        "--write-goal",
        &written,
    ]))["makespan_seconds"]
        .as_f64()
        .expect("makespan");
    assert_relative_eq!(makespan(&written), direct, max_relative = 1e-12);
    let by_goal = dir.join("rab2.goal").display().to_string();
    ok(&[
        "goal",
        "--family",
        "textbook",
        "allreduce",
        "--algorithm",
        "rabenseifner",
        "--procs",
        "16",
        "--bytes",
        "64K",
        "-o",
        &by_goal,
    ]);
    assert_eq!(
        std::fs::read_to_string(&by_goal).expect("written"),
        std::fs::read_to_string(&written).expect("written")
    );
    // mistakes: one line each
    let e = user_error(&["goal", "ringg", "--procs", "4", "--bytes", "8"]);
    assert!(
        e.contains("allreduce_ring") && e.contains("--algorithm"),
        "{e}"
    );
    let e = user_error(&["goal", "allreduce_recdoub", "--procs", "6", "--bytes", "8"]);
    assert!(e.contains("power of two"), "{e}");
    let e = user_error(&[
        "goal",
        "allreduce_ring",
        "--procs",
        "100000",
        "--bytes",
        "8",
    ]);
    assert!(e.contains("exceeds the limit"), "{e}");
    let e = user_error(&[
        "goal",
        "dissemination",
        "--procs",
        "4",
        "--bytes",
        "8",
        "--operator",
        "1us,1ns",
    ]);
    assert!(e.contains("--operator"), "{e}");
    let e = user_error(&[
        "goal",
        "dissemination",
        "--procs",
        "4",
        "--bytes",
        "8",
        "-o",
        "/nonexistent-dir/x.goal",
    ]);
    assert!(e.contains("--output"), "{e}");
}

/// `select` ranks the algorithms of the family asked for: Open MPI's by default, with the
/// fields of the rules-file line that runs each (collective ID 7, algorithm IDs 1-9 named as
/// `ompi_info` names them); MPICH's under MPICH's names; a collective outside the family is
/// refused naming the families that price it.
#[test]
fn select_ranks_the_family_asked_for() {
    use commcost::collectives::{Collective, Family, Problem, best_in};
    let base = [
        "select",
        "bcast",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "16",
        "--bytes",
        "64K",
        "--json",
    ];
    let default = json(&ok(&base));
    let ompi = json(&ok(&[&base[..], &["--family", "ompi"]].concat()));
    assert_eq!(default, ompi);
    assert_eq!(
        (&ompi["family"], &ompi["ompi_coll_id"]),
        (&"ompi".into(), &7.into())
    );
    let ranking = ompi["ranking"].as_array().unwrap();
    for row in ranking {
        let id = row["ompi"]["id"].as_u64().unwrap() as u32;
        assert_eq!(
            row["ompi"]["name"].as_str(),
            Collective::Bcast.ompi_algorithm_name(id),
            "{row}"
        );
    }
    let best = best_in(
        &commcost::presets::open_mpi_openib(),
        Family::Ompi,
        Collective::Bcast,
        &Problem::new(16, commcost::Message::contiguous(65536)),
    )
    .unwrap();
    assert_eq!(ranking[0]["algorithm"], best.name.as_str());
    let text = ok(&base[..base.len() - 1]);
    assert!(
        text.contains("collective ID 7") && text.contains("split_binary_tree"),
        "{text}"
    );
    let mpich = json(&ok(&[&base[..], &["--family", "mpich"]].concat()));
    let mut names: Vec<&str> = mpich["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["algorithm"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["binomial", "scatter_ring_allgather"]);
    let err = user_error(&[
        "select",
        "scan",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "4",
        "--bytes",
        "8",
    ]);
    assert!(
        err.contains("textbook, mpich") && err.contains("--family"),
        "{err}"
    );
    assert!(
        ok(&[
            "select",
            "scan",
            "--family",
            "textbook",
            "--preset",
            "open-mpi-openib",
            "--procs",
            "4",
            "--bytes",
            "8"
        ])
        .contains("recursive-doubling")
    );
}

/// `export simgrid` takes 1 ..= 2^31 - 1 hosts, as its help says and the other exports take
/// process counts, and refuses `--collectives` (a platform file holds no decisions).
#[test]
fn export_simgrid_refuses_host_counts_and_collectives_it_cannot_write() {
    for procs in ["0", "2147483648", "1099511627776"] {
        let err = user_error(&[
            "export",
            "simgrid",
            "--preset",
            "open-mpi-openib",
            "--procs",
            procs,
        ]);
        assert!(err.contains("--procs") && err.contains(procs), "{err}");
    }
    let err = user_error(&[
        "export",
        "simgrid",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "16",
        "--collectives",
        "bcast",
    ]);
    assert!(err.contains("--collectives"), "{err}");
    assert!(
        ok(&[
            "export",
            "simgrid",
            "--preset",
            "open-mpi-openib",
            "--procs",
            "2147483647"
        ])
        .contains("<platform")
    );
}

/// A calc that does not fit a GOAL `calc` in the unit asked for (1.128 µs in units of
/// 1e-300 s) is an error naming the option and the operation, and no file is left behind; the
/// same schedule in nanoseconds is written.
#[test]
fn goal_units_too_small_for_a_calc_are_refused() {
    let dir = scratch("goal_unit");
    let file = dir.join("ring.goal");
    let path = file.to_str().unwrap();
    let args = |unit: &'static str| {
        vec![
            "goal",
            "allreduce",
            "--algorithm",
            "ring",
            "--procs",
            "4",
            "--bytes",
            "1K",
            "--operator",
            "1us,0.5ns",
            "--goal-unit",
            unit,
            "-o",
            path,
        ]
    };
    let err = user_error(&args("1e-300s"));
    assert!(
        err.contains("--output") && err.contains("operation") && err.contains("2^64"),
        "{err}"
    );
    assert!(!file.exists());
    ok(&args("1ns"));
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("calc 1128")
    );
}

/// A memory budget of 0 bytes is refused as such (not as a file or schedule too large).
#[test]
fn zero_budgets_name_their_option() {
    for cmd in [
        &[
            "simulate",
            "bcast",
            "--algorithm",
            "6",
            "--procs",
            "4",
            "--bytes",
            "8",
        ][..],
        &[
            "goal",
            "bcast",
            "--algorithm",
            "6",
            "--procs",
            "4",
            "--bytes",
            "8",
        ][..],
    ] {
        let mut args = cmd.to_vec();
        if cmd[0] == "simulate" {
            args.extend(["--preset", "mpich2-tcp"]);
        }
        args.extend(["--max-memory", "0"]);
        let err = user_error(&args);
        assert!(err.contains("--max-memory must be above 0"), "{err}");
    }
}

/// A model file that names a key twice is refused, naming the key, the file and the place (a
/// JSON object would take the last value silently).
#[test]
fn model_files_with_a_key_twice_are_refused() {
    let dir = scratch("duplicate_keys");
    let file = write(
        &dir,
        "twice.json",
        "{\"model\": \"pram\",\n \"unit_cost\": 1e-6,\n \"unit_cost\": 1}\n",
    );
    let err = user_error(&["predict", "--model", &file, "--bytes", "8"]);
    assert!(
        err.contains("twice.json")
            && err.contains("duplicate key `unit_cost`")
            && err.contains("line 3"),
        "{err}"
    );
}

/// On a platform (`--cores`, `--link-burst`, `--handshake`) every algorithm is simulated, the
/// closed forms' exactness no longer applies: the linear broadcast on one shared core pays
/// every receiver's overhead on that core, after the root's sends.
#[test]
fn select_simulate_on_a_platform_simulates_every_algorithm() {
    let args = |extra: &[&str]| {
        let mut a = vec![
            "select",
            "--family",
            "textbook",
            "bcast",
            "--preset",
            "mpich2-tcp",
            "--procs",
            "8",
            "--bytes",
            "8",
            "--simulate",
            "--json",
        ];
        a.extend_from_slice(extra);
        json(&ok(&a))
    };
    let linear = |j: &serde_json::Value| {
        j["ranking"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["algorithm"] == "linear")
            .cloned()
            .unwrap()
    };
    let own = linear(&args(&[]));
    let shared = linear(&args(&["--cores", "1"]));
    assert_eq!(shared["source"], "simulated");
    assert!(
        seconds(&shared, &["seconds"]) > seconds(&own, &["seconds"]),
        "{shared} against {own}"
    );
    let e = user_error(&[
        "select",
        "bcast",
        "--preset",
        "mpich2-tcp",
        "--procs",
        "8",
        "--bytes",
        "8",
        "--cores",
        "2",
    ]);
    assert!(e.contains("--simulate"), "{e}");
}

/// `select --ranks-per-node`: the ranking simulated on nodes of several ranks. Open MPI's ring
/// allreduce passes each block to the next rank: with consecutive ranks on a node (`--map-by
/// core`) 3 of 4 hops stay inside a node, dealt round robin (`--map-by node`) none does, so the
/// ring costs more; on one node (4 ranks per node, 4 processes) every message is the
/// intra-node model's and the ranking is the flat simulation's.
#[test]
fn select_on_nodes_prices_the_placement() {
    let ring = |extra: &[&str]| {
        let mut args = vec![
            "select",
            "allreduce",
            "--preset",
            "open-mpi-openib",
            "--procs",
            "16",
            "--bytes",
            "64K",
            "--json",
            "--inter-preset",
            "mpich2-tcp",
            "--ranks-per-node",
            "4",
        ];
        args.extend_from_slice(extra);
        let v = json(&ok(&args));
        assert_eq!(v["nodes"]["nodes"], 4);
        let ring = ranked(&v).into_iter().find(|r| r.algorithm == "ring");
        ring.expect("ring is ranked").seconds
    };
    assert!(ring(&[]) < ring(&["--map-by", "node"]));
    // one node: the flat simulation of the intra-node model
    let args = |nodes: bool| {
        let mut a = vec![
            "select",
            "bcast",
            "--preset",
            "open-mpi-openib",
            "--procs",
            "4",
            "--bytes",
            "1M",
            "--json",
            "--simulate",
        ];
        if nodes {
            a.extend_from_slice(&["--ranks-per-node", "4", "--inter-preset", "mpich2-tcp"]);
        }
        a
    };
    let flat = ranked(&json(&ok(&args(false))));
    let one_node = ranked(&json(&ok(&args(true))));
    for r in &one_node {
        let f = flat.iter().find(|f| f.algorithm == r.algorithm).unwrap();
        assert_relative_eq!(r.seconds, f.seconds, max_relative = 1e-12);
    }
    // mistakes name the option
    let base = [
        "select",
        "allreduce",
        "--preset",
        "open-mpi-openib",
        "--bytes",
        "8",
    ];
    let e = user_error(
        &[
            &base[..],
            &[
                "--procs",
                "6",
                "--ranks-per-node",
                "4",
                "--inter-preset",
                "mpich2-tcp",
            ],
        ]
        .concat(),
    );
    assert!(
        e.contains("--ranks-per-node") && e.contains("multiple of 4"),
        "{e}"
    );
    let e = user_error(&[&base[..], &["--procs", "8", "--ranks-per-node", "4"]].concat());
    assert!(e.contains("--inter-model"), "{e}");
    let e = user_error(
        &[
            &base[..],
            &[
                "--procs",
                "8",
                "--ranks-per-node",
                "4",
                "--inter-preset",
                "nonesuch",
            ],
        ]
        .concat(),
    );
    assert!(e.contains("--inter-preset"), "{e}");
}

/// A model file's `nodes` section is the platform of `select` and `simulate` without flags; the
/// flags win over it; a job the layout cannot hold is an error naming the section.
#[test]
fn a_model_files_nodes_section_is_the_platform() {
    let dir = scratch("cli-nodes-section");
    let file = write(
        &dir,
        "two-level.json",
        r#"{"commcost_model_file": 1, "provenance": {"measured": "", "method": "", "date": "",
            "host": "", "parameters": {}, "accuracy": {}, "tool": ""},
            "spec": {"model": "loggp", "latency": 3e-7, "overhead": 2e-7, "gap": 1e-7,
                     "gap_per_byte": 1e-10, "processors": 2},
            "nodes": {"layout": {"ranks_per_node": 2},
                      "inter": {"model": "loggp", "latency": 2e-5, "overhead": 2e-6, "gap": 5e-6,
                                "gap_per_byte": 8e-9, "processors": 2}}}"#,
    );
    let v = json(&ok(&[
        "select", "bcast", "--model", &file, "--procs", "8", "--bytes", "64K", "--json",
    ]));
    assert_eq!(v["nodes"]["nodes"], 4);
    assert!(
        v["nodes"]["layout"]
            .as_str()
            .unwrap()
            .starts_with("2 ranks per node")
    );
    // the simulation of one algorithm on the same platform
    let sim = |extra: &[&str]| {
        let mut args = vec![
            "simulate",
            "bcast",
            "--algorithm",
            "binomial",
            "--model",
            &file,
            "--procs",
            "8",
            "--bytes",
            "64K",
            "--json",
        ];
        args.extend_from_slice(extra);
        json(&ok(&args))
    };
    let on_file = sim(&[]);
    assert!(on_file["nodes"].as_str().unwrap().starts_with("4 nodes"));
    assert!(on_file["closed_form"].is_null());
    // the flags win: 8 ranks on one node is the flat simulation of the intra-node model
    let one_node = sim(&["--ranks-per-node", "8", "--inter-preset", "mpich2-tcp"]);
    assert!(
        one_node["makespan_seconds"].as_f64().unwrap()
            < on_file["makespan_seconds"].as_f64().unwrap()
    );
    let e = user_error(&[
        "select", "bcast", "--model", &file, "--procs", "7", "--bytes", "8",
    ]);
    assert!(e.contains("nodes.layout") && e.contains("--procs 7"), "{e}");
}

/// `select --finish mean` prices each algorithm on nodes by the mean of its ranks' completions:
/// what `simulate` reports as the mean finish of the same schedule on the same platform, below
/// the last rank's completion for a reduction (its leaves return after one send); without a
/// platform the flag is refused, naming it.
#[test]
fn select_on_nodes_prices_the_finish_asked_for() {
    let base = [
        "reduce",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "8",
        "--bytes",
        "64K",
        "--json",
        "--ranks-per-node",
        "2",
        "--inter-preset",
        "mpich2-tcp",
    ];
    let select = |finish: &str| {
        ranked(&json(&ok(
            &[&["select"], &base[..], &["--finish", finish]].concat()
        )))
    };
    let (last, mean) = (select("last"), select("mean"));
    assert_eq!(last.len(), mean.len());
    for m in &mean {
        let l = last.iter().find(|l| l.algorithm == m.algorithm).unwrap();
        let run = json(&ok(&[
            &["simulate"],
            &base[..],
            &["--algorithm", m.algorithm.as_str()],
        ]
        .concat()));
        let simulated_mean = run["rank_finish"]["mean_seconds"].as_f64().unwrap();
        let makespan = run["makespan_seconds"].as_f64().unwrap();
        assert_relative_eq!(m.seconds, simulated_mean, max_relative = 1e-12);
        assert_relative_eq!(l.seconds, makespan, max_relative = 1e-12);
        assert!(m.seconds < l.seconds, "{}", m.algorithm);
    }
    let e = user_error(&[
        "select",
        "reduce",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "8",
        "--bytes",
        "8",
        "--finish",
        "mean",
    ]);
    assert!(
        e.contains("--finish mean") && e.contains("--ranks-per-node"),
        "{e}"
    );
}

/// `export ompi-rules` and `table` on nodes name, at each cell, the algorithm `select` ranks
/// first on the same platform; other formats refuse `--ranks-per-node`; a communicator size
/// the nodes cannot hold is an error naming `--procs`.
#[test]
fn export_and_table_on_nodes_follow_the_placement() {
    let nodes = [
        "--preset",
        "open-mpi-openib",
        "--ranks-per-node",
        "2",
        "--inter-preset",
        "mpich2-tcp",
    ];
    // select's ranking, cheapest first
    let ranking = |c: &str, p: u64, bytes: u64| -> Vec<Ranked> {
        let v = json(&ok(&[
            &[
                "select",
                c,
                "--procs",
                &p.to_string(),
                "--bytes",
                &bytes.to_string(),
                "--json",
            ],
            &nodes[..],
        ]
        .concat()));
        ranked(&v)
    };
    // the rule names an algorithm select prices as the cheapest (equal costs may tie)
    let cheapest = |c: &str, p: u64, bytes: u64, id: u64, segment: u64| {
        let r = ranking(c, p, bytes);
        let best = r[0].seconds;
        assert!(
            r.iter()
                .any(|e| e.id == id && e.segsize == segment && e.seconds <= best * (1.0 + 1e-9)),
            "{c} P = {p}, {bytes} B: rule {id} segment {segment}, ranking {r:?}"
        );
    };
    let text = ok(&[
        &[
            "export",
            "ompi-rules",
            "--procs",
            "4,8",
            "--bytes",
            "8,16384",
            "--collectives",
            "bcast,allreduce",
            "--on-tie",
            "first",
        ],
        &nodes[..],
    ]
    .concat());
    let rules: commcost::export::OmpiRules = text.parse().expect("a rules file");
    for (c, name) in [
        (commcost::collectives::Collective::Bcast, "bcast"),
        (commcost::collectives::Collective::Allreduce, "allreduce"),
    ] {
        for p in [4u64, 8] {
            for bytes in [8u64, 16384] {
                let rule = rules.lookup(c, p, c.ompi_rules_size(bytes, p)).unwrap();
                cheapest(name, p, bytes, u64::from(rule.algorithm), rule.segment);
            }
        }
    }
    // the table's winners are select's too
    let csv = ok(&[
        &[
            "table", "bcast", "--procs", "8", "--bytes", "8,16384", "--csv",
        ],
        &nodes[..],
    ]
    .concat());
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert!(rows.iter().all(|r| r.ends_with(",simulated")), "{csv}");
    let first_row_algorithm = rows[0].split(',').nth(3).unwrap().trim_matches('"');
    let r = ranking("bcast", 8, 8);
    assert!(
        r.iter()
            .any(|e| e.algorithm == first_row_algorithm && e.seconds <= r[0].seconds * (1.0 + 1e-9)),
        "{csv} {r:?}"
    );
    let e = user_error(
        &[
            &[
                "export",
                "ompi-rules",
                "--procs",
                "5",
                "--bytes",
                "8",
                "--collectives",
                "bcast",
            ],
            &nodes[..],
        ]
        .concat(),
    );
    assert!(e.contains("--procs"), "{e}");
    let e = user_error(
        &[
            &["export", "mpich-json", "--procs", "4", "--bytes", "8"],
            &nodes[..],
        ]
        .concat(),
    );
    assert!(
        e.contains("--ranks-per-node") && e.contains("ompi-rules"),
        "{e}"
    );
}

/// `select` on nodes adds the hierarchical compositions (leaders, han) for the collectives
/// they compose, priced on the same platform; none for alltoall.
#[test]
fn select_on_nodes_prices_the_hierarchical_compositions() {
    let run = |c: &str| {
        json(&ok(&[
            "select",
            c,
            "--preset",
            "open-mpi-openib",
            "--procs",
            "8",
            "--bytes",
            "65536",
            "--json",
            "--ranks-per-node",
            "4",
            "--inter-preset",
            "mpich2-tcp",
        ]))
    };
    let v = run("allreduce");
    let names: Vec<&str> = v["hierarchical"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["composition"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["leaders", "han:segment=65536"]);
    for h in v["hierarchical"].as_array().unwrap() {
        assert!(h["seconds"].as_f64().unwrap() > 0.0, "{h}");
    }
    assert!(run("alltoall").get("hierarchical").is_none());
    let text = ok(&[
        "select",
        "bcast",
        "--preset",
        "open-mpi-openib",
        "--procs",
        "8",
        "--bytes",
        "8",
        "--ranks-per-node",
        "4",
        "--inter-preset",
        "mpich2-tcp",
    ]);
    assert!(
        text.contains("coll_han_priority") && text.contains("leaders"),
        "{text}"
    );
}
