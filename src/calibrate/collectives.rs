//! Per-call costs of Open MPI's algorithms from forced runs ([`fit_call_costs`]), and the
//! forced-run CSV they are measured into ([`parse_forced_runs`]).

use crate::CommModel;
use crate::Message;
use crate::calibrate::CalibrationError;
use crate::collectives::ompi::forced_cost;
use crate::collectives::{CallCost, CallCosts, LocalWork, Operator, Problem};
use crate::collectives::{Collective, Family};
use crate::util::stats::median;

/// The most rows [`parse_forced_runs`] reads (a 2-minute sweep writes a few hundred).
pub const MAX_FORCED_RUNS: usize = 1_000_000;

/// The range of a measured time a forced run may have, seconds: 1 ps to 10^6 s (a time outside
/// it is a unit error, and its relative error would not be a number).
pub const FORCED_RUN_SECONDS: std::ops::RangeInclusive<f64> = 1e-12..=1e6;

/// One timed run of an Open MPI algorithm forced by `coll_tuned_<collective>_algorithm`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForcedRun {
    /// The collective, as the crate prices it.
    pub collective: Collective,
    /// Open MPI's algorithm ID, as the crate's [`Collective`] numbers it.
    pub algorithm: u32,
    /// The forced segment size, bytes (0: unsegmented).
    pub segment: u64,
    /// Communicator size.
    pub processes: u64,
    /// The problem's message in bytes, as [`Problem`] means it for the collective (the buffer
    /// of bcast, reduce, allreduce and the whole vector of reduce_scatter; one block of
    /// allgather, alltoall, gather, scatter; 0 for barrier).
    pub bytes: u64,
    /// Measured seconds per call.
    pub seconds: f64,
}

/// Which time of a forced-run row to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ForcedStat {
    /// `median_s`: the median of synchronised calls (what the models predict).
    #[default]
    Median,
    /// `min_s`: the fastest synchronised call.
    Min,
    /// `pipelined_s`: back-to-back calls (successive calls may overlap, as in OSU's loops).
    Pipelined,
    /// `rank_mean_s`: each rank's own time per synchronised call, averaged over the ranks (OSU's
    /// `-f` average latency).
    RankMean,
}

impl ForcedStat {
    /// The CSV column this statistic is read from (`median_s`, `min_s`, `pipelined_s`,
    /// `rank_mean_s`).
    ///
    /// ```
    /// use commcost::calibrate::ForcedStat;
    /// assert_eq!(ForcedStat::RankMean.column(), "rank_mean_s");
    /// ```
    pub fn column(self) -> &'static str {
        match self {
            Self::Median => "median_s",
            Self::Min => "min_s",
            Self::Pipelined => "pipelined_s",
            Self::RankMean => "rank_mean_s",
        }
    }
}

/// Reads the forced-run CSV that `commcost calibrate collectives --measure` and the validation
/// harness `mpi_collectives` write (header `collective,ompi_coll_id,procs,algorithm_id,
/// algorithm,segsize,bytes,count,elem_bytes,calls,min_s,median_s,reps,pipelined_s`; columns
/// found by name, others ignored). Rows of Open MPI's default (`algorithm_id` = `default`) are
/// skipped. `reduce_scatter_block` (the collective rsmpi can call) is read as the
/// reduce_scatter algorithm that runs the same exchange: block algorithm 1 (reduce, then
/// scatter) as 1 (non-overlapping), 3 (recursive halving) as 2, 4 (butterfly) as 4; its
/// algorithm 2 (recursive doubling) has no counterpart and is skipped.
///
/// The CSV of a selection sweep (`scripts/selection_sweep.sh`: header
/// `platform,collective,procs,config,repeat,bytes,avg_us,…`) is read too: its rows
/// `config = forced:<ID>:<segment>` are OSU's average latency with that algorithm forced (`stat`
/// does not apply; reductions below 4 bytes, where OSU reduces no `float`, are skipped).
///
/// # Errors
///
/// [`CalibrationError::Parse`] naming the line for a missing column, a field that is not a
/// number, an unknown collective, an algorithm ID the collective does not have, or a time
/// outside [`FORCED_RUN_SECONDS`]; more than [`MAX_FORCED_RUNS`] rows.
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{ForcedStat, parse_forced_runs};
/// use commcost::collectives::Collective;
///
/// let csv = "collective,procs,algorithm_id,segsize,bytes,count,elem_bytes,median_s\n\
///            gather,4,2,0,256,8,8,3e-6\n\
///            gather,4,default,0,256,8,8,2e-6\n";
/// let runs = parse_forced_runs(csv, ForcedStat::Median)?;
/// assert_eq!(runs.len(), 1); // Open MPI's default is not a forced run
/// // gather's message is one rank's block (count × elem_bytes), not the lookup size
/// assert_eq!((runs[0].collective, runs[0].algorithm, runs[0].bytes), (Collective::Gather, 2, 64));
/// assert!(parse_forced_runs("collective,procs\n", ForcedStat::Median).is_err());
///
/// // a selection sweep: OSU's average latency (µs) with gather's algorithm 2 forced
/// let sweep = "platform,collective,procs,config,repeat,bytes,avg_us\n\
///              p,gather,4,default,1,64,2.5\n\
///              p,gather,4,forced:2:0,1,64,3.5\n";
/// let runs = parse_forced_runs(sweep, ForcedStat::Median)?;
/// assert_eq!((runs.len(), runs[0].algorithm, runs[0].bytes), (1, 2, 64));
/// assert_eq!(runs[0].seconds, 3.5e-6);
/// # Ok::<(), commcost::calibrate::CalibrationError>(())
/// ```
pub fn parse_forced_runs(text: &str, stat: ForcedStat) -> Result<Vec<ForcedRun>, CalibrationError> {
    let parse_err = |line: usize, message: String| CalibrationError::Parse { line, message };
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = loop {
        match lines.next() {
            Some((_, l)) if l.trim().is_empty() || l.starts_with('#') => continue,
            Some((_, l)) => break l.split(',').map(str::trim).collect(),
            None => return Err(parse_err(1, "no header line".into())),
        }
    };
    if header.contains(&"config") && header.contains(&"avg_us") {
        return super::forced_sweep::parse_sweep(&header, lines);
    }
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| parse_err(1, format!("no column `{name}`")))
    };
    let (c_coll, c_procs, c_id, c_seg, c_bytes, c_count, c_elem, c_time) = (
        col("collective")?,
        col("procs")?,
        col("algorithm_id")?,
        col("segsize")?,
        col("bytes")?,
        col("count")?,
        col("elem_bytes")?,
        col(stat.column())?,
    );
    let mut seen: std::collections::HashMap<[String; 6], usize> = std::collections::HashMap::new();
    let mut runs = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if runs.len() >= MAX_FORCED_RUNS {
            return Err(parse_err(n, format!("more than {MAX_FORCED_RUNS} rows")));
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let field = |c: usize, name: &str| {
            f.get(c)
                .copied()
                .ok_or_else(|| parse_err(n, format!("no `{name}` field")))
        };
        let int = |c: usize, name: &str| -> Result<u64, CalibrationError> {
            field(c, name)?
                .parse::<u64>()
                .map_err(|e| parse_err(n, format!("`{name}`: {e}")))
        };
        let id_text = field(c_id, "algorithm_id")?;
        if id_text == "default" {
            continue;
        }
        let id: u32 = id_text
            .parse()
            .map_err(|e| parse_err(n, format!("`algorithm_id`: {e}")))?;
        let name = field(c_coll, "collective")?;
        let measured: Collective = name
            .parse()
            .map_err(|_| parse_err(n, format!("unknown collective `{name}`")))?;
        if measured.ompi_priced_as(1).is_none() {
            return Err(parse_err(
                n,
                format!("{measured}: the crate has no Open MPI algorithms to price it with"),
            ));
        }
        if id == 0 || id > measured.ompi_max_algorithm_id() {
            return Err(parse_err(
                n,
                format!(
                    "`algorithm_id` {id}: {measured} has 1..={}",
                    measured.ompi_max_algorithm_id()
                ),
            ));
        }
        let key = [
            measured.to_string(),
            field(c_procs, "procs")?.to_string(),
            id.to_string(),
            field(c_seg, "segsize")?.to_string(),
            field(c_bytes, "bytes")?.to_string(),
            field(c_count, "count")?.to_string(),
        ];
        if let Some(first) = seen.insert(key, n) {
            return Err(parse_err(
                n,
                format!(
                    "the same run as line {first} (collective, procs, algorithm, segsize, bytes \
                     and count): a duplicate row"
                ),
            ));
        }
        // a run the crate has no algorithm for (reduce_scatter_block's recursive doubling)
        let Some((collective, algorithm)) = measured.ompi_priced_as(id) else {
            continue;
        };
        let processes = int(c_procs, "procs")?;
        if processes == 0 {
            return Err(parse_err(n, "`procs` is 0".into()));
        }
        let block = int(c_count, "count")?
            .checked_mul(int(c_elem, "elem_bytes")?)
            .ok_or_else(|| parse_err(n, "`count` × `elem_bytes` overflows".into()))?;
        let bytes = match collective {
            Collective::Barrier => 0,
            Collective::Allgather
            | Collective::Alltoall
            | Collective::Gather
            | Collective::Scatter => block,
            _ => int(c_bytes, "bytes")?,
        };
        let seconds: f64 = field(c_time, stat.column())?
            .parse()
            .map_err(|e| parse_err(n, format!("`{}`: {e}", stat.column())))?;
        if !FORCED_RUN_SECONDS.contains(&seconds) {
            return Err(parse_err(
                n,
                format!(
                    "`{}` = {seconds:e} s must be between 1e-12 and 1e6",
                    stat.column()
                ),
            ));
        }
        runs.push(ForcedRun {
            collective,
            algorithm,
            segment: int(c_seg, "segsize")?,
            processes,
            bytes,
            seconds,
        });
    }
    Ok(runs)
}

/// Which forced runs [`fit_call_costs`] fits on; every other run is held out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallCostPlan {
    /// Fit on runs of this communicator size (default 2).
    pub fit_processes: u64,
    /// Fit on runs whose problem message is at most this many bytes (default 512): where
    /// per-call costs, not bytes, decide.
    pub fit_max_bytes: u64,
}

impl Default for CallCostPlan {
    fn default() -> Self {
        Self {
            fit_processes: 2,
            fit_max_bytes: 512,
        }
    }
}

/// One algorithm's fitted call cost.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedCallCost {
    /// The collective.
    pub collective: Collective,
    /// Open MPI's ID.
    pub algorithm: u32,
    /// The crate's name of the algorithm (as priced, unsegmented).
    pub name: String,
    /// The fitted seconds per call.
    pub seconds: f64,
    /// Runs it was fitted on.
    pub runs: usize,
    /// Whether the median excess was negative (the model over-prices the algorithm at small
    /// sizes) and the cost was set to 0.
    pub clamped: bool,
}

/// Prediction errors on a set of runs, without and with the fitted call costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallCostErrors {
    /// Runs compared.
    pub runs: usize,
    /// Median `|predicted - measured| / measured` without call costs.
    pub median_without: f64,
    /// The same with the fitted call costs.
    pub median_with: f64,
    /// Cells (collective, processes, bytes) with two or more measured algorithms.
    pub cells: usize,
    /// Cells where the model's cheapest algorithm, without call costs, is measured within 10 %
    /// of the measured fastest.
    pub picks_within_10pct_without: usize,
    /// The same with call costs.
    pub picks_within_10pct_with: usize,
}

/// What [`check_call_costs`] found: errors over all runs and per process count.
#[derive(Debug, Clone, PartialEq)]
pub struct CallCostCheck {
    /// Over all runs.
    pub overall: CallCostErrors,
    /// Per process count.
    pub by_processes: Vec<(u64, CallCostErrors)>,
}

/// What [`fit_call_costs`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct CallCostFit {
    /// The fitted table.
    pub calls: CallCosts,
    /// One entry per fitted algorithm.
    pub fitted: Vec<FittedCallCost>,
    /// Errors on the runs fitted on.
    pub fit: Option<CallCostErrors>,
    /// Errors on the held-out runs (other sizes, other process counts): the check of the fit.
    pub held_out: Option<CallCostErrors>,
    /// Held-out errors per collective.
    pub held_out_by_collective: Vec<(Collective, CallCostErrors)>,
    /// Held-out errors per process count (at the fitted count: the larger sizes).
    pub held_out_by_processes: Vec<(u64, CallCostErrors)>,
    /// Runs the crate cannot price (an algorithm that cannot run on that many processes).
    pub skipped: usize,
}

fn problem_of(run: &ForcedRun, operator: Operator, local: LocalWork) -> Problem {
    let p = Problem::new(run.processes, Message::contiguous(run.bytes)).with_local(local);
    match run.collective {
        Collective::Allreduce | Collective::Reduce | Collective::ReduceScatter => {
            p.with_operator(operator)
        }
        _ => p,
    }
}

/// Fits per-call costs of Open MPI's algorithms to forced runs and checks them on runs it did
/// not fit.
///
/// For every algorithm with runs in the fit set (`plan.fit_processes` processes, messages of at
/// most `plan.fit_max_bytes`), its call cost is the median excess of the measured time over
/// the price `model`, `operator` and `local` give (messages, operator, copies, buffers):
///
/// ```text
/// call(a) = max(0, median_{runs r of a} (t_r - T_a(r)))
/// ```
///
/// (a negative median — the model over-prices the algorithm — is clamped to 0 and reported).
/// Any call costs `local` carries are ignored. Every other run is held out and reported: the
/// median relative error of the predictions without and with the fitted costs, and in how many
/// cells the model's pick is measured within 10 % of the measured fastest forced algorithm.
///
/// # Errors
///
/// [`CalibrationError::InvalidValue`] naming the run for a time outside
/// [`FORCED_RUN_SECONDS`] or 0 processes; [`CalibrationError::TooFew`] when no run is in the
/// fit set; errors of pricing a run other than an algorithm that cannot run on its process
/// count (those are skipped and counted).
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{CallCostPlan, ForcedRun, fit_call_costs};
/// use commcost::collectives::Collective;
/// use commcost::collectives::ompi::forced_cost;
/// use commcost::collectives::{LocalWork, Operator, Problem};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(1e-6, 0.5e-6, 1e-6, 1e-10)?;
/// // binomial bcast (6) measured at 2 ranks: the model's price plus 2 µs at every size
/// let runs: Vec<ForcedRun> = [8u64, 64, 512, 4096]
///     .iter()
///     .map(|&bytes| {
///         let problem = Problem::new(2, Message::contiguous(bytes));
///         let (_, t) = forced_cost(Collective::Bcast, 6, 0, &model, &problem).unwrap();
///         ForcedRun { collective: Collective::Bcast, algorithm: 6, segment: 0,
///                     processes: 2, bytes, seconds: t + 2e-6 }
///     })
///     .collect();
/// let fit = fit_call_costs(&runs, &model, Operator::FREE, LocalWork::FREE, &CallCostPlan::default())?;
/// assert!((fit.calls.get(Collective::Bcast, 6) - 2e-6).abs() < 1e-15);
/// let held_out = fit.held_out.unwrap(); // the 4 KiB run
/// assert_eq!(held_out.runs, 1);
/// assert!(held_out.median_with < 1e-9 && held_out.median_without > 0.1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fit_call_costs(
    runs: &[ForcedRun],
    model: &dyn CommModel,
    operator: Operator,
    local: LocalWork,
    plan: &CallCostPlan,
) -> Result<CallCostFit, CalibrationError> {
    let (priced, skipped) = price_runs(runs, model, operator, local)?;
    let in_fit = |r: &ForcedRun| r.processes == plan.fit_processes && r.bytes <= plan.fit_max_bytes;
    let mut fitted: Vec<FittedCallCost> = Vec::new();
    let mut entries = Vec::new();
    for collective in Family::Ompi.collectives() {
        for algorithm in 1..=collective.ompi_max_algorithm_id() {
            let mut excess: Vec<f64> = priced
                .iter()
                .filter(|(r, _, _)| {
                    r.collective == collective && r.algorithm == algorithm && in_fit(r)
                })
                .map(|(r, t, _)| r.seconds - t)
                .collect();
            if excess.is_empty() {
                continue;
            }
            let m = median(&mut excess);
            let seconds = if m.is_finite() { m.max(0.0) } else { 0.0 };
            let name = forced_cost(
                collective,
                algorithm,
                0,
                model,
                &Problem::new(plan.fit_processes, Message::contiguous(1)),
            )
            .map(|(n, _)| n)
            .unwrap_or_else(|_| format!("{collective} {algorithm}"));
            entries.push(CallCost {
                collective,
                algorithm,
                seconds,
            });
            fitted.push(FittedCallCost {
                collective,
                algorithm,
                name,
                seconds,
                runs: excess.len(),
                clamped: m < 0.0,
            });
        }
    }
    if entries.is_empty() {
        return Err(CalibrationError::TooFew {
            what: "forced runs in the fit set (fit processes and sizes)",
            needed: 1,
            got: 0,
        });
    }
    let calls = CallCosts::new(&entries)?;
    let errors = |set: &[&(ForcedRun, f64, String)]| errors_of(set, &calls);
    let fit_set: Vec<_> = priced.iter().filter(|(r, _, _)| in_fit(r)).collect();
    let held: Vec<_> = priced.iter().filter(|(r, _, _)| !in_fit(r)).collect();
    let held_out_by_collective = Family::Ompi
        .collectives()
        .into_iter()
        .filter_map(|c| {
            let set: Vec<_> = held
                .iter()
                .copied()
                .filter(|(r, _, _)| r.collective == c)
                .collect();
            errors(&set).map(|e| (c, e))
        })
        .collect();
    let held_out_by_processes = errors_by_processes(&held, &calls);
    Ok(CallCostFit {
        calls,
        held_out_by_processes,
        fitted,
        fit: errors(&fit_set),
        held_out: errors(&held),
        held_out_by_collective,
        skipped,
    })
}

/// A run with its price without call costs and the priced algorithm's name.
type Priced = (ForcedRun, f64, String);

/// Every run priced by `model`, `operator` and `local` without call costs; runs of algorithms
/// that cannot run on their process count are skipped and counted.
fn price_runs(
    runs: &[ForcedRun],
    model: &dyn CommModel,
    operator: Operator,
    local: LocalWork,
) -> Result<(Vec<Priced>, usize), CalibrationError> {
    for (index, run) in runs.iter().enumerate() {
        if !FORCED_RUN_SECONDS.contains(&run.seconds) || run.processes == 0 {
            return Err(CalibrationError::InvalidValue {
                what: "forced runs (seconds in 1e-12..=1e6, processes >= 1)",
                index,
                value: run.seconds,
            });
        }
    }
    let base = local.with_calls(CallCosts::NONE);
    let mut priced: Vec<Priced> = Vec::with_capacity(runs.len());
    let mut skipped = 0;
    for run in runs {
        match forced_cost(
            run.collective,
            run.algorithm,
            run.segment,
            model,
            &problem_of(run, operator, base),
        ) {
            Ok((name, t)) => priced.push((*run, t, name)),
            Err(crate::collectives::CollectiveError::NotApplicable { .. }) => skipped += 1,
            Err(e) => return Err(e.into()),
        }
    }
    Ok((priced, skipped))
}

/// Checks the call costs `local` carries on forced runs measured elsewhere (another run,
/// another day, other process counts): the errors without and with them, overall and per
/// process count. `None` where no run can be priced.
///
/// # Errors
///
/// The errors of pricing a run (not those of algorithms that cannot run on its process count,
/// which are skipped).
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{ForcedRun, check_call_costs};
/// use commcost::collectives::Collective;
/// use commcost::collectives::ompi::forced_cost;
/// use commcost::collectives::{CallCost, CallCosts, LocalWork, Operator, Problem};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(1e-6, 0.5e-6, 1e-6, 1e-10)?;
/// let price = |id: u32| {
///     forced_cost(Collective::Bcast, id, 0, &model, &Problem::new(2, Message::contiguous(8)))
///         .unwrap()
///         .1
/// };
/// // measured: linear (1) 3 µs above its price, binomial (6) 1 µs above
/// let run = |algorithm: u32, extra: f64| ForcedRun {
///     collective: Collective::Bcast, algorithm, segment: 0, processes: 2, bytes: 8,
///     seconds: price(algorithm) + extra,
/// };
/// let runs = [run(1, 3e-6), run(6, 1e-6)];
/// let calls = CallCosts::new(&[
///     CallCost { collective: Collective::Bcast, algorithm: 1, seconds: 3e-6 },
///     CallCost { collective: Collective::Bcast, algorithm: 6, seconds: 1e-6 },
/// ])?;
/// let check = check_call_costs(&runs, &model, Operator::FREE, LocalWork::FREE.with_calls(calls))?
///     .unwrap();
/// assert_eq!(check.overall.cells, 1);
/// assert!(check.overall.median_with < 1e-9); // the costs explain both runs
/// assert_eq!(check.overall.picks_within_10pct_with, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check_call_costs(
    runs: &[ForcedRun],
    model: &dyn CommModel,
    operator: Operator,
    local: LocalWork,
) -> Result<Option<CallCostCheck>, CalibrationError> {
    let (priced, _) = price_runs(runs, model, operator, local)?;
    let calls = *local.calls();
    let all: Vec<&Priced> = priced.iter().collect();
    let Some(overall) = errors_of(&all, &calls) else {
        return Ok(None);
    };
    let by = errors_by_processes(&all, &calls);
    Ok(Some(CallCostCheck {
        overall,
        by_processes: by,
    }))
}

/// Errors per process count of `set` (grouped by sorting: linear after the sort).
fn errors_by_processes(set: &[&Priced], calls: &CallCosts) -> Vec<(u64, CallCostErrors)> {
    let mut sorted: Vec<&Priced> = set.to_vec();
    sorted.sort_by_key(|(r, _, _)| r.processes);
    sorted
        .chunk_by(|(a, _, _), (b, _, _)| a.processes == b.processes)
        .filter_map(|group| errors_of(group, calls).map(|e| (group[0].0.processes, e)))
        .collect()
}

/// Errors of priced runs `(run, price without call costs, name)` without and with `calls`.
fn errors_of(set: &[&Priced], calls: &CallCosts) -> Option<CallCostErrors> {
    let with = |r: &ForcedRun, t: f64| t + calls.get(r.collective, r.algorithm);
    if set.is_empty() {
        return None;
    }
    let rel = |p: f64, m: f64| ((p - m) / m).abs();
    let mut without: Vec<f64> = set.iter().map(|(r, t, _)| rel(*t, r.seconds)).collect();
    let mut withc: Vec<f64> = set
        .iter()
        .map(|(r, t, _)| rel(with(r, *t), r.seconds))
        .collect();
    // cells: same collective, processes and bytes; unsegmented runs (one per algorithm);
    // grouped by sorting (stable: ties keep the runs' order), linear after the sort
    let mut unsegmented: Vec<&Priced> = set
        .iter()
        .copied()
        .filter(|(r, _, _)| r.segment == 0)
        .collect();
    unsegmented.sort_by_key(|(r, _, _)| (r.collective, r.processes, r.bytes));
    let (mut cells, mut hit_without, mut hit_with) = (0, 0, 0);
    for cell in unsegmented.chunk_by(|(a, _, _), (b, _, _)| {
        (a.collective, a.processes, a.bytes) == (b.collective, b.processes, b.bytes)
    }) {
        if cell.len() < 2 {
            continue;
        }
        cells += 1;
        let best = cell
            .iter()
            .map(|(r, _, _)| r.seconds)
            .fold(f64::INFINITY, f64::min);
        // the first of the cheapest, prices within 10^-9 of each other being a tie: algorithms
        // that cost the same in exact arithmetic may differ in the last bits, and by how the
        // build rounds (`powi`), which must not decide the pick
        let pick = |price: &dyn Fn(&ForcedRun, f64) -> f64| {
            let least = cell
                .iter()
                .map(|(r, t, _)| price(r, *t))
                .fold(f64::INFINITY, f64::min);
            cell.iter()
                .find(|(r, t, _)| price(r, *t) <= least * (1.0 + 1e-9))
                .map_or(f64::INFINITY, |(r, _, _)| r.seconds)
        };
        if pick(&|_, t| t) <= 1.1 * best {
            hit_without += 1;
        }
        if pick(&with) <= 1.1 * best {
            hit_with += 1;
        }
    }
    Some(CallCostErrors {
        runs: set.len(),
        median_without: median(&mut without),
        median_with: median(&mut withc),
        cells,
        picks_within_10pct_without: hit_without,
        picks_within_10pct_with: hit_with,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "collective,ompi_coll_id,procs,algorithm_id,algorithm,segsize,bytes,count,elem_bytes,calls,min_s,median_s,reps,pipelined_s";

    #[test]
    fn rows_are_read_by_column_name_and_mapped() {
        let text = format!(
            "{HEADER}\n\
             bcast,7,2,6,binomial,0,64,8,8,15,1e-6,2e-6,100,0.5e-6\n\
             gather,9,4,2,binomial,0,256,8,8,15,1e-6,3e-6,100,1e-6\n\
             reduce_scatter_block,13,2,3,recursive_halving,0,128,8,8,15,1e-6,4e-6,100,1e-6\n\
             reduce_scatter_block,13,2,2,recursive_doubling,0,128,8,8,15,1e-6,4e-6,100,1e-6\n\
             barrier,6,2,default,default,0,0,0,8,15,1e-6,5e-6,100,1e-6\n"
        );
        let runs = parse_forced_runs(&text, ForcedStat::Median).unwrap();
        assert_eq!(runs.len(), 3);
        assert_eq!(
            runs[0],
            ForcedRun {
                collective: Collective::Bcast,
                algorithm: 6,
                segment: 0,
                processes: 2,
                bytes: 64,
                seconds: 2e-6
            }
        );
        // gather: one block (count × elem_bytes), not the lookup size
        assert_eq!((runs[1].bytes, runs[1].processes), (64, 4));
        // reduce_scatter_block 3 (recursive halving) is reduce_scatter's 2
        assert_eq!(
            (runs[2].collective, runs[2].algorithm, runs[2].bytes),
            (Collective::ReduceScatter, 2, 128)
        );
        let pipelined = parse_forced_runs(&text, ForcedStat::Pipelined).unwrap();
        assert_eq!(pipelined[0].seconds.to_bits(), 0.5e-6f64.to_bits());
    }

    #[test]
    fn bad_rows_name_their_line() {
        let bad = |row: &str| {
            parse_forced_runs(&format!("{HEADER}\n{row}\n"), ForcedStat::Median)
                .unwrap_err()
                .to_string()
        };
        assert!(bad("bcast,7,2,10,x,0,64,8,8,15,1e-6,2e-6,100,1e-6").contains("line 2"));
        assert!(bad("bcast,7,2,1,x,0,64,8,8,15,1e-6,-2e-6,100,1e-6").contains("median_s"));
        assert!(bad("bcast,7,2,1,x,0,64,8,8,15,1e-6,NaN,100,1e-6").contains("median_s"));
        assert!(bad("bcast,7,2,1,x,0,64,8,8,15,1e-6,5e-324,100,1e-6").contains("median_s"));
        assert!(bad("bcast,7,2,1,x,0,64,8,8,15,1e-6,1e300,100,1e-6").contains("median_s"));
        assert!(bad("scan,7,2,1,x,0,64,8,8,15,1e-6,1e-6,100,1e-6").contains("scan"));
        assert!(bad("bcast,7,0,1,x,0,64,8,8,15,1e-6,1e-6,100,1e-6").contains("procs"));
        let twice = "bcast,7,2,1,x,0,64,8,8,15,1e-6,2e-6,100,1e-6";
        let err = parse_forced_runs(&format!("{HEADER}\n{twice}\n{twice}\n"), ForcedStat::Median)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 3") && err.contains("line 2") && err.contains("duplicate"),
            "{err}"
        );
        assert!(bad("bcast,7,2,1").contains("line 2"));
        assert!(
            parse_forced_runs("collective,procs\n", ForcedStat::Median)
                .unwrap_err()
                .to_string()
                .contains("algorithm_id")
        );
        assert!(parse_forced_runs("", ForcedStat::Median).is_err());
    }

    /// Many distinct cells and process counts: grouped by sorting, not by a scan per group
    /// (20 000 runs, each its own cell and process count, in well under a second).
    #[test]
    fn many_distinct_cells_are_grouped_linearly() {
        let model = crate::LogGP::new(1e-6, 1e-6, 1e-6, 1e-9).unwrap();
        let runs: Vec<ForcedRun> = (0..20_000u64)
            .map(|i| ForcedRun {
                collective: Collective::Bcast,
                algorithm: 1 + (i % 2) as u32,
                segment: 0,
                processes: if i < 10 { 2 } else { 3 + i },
                bytes: 8 + i,
                seconds: 1e-5,
            })
            .collect();
        let fit = fit_call_costs(
            &runs,
            &model,
            Operator::FREE,
            LocalWork::FREE,
            &CallCostPlan {
                fit_processes: 2,
                fit_max_bytes: 1 << 20,
            },
        )
        .unwrap();
        assert_eq!(fit.held_out_by_processes.len(), 19_990);
        assert_eq!(fit.held_out.unwrap().cells, 0);
    }

    #[test]
    fn empty_fit_set_is_an_error() {
        let model = crate::LogGP::new(1e-6, 1e-6, 1e-6, 1e-9).unwrap();
        let run = ForcedRun {
            collective: Collective::Bcast,
            algorithm: 1,
            segment: 0,
            processes: 4,
            bytes: 8,
            seconds: 1e-5,
        };
        assert!(matches!(
            fit_call_costs(
                &[run],
                &model,
                Operator::FREE,
                LocalWork::FREE,
                &CallCostPlan::default()
            ),
            Err(CalibrationError::TooFew { .. })
        ));
    }
}
