//! The committed selection measurements (tests/fixtures/selection/) against what
//! docs/ACCURACY.md says of them: the doc's selection table is what the data give, and the
//! claims made there hold on the data.

use std::path::{Path, PathBuf};

use commcost_validation::selection::{Report, Row, Verdict, parse, report};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rows(name: &str) -> Vec<Row> {
    let path = root().join("tests/fixtures/selection").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn summarise(name: &str, rows: &[Row]) -> Report {
    report(rows, 8, 1 << 20).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn load(name: &str) -> Report {
    summarise(name, &rows(name))
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

/// A column of docs/ACCURACY.md's selection table: its label, the sweep, and the sweep whose
/// reduce rows replace the first one's. The two sweeps ran on one platform with rules files
/// that differ in their reduce rules only, the second file being what `commcost export` writes
/// (cli test `committed_selection_rules_are_what_export_writes`).
struct Column {
    label: &'static str,
    file: &'static str,
    reduce_from: Option<&'static str>,
}

/// The columns, in the table's order.
const COLUMNS: [Column; 6] = [
    Column {
        label: "4x1 gain",
        file: "cluster-1gbit-4x1-gain.csv",
        reduce_from: Some("cluster-1gbit-4x1-gain2-reduce.csv"),
    },
    Column {
        label: "4x2 gain",
        file: "cluster-1gbit-4x2-gain.csv",
        reduce_from: Some("cluster-1gbit-4x2-gain2-reduce.csv"),
    },
    Column {
        label: "8x1 gain",
        file: "cluster-1gbit-8x1-gain2.csv",
        reduce_from: None,
    },
    Column {
        label: "P = 2",
        file: "vader-p2.csv",
        reduce_from: None,
    },
    Column {
        label: "P = 2 gain",
        file: "vader-p2-gain.csv",
        reduce_from: None,
    },
    Column {
        label: "P = 2 calls",
        file: "vader-p2-calls-gain.csv",
        reduce_from: None,
    },
];

/// Sweeps that are no column: their rules file (`cluster-1gbit.rules`) differs in its reduce
/// rules from what `export` writes from the model. The default and forced runs of the first are
/// used (the fastest of default and forced algorithms, the per-call costs' checks).
const NOT_COLUMNS: [&str; 2] = ["cluster-1gbit-4x1.csv", "cluster-1gbit-8x1.csv"];

/// A column's report: its sweep, with the reduce rows of `reduce_from` instead of its own.
fn column(c: &Column) -> Report {
    let mut all = rows(c.file);
    if let Some(other) = c.reduce_from {
        let reduce = rows(other);
        assert!(
            reduce.iter().all(|r| r.collective == "reduce"),
            "{other}: reduce rows only"
        );
        assert!(
            all.iter().any(|r| r.collective == "reduce"),
            "{}: the reduce rows replaced",
            c.file
        );
        all.retain(|r| r.collective != "reduce");
        all.extend(reduce);
    }
    summarise(c.label, &all)
}

fn by_label(label: &str) -> Report {
    column(COLUMNS.iter().find(|c| c.label == label).expect(label))
}

/// The table: per collective the geometric mean of rules / default with the faster / slower
/// cell counts, then the overall geometric mean and the worst slower cell.
fn selection_table() -> String {
    let reports: Vec<Report> = COLUMNS.iter().map(column).collect();
    let mut s = String::from("| collective |");
    for c in &COLUMNS {
        s.push_str(&format!(" {} |", c.label));
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
            let f = r
                .families
                .iter()
                .find(|f| f.collective == c)
                .unwrap_or_else(|| panic!("{}: no {c}", r.platform));
            s.push_str(&format!(" {:.2} ({}/{}) |", f.geomean, f.faster, f.slower));
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
    s.push('\n');
    s
}

#[test]
fn accuracy_doc_shows_what_the_data_give() {
    let doc = std::fs::read_to_string(root().join("docs/ACCURACY.md")).expect("docs/ACCURACY.md");
    let mut listed: Vec<String> = COLUMNS
        .iter()
        .flat_map(|c| std::iter::once(c.file).chain(c.reduce_from))
        .chain(NOT_COLUMNS)
        .map(str::to_string)
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        fixtures(),
        "every selection fixture is a column of the table, the reduce part of one, or listed \
         in NOT_COLUMNS"
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

fn cell(r: &Report, c: &str, b: u64) -> commcost_validation::selection::Cell {
    r.cells
        .iter()
        .find(|x| x.collective == c && x.bytes == b)
        .cloned()
        .unwrap_or_else(|| panic!("{}: no {c} at {b} B", r.platform))
}

/// The figures the doc quotes for one rank per node: the overall geometric means, the gains
/// per collective at 4x1, and bcast from 16 KiB faster in every repeat.
#[test]
fn on_the_cluster_the_rules_are_faster_overall_and_in_bcast() {
    let r = by_label("4x1 gain");
    assert_eq!(r.cells.len(), 145);
    for (label, overall) in [("4x1 gain", 0.86), ("8x1 gain", 0.88), ("4x2 gain", 0.96)] {
        let g = by_label(label).geomean;
        assert!((g - overall).abs() < 0.005, "{label}: {g}");
    }
    for (f, mean) in [("bcast", 0.60), ("scatter", 0.60), ("allreduce", 0.85)] {
        assert!(
            (family(&r, f) - mean).abs() < 0.005,
            "{f} {}",
            family(&r, f)
        );
    }
    // from 16 KiB the trees take a third to a half of the default's time, in every repeat
    for c in r
        .cells
        .iter()
        .filter(|c| c.collective == "bcast" && c.bytes >= 16384)
    {
        assert_eq!(c.verdict, Verdict::Faster, "bcast at {} B", c.bytes);
        assert!(
            (0.33..0.505).contains(&c.ratio),
            "bcast at {} B: {}",
            c.bytes,
            c.ratio
        );
    }
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

/// The cells slower in every repeat that the doc explains, and the bounds and picks of the
/// forced runs.
#[test]
fn the_doc_names_the_losses_and_what_a_selection_can_reach() {
    // 4x1: the segmented reduce at 16 KiB, the linear_sync gather from 32 KiB per rank
    let r = by_label("4x1 gain");
    for (c, b, ratio) in [("reduce", 16384, 2.36), ("gather", 32768, 1.56)] {
        let x = cell(&r, c, b);
        assert_eq!(x.verdict, Verdict::Slower, "{c} {b}");
        assert!((x.ratio - ratio).abs() < 0.005, "{c} {b}: {}", x.ratio);
    }
    // 4x2 and 8x1: reduce up to 4.25, gather up to 2.44
    let worst = |c: &str| {
        ["4x2 gain", "8x1 gain"]
            .iter()
            .map(|l| {
                by_label(l)
                    .families
                    .iter()
                    .find(|f| f.collective == c)
                    .expect(c)
                    .worst_slower
            })
            .fold(1.0, f64::max)
    };
    assert!(
        (worst("reduce") - 4.25).abs() < 0.005,
        "{}",
        worst("reduce")
    );
    assert!(
        (worst("gather") - 2.44).abs() < 0.005,
        "{}",
        worst("gather")
    );
    // 4 x 2: alltoall runs Open MPI's own decision on both sides, yet 7 sizes are "slower"
    let r = by_label("4x2 gain");
    let slower = r
        .cells
        .iter()
        .filter(|c| c.collective == "alltoall" && c.verdict == Verdict::Slower)
        .count();
    assert_eq!(slower, 7);
    // shared memory: the non-overlapping reduce_scatter at 1 MiB; reduce with call costs
    let x = cell(&by_label("P = 2 gain"), "reduce_scatter", 1 << 20);
    assert!(
        x.verdict == Verdict::Slower && (x.ratio - 2.95).abs() < 0.005,
        "{}",
        x.ratio
    );
    let calls = by_label("P = 2 calls");
    assert!((family(&calls, "reduce") - 1.12).abs() < 0.005);
    // the best any selection reaches from the forced runs, and the rules' picks at P = 2
    let bound = |name: &str| load(name).best_possible.expect("forced runs");
    assert!((bound("cluster-1gbit-4x1.csv") - 0.59).abs() < 0.005);
    assert!((bound("vader-p2.csv") - 0.93).abs() < 0.005);
    let p2 = load("vader-p2.csv");
    assert_eq!((p2.picks_within_10, p2.cells_with_forced), (105, 145));
}
