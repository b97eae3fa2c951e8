//! The table of docs/ACCURACY.md "Does `commcost tune` make Open MPI faster?" is what the
//! committed measurements give (`tests/fixtures/tune/`: OSU with Open MPI's default, the rules
//! `commcost tune` wrote and the model-only rules, back to back; the oracle: the sweeps of every
//! forced algorithm of `tests/fixtures/cluster-200m/` and `tests/fixtures/shm/`).

use std::path::{Path, PathBuf};

use commcost_validation::selection::{Row, parse};
use commcost_validation::tune_validation::{TuneTable, combined_markdown, tune_table};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rows(rel: &str) -> Vec<Row> {
    let path = root().join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The platforms: the rules sweep, the oracle's sweeps (on the cluster unsegmented and with
/// 16 KiB segments), the communicator size.
const RUNS: [(&str, &[&str], u32); 4] = [
    (
        "tests/fixtures/tune/rules-4x1.csv",
        &[
            "tests/fixtures/cluster-200m/forced-4x1.csv",
            "tests/fixtures/cluster-200m/forced-seg16k-4x1.csv",
        ],
        4,
    ),
    (
        "tests/fixtures/tune/rules-8x1.csv",
        &[
            "tests/fixtures/cluster-200m/forced-8x1.csv",
            "tests/fixtures/cluster-200m/forced-seg16k-8x1.csv",
        ],
        8,
    ),
    (
        "tests/fixtures/tune/rules-p2.csv",
        &["tests/fixtures/shm/forced-p2.csv"],
        2,
    ),
    (
        "tests/fixtures/tune/rules-p4.csv",
        &["tests/fixtures/shm/forced-p4.csv"],
        4,
    ),
];

fn tables() -> Vec<TuneTable> {
    RUNS.iter()
        .map(|(runs, oracles, p)| {
            let oracle_rows: Vec<Vec<Row>> = oracles.iter().map(|o| rows(o)).collect();
            let refs: Vec<&[Row]> = oracle_rows.iter().map(Vec::as_slice).collect();
            tune_table(&rows(runs), &refs, *p, 8, 1 << 20).unwrap()
        })
        .collect()
}

/// The table between `<!-- tune_validation -->` and the next blank line in docs/ACCURACY.md.
fn doc_table() -> String {
    doc_block("tune_validation")
}

/// The text between `<!-- NAME -->` and the next blank line in docs/ACCURACY.md.
fn doc_block(name: &str) -> String {
    let doc = std::fs::read_to_string(root().join("docs/ACCURACY.md")).unwrap();
    let marker = format!("<!-- {name} -->\n");
    let start = doc
        .find(&marker)
        .unwrap_or_else(|| panic!("docs/ACCURACY.md has the {name} table"))
        + marker.len();
    let rest = &doc[start..];
    let end = rest.find("\n\n").map_or(rest.len(), |e| e + 1);
    rest[..end].to_string()
}

#[test]
fn the_doc_table_is_what_the_fixtures_give() {
    assert_eq!(doc_table(), combined_markdown(&tables()));
}

#[test]
fn every_platform_compares_both_rules_files_on_every_tuned_collective() {
    for t in tables() {
        assert_eq!(t.names, ["model", "tune"], "{}", t.platform);
        // seven collectives and the overall row, every cell of 8 B - 1 MiB (18 sizes)
        assert_eq!(t.rows.len(), 8, "{}", t.platform);
        for r in &t.rows[..7] {
            assert_eq!(r.cells, 18, "{} {}", t.platform, r.collective);
        }
    }
}

/// MPICH over shared memory at P = 2 (`tests/fixtures/tune/mpich-p2.csv`: OSU with MPICH's own
/// table, the file of `commcost tune --mpich`, and MPICH as installed, 15 repeats alternating):
/// per collective the geometric means over the sizes of each to MPICH's own table, the cells
/// slower than 1.10 in every repeat, the own table's median repeat spread.
#[test]
fn the_mpich_table_is_what_the_fixture_gives() {
    let runs = rows("tests/fixtures/tune/mpich-p2.csv");
    let t = tune_table(&runs, &[&runs], 2, 8, 1 << 20).unwrap();
    assert_eq!(t.names, ["as-installed", "tune"]);
    let mut text = String::from(
        "| collective | tune / own table | as installed / own table | tune slower > 1.10 in every repeat | own table's repeat spread |\n|---|---|---|---|---|\n",
    );
    for r in &t.rows {
        text.push_str(&format!(
            "| {} | {:.2} | {:.2} | {} of {} | {:.0} % |\n",
            r.collective,
            r.rules[1],
            r.rules[0],
            r.slower[1],
            r.cells,
            100.0 * r.spread
        ));
    }
    assert_eq!(doc_block("tune_mpich"), text);
}

/// docs/ACCURACY.md, "Nodes of several ranks": OSU on 4 nodes of 2 ranks with Open MPI's default
/// and the rules `export ompi-rules --ranks-per-node 2` wrote by the last rank's completion
/// (`rules-nodes-4x2.rules`) and by the mean over ranks (`rules-nodes-mean-4x2.rules`), 5 repeats
/// interleaved; the oracle from the forced runs of `forced-4x2.csv`.
#[test]
fn the_rules_on_nodes_table_is_what_the_fixtures_give() {
    let oracle = rows("tests/fixtures/nodes/forced-4x2.csv");
    let t = tune_table(
        &rows("tests/fixtures/nodes/rules-4x2.csv"),
        &[&oracle],
        8,
        8,
        1 << 20,
    )
    .unwrap();
    assert_eq!(t.names, ["last", "mean"]);
    assert_eq!(t.markdown(), doc_block("tune_validation nodes"));
}
