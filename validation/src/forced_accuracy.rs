//! How well a model predicts Open MPI's forced algorithms: every `forced:ID:SEGSIZE` row of a
//! selection sweep (`scripts/selection_sweep.sh`) priced by simulating the schedule Open MPI runs,
//! compared with what OSU measured.
//!
//! # What is predicted
//!
//! OSU's collective tests call the collective in a loop with `MPI_Barrier` between the calls and
//! time each rank's own call; with `-f` they print the mean over ranks of each rank's mean time
//! (*avg*) and the largest (*max*). The prediction simulates one call of the algorithm's schedule
//! ([`commcost::sim::schedule_in`], family Open MPI) with every rank entering at time 0, as the
//! barrier before it releases them, and reads each rank's completion time
//! ([`SimResult::rank_finish`](commcost::sim::SimResult::rank_finish)): their mean is compared
//! with OSU's *avg*, their maximum (the makespan) with OSU's *max*.
//!
//! # What is computed
//!
//! A *configuration* is (collective, P, algorithm and segment size, OSU size); its measured time
//! is the median over repeats. Its error is `|predicted / measured − 1|`. Per collective, P and
//! size band (below 8 KiB, from 8 KiB; barrier counts as below): the median and 90th percentile
//! of the errors against *avg* and against *max*, and the median repeat spread
//! (`(max − min) / median` of *avg* over the repeats) of the same configurations. A *cell* is
//! (collective, P, OSU size) with at least three algorithms: Spearman's rank correlation of the
//! predicted and measured times (*avg*) of its algorithms, and whether the predicted cheapest
//! algorithm measured within 10 % of the measured fastest.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use commcost::CommModel;
use commcost::Message;
use commcost::collectives::{Collective, Family, Operator, Problem};
use commcost::sim::{
    DEFAULT_MAX_MEMORY, NodeMap, RendezvousCompletion, SimOptions, Simulator, TwoLevel, schedule_in,
};

use crate::selection::{Config, Row};
use crate::stats::{mean, median, spearman, spread};

/// The size from which a configuration counts as large (bytes, OSU's size column).
pub const LARGE_FROM: u64 = 8192;

/// One configuration's measurement and prediction.
#[derive(Debug, Clone)]
pub struct Priced {
    /// The collective.
    pub collective: Collective,
    /// Communicator size.
    pub procs: u64,
    /// Open MPI's algorithm ID.
    pub id: u32,
    /// The forced segment size (0: unsegmented).
    pub segsize: u64,
    /// OSU's size column.
    pub bytes: u64,
    /// Median over repeats of OSU's average, seconds.
    pub avg: f64,
    /// Median over repeats of OSU's maximum, seconds.
    pub max: f64,
    /// `(max − min) / median` of the average over repeats.
    pub spread: f64,
    /// Repeats.
    pub repeats: usize,
    /// Predicted mean over ranks of the completion time, seconds.
    pub predicted_avg: f64,
    /// Predicted makespan, seconds.
    pub predicted_max: f64,
}

impl Priced {
    /// `|predicted avg / measured avg − 1|`.
    pub fn error_avg(&self) -> f64 {
        (self.predicted_avg / self.avg - 1.0).abs()
    }
    /// `|predicted max / measured max − 1|`.
    pub fn error_max(&self) -> f64 {
        (self.predicted_max / self.max - 1.0).abs()
    }
    /// Below [`LARGE_FROM`] (barrier always).
    pub fn small(&self) -> bool {
        self.collective == Collective::Barrier || self.bytes < LARGE_FROM
    }
}

/// How to price.
#[derive(Debug, Clone, Copy)]
pub struct Pricing {
    /// The reduction operator (OSU reduces `MPI_FLOAT` with `MPI_SUM`).
    pub operator: Operator,
    /// Messages above this many bytes use the rendezvous protocol (Open MPI's TCP BTL:
    /// `btl_tcp_eager_limit` = 65536 less its header; `None`: the model's own threshold).
    pub rendezvous_above: Option<u64>,
    /// When a rendezvous send completes.
    pub rendezvous_completion: RendezvousCompletion,
    /// Shared cores ([`SimOptions::cores`]).
    pub cores: Option<u32>,
    /// Token-bucket credit of every link ([`SimOptions::link_burst`]).
    pub link_burst: Option<u64>,
    /// A rendezvous acknowledgement waits for the receiver's sending NIC
    /// ([`SimOptions::ack_behind_sends`]).
    pub ack_behind_sends: bool,
}

/// The problem OSU's size column describes for `collective` at `procs`: the buffer of bcast,
/// reduce and allreduce, the block per rank of allgather, alltoall, gather and scatter, the
/// whole reduced vector of reduce_scatter, nothing for barrier. `None` for reductions of fewer
/// than 4 bytes (OSU reduces `float`s: it reduces nothing there).
pub fn osu_problem(collective: Collective, procs: u64, bytes: u64) -> Option<Problem> {
    let reduces = matches!(
        collective,
        Collective::Reduce | Collective::Allreduce | Collective::ReduceScatter
    );
    if reduces && bytes < 4 {
        return None;
    }
    let bytes = if collective == Collective::Barrier {
        0
    } else {
        bytes
    };
    Some(Problem::new(procs, Message::contiguous(bytes)))
}

/// Reads PRTT samples as `mpi_calibrate --samples` writes them: `#` comment lines, then one
/// sample per line, `size n delay_us time_us`.
///
/// # Errors
///
/// The line number and what is wrong with it.
pub fn parse_prtt_samples(text: &str) -> Result<Vec<commcost::calibrate::PrttSample>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let bad = |what: &str| format!("line {}: {what}", i + 1);
        if f.len() != 4 {
            return Err(bad("expected `size n delay_us time_us`"));
        }
        let num = |k: usize| {
            f[k].parse::<f64>()
                .map_err(|_| bad(&format!("`{}` is not a number", f[k])))
        };
        out.push(commcost::calibrate::PrttSample {
            size: f[0].parse().map_err(|_| bad("size"))?,
            n: f[1].parse().map_err(|_| bad("n"))?,
            delay: num(2)? * 1e-6,
            time: num(3)? * 1e-6,
        });
    }
    Ok(out)
}

/// The `q`-quantile (0..1) with linear interpolation between order statistics.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return f64::NAN;
    }
    let x = q * (s.len() - 1) as f64;
    let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (x - lo as f64)
}

/// Nodes of several ranks: the model inside a node, ranks per node (consecutive ranks on a
/// node, Open MPI's default placement), and the intra-node transport's eager limit.
#[allow(missing_debug_implementations)] // (a model reference)
#[derive(Clone, Copy)]
pub struct Nodes<'a> {
    /// The model of a message between two ranks of one node.
    pub intra: &'a dyn CommModel,
    /// Ranks per node.
    pub ranks_per_node: u32,
    /// Messages inside a node above this many bytes use the rendezvous protocol (Open MPI's
    /// vader: `btl_vader_eager_limit`, 4 KiB).
    pub intra_rendezvous_above: Option<u64>,
}

impl Nodes<'_> {
    /// The node map of `procs` ranks, consecutive ranks on a node; `label` names the
    /// configuration in the error.
    ///
    /// # Errors
    ///
    /// `procs` not a multiple of the ranks per node, or too many ranks.
    pub fn map(&self, procs: u64, label: &str) -> Result<NodeMap, String> {
        let k = self.ranks_per_node.max(1);
        if !procs.is_multiple_of(u64::from(k)) {
            return Err(format!("{label}: not a multiple of {k} ranks per node"));
        }
        let nodes = u32::try_from(procs / u64::from(k)).map_err(|e| format!("{label}: {e}"))?;
        NodeMap::block(nodes, k).map_err(|e| format!("{label}: {e}"))
    }
}

impl Pricing {
    /// The simulation's options: these, with `model`'s own eager limit where none is given.
    pub fn options(&self, model: &dyn CommModel) -> SimOptions {
        SimOptions {
            rendezvous_above: self.rendezvous_above.or(model.rendezvous_above()),
            rendezvous_completion: self.rendezvous_completion,
            cores: self.cores,
            link_burst: self.link_burst,
            ack_behind_sends: self.ack_behind_sends,
            ..SimOptions::default()
        }
    }
}

/// Prices every forced configuration of `rows` (other configs are skipped) with `model`.
///
/// # Errors
///
/// A row naming a collective the crate does not know, an algorithm ID it does not have, or a
/// schedule the simulator refuses, as text naming the configuration.
pub fn price(
    rows: &[Row],
    model: &dyn CommModel,
    pricing: &Pricing,
) -> Result<Vec<Priced>, String> {
    price_on(rows, model, pricing, None)
}

/// [`price`] with `model` between nodes and, with `nodes`, on nodes of several ranks
/// (`Simulator::simulate_two_level`); a communicator size that is not a multiple of the ranks
/// per node is an error.
///
/// # Errors
///
/// As [`price`].
pub fn price_on(
    rows: &[Row],
    model: &dyn CommModel,
    pricing: &Pricing,
    nodes: Option<&Nodes<'_>>,
) -> Result<Vec<Priced>, String> {
    type Key = (Collective, u64, u32, u64, u64);
    let mut groups: BTreeMap<Key, Vec<(f64, f64)>> = BTreeMap::new();
    for r in rows {
        let Config::Forced { id, segsize } = r.config else {
            continue;
        };
        let collective: Collective = r
            .collective
            .parse()
            .map_err(|_| format!("unknown collective `{}`", r.collective))?;
        groups
            .entry((collective, u64::from(r.procs), id, segsize, r.bytes))
            .or_default()
            .push((r.avg_us * 1e-6, r.max_us * 1e-6));
    }
    let options = pricing.options(model);
    let mut simulator = Simulator::new();
    let mut out = Vec::with_capacity(groups.len());
    for ((collective, procs, id, segsize, bytes), times) in groups {
        let Some(problem) = osu_problem(collective, procs, bytes) else {
            continue;
        };
        let problem = problem.with_operator(pricing.operator);
        let label = format!("{collective} P={procs} id={id} seg={segsize} {bytes} B");
        let Some((priced_as, priced_id)) = collective.ompi_priced_as(id) else {
            continue;
        };
        let name = if segsize > 0 {
            format!("{priced_id}:segment={segsize}")
        } else {
            priced_id.to_string()
        };
        // the segment only where the algorithm takes one, as Open MPI ignores it elsewhere
        let schedule = schedule_in(Family::Ompi, priced_as, &name, &problem, DEFAULT_MAX_MEMORY)
            .or_else(|_| {
                schedule_in(
                    Family::Ompi,
                    priced_as,
                    &priced_id.to_string(),
                    &problem,
                    DEFAULT_MAX_MEMORY,
                )
            })
            .map_err(|e| format!("{label}: {e}"))?;
        let result = match nodes {
            None => simulator.simulate(&schedule, model, &options),
            Some(n) => {
                let map = n.map(procs, &label)?;
                let platform = TwoLevel {
                    nodes: &map,
                    inter: model,
                    inter_rendezvous_above: options.rendezvous_above,
                };
                let inside = SimOptions {
                    rendezvous_above: n.intra_rendezvous_above,
                    ..options
                };
                simulator.simulate_two_level(&schedule, n.intra, platform, &inside)
            }
        }
        .map_err(|e| format!("{label}: {e}"))?;
        let finish = &result.rank_finish;
        let predicted_avg = mean(finish);
        let avgs: Vec<f64> = times.iter().map(|t| t.0).collect();
        let maxs: Vec<f64> = times.iter().map(|t| t.1).collect();
        let avg = median(&avgs);
        out.push(Priced {
            collective,
            procs,
            id,
            segsize,
            bytes,
            avg,
            max: median(&maxs),
            spread: spread(&avgs),
            repeats: times.len(),
            predicted_avg,
            predicted_max: result.makespan,
        });
    }
    Ok(out)
}

/// One row of the accuracy table: a collective (or all), P and size band.
#[derive(Debug, Clone)]
pub struct Band {
    /// Collective, `None` for all.
    pub collective: Option<Collective>,
    /// Communicator size.
    pub procs: u64,
    /// Below [`LARGE_FROM`].
    pub small: bool,
    /// Configurations.
    pub configurations: usize,
    /// Median and 90th percentile error against OSU's average.
    pub avg: (f64, f64),
    /// Median and 90th percentile error against OSU's maximum.
    pub max: (f64, f64),
    /// Median repeat spread.
    pub spread: f64,
}

/// The bands of `priced`: per collective, P and size band, and over all collectives.
pub fn bands(priced: &[Priced]) -> Vec<Band> {
    type Key = (u64, bool, Option<Collective>);
    let mut groups: BTreeMap<Key, Vec<&Priced>> = BTreeMap::new();
    for p in priced {
        for c in [Some(p.collective), None] {
            groups.entry((p.procs, p.small(), c)).or_default().push(p);
        }
    }
    groups
        .into_iter()
        .map(|((procs, small, collective), ps)| {
            let ea: Vec<f64> = ps.iter().map(|p| p.error_avg()).collect();
            let em: Vec<f64> = ps.iter().map(|p| p.error_max()).collect();
            let sp: Vec<f64> = ps.iter().map(|p| p.spread).collect();
            Band {
                collective,
                procs,
                small,
                configurations: ps.len(),
                avg: (median(&ea), quantile(&ea, 0.9)),
                max: (median(&em), quantile(&em, 0.9)),
                spread: median(&sp),
            }
        })
        .collect()
}

/// Ranking quality per collective and P over the cells with at least three algorithms.
#[derive(Debug, Clone)]
pub struct Ranking {
    /// Collective, `None` for all.
    pub collective: Option<Collective>,
    /// Communicator size.
    pub procs: u64,
    /// Cells.
    pub cells: usize,
    /// Median Spearman correlation of predicted and measured order.
    pub median_rho: f64,
    /// Cells whose predicted cheapest algorithm measured within 10 % of the fastest.
    pub picks_within_10: usize,
    /// The cells below [`LARGE_FROM`] (barrier's included) and how many of them are picks.
    pub small: (usize, usize),
}

/// The rankings of `priced` (unsegmented algorithms only, as Open MPI's forced runs with
/// `segmentsize 0` choose among them).
pub fn rankings(priced: &[Priced]) -> Vec<Ranking> {
    let mut cells: BTreeMap<(Collective, u64, u64), Vec<&Priced>> = BTreeMap::new();
    for p in priced.iter().filter(|p| p.segsize == 0) {
        cells
            .entry((p.collective, p.procs, p.bytes))
            .or_default()
            .push(p);
    }
    // per (P, collective): the cells' ρ, their count, the good picks, the small cells and
    // their good picks
    type Tally = (Vec<f64>, usize, usize, usize, usize);
    let mut per: BTreeMap<(u64, Option<Collective>), Tally> = BTreeMap::new();
    for ((collective, procs, _), ps) in cells {
        if ps.len() < 3 {
            continue;
        }
        let predicted: Vec<f64> = ps.iter().map(|p| p.predicted_avg).collect();
        let measured: Vec<f64> = ps.iter().map(|p| p.avg).collect();
        let rho = spearman(&predicted, &measured);
        let pick = (0..ps.len())
            .min_by(|&a, &b| predicted[a].total_cmp(&predicted[b]))
            .map(|i| measured[i]);
        let fastest = measured.iter().copied().fold(f64::INFINITY, f64::min);
        let good = pick.is_some_and(|t| t <= 1.10 * fastest);
        for c in [Some(collective), None] {
            let e = per.entry((procs, c)).or_default();
            if let Some(r) = rho {
                e.0.push(r);
            }
            e.1 += 1;
            e.2 += usize::from(good);
            if ps[0].small() {
                e.3 += 1;
                e.4 += usize::from(good);
            }
        }
    }
    per.into_iter()
        .map(
            |((procs, collective), (rhos, cells, picks, small, small_picks))| Ranking {
                collective,
                procs,
                cells,
                median_rho: median(&rhos),
                picks_within_10: picks,
                small: (small, small_picks),
            },
        )
        .collect()
}

fn pct(x: f64) -> String {
    format!("{:.0} %", 100.0 * x)
}

/// The accuracy table as Markdown: per collective and P, both size bands, errors against OSU's
/// average and maximum (median / 90th percentile), the repeat spread, and the ranking.
pub fn markdown(priced: &[Priced]) -> String {
    let bands = bands(priced);
    let rankings = rankings(priced);
    let mut s = String::from(
        "| collective | P | < 8 KiB: avg | max | spread | picks | >= 8 KiB: avg | max | spread | picks | ρ |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut keys: Vec<(Option<Collective>, u64)> =
        bands.iter().map(|b| (b.collective, b.procs)).collect();
    keys.sort_by_key(|(c, p)| (c.is_none(), c.map(|c| c.name()), *p));
    keys.dedup();
    for (c, p) in keys {
        let band = |small: bool| {
            bands
                .iter()
                .find(|b| b.collective == c && b.procs == p && b.small == small)
        };
        let cols = |b: Option<&Band>| match b {
            Some(b) => format!(
                "{} / {} | {} / {} | {}",
                pct(b.avg.0),
                pct(b.avg.1),
                pct(b.max.0),
                pct(b.max.1),
                pct(b.spread)
            ),
            None => "– | – | –".to_string(),
        };
        let r = rankings.iter().find(|r| r.collective == c && r.procs == p);
        let (rho, small, large) = match r {
            Some(r) => (
                format!("{:.2}", r.median_rho),
                format!("{}/{}", r.small.1, r.small.0),
                format!("{}/{}", r.picks_within_10 - r.small.1, r.cells - r.small.0),
            ),
            None => ("–".into(), "–".into(), "–".into()),
        };
        let name = c.map_or("**all**".to_string(), |c| c.name().to_string());
        let _ = writeln!(
            s,
            "| {name} | {p} | {} | {small} | {} | {large} | {rho} |",
            cols(band(true)),
            cols(band(false))
        );
    }
    s
}

/// [`markdown`] of several platforms of the same communicator size in one table: each
/// platform's rows (its `label` in the P column), interleaved collective by collective.
pub fn markdown_labelled(tables: &[(&str, &[Priced])]) -> String {
    let mut header = String::new();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (label, priced) in tables {
        let text = markdown(priced);
        let mut lines = text.lines();
        if header.is_empty() {
            header = format!(
                "{}\n{}\n",
                lines.next().unwrap_or_default(),
                lines.next().unwrap_or_default()
            );
        } else {
            lines.next();
            lines.next();
        }
        for (i, line) in lines.enumerate() {
            // `| collective | P | ...`: the P column becomes the label
            let mut cells: Vec<&str> = line.split('|').collect();
            let named = format!(" {label} ");
            if cells.len() > 2 {
                cells[2] = &named;
            }
            let row = cells.join("|");
            if rows.len() <= i {
                rows.push(Vec::new());
            }
            rows[i].push(row);
        }
    }
    let mut s = header;
    for group in rows {
        for row in group {
            s.push_str(&row);
            s.push('\n');
        }
    }
    s
}
