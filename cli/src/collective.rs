//! `select` and `table`: collective algorithms ranked and tabulated.

use commcost::collectives::{Algorithm, DecisionTable, Problem, crossover, rank};
use commcost::sim::{CostSource, ExactClosedForm, SimLimits, ToSchedule, rank_simulated};
use commcost::{CommModel, Message};
use indicatif::{ProgressBar, ProgressStyle};

use crate::model::Loaded;
use crate::units::{human_bytes, human_time};
use crate::{Failure, fail};

/// The collectives, by their MPI names. Algorithms print with their `Display` names, which
/// their `FromStr` reads back (`recursive-doubling`, `pipelined:segment=8192`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Collective {
    /// `MPI_Bcast`.
    #[value(name = "broadcast", alias = "bcast")]
    Bcast,
    /// `MPI_Scan`.
    Scan,
    /// `MPI_Reduce`.
    Reduce,
    /// `MPI_Allreduce`.
    Allreduce,
    /// `MPI_Allgather`.
    Allgather,
    /// `MPI_Gather`.
    Gather,
    /// `MPI_Scatter`.
    Scatter,
    /// `MPI_Barrier`.
    Barrier,
    /// `MPI_Alltoall`.
    Alltoall,
}

impl Collective {
    /// Every collective.
    pub const ALL: [Self; 9] = [
        Self::Bcast,
        Self::Scan,
        Self::Reduce,
        Self::Allreduce,
        Self::Allgather,
        Self::Gather,
        Self::Scatter,
        Self::Barrier,
        Self::Alltoall,
    ];

    /// The collective's name on the command line and in output (`broadcast`, `scan`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::Bcast => "broadcast",
            Self::Scan => "scan",
            Self::Reduce => "reduce",
            Self::Allreduce => "allreduce",
            Self::Allgather => "allgather",
            Self::Gather => "gather",
            Self::Scatter => "scatter",
            Self::Barrier => "barrier",
            Self::Alltoall => "alltoall",
        }
    }

    /// [`name`](Self::name) with a capital first letter, for titles.
    pub fn title(self) -> String {
        let name = self.name();
        name[..1].to_ascii_uppercase() + &name[1..]
    }

    /// The collective as the benchmarks' series name it (OSU `broadcast`, IMB `bcast`).
    pub fn matches_series(self, name: &str) -> bool {
        name == self.name()
            || (self == Self::Bcast && name == "bcast")
            || (self == Self::Alltoall && name.starts_with("all-to-all"))
    }
}

/// Calls `$f::<Algorithm type>($args)` for the collective.
macro_rules! dispatch {
    ($c:expr, $f:ident ( $($args:expr),* )) => {
        match $c {
            Collective::Bcast => $f::<commcost::collectives::Bcast>($($args),*),
            Collective::Scan => $f::<commcost::collectives::Scan>($($args),*),
            Collective::Reduce => $f::<commcost::collectives::Reduce>($($args),*),
            Collective::Allreduce => $f::<commcost::collectives::Allreduce>($($args),*),
            Collective::Allgather => $f::<commcost::collectives::Allgather>($($args),*),
            Collective::Gather => $f::<commcost::collectives::Gather>($($args),*),
            Collective::Scatter => $f::<commcost::collectives::Scatter>($($args),*),
            Collective::Barrier => $f::<commcost::collectives::Barrier>($($args),*),
            Collective::Alltoall => $f::<commcost::collectives::Alltoall>($($args),*),
        }
    };
}
pub(crate) use dispatch;

fn ranked<A: Algorithm + std::fmt::Display>(
    model: &dyn CommModel,
    procs: u64,
    bytes: u64,
) -> Result<Vec<(String, f64)>, Failure> {
    let r = rank::<A>(model, &Problem::new(procs, Message::contiguous(bytes)))?;
    Ok(r.into_iter().map(|(a, c)| (a.to_string(), c)).collect())
}

/// One row of a decision table: sizes `first..=last` on `processes` use `algorithm`.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub processes: u64,
    pub first: u64,
    pub last: u64,
    pub algorithm: String,
}

/// The decision table as size ranges with exact switch points: the grid's best algorithms, and
/// between two grid sizes with different winners the crossover size where the ranking flips.
pub fn spans<A: Algorithm + std::fmt::Display>(
    model: &dyn CommModel,
    procs: &[u64],
    sizes: &[u64],
) -> Result<Vec<Span>, Failure> {
    if procs.contains(&0) {
        return fail("--procs: process counts must be at least 1");
    }
    let template = Problem::new(1, Message::contiguous(1));
    let table = DecisionTable::<A>::build(model, procs, sizes, &template)?;
    let mut out = Vec::new();
    for &p in table.processes() {
        let mut current = table.lookup(p, sizes[0]);
        let mut first = sizes[0];
        for w in sizes.windows(2) {
            let next = table.lookup(p, w[1]);
            if next != current {
                let problem = Problem::new(p, Message::contiguous(w[0]));
                let at = crossover(model, current, next, &problem, w[0]..=w[1])?.unwrap_or(w[1]);
                out.push(Span {
                    processes: p,
                    first,
                    last: at - 1,
                    algorithm: current.to_string(),
                });
                first = at;
                current = next;
            }
        }
        out.push(Span {
            processes: p,
            first,
            last: *sizes.last().unwrap_or(&first),
            algorithm: current.to_string(),
        });
    }
    Ok(out)
}

pub fn table(
    c: Collective,
    loaded: &Loaded,
    procs: &[u64],
    sizes: &[u64],
    csv: bool,
) -> Result<(), Failure> {
    let rows = dispatch!(c, spans(&loaded.spec, procs, sizes))?;
    if csv {
        outln!("processes,first_bytes,last_bytes,algorithm");
        for r in &rows {
            outln!("{},{},{},\"{}\"", r.processes, r.first, r.last, r.algorithm);
        }
    } else {
        print_spans(
            &format!("{} decision table, model {}", c.title(), loaded.name),
            " (switch points exact)",
            sizes,
            rows.iter()
                .map(|r| (r.processes, r.first, r.last, r.algorithm.as_str(), "")),
        )?;
    }
    Ok(())
}

/// Prints a decision table as text: `{title}, sizes A..B{note}:`, then per process count its
/// spans `(P, first, last, algorithm, mark)`.
fn print_spans<'a>(
    title: &str,
    note: &str,
    sizes: &[u64],
    rows: impl Iterator<Item = (u64, u64, u64, &'a str, &'a str)>,
) -> Result<(), Failure> {
    let first = sizes.first().copied().unwrap_or(0);
    let last = sizes.last().copied().unwrap_or(first);
    outln!(
        "{title}, sizes {}..{}{note}:",
        human_bytes(first),
        human_bytes(last)
    );
    let mut last_p = None;
    for (processes, first, last, algorithm, mark) in rows {
        if last_p != Some(processes) {
            outln!("  P = {processes}");
            last_p = Some(processes);
        }
        outln!("    {first:>12} ..= {last:<12} {algorithm}{mark}");
    }
    Ok(())
}

/// One row of a simulated decision table: the sampled sizes `first..=last` on `processes` all
/// have `algorithm` as winner; `simulated` when any of those winners was priced by the
/// simulator (its closed form not exact there).
#[derive(Debug, Clone, PartialEq)]
pub struct SampledSpan {
    pub processes: u64,
    pub first: u64,
    pub last: u64,
    pub algorithm: String,
    pub simulated: bool,
}

/// The winner of [`rank_simulated`] for `procs` processes and `bytes` bytes, and whether it was
/// simulated. A candidate whose closed form is not exact here but whose schedule is beyond the
/// [`SimLimits`] (the library then falls back to the closed form) is an error naming `P` and
/// the size: a `--simulate` table does not silently rank by a bound.
fn simulated_winner<A>(
    model: &dyn CommModel,
    procs: u64,
    bytes: u64,
    limits: SimLimits,
) -> Result<(String, bool), Failure>
where
    A: Algorithm + ToSchedule + ExactClosedForm + std::fmt::Display,
{
    let at = || format!("P = {procs}, {bytes} bytes");
    let problem = Problem::new(procs, Message::contiguous(bytes));
    let ranking = rank_simulated::<A>(model, &problem, limits)
        .map_err(|e| Failure(format!("{}: {e}", at())))?;
    if let Some(refused) = ranking.iter().find(|e| {
        e.source == CostSource::ClosedForm && !e.algorithm.closed_form_exact(model, &problem)
    }) {
        let why = if procs > limits.max_processes {
            format!("more than {} processes", limits.max_processes)
        } else {
            format!(
                "a schedule of more than {} operations",
                limits.max_operations
            )
        };
        return fail(format!(
            "{}: `{}` cannot be simulated ({why}, the simulator's limit) and its closed form is \
             not exact there; use fewer processes or sizes, or `table` without --simulate",
            at(),
            refused.algorithm
        ));
    }
    match ranking.first() {
        Some(best) => Ok((
            best.algorithm.to_string(),
            best.source == CostSource::Simulated,
        )),
        None => fail(format!("{}: the collective has no algorithm here", at())),
    }
}

/// The decision table from [`rank_simulated`] at every `(P, size)` of the grid: consecutive
/// sampled sizes with the same winner merged into one span, so a switch point is only known to
/// lie between the last size of a span and the first of the next. Costs one schedule build and
/// simulation per algorithm whose closed form is not exact, per grid point; `bar` counts the
/// grid points.
pub fn sampled_spans<A>(
    model: &dyn CommModel,
    procs: &[u64],
    sizes: &[u64],
    bar: &ProgressBar,
) -> Result<Vec<SampledSpan>, Failure>
where
    A: Algorithm + ToSchedule + ExactClosedForm + std::fmt::Display,
{
    if procs.contains(&0) {
        return fail("--procs: process counts must be at least 1");
    }
    let limits = SimLimits::default();
    let mut out: Vec<SampledSpan> = Vec::new();
    for &p in procs {
        let mut current: Option<SampledSpan> = None;
        for &bytes in sizes {
            let (winner, simulated) = simulated_winner::<A>(model, p, bytes, limits)?;
            bar.inc(1);
            match current.as_mut() {
                Some(span) if span.algorithm == winner => {
                    span.last = bytes;
                    span.simulated |= simulated;
                }
                _ => {
                    out.extend(current.take());
                    current = Some(SampledSpan {
                        processes: p,
                        first: bytes,
                        last: bytes,
                        algorithm: winner,
                        simulated,
                    });
                }
            }
        }
        out.extend(current);
    }
    Ok(out)
}

/// `table --simulate`: the decision table ranked by [`rank_simulated`] at the sampled sizes.
pub fn table_simulated(
    c: Collective,
    loaded: &Loaded,
    procs: &[u64],
    sizes: &[u64],
    csv: bool,
) -> Result<(), Failure> {
    let points = (procs.len() as u64).saturating_mul(sizes.len() as u64);
    // drawn on standard error, and only when that is a terminal
    let bar = ProgressBar::new(points);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} {elapsed}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message("simulating");
    let rows = dispatch!(c, sampled_spans(&loaded.spec, procs, sizes, &bar));
    bar.finish_and_clear();
    let rows = rows?;
    let source = |simulated: bool| {
        source_name(if simulated {
            CostSource::Simulated
        } else {
            CostSource::ClosedForm
        })
    };
    if csv {
        outln!("processes,first_bytes,last_bytes,algorithm,source");
        for r in &rows {
            outln!(
                "{},{},{},\"{}\",{}",
                r.processes,
                r.first,
                r.last,
                r.algorithm,
                source(r.simulated)
            );
        }
    } else {
        print_spans(
            &format!("{} decision table, model {}", c.title(), loaded.name),
            ", simulated where the closed form is not exact (switch points between sampled sizes)",
            sizes,
            rows.iter().map(|r| {
                let mark = if r.simulated { " (simulated)" } else { "" };
                (r.processes, r.first, r.last, r.algorithm.as_str(), mark)
            }),
        )?;
    }
    Ok(())
}

/// One entry of a ranking with the simulator: algorithm, cost, closed form, simulated or not,
/// whether the closed form is exact for this model and problem.
type SimulatedRow = (String, f64, f64, CostSource, bool);

fn ranked_simulated<A>(
    model: &dyn CommModel,
    procs: u64,
    bytes: u64,
) -> Result<Vec<SimulatedRow>, Failure>
where
    A: Algorithm + ToSchedule + ExactClosedForm + std::fmt::Display,
{
    let problem = Problem::new(procs, Message::contiguous(bytes));
    let r = rank_simulated::<A>(model, &problem, SimLimits::default())?;
    Ok(r.into_iter()
        .map(|e| {
            let exact = e.algorithm.closed_form_exact(model, &problem);
            (
                e.algorithm.to_string(),
                e.cost,
                e.closed_form,
                e.source,
                exact,
            )
        })
        .collect())
}

fn source_name(source: CostSource) -> &'static str {
    match source {
        CostSource::Simulated => "simulated",
        CostSource::ClosedForm => "closed form",
    }
}

/// `select`: every algorithm of the collective ranked by its closed form, or with `simulate`
/// by [`rank_simulated`] (each entry then also shows its closed form and where the cost comes
/// from).
pub fn select(
    c: Collective,
    loaded: &Loaded,
    procs: u64,
    bytes: u64,
    json: bool,
    simulate: bool,
) -> Result<(), Failure> {
    if procs == 0 {
        return fail("--procs must be at least 1");
    }
    let ranked: Vec<SimulatedRow> = if simulate {
        dispatch!(c, ranked_simulated(&loaded.spec, procs, bytes))?
    } else {
        dispatch!(c, ranked(&loaded.spec, procs, bytes))?
            .into_iter()
            .map(|(label, cost)| (label, cost, cost, CostSource::ClosedForm, true))
            .collect()
    };
    let best = ranked.first().map_or(0.0, |r| r.1);
    let ratio = |cost: f64| if best > 0.0 { cost / best } else { 1.0 };
    if json {
        let rows: Vec<serde_json::Value> = ranked
            .iter()
            .map(|(label, cost, closed, source, exact)| {
                let mut row = serde_json::json!({
                    "algorithm": label, "seconds": cost, "ratio_to_best": ratio(*cost),
                });
                if simulate {
                    row["closed_form_seconds"] = serde_json::json!(closed);
                    row["source"] = serde_json::json!(source_name(*source));
                    row["closed_form_exact"] = serde_json::json!(exact);
                }
                row
            })
            .collect();
        let mut out = serde_json::json!({
            "model": loaded.name, "collective": c.name(),
            "processes": procs, "bytes": bytes, "ranking": rows,
        });
        if simulate {
            out["simulated"] = serde_json::json!(true);
        }
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let how = if simulate {
        " (simulated where the closed form is not exact)"
    } else {
        ""
    };
    outln!(
        "{} of {} bytes on {procs} processes, model {}{how}:",
        c.title(),
        bytes,
        loaded.name
    );
    if simulate {
        outln!(
            "  {:<4} {:<36} {:>14} {:>8} {:>14}  {}",
            "rank",
            "algorithm",
            "time",
            "× best",
            "closed form",
            "source"
        );
    } else {
        outln!(
            "  {:<4} {:<36} {:>14} {:>8}",
            "rank",
            "algorithm",
            "time",
            "× best"
        );
    }
    for (i, (label, cost, closed, source, _)) in ranked.iter().enumerate() {
        if simulate {
            outln!(
                "  {:<4} {:<36} {:>14} {:>8.3} {:>14}  {}",
                i + 1,
                label,
                human_time(*cost),
                ratio(*cost),
                human_time(*closed),
                source_name(*source)
            );
        } else {
            outln!(
                "  {:<4} {:<36} {:>14} {:>8.3}",
                i + 1,
                label,
                human_time(*cost),
                ratio(*cost)
            );
        }
    }
    // a closed form that is only a bound here, kept because the schedule is beyond the
    // simulator's limits: say so rather than rank by it silently
    let limits = SimLimits::default();
    for (label, _, _, source, exact) in &ranked {
        if simulate && *source == CostSource::ClosedForm && !*exact {
            outln!(
                "note: `{label}` is ranked by its closed form, only an upper bound here: its \
                 schedule is beyond the simulator's limits ({} processes, {} operations)",
                limits.max_processes,
                limits.max_operations
            );
        }
    }
    Ok(())
}
