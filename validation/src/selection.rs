//! Does a rules file make Open MPI's collectives faster? The measurements of
//! `scripts/selection_sweep.sh`, summarised.
//!
//! # Input
//!
//! One CSV row per OSU output line:
//! `platform,collective,procs,config,repeat,bytes,avg_us,min_us,max_us,iterations`, where
//! `config` is `default` (Open MPI's fixed decision), `rules` (the rules file), `rules:NAME` (one of
//! several rules files) or
//! `forced:ID:SEGSIZE` (one algorithm of the tuned component forced), `bytes` is OSU's message
//! size and `avg_us` OSU's "Avg Latency": the mean over ranks of each rank's mean time per call.
//!
//! # What is computed
//!
//! A *cell* is one (collective, size). With `d_k` and `r_k` the default's and the rules' times of
//! repeat `k` (the two run back to back in each repeat):
//!
//! ```text
//! ratio   = median_k r_k / median_k d_k
//! verdict = faster   if r_k < d_k for every k
//!           slower   if r_k > d_k for every k
//!           tie      otherwise (the repeats disagree: not counted either way)
//! pick    = median_k r_k / min over forced algorithms of their time
//! ```
//!
//! Per collective and overall, the geometric mean of the ratios. The targets ([`Targets`]): no
//! collective whose geometric mean exceeds 1.00, an overall geometric mean at most 0.90, no
//! cell slower (every repeat agreeing) by more than 10 %, and the rules' time within 10 % of the
//! fastest forced algorithm in at least 80 % of the cells that have forced runs.

use std::collections::BTreeMap;
use std::fmt;

use crate::stats::median;

/// Which decision a run used.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Config {
    /// Open MPI's own fixed decision.
    Default,
    /// Open MPI's hierarchical component (`--mca coll_han_priority 100`).
    Han,
    /// The rules file under test.
    Rules,
    /// One of several rules files under test (`rules:NAME`: `--rules-named NAME=FILE`).
    Named(String),
    /// One algorithm forced (`coll_tuned_<coll>_algorithm`), with its segment size (0: none).
    Forced {
        /// Open MPI's algorithm id.
        id: u32,
        /// Segment size in bytes (0: unsegmented).
        segsize: u64,
    },
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Config::Default => write!(f, "default"),
            Config::Han => write!(f, "han"),
            Config::Rules => write!(f, "rules"),
            Config::Named(name) => write!(f, "rules:{name}"),
            Config::Forced { id, segsize: 0 } => write!(f, "{id}"),
            Config::Forced { id, segsize } => write!(f, "{id}/{segsize}"),
        }
    }
}

/// One line of OSU output from one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Platform label (`vader-p2`, `cluster-1gbit-4x1`, ...).
    pub platform: String,
    /// OSU test name without `osu_` (`bcast`, `reduce_scatter`, ...).
    pub collective: String,
    /// Processes.
    pub procs: u32,
    /// The decision the run used.
    pub config: Config,
    /// Repeat number (1-based).
    pub repeat: u32,
    /// OSU's message size in bytes (0 for barrier).
    pub bytes: u64,
    /// OSU's average latency, µs: the mean over ranks of each rank's mean time per call.
    pub avg_us: f64,
    /// OSU's maximum latency, µs: the slowest rank's mean time per call.
    pub max_us: f64,
}

/// A malformed line of the CSV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

const HEADER: &str =
    "platform,collective,procs,config,repeat,bytes,avg_us,min_us,max_us,iterations";

/// Parses the CSV `scripts/selection_sweep.sh` writes.
///
/// # Errors
///
/// [`ParseError`] naming the line: a missing or different header, a wrong field count, a number
/// that does not parse, a time that is not finite and positive, an unknown config.
pub fn parse(text: &str) -> Result<Vec<Row>, ParseError> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.trim() == HEADER => {}
        _ => {
            return Err(ParseError {
                line: 1,
                message: format!("expected the header `{HEADER}`"),
            });
        }
    }
    let mut rows = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        let err = |message: String| ParseError { line: n, message };
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 10 {
            return Err(err(format!("{} fields, expected 10", f.len())));
        }
        let config = match f[3] {
            "default" => Config::Default,
            "han" => Config::Han,
            "rules" => Config::Rules,
            c if c.starts_with("rules:") && c.len() > 6 => Config::Named(c[6..].to_string()),
            c => {
                let mut parts = c.split(':');
                match (parts.next(), parts.next(), parts.next(), parts.next()) {
                    (Some("forced"), Some(id), Some(seg), None) => Config::Forced {
                        id: id
                            .parse()
                            .map_err(|_| err(format!("config `{c}`: bad id")))?,
                        segsize: seg
                            .parse()
                            .map_err(|_| err(format!("config `{c}`: bad segment size")))?,
                    },
                    _ => return Err(err(format!("unknown config `{c}`"))),
                }
            }
        };
        let avg_us: f64 = f[6]
            .parse()
            .map_err(|_| err(format!("avg_us `{}`", f[6])))?;
        if !(avg_us.is_finite() && avg_us > 0.0) {
            return Err(err(format!("avg_us {avg_us} is not a positive time")));
        }
        let max_us: f64 = f[8]
            .parse()
            .map_err(|_| err(format!("max_us `{}`", f[8])))?;
        if !(max_us.is_finite() && max_us >= avg_us) {
            return Err(err(format!(
                "max_us {max_us} is not a time at least avg_us {avg_us}"
            )));
        }
        rows.push(Row {
            platform: f[0].to_string(),
            collective: f[1].to_string(),
            procs: f[2].parse().map_err(|_| err(format!("procs `{}`", f[2])))?,
            config,
            repeat: f[4]
                .parse()
                .map_err(|_| err(format!("repeat `{}`", f[4])))?,
            bytes: f[5].parse().map_err(|_| err(format!("bytes `{}`", f[5])))?,
            avg_us,
            max_us,
        });
    }
    Ok(rows)
}

/// Whether the rules were faster in a cell, by every repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Faster than the default in every repeat.
    Faster,
    /// Slower than the default in every repeat.
    Slower,
    /// The repeats disagree.
    Tie,
}

/// One collective at one size.
#[derive(Debug, Clone)]
pub struct Cell {
    /// OSU test name.
    pub collective: String,
    /// OSU message size.
    pub bytes: u64,
    /// The default's times, by repeat (µs).
    pub default_us: Vec<f64>,
    /// The rules' times, by repeat (µs).
    pub rules_us: Vec<f64>,
    /// `median(rules) / median(default)`.
    pub ratio: f64,
    /// Faster, slower or tie.
    pub verdict: Verdict,
    /// The fastest forced algorithm and its time (µs), if any was run.
    pub best_forced: Option<(Config, f64)>,
}

impl Cell {
    /// `median(rules) / best forced`, if forced runs exist.
    pub fn pick_ratio(&self) -> Option<f64> {
        self.best_forced
            .as_ref()
            .map(|(_, t)| median(&self.rules_us) / t)
    }
}

/// Per collective: the cells' geometric mean and counts.
#[derive(Debug, Clone)]
pub struct Family {
    /// OSU test name.
    pub collective: String,
    /// Cells.
    pub cells: usize,
    /// Geometric mean of the cells' ratios.
    pub geomean: f64,
    /// Cells faster by every repeat.
    pub faster: usize,
    /// Cells slower by every repeat.
    pub slower: usize,
    /// Worst ratio among the cells slower by every repeat (1 if none).
    pub worst_slower: f64,
}

/// The summary of one platform's measurements.
#[derive(Debug, Clone)]
pub struct Report {
    /// Platform label.
    pub platform: String,
    /// Processes.
    pub procs: u32,
    /// Cells, by collective and size.
    pub cells: Vec<Cell>,
    /// Per collective.
    pub families: Vec<Family>,
    /// Geometric mean of all cells' ratios.
    pub geomean: f64,
    /// Cells whose rules time is within 10 % of the best forced algorithm.
    pub picks_within_10: usize,
    /// Cells that have forced runs.
    pub cells_with_forced: usize,
    /// Over the cells with forced runs, the geometric mean of `min(best forced, default) /
    /// default`: what a perfect selection among Open MPI's algorithms would reach (the
    /// minimum of single runs favours the forced side a little: a bound, not a target).
    pub best_possible: Option<f64>,
}

/// What a report must show to count as "the exported rules make Open MPI faster".
#[derive(Debug, Clone, Copy)]
pub struct Targets {
    /// Largest geometric mean of any collective.
    pub family_geomean: f64,
    /// Largest overall geometric mean.
    pub overall_geomean: f64,
    /// Largest ratio of a cell slower by every repeat.
    pub worst_cell: f64,
    /// Smallest share of cells whose pick is within 10 % of the best forced algorithm.
    pub pick_share: f64,
}

impl Default for Targets {
    fn default() -> Self {
        Targets {
            family_geomean: 1.00,
            overall_geomean: 0.90,
            worst_cell: 1.10,
            pick_share: 0.80,
        }
    }
}

fn geomean(v: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x.ln(), n + 1));
    if n == 0 { 1.0 } else { (sum / n as f64).exp() }
}

/// An error building a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportError(pub String);

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReportError {}

/// Summarises one platform's rows over the sizes `min_bytes ..= max_bytes` (barrier always).
///
/// # Errors
///
/// [`ReportError`] if the rows mix platforms or process counts, if a cell has default runs
/// without rules runs (or the reverse), or if the two have different repeats.
pub fn report(rows: &[Row], min_bytes: u64, max_bytes: u64) -> Result<Report, ReportError> {
    let first = rows.first().ok_or_else(|| ReportError("no rows".into()))?;
    if let Some(r) = rows
        .iter()
        .find(|r| r.platform != first.platform || r.procs != first.procs)
    {
        return Err(ReportError(format!(
            "rows of {} at P = {} and of {} at P = {}: one platform per report",
            first.platform, first.procs, r.platform, r.procs
        )));
    }
    type Key = (String, u64);
    let mut by_cell: BTreeMap<Key, BTreeMap<Config, BTreeMap<u32, f64>>> = BTreeMap::new();
    for r in rows {
        let in_range = r.collective == "barrier" || (min_bytes..=max_bytes).contains(&r.bytes);
        if in_range {
            by_cell
                .entry((r.collective.clone(), r.bytes))
                .or_default()
                .entry(r.config.clone())
                .or_default()
                .insert(r.repeat, r.avg_us);
        }
    }
    let mut cells = Vec::new();
    for ((collective, bytes), configs) in by_cell {
        let (Some(d), Some(rl)) = (configs.get(&Config::Default), configs.get(&Config::Rules))
        else {
            return Err(ReportError(format!(
                "{collective} at {bytes} B: default and rules runs are both needed"
            )));
        };
        if d.keys().ne(rl.keys()) {
            return Err(ReportError(format!(
                "{collective} at {bytes} B: default and rules have different repeats"
            )));
        }
        let default_us: Vec<f64> = d.values().copied().collect();
        let rules_us: Vec<f64> = rl.values().copied().collect();
        let pairs = default_us.iter().zip(&rules_us);
        let verdict = if pairs.clone().all(|(d, r)| r < d) {
            Verdict::Faster
        } else if pairs.clone().all(|(d, r)| r > d) {
            Verdict::Slower
        } else {
            Verdict::Tie
        };
        let best_forced = configs
            .iter()
            .filter(|(c, _)| matches!(c, Config::Forced { .. }))
            .map(|(c, runs)| {
                (
                    c.clone(),
                    median(&runs.values().copied().collect::<Vec<_>>()),
                )
            })
            .min_by(|a, b| a.1.total_cmp(&b.1));
        cells.push(Cell {
            ratio: median(&rules_us) / median(&default_us),
            collective,
            bytes,
            default_us,
            rules_us,
            verdict,
            best_forced,
        });
    }
    let mut names: Vec<&str> = cells.iter().map(|c| c.collective.as_str()).collect();
    names.dedup();
    let families = names
        .iter()
        .map(|name| {
            let of = || cells.iter().filter(|c| c.collective == *name);
            Family {
                collective: name.to_string(),
                cells: of().count(),
                geomean: geomean(of().map(|c| c.ratio)),
                faster: of().filter(|c| c.verdict == Verdict::Faster).count(),
                slower: of().filter(|c| c.verdict == Verdict::Slower).count(),
                worst_slower: of()
                    .filter(|c| c.verdict == Verdict::Slower)
                    .map(|c| c.ratio)
                    .fold(1.0, f64::max),
            }
        })
        .collect();
    let picks: Vec<f64> = cells.iter().filter_map(Cell::pick_ratio).collect();
    let bounds: Vec<f64> = cells
        .iter()
        .filter_map(|c| {
            let d = median(&c.default_us);
            c.best_forced.as_ref().map(|(_, t)| t.min(d) / d)
        })
        .collect();
    Ok(Report {
        best_possible: (!bounds.is_empty()).then(|| geomean(bounds.into_iter())),
        platform: first.platform.clone(),
        procs: first.procs,
        geomean: geomean(cells.iter().map(|c| c.ratio)),
        picks_within_10: picks.iter().filter(|&&p| p <= 1.10).count(),
        cells_with_forced: picks.len(),
        families,
        cells,
    })
}

impl Report {
    /// The targets this report misses, one sentence each (empty: all met).
    pub fn misses(&self, t: &Targets) -> Vec<String> {
        let mut out = Vec::new();
        for f in &self.families {
            if f.geomean > t.family_geomean {
                out.push(format!(
                    "{}: {} geometric mean {:.3} > {:.2}",
                    self.platform, f.collective, f.geomean, t.family_geomean
                ));
            }
            if f.worst_slower > t.worst_cell {
                out.push(format!(
                    "{}: {} has a cell {:.3}x the default (slower in every repeat)",
                    self.platform, f.collective, f.worst_slower
                ));
            }
        }
        if self.geomean > t.overall_geomean {
            out.push(format!(
                "{}: overall geometric mean {:.3} > {:.2}",
                self.platform, self.geomean, t.overall_geomean
            ));
        }
        if self.cells_with_forced > 0 {
            let share = self.picks_within_10 as f64 / self.cells_with_forced as f64;

            if share < t.pick_share {
                out.push(format!(
                    "{}: rules within 10 % of the best forced algorithm in {} of {} cells ({:.0} % < {:.0} %)",
                    self.platform,
                    self.picks_within_10,
                    self.cells_with_forced,
                    share * 100.0,
                    t.pick_share * 100.0
                ));
            }
        }
        out
    }

    /// The summary line and the per-collective table as Markdown (the first part of
    /// [`markdown`](Self::markdown)).
    pub fn summary_markdown(&self) -> String {
        let full = self.markdown();
        match full.find("\n| collective | bytes |") {
            Some(i) => full[..i].to_string(),
            None => full,
        }
    }

    /// The per-collective table and the per-cell table as Markdown.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "**{}** (P = {}): overall geometric mean of rules / default **{:.2}**; rules within \
             10 % of the best forced algorithm in {} of {} cells",
            self.platform, self.procs, self.geomean, self.picks_within_10, self.cells_with_forced
        );
        match self.best_possible {
            Some(b) => s.push_str(&format!(
                "; the fastest of default and forced algorithms per cell: {b:.2} of the default.\n\n"
            )),
            None => s.push_str(".\n\n"),
        }
        s.push_str("| collective | sizes | rules / default (geo. mean) | faster | slower | worst slower |\n");
        s.push_str("|---|---|---|---|---|---|\n");
        for f in &self.families {
            s.push_str(&format!(
                "| {} | {} | {:.2} | {} | {} | {:.2} |\n",
                f.collective, f.cells, f.geomean, f.faster, f.slower, f.worst_slower
            ));
        }
        s.push_str("\n| collective | bytes | default µs (repeats) | rules µs (repeats) | ratio | verdict | best forced | µs | rules / best |\n");
        s.push_str("|---|---|---|---|---|---|---|---|---|\n");
        let list = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.1}"))
                .collect::<Vec<_>>()
                .join(" / ")
        };
        for c in &self.cells {
            let (best, best_us) = match &c.best_forced {
                Some((cfg, t)) => (cfg.to_string(), format!("{t:.1}")),
                None => ("-".into(), "-".into()),
            };
            s.push_str(&format!(
                "| {} | {} | {} | {} | {:.2} | {} | {} | {} | {} |\n",
                c.collective,
                c.bytes,
                list(&c.default_us),
                list(&c.rules_us),
                c.ratio,
                match c.verdict {
                    Verdict::Faster => "faster",
                    Verdict::Slower => "slower",
                    Verdict::Tie => "tie",
                },
                best,
                best_us,
                c.pick_ratio().map_or("-".into(), |p| format!("{p:.2}")),
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(rows: &[&str]) -> String {
        let mut s = format!("{HEADER}\n");
        for r in rows {
            s.push_str(r);
            s.push('\n');
        }
        s
    }

    #[test]
    fn verdicts_need_every_repeat() {
        let text = csv(&[
            "p,bcast,4,default,1,8,10,10,10,1",
            "p,bcast,4,rules,1,8,5,5,5,1",
            "p,bcast,4,default,2,8,10,10,10,1",
            "p,bcast,4,rules,2,8,6,6,6,1",
            "p,bcast,4,default,1,16,10,10,10,1",
            "p,bcast,4,rules,1,16,5,5,5,1",
            "p,bcast,4,default,2,16,10,10,10,1",
            "p,bcast,4,rules,2,16,12,12,12,1",
            "p,bcast,4,forced:3:0,1,16,4,4,4,1",
        ]);
        let rows = parse(&text).unwrap();
        let r = report(&rows, 1, 1 << 20).unwrap();
        assert_eq!(r.cells.len(), 2);
        assert_eq!(r.cells[0].verdict, Verdict::Faster);
        // median 5.5 / 10
        assert!((r.cells[0].ratio - 0.55).abs() < 1e-12);
        assert_eq!(r.cells[1].verdict, Verdict::Tie);
        // median of 5 and 12 = 8.5; / best forced 4
        assert!((r.cells[1].pick_ratio().unwrap() - 8.5 / 4.0).abs() < 1e-12);
        assert_eq!(r.cells_with_forced, 1);
        assert_eq!(r.picks_within_10, 0);
        // the one cell with forced runs: forced 4 against the default's 10
        assert!((r.best_possible.unwrap() - 0.4).abs() < 1e-12);
        // geometric mean of 0.55 and 0.85
        assert!((r.geomean - (0.55f64 * 0.85).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn misses_name_what_fails() {
        let text = csv(&[
            "p,reduce,2,default,1,8,10,10,10,1",
            "p,reduce,2,rules,1,8,13,13,13,1",
            "p,reduce,2,forced:1:0,1,8,10,10,10,1",
        ]);
        let r = report(&parse(&text).unwrap(), 1, 100).unwrap();
        let m = r.misses(&Targets::default());
        assert_eq!(m.len(), 4, "{m:?}");
        assert!(m[0].contains("reduce geometric mean 1.300"));
        assert!(m[1].contains("1.300x"));
        assert!(m[3].contains("0 of 1 cells"));
    }

    #[test]
    fn malformed_input_names_the_line() {
        assert_eq!(parse("x\n").unwrap_err().line, 1);
        let e = parse(&csv(&["p,bcast,4,default,1,8,NaN,NaN,NaN,1"])).unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse(&csv(&[
            "p,bcast,4,default,1,8,1,1,1,1",
            "p,bcast,4,forced:x:0,1,8,1,1,1,1",
        ]))
        .unwrap_err();
        assert_eq!(e.line, 3);
        // OSU's maximum over ranks below its average: not OSU output
        let e = parse(&csv(&["p,bcast,4,default,1,8,2,1,1,1"])).unwrap_err();
        assert!(e.message.contains("max_us"), "{e:?}");
        let only_default = parse(&csv(&["p,bcast,4,default,1,8,1,1,1,1"])).unwrap();
        assert!(report(&only_default, 1, 100).is_err());
        let mixed = parse(&csv(&[
            "p,bcast,4,default,1,8,1,1,1,1",
            "q,bcast,4,rules,1,8,1,1,1,1",
        ]))
        .unwrap();
        assert!(report(&mixed, 1, 100).is_err());
    }
}
