//! The committed selection measurements (tests/fixtures/selection/) against what
//! docs/ACCURACY.md says of them: the doc's selection table is what the data give, and the
//! claims made there hold on the data.

use std::path::{Path, PathBuf};

use commcost_validation::selection::{Report, Targets, Verdict, parse, report};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn load(name: &str) -> Report {
    let path = root().join("tests/fixtures/selection").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rows = parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    report(&rows, 8, 1 << 20).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn fixtures() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("tests/fixtures/selection"))
        .expect("tests/fixtures/selection")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".csv"))
        .collect();
    names.sort();
    names
}

/// The sweeps in the column order of docs/ACCURACY.md's selection table: file, column label.
const COLUMNS: [(&str, &str); 10] = [
    ("cluster-1gbit-4x1.csv", "4x1"),
    ("cluster-1gbit-8x1.csv", "8x1"),
    ("vader-p2.csv", "P = 2"),
    ("cluster-1gbit-4x1-gain.csv", "4x1 gain"),
    ("cluster-1gbit-4x2-gain.csv", "4x2 gain"),
    ("cluster-1gbit-8x1-gain2.csv", "8x1 gain2"),
    ("vader-p2-gain.csv", "P = 2 gain"),
    ("vader-p2-calls-gain.csv", "P = 2 calls"),
    ("cluster-1gbit-4x1-gain2-reduce.csv", "4x1 gain2"),
    ("cluster-1gbit-4x2-gain2-reduce.csv", "4x2 gain2"),
];

/// One table of every sweep: per collective the geometric mean of rules / default with the
/// faster / slower cell counts, then the overall figures.
fn selection_table() -> String {
    let reports: Vec<Report> = COLUMNS.iter().map(|(name, _)| load(name)).collect();
    let mut s = String::from("| collective |");
    for (_, label) in COLUMNS {
        s.push_str(&format!(" {label} |"));
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(COLUMNS.len()));
    s.push('\n');
    let mut collectives: Vec<&str> = reports
        .iter()
        .flat_map(|r| r.families.iter().map(|f| f.collective.as_str()))
        .collect();
    collectives.sort_unstable();
    collectives.dedup();
    for c in collectives {
        s.push_str(&format!("| {c} |"));
        for r in &reports {
            match r.families.iter().find(|f| f.collective == c) {
                Some(f) => s.push_str(&format!(" {:.2} ({}/{}) |", f.geomean, f.faster, f.slower)),
                None => s.push_str(" - |"),
            }
        }
        s.push('\n');
    }
    s.push_str("| **overall** |");
    for r in &reports {
        s.push_str(&format!(" **{:.2}** |", r.geomean));
    }
    s.push_str("\n| worst slower cell |");
    for r in &reports {
        let worst = r
            .families
            .iter()
            .map(|f| f.worst_slower)
            .fold(1.0, f64::max);
        s.push_str(&format!(" {worst:.2} |"));
    }
    s.push_str("\n| rules within 10 % of the best forced |");
    for r in &reports {
        match r.cells_with_forced {
            0 => s.push_str(" - |"),
            n => s.push_str(&format!(" {} of {n} |", r.picks_within_10)),
        }
    }
    s.push_str("\n| fastest of default and forced |");
    for r in &reports {
        match r.best_possible {
            Some(b) => s.push_str(&format!(" {b:.2} |")),
            None => s.push_str(" - |"),
        }
    }
    s.push('\n');
    s
}

#[test]
fn accuracy_doc_shows_what_the_data_give() {
    let doc = std::fs::read_to_string(root().join("docs/ACCURACY.md")).expect("docs/ACCURACY.md");
    let mut listed: Vec<String> = COLUMNS.iter().map(|(n, _)| n.to_string()).collect();
    listed.sort();
    assert_eq!(
        listed,
        fixtures(),
        "every selection fixture is a column of the table"
    );
    let table = selection_table();
    assert!(
        doc.contains(&table),
        "docs/ACCURACY.md does not contain the selection table the fixtures give \
         (per-file reports: cargo run -p commcost-validation --bin selection_report -- FILE.csv):\n\n{table}"
    );
}

#[test]
fn every_cell_has_three_repeats_and_forced_runs_cover_their_platform() {
    for name in fixtures() {
        let r = load(&name);
        for c in &r.cells {
            assert!(
                c.default_us.len() >= 3,
                "{name}: {} {} B has {} repeats",
                c.collective,
                c.bytes,
                c.default_us.len()
            );
        }
        // a sweep with forced runs has them for (nearly) every cell
        if r.cells_with_forced > 0 {
            assert!(
                r.cells_with_forced * 10 >= r.cells.len() * 9,
                "{name}: forced runs missing"
            );
        }
    }
}

fn family(r: &Report, name: &str) -> f64 {
    r.families
        .iter()
        .find(|f| f.collective == name)
        .map(|f| f.geomean)
        .expect(name)
}

#[test]
fn on_the_cluster_the_rules_are_faster_overall_and_in_bcast() {
    let r = load("cluster-1gbit-4x1.csv");
    assert_eq!(r.cells.len(), 145);
    assert!(
        r.geomean <= Targets::default().overall_geomean,
        "overall {}",
        r.geomean
    );
    assert!(family(&r, "bcast") < 0.5, "bcast {}", family(&r, "bcast"));
    // bcast from 16 KiB: faster in every repeat at every size
    for c in r
        .cells
        .iter()
        .filter(|c| c.collective == "bcast" && c.bytes >= 16384)
    {
        assert_eq!(c.verdict, Verdict::Faster, "bcast at {} B", c.bytes);
    }
    // what the doc lists as missed: the all-to-all family, cells slower than 1.10, the picks
    let misses = r.misses(&Targets::default());
    assert!(
        misses.iter().any(|m| m.contains("alltoall geometric mean")),
        "{misses:?}"
    );
    assert!(
        misses.iter().any(|m| m.contains("best forced algorithm")),
        "{misses:?}"
    );
}

#[test]
fn at_two_ranks_only_allreduce_is_chosen_and_it_loses() {
    let r = load("vader-p2.csv");
    assert!(
        family(&r, "allreduce") > 1.1,
        "allreduce {}",
        family(&r, "allreduce")
    );
    // the other families run identical configurations: their ratios are noise around 1
    for f in r.families.iter().filter(|f| f.collective != "allreduce") {
        assert!(
            (0.9..=1.1).contains(&f.geomean),
            "{}: {}",
            f.collective,
            f.geomean
        );
    }
}

#[test]
fn with_min_gain_the_cluster_meets_the_overall_target_and_the_doc_names_the_losses() {
    let r = load("cluster-1gbit-4x1-gain.csv");
    assert!(
        r.geomean <= Targets::default().overall_geomean,
        "overall {}",
        r.geomean
    );
    for (f, below) in [("bcast", 0.65), ("scatter", 0.65), ("allreduce", 0.9)] {
        assert!(family(&r, f) < below, "{f} {}", family(&r, f));
    }
    let cell = |r: &Report, c: &str, b: u64| {
        r.cells
            .iter()
            .find(|x| x.collective == c && x.bytes == b)
            .cloned()
            .expect("cell")
    };
    // the losses the doc names: reduce at 16 KiB, linear_sync gather at 32 KiB per rank
    for (c, b, above) in [("reduce", 16384, 1.9), ("gather", 32768, 1.5)] {
        let x = cell(&r, c, b);
        assert_eq!(x.verdict, Verdict::Slower, "{c} {b}");
        assert!(x.ratio > above, "{c} {b}: {}", x.ratio);
    }
    let fixed = load("cluster-1gbit-4x1-gain2-reduce.csv");
    assert!(cell(&fixed, "reduce", 16384).ratio > 2.0);
    // 8 nodes: overall met; reduce and gather lose
    let r8 = load("cluster-1gbit-8x1-gain2.csv");
    assert!(
        r8.geomean <= Targets::default().overall_geomean,
        "{}",
        r8.geomean
    );
    assert!(cell(&r8, "reduce", 16384).ratio > 3.0);
    assert!(cell(&r8, "gather", 131072).ratio > 1.9);
    // 4 x 2: alltoall runs Open MPI's own decision on both sides, yet 7 sizes are "slower"
    let r = load("cluster-1gbit-4x2-gain.csv");
    let slower = r
        .cells
        .iter()
        .filter(|c| c.collective == "alltoall" && c.verdict == Verdict::Slower)
        .count();
    assert_eq!(slower, 7);
    assert!(r.geomean > 0.9);
    // shared memory: the non-overlapping reduce_scatter at 1 MiB
    let v = load("vader-p2-gain.csv");
    let x = cell(&v, "reduce_scatter", 1 << 20);
    assert!(x.verdict == Verdict::Slower && x.ratio > 2.5, "{}", x.ratio);
    // the best any selection reaches from the forced runs of the earlier sweeps
    let bound = |name: &str| load(name).best_possible.expect("forced runs");
    assert!((bound("cluster-1gbit-4x1.csv") - 0.59).abs() < 0.005);
    assert!((bound("vader-p2.csv") - 0.93).abs() < 0.005);
}
