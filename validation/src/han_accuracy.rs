//! How well the crate prices Open MPI's `han` against its default on nodes of several ranks:
//! the `han` and `default` rows of a selection sweep (`scripts/selection_sweep.sh --han`)
//! priced by simulating [`Hierarchical::HAN`] and the algorithm of Open MPI 4.1.4's fixed
//! decision on the two-level platform, compared with what OSU measured.
//!
//! A *cell* is (collective, P, OSU size) with both configurations measured. Its han error is
//! `|predicted / measured − 1|` of han's time (OSU's average against the mean over ranks of the
//! completion times, as [`forced_accuracy`](crate::forced_accuracy) compares). Its *verdict* is
//! whether han was faster than the default in every repeat (repeats paired by index), slower in
//! every repeat, or neither; the model *agrees* on a cell with a verdict when its predicted
//! han / default ratio is on the same side of 1.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use commcost::CommModel;
use commcost::collectives::ompi::fixed_decision;
use commcost::collectives::{Collective, Family};
use commcost::sim::{
    DEFAULT_MAX_MEMORY, Hierarchical, SimOptions, Simulator, TwoLevel, schedule_in,
};

use crate::forced_accuracy::{LARGE_FROM, Nodes, Pricing, osu_problem, quantile};
use crate::selection::{Config, Row};
use crate::stats::{mean, median, spread};

/// One cell: han and the default measured and predicted.
#[derive(Debug, Clone)]
pub struct HanCell {
    /// The collective.
    pub collective: Collective,
    /// Communicator size.
    pub procs: u64,
    /// OSU's size column.
    pub bytes: u64,
    /// Median over repeats of OSU's average with han, seconds.
    pub han: f64,
    /// Median over repeats of OSU's average with the default, seconds.
    pub default: f64,
    /// `(max − min) / median` of han's average over repeats.
    pub spread: f64,
    /// Han faster than the default in every repeat (`Some(true)`), slower in every repeat
    /// (`Some(false)`), or neither.
    pub verdict: Option<bool>,
    /// Predicted mean completion time with han, seconds.
    pub predicted_han: f64,
    /// Predicted mean completion time of the default's algorithm, seconds.
    pub predicted_default: f64,
}

impl HanCell {
    /// `|predicted / measured − 1|` of han.
    pub fn error(&self) -> f64 {
        (self.predicted_han / self.han - 1.0).abs()
    }

    /// Whether the model's han / default ratio is on the measured verdict's side (`None`
    /// without a verdict).
    pub fn agrees(&self) -> Option<bool> {
        self.verdict
            .map(|faster| (self.predicted_han < self.predicted_default) == faster)
    }
}

/// Prices every cell of `rows` with both a `han` and a `default` configuration, `inter`
/// between nodes and `nodes` inside them (consecutive ranks on a node).
///
/// # Errors
///
/// A collective the crate does not know, a size the nodes cannot hold, or a schedule the
/// simulator refuses, as text naming the cell.
pub fn price_han(
    rows: &[Row],
    inter: &dyn CommModel,
    pricing: &Pricing,
    nodes: &Nodes<'_>,
) -> Result<Vec<HanCell>, String> {
    type Key = (Collective, u64, u64);
    // per cell, per configuration (han: true), repeat → average
    let mut cells: BTreeMap<Key, [BTreeMap<u32, f64>; 2]> = BTreeMap::new();
    for r in rows {
        let han = match &r.config {
            Config::Han => true,
            Config::Default => false,
            _ => continue,
        };
        let collective: Collective = r
            .collective
            .parse()
            .map_err(|_| format!("unknown collective `{}`", r.collective))?;
        cells
            .entry((collective, u64::from(r.procs), r.bytes))
            .or_default()[usize::from(han)]
        .insert(r.repeat, r.avg_us * 1e-6);
    }
    let options = pricing.options(inter);
    let inside = SimOptions {
        rendezvous_above: nodes.intra_rendezvous_above,
        ..options
    };
    let mut simulator = Simulator::new();
    let mut out = Vec::new();
    for ((collective, procs, bytes), [default, han]) in cells {
        if default.is_empty() || han.is_empty() {
            continue;
        }
        let Some(problem) = osu_problem(collective, procs, bytes) else {
            continue;
        };
        let problem = problem.with_operator(pricing.operator);
        let label = format!("{collective} P={procs} {bytes} B");
        let map = nodes.map(procs, &label)?;
        let platform = TwoLevel {
            nodes: &map,
            inter,
            inter_rendezvous_above: options.rendezvous_above,
        };
        let han_schedule = Hierarchical::HAN
            .schedule(collective, &map, &problem)
            .map_err(|e| format!("{label}: han: {e}"))?;
        let id = fixed_decision(collective, procs, bytes, true);
        let name = if matches!(collective, Collective::Bcast | Collective::Reduce) && id == 2 {
            "2:segment=0,fanout=1".to_string()
        } else {
            id.to_string()
        };
        let default_schedule = schedule_in(
            Family::Ompi,
            collective,
            &name,
            &problem,
            DEFAULT_MAX_MEMORY,
        )
        .map_err(|e| format!("{label}: default ({name}): {e}"))?;
        let mut predict = |s| {
            simulator
                .simulate_two_level(s, nodes.intra, platform, &inside)
                .map(|r| mean(&r.rank_finish))
                .map_err(|e| format!("{label}: {e}"))
        };
        let predicted_han = predict(&han_schedule)?;
        let predicted_default = predict(&default_schedule)?;
        let hs: Vec<f64> = han.values().copied().collect();
        let ds: Vec<f64> = default.values().copied().collect();
        let paired: Vec<(f64, f64)> = han
            .iter()
            .filter_map(|(r, &h)| default.get(r).map(|&d| (h, d)))
            .collect();
        let verdict = if paired.is_empty() {
            None
        } else if paired.iter().all(|&(h, d)| h < d) {
            Some(true)
        } else if paired.iter().all(|&(h, d)| h > d) {
            Some(false)
        } else {
            None
        };
        out.push(HanCell {
            collective,
            procs,
            bytes,
            han: median(&hs),
            default: median(&ds),
            spread: spread(&hs),
            verdict,
            predicted_han,
            predicted_default,
        });
    }
    Ok(out)
}

/// The geometric mean of `v` (1 for none).
fn geomean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 1.0;
    }
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// The table of docs/ACCURACY.md: per collective and platform (`label`), han's prediction
/// error below and from [`LARGE_FROM`] (median, 90th percentile), the repeat spread, the
/// geometric mean over sizes of han / default measured and predicted, and how many cells with
/// a verdict the model gets on the right side.
pub fn han_markdown(tables: &[(&str, &[HanCell])]) -> String {
    let mut s = String::from(
        "| collective | nodes | han error < 8 KiB | >= 8 KiB | spread | han / default: measured | predicted | right side |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let pct = |x: f64| format!("{:.0} %", x * 100.0);
    let band = |cells: &[&HanCell], small: bool| {
        let e: Vec<f64> = cells
            .iter()
            .filter(|c| (c.bytes < LARGE_FROM) == small)
            .map(|c| c.error())
            .collect();
        if e.is_empty() {
            "–".to_string()
        } else {
            format!("{} / {}", pct(median(&e)), pct(quantile(&e, 0.9)))
        }
    };
    for &(label, cells) in tables {
        let mut by: BTreeMap<Option<Collective>, Vec<&HanCell>> = BTreeMap::new();
        for c in cells {
            by.entry(Some(c.collective)).or_default().push(c);
            by.entry(None).or_default().push(c);
        }
        // the collectives first, then all
        let mut keys: Vec<Option<Collective>> = by.keys().copied().collect();
        keys.sort_by_key(|k| k.is_none());
        for key in keys {
            let cs = &by[&key];
            let measured: Vec<f64> = cs.iter().map(|c| c.han / c.default).collect();
            let predicted: Vec<f64> = cs
                .iter()
                .map(|c| c.predicted_han / c.predicted_default)
                .collect();
            let spread: Vec<f64> = cs.iter().map(|c| c.spread).collect();
            let judged: Vec<bool> = cs.iter().filter_map(|c| c.agrees()).collect();
            let name = key.map_or("**all**".to_string(), |c| c.name().to_string());
            let _ = writeln!(
                s,
                "| {name} | {label} | {} | {} | {} | {:.2} | {:.2} | {}/{} |",
                band(cs, true),
                band(cs, false),
                pct(median(&spread)),
                geomean(&measured),
                geomean(&predicted),
                judged.iter().filter(|&&a| a).count(),
                judged.len()
            );
        }
    }
    s
}
