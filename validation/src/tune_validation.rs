//! Do the rules `commcost tune` writes make Open MPI faster, and how close do they come to the
//! fastest forced algorithm? The measurements of `scripts/selection_sweep.sh --rules-named
//! tune=FILE --rules-named model=FILE`, summarised against an oracle run.
//!
//! A *cell* is one (collective, OSU size). With `d_k`, `t_k` the default's and a rules file's
//! `avg_us` in repeat `k` (run back to back), the cell's ratio is `median_k t_k / median_k d_k`;
//! the cell is *slower in every repeat* when `min_k t_k / d_k > 1.10`. The *oracle* of a cell is
//! the fastest of the default and every forced algorithm by median over the repeats of other
//! sweeps (`forced:*` rows: every algorithm, unsegmented and segmented), as a ratio to each
//! sweep's own default, the smallest over the sweeps. Per
//! collective: the geometric means over its sizes; the default's repeat spread is the median
//! over sizes of `(max_k d_k - min_k d_k) / median_k d_k`.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::selection::{Config, Row};
use crate::stats::{median, spread};

/// One collective's summary (or, with `collective` = `all`, every cell's).
#[derive(Debug, Clone, PartialEq)]
pub struct TuneRow {
    /// OSU's test name, or `all`.
    pub collective: String,
    /// Cells (sizes) compared.
    pub cells: usize,
    /// Geometric mean over the cells of each named rules file's ratio to the default, in the
    /// order of [`TuneTable::names`].
    pub rules: Vec<f64>,
    /// Geometric mean over the cells of the oracle's ratio to the default.
    pub oracle: f64,
    /// Per rules file, the cells slower than 1.10 in every repeat.
    pub slower: Vec<usize>,
    /// Per rules file, the largest of the cells' smallest per-repeat ratios.
    pub worst: Vec<f64>,
    /// Median over the cells of the default's repeat spread.
    pub spread: f64,
}

/// The summary of one platform and communicator size.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneTable {
    /// The platform label of the runs.
    pub platform: String,
    /// Processes.
    pub procs: u32,
    /// The rules files' names (`rules:NAME`).
    pub names: Vec<String>,
    /// Per collective, then `all`.
    pub rows: Vec<TuneRow>,
}

fn geomean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// Times by (collective, bytes, config), by repeat.
type Times = BTreeMap<(String, u64, Config), BTreeMap<u32, f64>>;

fn times(rows: &[Row], procs: u32) -> Times {
    let mut t: Times = BTreeMap::new();
    for r in rows.iter().filter(|r| r.procs == procs) {
        t.entry((r.collective.clone(), r.bytes, r.config.clone()))
            .or_default()
            .insert(r.repeat, r.avg_us);
    }
    t
}

/// The summary of `runs` (default and `rules:NAME` rows, one platform) at `procs` processes
/// against the oracle of `oracles` (sweeps of default and forced rows of the same platform; per
/// cell the smallest over the sweeps of the fastest median over that sweep's default median),
/// over the cells both hold between `min_bytes` and `max_bytes`.
///
/// # Errors
///
/// A message when `runs` hold no rules file, or a cell lacks the default in a repeat where a
/// rules file ran.
pub fn tune_table(
    runs: &[Row],
    oracles: &[&[Row]],
    procs: u32,
    min_bytes: u64,
    max_bytes: u64,
) -> Result<TuneTable, String> {
    let t = times(runs, procs);
    let o: Vec<Times> = oracles.iter().map(|rows| times(rows, procs)).collect();
    let mut names: Vec<String> = Vec::new();
    for (_, _, c) in t.keys() {
        if let Config::Named(n) = c
            && !names.contains(n)
        {
            names.push(n.clone());
        }
    }
    if names.is_empty() {
        return Err(format!("no rules:NAME runs at P = {procs}"));
    }
    let platform = runs
        .iter()
        .find(|r| r.procs == procs)
        .map_or_else(String::new, |r| r.platform.clone());
    // per collective: per cell (ratios per name, oracle, worst per name, spread)
    struct CellStat {
        ratios: Vec<f64>,
        oracle: f64,
        worst: Vec<f64>,
        spread: f64,
    }
    let mut by: BTreeMap<String, Vec<CellStat>> = BTreeMap::new();
    for ((coll, bytes, config), default) in &t {
        if *config != Config::Default || *bytes < min_bytes || *bytes > max_bytes {
            continue;
        }
        let d_med = median(&default.values().copied().collect::<Vec<_>>());
        // the oracle: per sweep the fastest by median of its default and forced runs, over its
        // default's median; the smallest over the sweeps
        let mut oracle = f64::INFINITY;
        for sweep in &o {
            let Some(od) = sweep.get(&(coll.clone(), *bytes, Config::Default)) else {
                continue;
            };
            let od_med = median(&od.values().copied().collect::<Vec<_>>());
            let best = sweep
                .iter()
                .filter(|((c, b, cfg), _)| {
                    c == coll
                        && b == bytes
                        && matches!(cfg, Config::Default | Config::Forced { .. })
                })
                .map(|(_, v)| median(&v.values().copied().collect::<Vec<_>>()))
                .fold(f64::INFINITY, f64::min);
            oracle = oracle.min(best / od_med);
        }
        if !oracle.is_finite() {
            continue;
        }
        let mut ratios = Vec::new();
        let mut worst = Vec::new();
        for n in &names {
            let Some(r) = t.get(&(coll.clone(), *bytes, Config::Named(n.clone()))) else {
                return Err(format!("{coll} at {bytes} B: no rules:{n} runs"));
            };
            let r_med = median(&r.values().copied().collect::<Vec<_>>());
            let mut least = f64::INFINITY;
            for (rep, x) in r {
                let Some(d) = default.get(rep) else {
                    return Err(format!(
                        "{coll} at {bytes} B: rules:{n} ran in repeat {rep}, the default not"
                    ));
                };
                least = least.min(x / d);
            }
            ratios.push(r_med / d_med);
            worst.push(least);
        }
        let ds: Vec<f64> = default.values().copied().collect();
        by.entry(coll.clone()).or_default().push(CellStat {
            ratios,
            oracle,
            worst,
            spread: spread(&ds),
        });
    }
    let row = |collective: String, cells: &[&CellStat]| TuneRow {
        collective,
        cells: cells.len(),
        rules: (0..names.len())
            .map(|k| geomean(&cells.iter().map(|c| c.ratios[k]).collect::<Vec<_>>()))
            .collect(),
        oracle: geomean(&cells.iter().map(|c| c.oracle).collect::<Vec<_>>()),
        slower: (0..names.len())
            .map(|k| cells.iter().filter(|c| c.worst[k] > 1.10).count())
            .collect(),
        worst: (0..names.len())
            .map(|k| cells.iter().map(|c| c.worst[k]).fold(0.0, f64::max))
            .collect(),
        spread: median(&cells.iter().map(|c| c.spread).collect::<Vec<_>>()),
    };
    let mut rows: Vec<TuneRow> = by
        .iter()
        .map(|(c, cells)| row(c.clone(), &cells.iter().collect::<Vec<_>>()))
        .collect();
    let all: Vec<&CellStat> = by.values().flatten().collect();
    rows.push(row("all".into(), &all));
    Ok(TuneTable {
        platform,
        procs,
        names,
        rows,
    })
}

impl TuneTable {
    /// The table as markdown: per collective the cells, each rules file's ratio to the default
    /// (and its cells slower than 1.10 in every repeat), the oracle's, each rules file's ratio
    /// to the oracle, and the default's repeat spread.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = write!(s, "| {} P = {} | cells |", self.platform, self.procs);
        for n in &self.names {
            let _ = write!(s, " {n} / default (slower) |");
        }
        s.push_str(" oracle / default |");
        for n in &self.names {
            let _ = write!(s, " {n} / oracle |");
        }
        s.push_str(" spread |\n|---|---|");
        for _ in 0..(2 * self.names.len() + 2) {
            s.push_str("---|");
        }
        s.push('\n');
        for r in &self.rows {
            let bold = r.collective == "all";
            let name = if bold {
                "**all**".to_string()
            } else {
                r.collective.clone()
            };
            let _ = write!(s, "| {name} | {} |", r.cells);
            for k in 0..self.names.len() {
                let _ = write!(s, " {:.2} ({}) |", r.rules[k], r.slower[k]);
            }
            let _ = write!(s, " {:.2} |", r.oracle);
            for k in 0..self.names.len() {
                let _ = write!(s, " {:.2} |", r.rules[k] / r.oracle);
            }
            let _ = writeln!(s, " {:.0} % |", 100.0 * r.spread);
        }
        s
    }
}

/// Several tables side by side: per collective and table, each rules file's ratio to the
/// default and the oracle's (`a · b · oracle`); then the overall ratios, each rules file's
/// overall ratio to the oracle's, its cells slower than 1.10 in every repeat, and the default's
/// median repeat spread. Collectives missing from a table show `–`.
pub fn combined_markdown(tables: &[TuneTable]) -> String {
    let mut s = String::from("| collective |");
    for t in tables {
        let _ = write!(
            s,
            " {} P = {}: {} · oracle |",
            t.platform,
            t.procs,
            t.names.join(" · ")
        );
    }
    s.push_str("\n|---|");
    for _ in tables {
        s.push_str("---|");
    }
    s.push('\n');
    let mut collectives: Vec<&str> = Vec::new();
    for t in tables {
        for r in &t.rows {
            if r.collective != "all" && !collectives.contains(&r.collective.as_str()) {
                collectives.push(&r.collective);
            }
        }
    }
    collectives.sort_unstable();
    collectives.push("all");
    for c in collectives {
        let label = if c == "all" { "**overall**" } else { c };
        let _ = write!(s, "| {label} |");
        for t in tables {
            match t.rows.iter().find(|r| r.collective == c) {
                Some(r) => {
                    let v: Vec<String> = r.rules.iter().map(|x| format!("{x:.2}")).collect();
                    let _ = write!(s, " {} · {:.2} |", v.join(" · "), r.oracle);
                }
                None => s.push_str(" – |"),
            }
        }
        s.push('\n');
    }
    let all = |t: &TuneTable| t.rows.iter().find(|r| r.collective == "all").cloned();
    s.push_str("| rules / oracle |");
    for t in tables {
        match all(t) {
            Some(r) => {
                let v: Vec<String> = r
                    .rules
                    .iter()
                    .map(|x| format!("{:.2}", x / r.oracle))
                    .collect();
                let _ = write!(s, " {} |", v.join(" · "));
            }
            None => s.push_str(" – |"),
        }
    }
    s.push_str("\n| cells slower than 1.10 in every repeat (of all) |");
    for t in tables {
        match all(t) {
            Some(r) => {
                let v: Vec<String> = r.slower.iter().map(usize::to_string).collect();
                let _ = write!(s, " {} of {} |", v.join(" · "), r.cells);
            }
            None => s.push_str(" – |"),
        }
    }
    s.push_str("\n| the default's repeat spread (median) |");
    for t in tables {
        match all(t) {
            Some(r) => {
                let _ = write!(s, " {:.0} % |", 100.0 * r.spread);
            }
            None => s.push_str(" – |"),
        }
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selection::parse;

    const HEADER: &str =
        "platform,collective,procs,config,repeat,bytes,avg_us,min_us,max_us,iterations";

    #[test]
    fn ratios_oracle_and_slower_cells_by_hand() {
        // bcast at 8 B: default 10, 12 (median 11); tune 8, 9 (median 8.5: 0.773); model 12, 14
        // (median 13: 1.182; per repeat 1.2, 1.167: slower in every repeat)
        let runs = parse(
            &[
                HEADER,
                "p,bcast,4,default,1,8,10,10,10,1",
                "p,bcast,4,rules:tune,1,8,8,8,8,1",
                "p,bcast,4,rules:model,1,8,12,12,12,1",
                "p,bcast,4,default,2,8,12,12,12,1",
                "p,bcast,4,rules:tune,2,8,9,9,9,1",
                "p,bcast,4,rules:model,2,8,14,14,14,1",
            ]
            .join("\n"),
        )
        .unwrap();
        // oracle file: default 20, forced 1 at 15 and 17 (median 16), forced 2 at 30: 16 / 20
        let oracle = parse(
            &[
                HEADER,
                "p,bcast,4,default,1,8,20,20,20,1",
                "p,bcast,4,forced:1:0,1,8,15,15,15,1",
                "p,bcast,4,forced:1:0,2,8,17,17,17,1",
                "p,bcast,4,forced:2:0,1,8,30,30,30,1",
            ]
            .join("\n"),
        )
        .unwrap();
        let t = tune_table(&runs, &[&oracle], 4, 8, 1 << 20).unwrap();
        assert_eq!(t.names, ["model", "tune"]);
        let r = &t.rows[0];
        assert_eq!((r.collective.as_str(), r.cells), ("bcast", 1));
        assert!((r.rules[0] - 13.0 / 11.0).abs() < 1e-12);
        assert!((r.rules[1] - 8.5 / 11.0).abs() < 1e-12);
        assert!((r.oracle - 0.8).abs() < 1e-12);
        assert_eq!(r.slower, [1, 0]);
        assert!((r.spread - 2.0 / 11.0).abs() < 1e-12);
        assert_eq!(t.rows[1].collective, "all");
        // a rules run without the default in its repeat is an error
        let bad = parse(
            &[
                HEADER,
                "p,bcast,4,default,1,8,10,10,10,1",
                "p,bcast,4,rules:tune,2,8,8,8,8,1",
            ]
            .join("\n"),
        )
        .unwrap();
        assert!(tune_table(&bad, &[&oracle], 4, 8, 1 << 20).is_err());
    }
}
