//! `simulate`: a collective algorithm's schedule or a GOAL file run through the LogGOPS
//! discrete-event simulator (`commcost::sim`), with the closed form beside the makespan, the
//! critical path, a timeline as CSV and a Gantt chart as SVG.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use commcost::collectives::AlgorithmParseError;
use commcost::collectives::ompi::OmpiCollective;
use commcost::collectives::{Algorithm, Operator, Problem, ompi};
use commcost::sim::{
    CriticalPath, ExactClosedForm, Noise, OpId, OpKind, Schedule, SimOptions, SimResult, Simulator,
    ToSchedule, parse_goal_within,
};
use commcost::{CommModel, Message};
use plotters::prelude::*;

use crate::collective::Collective;
use crate::model::{self, Loaded};
use crate::units::{self, human_bytes, human_time};
use crate::{Failure, ModelSource, fail};

/// The most ranks the Gantt chart draws (one row each); a larger schedule is drawn for its
/// first ranks, and the output says so.
pub const MAX_SVG_RANKS: u64 = 512;
/// The most operations (bars) the Gantt chart draws: the chart keeps the first ranks whose
/// operations fit.
pub const MAX_SVG_BARS: usize = 100_000;

#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// The collective: broadcast (bcast), scan, reduce, allreduce, allgather, gather, scatter,
    /// barrier, alltoall; with --ompi Open MPI's (bcast, allreduce, reduce, allgather,
    /// alltoall, barrier, reduce-scatter, gather, scatter). Not with --goal.
    collective: Option<String>,
    /// The algorithm, by its name (`binomial`, `pipelined:segment=8192`; with --ompi Open
    /// MPI's, `linear-sync:segment=4096`). An unknown name lists the valid ones.
    #[arg(long, value_name = "NAME")]
    algorithm: Option<String>,
    /// A LogGOPSim GOAL file to simulate instead of a collective.
    #[arg(long, value_name = "FILE")]
    goal: Option<PathBuf>,
    /// The time unit of the GOAL file's `calc` durations, read (--goal) or written
    /// (--write-goal) [default: 1ns].
    #[arg(long, allow_hyphen_values = true, value_name = "TIME")]
    goal_unit: Option<String>,
    #[command(flatten)]
    source: ModelSource,
    /// Number of processes.
    #[arg(long, value_parser = units::parse_procs)]
    procs: Option<u64>,
    /// Message size in bytes as MPI counts it (suffixes K, M, G).
    #[arg(long, value_parser = units::parse_bytes)]
    bytes: Option<u64>,
    /// The reduction operator's cost: PER_CALL,PER_BYTE as times (`1us,0.5ns`).
    #[arg(long, allow_hyphen_values = true, value_name = "PER_CALL,PER_BYTE")]
    operator: Option<String>,
    /// Open MPI's algorithms (`collectives::ompi`, as `coll_base_*.c` runs them) instead of
    /// the textbook ones.
    #[arg(long)]
    ompi: bool,
    /// Messages larger than this many bytes use the rendezvous protocol (default: all eager).
    #[arg(long, value_parser = units::parse_bytes, value_name = "BYTES")]
    rendezvous_above: Option<u64>,
    /// The model's own eager / rendezvous threshold (`CommModel::rendezvous_above`: the
    /// open-mpi-openib preset's 12 KiB, LogGPO's eager limit; all eager where it has none).
    #[arg(long, conflicts_with = "rendezvous_above")]
    model_protocols: bool,
    /// Seeded exponential CPU noise: SEED:MEAN (`42:1us`).
    #[arg(long, allow_hyphen_values = true, value_name = "SEED:MEAN")]
    noise: Option<String>,
    /// Write the timeline as CSV: `rank,op,kind,peer,bytes,start,end`, one line per operation.
    #[arg(long, value_name = "FILE.csv")]
    timeline: Option<PathBuf>,
    /// Draw a Gantt chart as SVG: one row per rank (at most 512, and 100000 bars; a larger
    /// schedule is drawn for its first ranks), sends, receives and calcs as bars, the critical
    /// path outlined in red.
    #[arg(long, value_name = "FILE.svg")]
    svg: Option<PathBuf>,
    /// Also write the schedule as GOAL text (Schedgen's style, which LogGOPSim's `txt2bin`
    /// reads; calc times in --goal-unit).
    #[arg(long, value_name = "FILE")]
    write_goal: Option<PathBuf>,
    /// Machine-readable output (seconds).
    #[arg(long)]
    json: bool,
    /// The memory the schedule and its simulation may use (suffixes K, M, G, T), checked
    /// before anything of that size is allocated; see docs/SIMULATOR.md for the bytes per
    /// operation [default: 2G].
    #[arg(long, value_parser = units::parse_bytes, value_name = "BYTES")]
    max_memory: Option<u64>,
}

/// What was simulated, for the report.
enum Subject {
    Collective {
        collective: String,
        algorithm: String,
        processes: u64,
        bytes: u64,
        ompi: bool,
        closed_form: f64,
        exact: bool,
    },
    Goal {
        path: PathBuf,
    },
}

/// A collective's schedule with its closed form.
pub(crate) struct Built {
    pub(crate) algorithm: String,
    pub(crate) schedule: Schedule,
    /// The closed form and whether it is exact (when a model was given).
    closed: Option<(f64, bool)>,
}

/// Parses and builds the algorithm `name` of collective `A`, priced on `model` if one is
/// given.
fn build<A>(
    name: &str,
    model: Option<&dyn CommModel>,
    problem: &Problem,
    max_memory: u64,
) -> Result<Built, Failure>
where
    A: Algorithm
        + ToSchedule
        + ExactClosedForm
        + FromStr<Err = AlgorithmParseError>
        + std::fmt::Display,
{
    let algorithm: A = name
        .parse()
        .map_err(|e: AlgorithmParseError| Failure(format!("--algorithm: {e}")))?;
    let closed = match model {
        Some(model) => Some((
            algorithm.cost(model, problem)?,
            algorithm.closed_form_exact(model, problem),
        )),
        None => None,
    };
    let schedule = algorithm
        .schedule_within(problem, max_memory)
        .map_err(|e| {
            Failure(format!(
                "{algorithm} on {} processes: {e}",
                problem.processes
            ))
        })?;
    Ok(Built {
        algorithm: algorithm.to_string(),
        schedule,
        closed,
    })
}

/// The schedule of collective `name`'s algorithm `algorithm` (Open MPI's with `ompi`) and the
/// collective's name as reported; priced on `model` if one is given.
pub(crate) fn build_collective(
    name: &str,
    algorithm: &str,
    ompi: bool,
    model: Option<&dyn CommModel>,
    problem: &Problem,
    max_memory: u64,
) -> Result<(String, Built), Failure> {
    Ok(if ompi {
        let c = ompi_collective(name)?;
        let built = match c {
            OmpiCollective::Allgather => {
                build::<ompi::Allgather>(algorithm, model, problem, max_memory)
            }
            OmpiCollective::Allreduce => {
                build::<ompi::Allreduce>(algorithm, model, problem, max_memory)
            }
            OmpiCollective::Alltoall => {
                build::<ompi::Alltoall>(algorithm, model, problem, max_memory)
            }
            OmpiCollective::Barrier => {
                build::<ompi::Barrier>(algorithm, model, problem, max_memory)
            }
            OmpiCollective::Bcast => build::<ompi::Bcast>(algorithm, model, problem, max_memory),
            OmpiCollective::Gather => build::<ompi::Gather>(algorithm, model, problem, max_memory),
            OmpiCollective::Reduce => build::<ompi::Reduce>(algorithm, model, problem, max_memory),
            OmpiCollective::ReduceScatter => {
                build::<ompi::ReduceScatter>(algorithm, model, problem, max_memory)
            }
            OmpiCollective::Scatter => {
                build::<ompi::Scatter>(algorithm, model, problem, max_memory)
            }
        }?;
        (c.to_string(), built)
    } else {
        let c = textbook_collective(name)?;
        let built = crate::collective::dispatch!(c, build(algorithm, model, problem, max_memory))?;
        (format!("{c:?}").to_ascii_lowercase(), built)
    })
}

/// The Open MPI collective of a name (textbook `broadcast` accepted for `bcast`).
fn ompi_collective(name: &str) -> Result<OmpiCollective, Failure> {
    let wanted = if name.eq_ignore_ascii_case("broadcast") {
        "bcast"
    } else {
        name
    };
    wanted.parse().map_err(|_| {
        let known: Vec<String> = OmpiCollective::ALL.iter().map(|c| c.to_string()).collect();
        Failure(format!(
            "unknown Open MPI collective `{name}`; collectives: {}",
            known.join(", ")
        ))
    })
}

fn textbook_collective(name: &str) -> Result<Collective, Failure> {
    <Collective as clap::ValueEnum>::from_str(name, true).map_err(|_| {
        let known: Vec<String> = Collective::ALL
            .iter()
            .map(|c| format!("{c:?}").to_ascii_lowercase())
            .collect();
        Failure(format!(
            "unknown collective `{name}`; collectives: {} (reduce-scatter with --ompi)",
            known.join(", ")
        ))
    })
}

/// `SEED:MEAN`, e.g. `42:1us`.
pub fn parse_noise(text: &str) -> Result<Noise, Failure> {
    let Some((seed, mean)) = text.split_once(':') else {
        return fail(format!(
            "--noise `{}`: expected SEED:MEAN, e.g. 42:1us",
            units::shown(text)
        ));
    };
    let seed: u64 = seed.trim().parse().map_err(|_| {
        Failure(format!(
            "--noise `{}`: the random seed `{}` is not a whole number",
            units::shown(text),
            units::shown(seed)
        ))
    })?;
    let mean = units::parse_seconds(mean).map_err(|e| Failure(format!("--noise: {e}")))?;
    Noise::exponential(seed, mean).map_err(|e| Failure(format!("--noise: {e}")))
}

/// `PER_CALL,PER_BYTE`, e.g. `1us,0.5ns`.
pub fn parse_operator(text: &str) -> Result<Operator, Failure> {
    let Some((call, byte)) = text.split_once(',') else {
        return fail(format!(
            "--operator `{}`: expected PER_CALL,PER_BYTE, e.g. 1us,0.5ns",
            units::shown(text)
        ));
    };
    let call = units::parse_seconds(call).map_err(|e| Failure(format!("--operator: {e}")))?;
    let byte = units::parse_seconds(byte).map_err(|e| Failure(format!("--operator: {e}")))?;
    Operator::new(call, byte).map_err(|e| Failure(format!("--operator: {e}")))
}

/// Minimum, median (the mean of the two middle values for an even count), maximum, and the
/// rank that finishes last (the lowest of equals).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FinishStats {
    pub min: f64,
    pub median: f64,
    pub max: f64,
    pub last_rank: u64,
}

pub fn finish_stats(finish: &[f64]) -> FinishStats {
    let mut last_rank = 0;
    for (r, &t) in finish.iter().enumerate() {
        if t > finish[last_rank] {
            last_rank = r;
        }
    }
    let mut sorted = finish.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    };
    FinishStats {
        min: sorted.first().copied().unwrap_or(0.0),
        median,
        max: sorted.last().copied().unwrap_or(0.0),
        last_rank: last_rank as u64,
    }
}

pub fn run(args: SimulateArgs) -> Result<(), Failure> {
    let max_memory = args.max_memory.unwrap_or(commcost::sim::DEFAULT_MAX_MEMORY);
    let loaded = model::load(&args.source)?;
    // a spinner on standard error while the schedule is built and simulated (drawn only when
    // that is a terminal: a large schedule takes seconds)
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.set_message("building and simulating the schedule");
    spinner.enable_steady_tick(std::time::Duration::from_millis(150));
    let outcome = simulate_and_report(&args, &loaded, max_memory);
    spinner.finish_and_clear();
    outcome
}

/// [`run`] once the model is loaded.
fn simulate_and_report(
    args: &SimulateArgs,
    loaded: &Loaded,
    max_memory: u64,
) -> Result<(), Failure> {
    let model: &dyn CommModel = &loaded.spec;
    let (schedule, subject) = match (&args.goal, &args.collective) {
        (Some(_), Some(c)) => {
            return fail(format!(
                "give either a collective (`{c}`) or --goal FILE, not both"
            ));
        }
        (None, None) => {
            return fail("give a collective with --algorithm, --procs and --bytes, or --goal FILE");
        }
        (Some(path), None) => {
            for (given, flag) in [
                (args.algorithm.is_some(), "--algorithm"),
                (args.procs.is_some(), "--procs"),
                (args.bytes.is_some(), "--bytes"),
                (args.operator.is_some(), "--operator"),
                (args.ompi, "--ompi"),
            ] {
                if given {
                    return fail(format!("{flag} describes a collective; not with --goal"));
                }
            }
            let unit = units::parse_seconds(args.goal_unit.as_deref().unwrap_or("1ns"))
                .map_err(|e| Failure(format!("--goal-unit: {e}")))?;
            (
                read_goal(path, unit, max_memory)?,
                Subject::Goal { path: path.clone() },
            )
        }
        (None, Some(name)) => {
            if args.goal_unit.is_some() && args.write_goal.is_none() {
                return fail(
                    "--goal-unit is the time unit of a GOAL file; give it with --goal or \
                     --write-goal",
                );
            }
            let Some(algorithm) = &args.algorithm else {
                return fail("--algorithm NAME is required with a collective");
            };
            let Some(procs) = args.procs else {
                return fail("--procs N is required with a collective");
            };
            if procs == 0 {
                return fail("--procs must be at least 1");
            }
            let Some(bytes) = args.bytes else {
                return fail("--bytes B is required with a collective");
            };
            let mut problem = Problem::new(procs, Message::contiguous(bytes));
            if let Some(op) = &args.operator {
                problem = problem.with_operator(parse_operator(op)?);
            }
            let (collective, built) = build_collective(
                name,
                algorithm,
                args.ompi,
                Some(model),
                &problem,
                max_memory,
            )?;
            let (closed_form, exact) = built.closed.unwrap_or((0.0, false));
            (
                built.schedule,
                Subject::Collective {
                    collective,
                    algorithm: built.algorithm,
                    processes: procs,
                    bytes,
                    ompi: args.ompi,
                    closed_form,
                    exact,
                },
            )
        }
    };
    if let Some(path) = &args.write_goal {
        let unit = units::parse_seconds(args.goal_unit.as_deref().unwrap_or("1ns"))
            .map_err(|e| Failure(format!("--goal-unit: {e}")))?;
        write_goal_file(path, "--write-goal", &schedule, unit)?;
    }
    let noise = args.noise.as_deref().map(parse_noise).transpose()?;
    let options = SimOptions {
        timeline: args.timeline.is_some() || args.svg.is_some(),
        critical_path: true,
        rendezvous_above: if args.model_protocols {
            model.rendezvous_above()
        } else {
            args.rendezvous_above
        },
        noise,
    };
    let mut simulator = Simulator::new();
    simulator.set_max_memory(max_memory);
    let result = simulator
        .simulate(&schedule, model, &options)
        .map_err(|e| Failure(format!("simulation: {e}")))?;
    let mut notes = Vec::new();
    if let Some(path) = &args.write_goal {
        notes.push(format!(
            "goal: {} ({} operations)",
            path.display(),
            schedule.len()
        ));
    }
    if let Some(path) = &args.timeline {
        write_timeline(path, &result, &schedule)?;
        notes.push(format!(
            "timeline: {} ({} operations)",
            path.display(),
            schedule.len()
        ));
    }
    if let Some(path) = &args.svg {
        let drawn = draw_gantt(path, &result, &schedule, &title(&subject, loaded))?;
        notes.push(if drawn < schedule.ranks() {
            format!(
                "svg: {} (the first {drawn} of {} ranks: at most {MAX_SVG_RANKS} ranks and \
                 {MAX_SVG_BARS} operations are drawn)",
                path.display(),
                schedule.ranks()
            )
        } else {
            format!("svg: {} ({drawn} ranks)", path.display())
        });
    }
    report(args, &options, loaded, &subject, &schedule, &result, &notes)
}

/// Reads and parses a GOAL file: at most
/// [`MAX_GOAL_FILE_BYTES`](commcost::limits::MAX_GOAL_FILE_BYTES), the text counted against
/// the memory budget with the schedule.
fn read_goal(path: &Path, unit: f64, max_memory: u64) -> Result<Schedule, Failure> {
    let shown = path.display();
    let text = commcost::limits::read_text_file(
        path,
        "GOAL file",
        commcost::limits::MAX_GOAL_FILE_BYTES.min(max_memory),
    )?;
    parse_goal_within(&text, unit, max_memory).map_err(|e| Failure(format!("{shown}: {e}")))
}

/// Writes `schedule` as GOAL to `path` (`flag` names the option in errors).
pub(crate) fn write_goal_file(
    path: &Path,
    flag: &str,
    schedule: &Schedule,
    unit: f64,
) -> Result<(), Failure> {
    let shown = path.display();
    let file = std::fs::File::create(path)
        .map_err(|e| Failure(format!("{flag} {shown}: cannot write: {e}")))?;
    commcost::sim::write_goal_to(schedule, unit, file)
        .map_err(|e| Failure(format!("{flag} {shown}: cannot write: {e}")))
}

fn write_timeline(path: &Path, result: &SimResult, schedule: &Schedule) -> Result<(), Failure> {
    let shown = path.display();
    let file = std::fs::File::create(path)
        .map_err(|e| Failure(format!("--timeline {shown}: cannot write: {e}")))?;
    let mut out = std::io::BufWriter::new(file);
    result
        .timeline_csv(schedule, &mut out)
        .and_then(|()| out.flush())
        .map_err(|e| Failure(format!("--timeline {shown}: cannot write: {e}")))
}

fn title(subject: &Subject, loaded: &Loaded) -> String {
    match subject {
        Subject::Collective {
            collective,
            algorithm,
            processes,
            bytes,
            ompi,
            ..
        } => format!(
            "{}{collective} {algorithm}, P = {processes}, {} bytes, model {}",
            if *ompi { "Open MPI " } else { "" },
            human_bytes(*bytes),
            loaded.name
        ),
        Subject::Goal { path } => format!("{}, model {}", path.display(), loaded.name),
    }
}

fn critical_json(path: Option<&CriticalPath>) -> serde_json::Value {
    match path {
        None => serde_json::Value::Null,
        Some(c) => {
            let (send, recv, calc) = c.time_by_kind();
            serde_json::json!({
                "steps": c.steps.len(),
                "messages": c.messages(),
                "ranks_visited": c.ranks_visited(),
                "send_seconds": send,
                "recv_seconds": recv,
                "calc_seconds": calc,
            })
        }
    }
}

fn report(
    args: &SimulateArgs,
    options: &SimOptions,
    loaded: &Loaded,
    subject: &Subject,
    schedule: &Schedule,
    result: &SimResult,
    notes: &[String],
) -> Result<(), Failure> {
    let stats = finish_stats(&result.rank_finish);
    let closed = match subject {
        Subject::Collective {
            closed_form, exact, ..
        } => Some((*closed_form, *exact)),
        Subject::Goal { .. } => None,
    };
    let ratio = |closed: f64| {
        if closed > 0.0 {
            result.makespan / closed
        } else if result.makespan == 0.0 {
            1.0
        } else {
            f64::INFINITY
        }
    };
    if args.json {
        let what = match subject {
            Subject::Collective {
                collective,
                algorithm,
                processes,
                bytes,
                ompi,
                ..
            } => serde_json::json!({
                "collective": collective, "algorithm": algorithm, "processes": processes,
                "bytes": bytes, "ompi": ompi,
            }),
            Subject::Goal { path } => serde_json::json!({"goal": path.display().to_string()}),
        };
        let closed_json = match closed {
            None => serde_json::Value::Null,
            Some((c, exact)) => {
                let r = ratio(c);
                serde_json::json!({
                    "seconds": c,
                    "makespan_ratio": if r.is_finite() { serde_json::json!(r) } else { serde_json::Value::Null },
                    "exact": exact,
                })
            }
        };
        let noise = options.noise;
        let out = serde_json::json!({
            "model": loaded.name,
            "schedule": what,
            "ranks": schedule.ranks(),
            "operations": schedule.len(),
            "makespan_seconds": result.makespan,
            "events": result.events,
            "rank_finish": {
                "min_seconds": stats.min,
                "median_seconds": stats.median,
                "max_seconds": stats.max,
                "last_rank": stats.last_rank,
            },
            "closed_form": closed_json,
            "critical_path": critical_json(result.critical_path.as_ref()),
            "options": {
                "rendezvous_above_bytes": options.rendezvous_above,
                "noise": noise.map(|n| serde_json::json!({"seed": n.seed(), "mean_seconds": n.mean()})),
            },
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        for note in notes {
            eprintln!("commcost: {note}");
        }
        return Ok(());
    }
    outln!("{}", title(subject, loaded));
    outln!(
        "  {} ranks, {} operations, {} dependencies",
        schedule.ranks(),
        schedule.len(),
        schedule.dependencies()
    );
    outln!("  makespan      {}", human_time(result.makespan));
    if let Some((c, exact)) = closed {
        outln!(
            "  closed form   {}   makespan / closed form = {:.4}   ({})",
            human_time(c),
            ratio(c),
            if exact {
                "the closed form is exact for this model and problem, all eager, no noise"
            } else {
                "the closed form is not exact here: a bound or an approximation"
            }
        );
    }
    outln!("  events        {}", result.events);
    outln!(
        "  rank finish   min {}   median {}   max {} (rank {} is last)",
        human_time(stats.min),
        human_time(stats.median),
        human_time(stats.max),
        stats.last_rank
    );
    if let Some(c) = &result.critical_path {
        let (send, recv, calc) = c.time_by_kind();
        outln!(
            "  critical path {} steps, {} messages, {} ranks visited; send {}, recv {} (from posting), calc {}",
            c.steps.len(),
            c.messages(),
            c.ranks_visited(),
            human_time(send),
            human_time(recv),
            human_time(calc)
        );
    }
    for note in notes {
        outln!("  {note}");
    }
    Ok(())
}

/// The first ranks the chart draws: at most [`MAX_SVG_RANKS`], and only as many as keep the
/// bars at most [`MAX_SVG_BARS`].
fn drawn_ranks(schedule: &Schedule) -> u64 {
    let limit = schedule.ranks().min(MAX_SVG_RANKS);
    let mut per_rank = vec![0usize; limit as usize];
    for i in 0..schedule.len() {
        if let Some(r) = schedule.rank(OpId(i as u32))
            && r < limit
        {
            per_rank[r as usize] += 1;
        }
    }
    let mut total = 0usize;
    for (r, n) in per_rank.iter().enumerate() {
        total += n;
        if total > MAX_SVG_BARS {
            return r as u64;
        }
    }
    limit
}

/// Draws the Gantt chart; returns the number of ranks drawn.
fn draw_gantt(
    path: &Path,
    result: &SimResult,
    schedule: &Schedule,
    title: &str,
) -> Result<u64, Failure> {
    let rows = drawn_ranks(schedule);
    if rows == 0 {
        return fail(format!(
            "--svg: rank 0 alone has more than {MAX_SVG_BARS} operations, more than the chart draws"
        ));
    }
    let shown = path.display();
    gantt(path, result, schedule, title, rows)
        .map_err(|e| Failure(format!("--svg {shown}: {e}")))?;
    Ok(rows)
}

/// Colours of the bars: sends, receives (from posting to completion), calcs.
const SEND_COLOUR: RGBColor = RGBColor(31, 119, 180);
const RECV_COLOUR: RGBColor = RGBColor(44, 160, 44);
const CALC_COLOUR: RGBColor = RGBColor(255, 127, 14);
/// The critical path's outline.
pub const CRITICAL_COLOUR: RGBColor = RGBColor(214, 39, 40);

fn gantt(
    path: &Path,
    result: &SimResult,
    schedule: &Schedule,
    title: &str,
    rows: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let (Some(starts), Some(ends)) = (&result.starts, &result.ends) else {
        return Err("the simulation kept no timeline".into());
    };
    let row_px = (4000 / rows).clamp(2, 24) as u32;
    let height = 170 + row_px * rows as u32;
    let xmax = if result.makespan > 0.0 {
        result.makespan * 1e6 * 1.02
    } else {
        1.0
    };
    let root = SVGBackend::new(path, (1000, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (plot, legend) = root.split_vertically(height - 30);
    let caption = if rows < schedule.ranks() {
        format!("{title} (ranks 0..{} of {})", rows - 1, schedule.ranks())
    } else {
        title.to_string()
    };
    // rank r is the row centred on y = -r: rank 0 at the top
    let mut chart = ChartBuilder::on(&plot)
        .caption(caption, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..xmax, (0.5 - rows as f64)..0.5)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("time (µs)")
        .y_desc("rank")
        .y_labels(rows.min(32) as usize)
        .y_label_formatter(&|y| {
            if y.fract() == 0.0 && *y <= 0.0 {
                format!("{}", (-y).round() as u64)
            } else {
                String::new()
            }
        })
        .draw()?;
    // per kind: the lane within the row (offsets from its centre) and the colour
    let lane = |kind: OpKind| match kind {
        OpKind::Send => (0.4, 0.1, SEND_COLOUR.to_rgba()),
        OpKind::Recv => (0.1, -0.2, RECV_COLOUR.mix(0.45)),
        OpKind::Calc => (-0.2, -0.4, CALC_COLOUR.to_rgba()),
    };
    for kind in [OpKind::Send, OpKind::Recv, OpKind::Calc] {
        let (top, bottom, colour) = lane(kind);
        chart.draw_series((0..schedule.len()).filter_map(|i| {
            let op = OpId(i as u32);
            let rank = schedule.rank(op)?;
            if rank >= rows || schedule.kind(op)? != kind {
                return None;
            }
            let y = -(rank as f64);
            Some(Rectangle::new(
                [(starts[i] * 1e6, y + top), (ends[i] * 1e6, y + bottom)],
                colour.filled(),
            ))
        }))?;
    }
    if let Some(critical) = &result.critical_path {
        let steps: Vec<_> = critical.steps.iter().filter(|s| s.rank < rows).collect();
        chart.draw_series(steps.iter().map(|s| {
            let y = -(s.rank as f64);
            Rectangle::new(
                [(s.start * 1e6, y + 0.45), (s.end * 1e6, y - 0.45)],
                CRITICAL_COLOUR.stroke_width(2),
            )
        }))?;
        chart.draw_series(std::iter::once(PathElement::new(
            steps
                .iter()
                .map(|s| (s.end * 1e6, -(s.rank as f64)))
                .collect::<Vec<_>>(),
            CRITICAL_COLOUR.mix(0.6).stroke_width(1),
        )))?;
    }
    // the legend, in its own strip below the chart
    let entries = [
        ("send", lane(OpKind::Send).2, false),
        ("receive (posted → done)", lane(OpKind::Recv).2, false),
        ("calc", lane(OpKind::Calc).2, false),
        ("critical path", CRITICAL_COLOUR.to_rgba(), true),
    ];
    let mut x = 70;
    for (label, colour, outline) in entries {
        let style = if outline {
            colour.stroke_width(2)
        } else {
            colour.filled()
        };
        legend.draw(&Rectangle::new([(x, 8), (x + 16, 20)], style))?;
        legend.draw(&Text::new(label, (x + 22, 8), ("sans-serif", 13)))?;
        x += 40 + 7 * label.chars().count() as i32;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_statistics() {
        let s = finish_stats(&[3.0, 1.0, 4.0, 4.0, 2.0]);
        assert_eq!((s.min, s.median, s.max, s.last_rank), (1.0, 3.0, 4.0, 2));
        let s = finish_stats(&[1.0, 2.0, 3.0, 10.0]);
        assert_eq!(s.median, 2.5);
        assert_eq!(s.last_rank, 3);
    }

    #[test]
    fn noise_and_operator() {
        let n = parse_noise("42:1us").unwrap();
        assert_eq!((n.seed(), n.mean()), (42, 1e-6));
        assert!(parse_noise("42").is_err());
        assert!(parse_noise("x:1us").is_err());
        assert!(parse_noise("1:1 parsec").is_err());
        let op = parse_operator("1us,2ns").unwrap();
        assert_eq!(op, Operator::new(1e-6, 2e-9).unwrap());
        assert!(parse_operator("1us").is_err());
    }
}
