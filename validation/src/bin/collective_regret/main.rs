//! Predicted against measured: Open MPI's collective algorithms on this machine, priced by a
//! model the crate calibrated on the same machine.
//!
//! ```sh
//! cargo run --release -p commcost-validation --bin collective_regret -- \
//!     [--runs tests/fixtures/collectives/ompi_runs.csv] \
//!     [--defaults tests/fixtures/collectives/ompi_default_choice.csv] \
//!     [--model tests/fixtures/collectives/mpi_calibrate_2ranks_plogp.json] [--key plogp_mpi] \
//!     [--operator tests/fixtures/collectives/reduce_local.csv|free] \
//!     [--stat median|min] [--cells 2,4,8] [--on-tie defer|rounds]
//! ```
//!
//! The model is the crate's own calibration on this machine: by default pLogP (Kielmann, Bal,
//! Verstoep, "Fast measurement of LogP parameters for message passing platforms", IPDPS
//! Workshops 2000) from the PRTT assessment of blocking `MPI_Send`/`MPI_Recv` between 2 ranks
//! over vader (`validation/src/bin/mpi_calibrate.rs`; `--key loggp_mpi` gives the LogGP with protocol
//! ranges from the same measurements). No parameter is fitted to the collective runs.
//!
//! For every measured cell (collective, process count `P`, message size) it prices each
//! algorithm that was timed with Open MPI's algorithm forced (same id, segment size, Open MPI's
//! default fan-out and radix) and prints:
//!
//! * Spearman's rank correlation between the predicted and the measured order of the
//!   algorithms (average ranks for ties; `-` with fewer than 3 algorithms);
//! * the **regret of the model's pick**: measured time of the algorithm the model predicts
//!   fastest (among the measured ones) over the measured best;
//! * the **regret of Open MPI's default choice**: measured time of the forced run of the
//!   algorithm the default ran (from the trace) over the measured best — the same measurement
//!   the model's pick is judged by; where the default ran a segmented variant the sweep did
//!   not force, or an algorithm the crate does not price, the default's own run (nothing
//!   forced) instead. The comparison with the default's own run is printed too.
//!
//! A summary per (collective, `P`) follows: median ρ, geometric-mean regrets, and in how many
//! cells the model's regret is no worse than the default's.
//!
//! Mapping of the measured collectives to the priced ones: the harness times
//! `MPI_Reduce_scatter_block` (Open MPI collective 13), priced here as `ReduceScatter` (12) on the
//! whole vector: block algorithm 1 `basic_linear` (reduce, then scatter) as 1 `non-overlapping`,
//! 3 `recursive_halving` as 2, 4 `butterfly` as 4; block algorithm 2 `recursive_doubling` has
//! no counterpart and is left out.
//!
//! **Operator.** Reductions (reduce, allreduce, reduce_scatter) are priced with an [`Operator`]
//! fitted to the measured cost of `MPI_Reduce_local` (`MPI_SUM` on `f64`, operands in memory;
//! `validation/src/bin/mpi_collectives.rs --reduce-local`): `op(m) = per_call + per_byte · m`, least
//! squares on the relative error (the sizes span five decades, so every size weighs the same).
//! `--operator free` prices reductions as pure communication ([`Operator::FREE`]).
//!
//! **Ties.** Where different Open MPI algorithms' predictions are equal within a relative 1e-9
//! (common at `P = 2`, where many algorithms send the same single message), the model has no
//! preference and its choice is Open MPI's own (`--on-tie defer`, the default): what a rules
//! file exported with [`OnTie::Defer`](commcost::export::OnTie::Defer) does with algorithm 0.
//! Ties among segment-size variants of one algorithm, and all ties with `--on-tie rounds`,
//! are broken without the model: fewest rounds first — the algorithm's cost under a unit model
//! that charges one time unit per message hop and per message a sender starts, nothing per
//! byte (LogGP with `L = 1`, `o = 0`, `g = 1`, `G = 0`) — then the lower Open MPI algorithm id,
//! then the unsegmented variant. The summary says, separately for tied cells and for cells
//! where the model prefers one algorithm, how often its pick is measured faster, as fast or
//! slower than the default's choice.

use std::collections::BTreeMap;
use std::error::Error;
use std::process::ExitCode;

use commcost::collectives::ompi::forced_cost;
use commcost::collectives::{Collective, Operator, Problem};
use commcost::{CommModel, LogGP, Message, ModelSpec};

use commcost_validation::stats::spearman;

/// One measured run: an algorithm (or the default) at one cell.
#[derive(Debug, Clone)]
struct Run {
    collective: Collective,
    procs: u64,
    algorithm_id: Option<u32>,
    name: String,
    segsize: u64,
    bytes: u64,
    time: f64,
}

fn parse_runs(text: &str, stat: &str) -> Result<Vec<Run>, String> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().ok_or("empty runs file")?.split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or(format!("runs file has no column {name}"))
    };
    let (c_coll, c_procs, c_id, c_name, c_seg, c_bytes) = (
        col("collective")?,
        col("procs")?,
        col("algorithm_id")?,
        col("algorithm")?,
        col("segsize")?,
        col("bytes")?,
    );
    let c_time = col(if stat == "min" { "min_s" } else { "median_s" })?;
    let mut runs = Vec::new();
    for (i, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != header.len() {
            return Err(format!("runs line {}: {} fields", i + 2, f.len()));
        }
        let num = |c: usize| {
            f[c].parse::<u64>()
                .map_err(|e| format!("runs line {}: {}: {e}", i + 2, f[c]))
        };
        let time: f64 = f[c_time]
            .parse()
            .map_err(|e| format!("runs line {}: {e}", i + 2))?;
        if !(time.is_finite() && time >= 0.0) {
            return Err(format!("runs line {}: time {time}", i + 2));
        }
        runs.push(Run {
            collective: f[c_coll]
                .parse()
                .map_err(|e| format!("runs line {}: {e}", i + 2))?,
            procs: num(c_procs)?,
            algorithm_id: f[c_id].parse().ok(),
            name: f[c_name].to_string(),
            segsize: num(c_seg)?,
            bytes: num(c_bytes)?,
            time,
        });
    }
    Ok(runs)
}

/// Prices a measured run, or `None` where the crate has no counterpart; reductions apply
/// `operator`.
fn predict(run: &Run, model: &dyn CommModel, operator: Operator) -> Option<(String, f64)> {
    let (priced_as, id) = run.collective.ompi_priced_as(run.algorithm_id?)?;
    // the run's lookup size as the priced collective's problem message (a block for the
    // per-block collectives, the whole vector of a reduce-scatter)
    let bytes = priced_as.ompi_problem_bytes(run.bytes, run.procs);
    let mut problem = Problem::new(run.procs, Message::contiguous(bytes));
    if run.collective.reduces() {
        problem = problem.with_operator(operator);
    }
    forced_cost(priced_as, id, run.segsize, model, &problem).ok()
}

/// `(per_call, per_byte)` minimising `Σ ((per_call + per_byte · m - t) / t)²` over the
/// `bytes,calls,min_s,median_s` rows of `text` (time column `stat`), the relative-error
/// least squares line through the measured operator costs.
fn fit_operator(text: &str, stat: &str) -> Result<Operator, String> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .ok_or("empty operator file")?
        .split(',')
        .collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or(format!("operator file has no column {name}"))
    };
    let (c_bytes, c_time) = (
        col("bytes")?,
        col(if stat == "min" { "min_s" } else { "median_s" })?,
    );
    // normal equations of the weighted fit, weight 1/t²
    let (mut s00, mut s01, mut s11, mut r0, mut r1) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let mut rows = 0usize;
    for (i, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        let get = |c: usize| -> Result<f64, String> {
            f.get(c)
                .ok_or(format!("operator line {}: too few fields", i + 2))?
                .parse::<f64>()
                .map_err(|e| format!("operator line {}: {e}", i + 2))
        };
        let (m, t) = (get(c_bytes)?, get(c_time)?);
        if !(m.is_finite() && m >= 0.0 && t.is_finite() && t > 0.0) {
            return Err(format!("operator line {}: bytes {m}, time {t}", i + 2));
        }
        let w = 1.0 / (t * t);
        s00 += w;
        s01 += w * m;
        s11 += w * m * m;
        r0 += w * t;
        r1 += w * m * t;
        rows += 1;
    }
    let det = s00 * s11 - s01 * s01;
    if rows < 2 || det.abs() <= f64::EPSILON * s00 * s11 {
        return Err("operator file: need two or more distinct sizes".into());
    }
    let per_byte = (s00 * r1 - s01 * r0) / det;
    let per_call = (r0 - s01 * per_byte) / s00;
    // a negative intercept or slope means the data do not support one: price it as 0
    Operator::new(per_call.max(0.0), per_byte.max(0.0)).map_err(|e| e.to_string())
}

/// Rounds of a run's algorithm independent of any calibration: its cost under a unit model
/// (one time unit per message hop and per message a sender starts, nothing per byte).
fn rounds(run: &Run, unit: &dyn CommModel) -> f64 {
    predict(run, unit, Operator::FREE).map_or(f64::INFINITY, |(_, c)| c)
}

fn us(t: f64) -> String {
    if t >= 1e-3 {
        format!("{:.0}", t * 1e6)
    } else {
        format!("{:.1}", t * 1e6)
    }
}

struct Cell {
    rho: Option<f64>,
    model_regret: f64,
    /// Regret of Open MPI's default choice: the forced run of the algorithm the default ran
    /// where that run is known (see [`default_choice_run`]), else the default's own run.
    default_regret: Option<f64>,
    /// Regret of the default's own run (nothing forced), a separate `mpirun`.
    default_run_regret: Option<f64>,
    /// Several algorithms tied for the cheapest prediction.
    tie: bool,
}

/// The forced run that measured the algorithm Open MPI's default chose in this cell: the
/// trace gives the algorithm id; the segment size is known only where the algorithm takes
/// none (every algorithm of allgather, alltoall, barrier, gather, scatter and
/// reduce_scatter_block; `basic_linear` of bcast and reduce; allreduce's algorithms other
/// than the segmented ring). Elsewhere `None`: the default's own run is its measurement.
fn default_choice_run<'a>(rows: &[&'a Run], coll: Collective, id: u32) -> Option<&'a Run> {
    let unsegmented = match coll {
        Collective::Bcast | Collective::Reduce => id == 1,
        Collective::Allreduce => id != 5,
        _ => true,
    };
    if !unsegmented {
        return None;
    }
    rows.iter()
        .copied()
        .find(|r| r.algorithm_id == Some(id) && r.segsize == 0)
}

/// Within `tolerance` (relative) of the default's regret.
fn close_to(model: f64, default: Option<f64>, tolerance: f64) -> bool {
    default.is_some_and(|d| model <= d * (1.0 + tolerance) + 1e-12)
}

fn run() -> Result<(), Box<dyn Error>> {
    let mut runs_path = "tests/fixtures/collectives/ompi_runs.csv".to_string();
    let mut defaults_path = "tests/fixtures/collectives/ompi_default_choice.csv".to_string();
    let mut model_path = "tests/fixtures/collectives/mpi_calibrate_2ranks_plogp.json".to_string();
    let mut key = "plogp_mpi".to_string();
    let mut operator_path = "tests/fixtures/collectives/reduce_local.csv".to_string();
    let mut stat = "median".to_string();
    let mut cells_for: Vec<u64> = vec![2];
    let mut defer_ties = true;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--runs" => runs_path = value()?,
            "--defaults" => defaults_path = value()?,
            "--model" => model_path = value()?,
            "--key" => key = value()?,
            "--operator" => operator_path = value()?,
            "--stat" => stat = value()?,
            "--on-tie" => {
                defer_ties = match value()?.as_str() {
                    "defer" => true,
                    "rounds" => false,
                    other => return Err(format!("--on-tie {other}: defer or rounds").into()),
                }
            }
            "--cells" => {
                cells_for = value()?
                    .split(',')
                    .map(|v| v.parse::<u64>().map_err(|e| format!("--cells {v}: {e}")))
                    .collect::<Result<_, _>>()?
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if stat != "median" && stat != "min" {
        return Err("--stat is median or min".into());
    }
    let runs = parse_runs(
        &std::fs::read_to_string(&runs_path).map_err(|e| format!("{runs_path}: {e}"))?,
        &stat,
    )?;
    let mut value: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&model_path).map_err(|e| format!("{model_path}: {e}"))?,
    )
    .map_err(|e| format!("{model_path}: {e}"))?;
    // `mpi_calibrate` marks its preferred model; `--key` picks one here
    if let Some(map) = value.as_object_mut() {
        map.remove("preferred");
    }
    let models: BTreeMap<String, ModelSpec> =
        serde_json::from_value(value).map_err(|e| format!("{model_path}: {e}"))?;
    let model = models
        .get(&key)
        .ok_or(format!("{model_path} has no model {key}"))?
        .clone()
        .into_model();
    let operator = if operator_path == "free" {
        Operator::FREE
    } else {
        fit_operator(
            &std::fs::read_to_string(&operator_path)
                .map_err(|e| format!("{operator_path}: {e}"))?,
            "median",
        )
        .map_err(|e| format!("{operator_path}: {e}"))?
    };
    // (collective, P, lookup bytes) -> algorithm the default ran (trace, depth 0)
    let mut default_alg: BTreeMap<(Collective, u64, u64), String> = BTreeMap::new();
    let mut default_id: BTreeMap<(Collective, u64, u64), Option<u32>> = BTreeMap::new();
    if let Ok(text) = std::fs::read_to_string(&defaults_path) {
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            if let [c, p, b, id, name] = f[..]
                && let (Ok(c), Ok(p), Ok(b)) = (c.parse::<Collective>(), p.parse(), b.parse())
            {
                let id = id.parse::<u32>().ok();
                default_id
                    .entry((c, p, b))
                    .and_modify(|e| {
                        if *e != id {
                            *e = None;
                        }
                    })
                    .or_insert(id);
                default_alg
                    .entry((c, p, b))
                    .and_modify(|e: &mut String| {
                        if !e.split('/').any(|x| x == name) {
                            e.push('/');
                            e.push_str(name);
                        }
                    })
                    .or_insert_with(|| name.to_string());
            }
        }
    }
    let mut groups: BTreeMap<(Collective, u64, u64), Vec<&Run>> = BTreeMap::new();
    for r in &runs {
        groups
            .entry((r.collective, r.procs, r.bytes))
            .or_default()
            .push(r);
    }
    // the order the probe measures them in
    let order = commcost::probe::TIMED;
    let mut summary: BTreeMap<(usize, u64), Vec<Cell>> = BTreeMap::new();
    let mut spread: Vec<f64> = Vec::new();
    let mut ties = 0usize;
    println!(
        "model `{key}` from {model_path}; measured {stat} of the synchronised calls, {runs_path}"
    );
    println!(
        "reduction operator: {operator_path}: {:.1} ns per call + {:.4} ns per byte",
        operator.cost(0) * 1e9,
        (operator.cost(1 << 20) - operator.cost(0)) / f64::from(1u32 << 20) * 1e9
    );
    println!();
    println!(
        "| collective | P | bytes | algs | measured best | µs | model's pick | predicted µs | measured µs | regret | default ran | regret | ρ |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut keys: Vec<&(Collective, u64, u64)> = groups.keys().collect();
    keys.sort_by_key(|(c, p, b)| (order.iter().position(|o| o == c), *p, *b));
    for k in keys {
        let rows = &groups[k];
        let (coll, p, bytes) = (k.0, k.1, k.2);
        let priced: Vec<(&Run, String, f64)> = rows
            .iter()
            .filter_map(|r| predict(r, model.as_ref(), operator).map(|(l, c)| (*r, l, c)))
            .collect();
        if priced.is_empty() {
            continue;
        }
        let best = priced
            .iter()
            .min_by(|a, b| a.0.time.total_cmp(&b.0.time))
            .ok_or("no runs")?;
        // the cheapest prediction; ties (relative 1e-9) broken by rounds, then Open MPI id,
        // then segment size (model-independent)
        let cheapest = priced.iter().map(|x| x.2).fold(f64::INFINITY, f64::min);
        let unit = LogGP::new(1.0, 0.0, 1.0, 0.0)?;
        let tied: Vec<&(&Run, String, f64)> = priced
            .iter()
            .filter(|x| x.2 <= cheapest + cheapest.abs() * 1e-9)
            .collect();
        // distinct Open MPI algorithms among the cheapest (segment-size variants of one
        // algorithm that coincide at this size are no choice between algorithms)
        let tied_count = tied
            .iter()
            .map(|x| x.0.algorithm_id)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        if tied_count > 1 {
            ties += 1;
        }
        let pick = tied
            .into_iter()
            .min_by(|a, b| {
                rounds(a.0, &unit)
                    .total_cmp(&rounds(b.0, &unit))
                    .then(a.0.algorithm_id.cmp(&b.0.algorithm_id))
                    .then(a.0.segsize.cmp(&b.0.segsize))
            })
            .ok_or("no runs")?;
        let predicted: Vec<f64> = priced.iter().map(|x| x.2).collect();
        let measured: Vec<f64> = priced.iter().map(|x| x.0.time).collect();
        let rho = spearman(&predicted, &measured);
        let default = rows.iter().find(|r| r.algorithm_id.is_none());
        // run-to-run spread: the default run against the forced run of the same algorithm,
        // where the default ran one algorithm that takes no segment size
        if let (Some(d), Some(Some(id))) = (default, default_id.get(&(coll, p, bytes)))
            && !matches!(
                coll,
                Collective::Bcast | Collective::Reduce | Collective::Allreduce
            )
            && let Some(forced) = rows.iter().find(|r| r.algorithm_id == Some(*id))
            && forced.time > 0.0
        {
            spread.push((d.time / forced.time).ln().abs());
        }
        let best_t = best.0.time.max(1e-12);
        let chosen = default_id
            .get(&(coll, p, bytes))
            .copied()
            .flatten()
            .and_then(|id| default_choice_run(rows, coll, id))
            // the algorithm must be one the model could pick (priced and measured)
            .filter(|r| priced.iter().any(|x| std::ptr::eq(x.0, *r)));
        let tie = tied_count > 1;
        let default_choice = chosen
            .map(|r| r.time / best_t)
            .or(default.map(|d| d.time / best_t));
        let cell = Cell {
            rho,
            model_regret: if defer_ties && tie {
                default_choice.unwrap_or(pick.0.time / best_t)
            } else {
                pick.0.time / best_t
            },
            default_regret: chosen
                .map(|r| r.time / best_t)
                .or(default.map(|d| d.time / best_t)),
            default_run_regret: default.map(|d| d.time / best_t),
            tie,
        };
        let label = |r: &Run| {
            if r.segsize > 0 {
                format!("{}/{}", r.name, r.segsize)
            } else {
                r.name.clone()
            }
        };
        if cells_for.contains(&p) {
            println!(
                "| {} | {p} | {bytes} | {} | {} | {} | {} | {} | {} | {:.2} | {} | {} | {} |",
                coll.name(),
                priced.len(),
                label(best.0),
                us(best.0.time),
                if defer_ties && tie {
                    format!("(tie of {tied_count}: default)")
                } else {
                    label(pick.0)
                },
                us(pick.2),
                if defer_ties && tie {
                    "-".to_string()
                } else {
                    us(pick.0.time)
                },
                cell.model_regret,
                default_alg
                    .get(&(coll, p, bytes))
                    .map(String::as_str)
                    .unwrap_or("?"),
                cell.default_regret
                    .map(|r| format!("{r:.2}"))
                    .unwrap_or_else(|| "-".into()),
                rho.map(|r| format!("{r:.2}")).unwrap_or_else(|| "-".into()),
            );
        }
        let ci = order.iter().position(|o| *o == coll).unwrap_or(order.len());
        summary.entry((ci, p)).or_default().push(cell);
    }
    println!();
    println!(
        "| collective | P | cells | median ρ | model regret (geo. mean) | default regret (geo. mean) | model no worse than default | within 10 % |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let (mut total, mut wins, mut near) = (0usize, 0usize, 0usize);
    for ((ci, p), cells) in &summary {
        let mut rhos: Vec<f64> = cells.iter().filter_map(|c| c.rho).collect();
        rhos.sort_by(f64::total_cmp);
        let median_rho = if rhos.is_empty() {
            "-".to_string()
        } else {
            format!("{:.2}", rhos[rhos.len() / 2])
        };
        let geo = |v: &[f64]| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
        let model: Vec<f64> = cells.iter().map(|c| c.model_regret).collect();
        let default: Vec<f64> = cells.iter().filter_map(|c| c.default_regret).collect();
        let compared: Vec<&Cell> = cells
            .iter()
            .filter(|c| c.default_regret.is_some())
            .collect();
        let no_worse = compared
            .iter()
            .filter(|c| close_to(c.model_regret, c.default_regret, 0.0))
            .count();
        let within = compared
            .iter()
            .filter(|c| close_to(c.model_regret, c.default_regret, 0.1))
            .count();
        total += compared.len();
        wins += no_worse;
        near += within;
        println!(
            "| {} | {p} | {} | {median_rho} | {:.2} | {} | {no_worse} of {} | {within} |",
            order.get(*ci).map_or("?", |c| c.name()),
            cells.len(),
            geo(&model),
            if default.is_empty() {
                "-".to_string()
            } else {
                format!("{:.2}", geo(&default))
            },
            compared.len()
        );
    }
    println!();
    println!(
        "| P | cells | median ρ | model regret (geo. mean) | default regret (geo. mean) | model no worse than default | within 10 % |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut procs: Vec<u64> = summary.keys().map(|k| k.1).collect();
    procs.sort_unstable();
    procs.dedup();
    for p in procs {
        let cells: Vec<&Cell> = summary
            .iter()
            .filter(|(k, _)| k.1 == p)
            .flat_map(|(_, v)| v)
            .filter(|c| c.default_regret.is_some())
            .collect();
        let mut rhos: Vec<f64> = cells.iter().filter_map(|c| c.rho).collect();
        rhos.sort_by(f64::total_cmp);
        let geo = |v: &mut dyn Iterator<Item = f64>| {
            let (sum, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x.ln(), n + 1));
            (sum / n.max(1) as f64).exp()
        };
        println!(
            "| {p} | {} | {} | {:.2} | {:.2} | {} | {} |",
            cells.len(),
            rhos.get(rhos.len() / 2)
                .map_or("-".to_string(), |r| format!("{r:.2}")),
            geo(&mut cells.iter().map(|c| c.model_regret)),
            geo(&mut cells.iter().filter_map(|c| c.default_regret)),
            cells
                .iter()
                .filter(|c| close_to(c.model_regret, c.default_regret, 0.0))
                .count(),
            cells
                .iter()
                .filter(|c| close_to(c.model_regret, c.default_regret, 0.1))
                .count(),
        );
    }
    println!();
    println!(
        "model's regret no worse than the default's in {wins} of {total} cells, within 10 % in {near}"
    );
    let all: Vec<&Cell> = summary.values().flatten().collect();
    for (what, ties_wanted) in [("the model prefers one algorithm", false), ("tied", true)] {
        let (mut better, mut same, mut worse) = (0, 0, 0);
        for c in all.iter().filter(|c| c.tie == ties_wanted) {
            match c.default_regret {
                Some(d) if c.model_regret < d - 1e-12 => better += 1,
                Some(d) if c.model_regret <= d + 1e-12 => same += 1,
                Some(_) => worse += 1,
                None => {}
            }
        }
        println!(
            "cells where {what}: the pick's regret is below the default's in {better}, equal in {same}, above in {worse}"
        );
    }
    let by_choice = all
        .iter()
        .filter(|c| c.default_regret != c.default_run_regret)
        .count();
    let run_wins = all
        .iter()
        .filter(|c| close_to(c.model_regret, c.default_run_regret, 0.0))
        .count();
    let run_total = all
        .iter()
        .filter(|c| c.default_run_regret.is_some())
        .count();
    println!(
        "default's regret from the forced run of the algorithm it chose in {by_choice} cells; against the default's own run instead: no worse in {run_wins} of {run_total}"
    );
    println!("cells where the pick was a tie broken by rounds, then Open MPI id: {ties}");
    spread.sort_by(f64::total_cmp);
    if !spread.is_empty() {
        let q = |f: f64| spread[((spread.len() - 1) as f64 * f).round() as usize];
        println!(
            "run-to-run spread (default run against the forced run of the algorithm it ran, {} cells): median {:.0} %, 90th percentile {:.0} %",
            spread.len(),
            (q(0.5).exp() - 1.0) * 100.0,
            (q(0.9).exp() - 1.0) * 100.0
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
