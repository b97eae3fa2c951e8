//! The committed MPICH measurements on the emulated cluster (tests/fixtures/mpich/cluster/)
//! against what docs/ACCURACY.md ("MPICH on the emulated cluster") says of them: every cell has
//! its three repeats, and the doc's count table is what the data give. The verdict rule is the
//! doc's (and `scripts/mpich_trace/summary.py`'s): a cell is faster or slower only when every
//! repeat agrees, `=` otherwise; it is re-implemented here, independently of the script.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const ORDER: [&str; 8] = [
    "bcast",
    "allreduce",
    "reduce",
    "allgather",
    "alltoall",
    "gather",
    "scatter",
    "barrier",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// (collective, bytes) -> repeat -> config -> latency (µs)
type Cells = BTreeMap<(String, u64), BTreeMap<u32, BTreeMap<String, f64>>>;

fn load() -> Cells {
    let path = root().join("tests/fixtures/mpich/cluster/compare.csv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut cells = Cells::new();
    for (i, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 5, "compare.csv line {}: {line}", i + 1);
        let repeat: u32 = f[0]
            .parse()
            .unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let bytes: u64 = f[3]
            .parse()
            .unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let lat: f64 = f[4]
            .parse()
            .unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        assert!(
            lat.is_finite() && lat > 0.0,
            "line {}: latency {lat}",
            i + 1
        );
        cells
            .entry((f[1].to_string(), bytes))
            .or_default()
            .entry(repeat)
            .or_default()
            .insert(f[2].to_string(), lat);
    }
    cells
}

/// faster / = / slower of `cand` against `base`, per collective
fn counts(cells: &Cells, base: &str, cand: &str) -> BTreeMap<String, [u32; 3]> {
    let mut out: BTreeMap<String, [u32; 3]> = BTreeMap::new();
    for ((c, _), reps) in cells {
        let pairs: Vec<(f64, f64)> = reps.values().map(|r| (r[base], r[cand])).collect();
        let i = if pairs.iter().all(|(b, f)| f < b) {
            0
        } else if pairs.iter().all(|(b, f)| f > b) {
            2
        } else {
            1
        };
        out.entry(c.clone()).or_default()[i] += 1;
    }
    out
}

#[test]
fn every_cell_has_three_repeats_of_every_config() {
    let cells = load();
    assert_eq!(
        cells.len(),
        7 * 18 + 1,
        "7 collectives x 18 sizes (8 B .. 1 MiB) + barrier"
    );
    for ((c, b), reps) in &cells {
        assert!(ORDER.contains(&c.as_str()), "unknown collective {c}");
        assert_eq!(reps.len(), 3, "{c} {b}: repeats");
        for (r, configs) in reps {
            for k in ["default", "default-none", "file"] {
                assert!(configs.contains_key(k), "{c} {b} repeat {r}: no {k}");
            }
        }
    }
}

#[test]
fn accuracy_doc_shows_the_counts_the_data_give() {
    let doc = std::fs::read_to_string(root().join("docs/ACCURACY.md")).expect("docs/ACCURACY.md");
    let section = doc
        .split("### MPICH on the emulated cluster")
        .nth(1)
        .expect("docs/ACCURACY.md has the section \"MPICH on the emulated cluster\"");
    let cells = load();
    let shipped = counts(&cells, "default", "file");
    let none = counts(&cells, "default-none", "file");
    let setting = counts(&cells, "default", "default-none");
    let mut total = [[0u32; 3]; 3];
    for c in ORDER {
        let (a, b, d) = (shipped[c], none[c], setting[c]);
        for i in 0..3 {
            total[0][i] += a[i];
            total[1][i] += b[i];
            total[2][i] += d[i];
        }
        let row = format!(
            "| {c} | {} / {} / {} | {} / {} / {} | {} / {} / {} |",
            a[0], a[1], a[2], b[0], b[1], b[2], d[0], d[1], d[2]
        );
        assert!(section.contains(&row), "the section lacks the row\n{row}");
    }
    let t = total;
    let row = format!(
        "| all 127 cells | {} / {} / {} | {} / {} / {} | {} / {} / {} |",
        t[0][0], t[0][1], t[0][2], t[1][0], t[1][1], t[1][2], t[2][0], t[2][1], t[2][2]
    );
    assert!(section.contains(&row), "the section lacks the row\n{row}");
}
