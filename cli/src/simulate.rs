//! `simulate`: a collective algorithm's schedule or a GOAL file run through the LogGOPS
//! discrete-event simulator (`commcost::sim`), with the closed form beside the makespan, the
//! critical path, a timeline as CSV and a Gantt chart as SVG.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use commcost::collectives::{AlgorithmParseError, Collective, Family, Operator, Problem};
use commcost::sim::{
    CriticalPath, GoalError, Noise, OpId, OpKind, Platform, RendezvousCompletion, Schedule,
    SimAlgorithm, SimOptions, SimResult, Simulator,
};
use commcost::{CommModel, Message};
use plotters::prelude::*;

use crate::collective::FamilyArg;
use crate::model::{self, Loaded};
use crate::units::{self, human_bytes, human_time};
use crate::{Failure, ModelSource, fail};

mod gantt;
mod schedule;

use gantt::draw_gantt;
use schedule::read_goal;
pub(crate) use schedule::{build_collective, parse_noise, parse_operator, write_goal_file};

/// The most ranks the Gantt chart draws (one row each); a larger schedule is drawn for its
/// first ranks, and the output says so.
pub const MAX_SVG_RANKS: u64 = 512;
/// The most operations (bars) the Gantt chart draws: the chart keeps the first ranks whose
/// operations fit.
pub const MAX_SVG_BARS: usize = 100_000;

#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// The collective (bcast, reduce, allreduce, allgather, gather, scatter, barrier, alltoall;
    /// reduce-scatter in Open MPI's family, scan in the textbook and MPICH families). Not with
    /// --goal.
    collective: Option<String>,
    /// The algorithm, by its name in the family (`binomial`, `pipeline:segment=8192`,
    /// `linear-sync:segment=4096`; Open MPI's ID; textbook `pipelined:segment=8192`). An
    /// unknown name lists the valid ones.
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
    /// The algorithm family: Open MPI's tuned component as `coll_base_*.c` runs it (the
    /// default), the textbook algorithms, or MPICH's [default: ompi].
    #[arg(long, value_enum)]
    family: Option<FamilyArg>,
    /// Messages larger than this many bytes use the rendezvous protocol (default: all eager).
    #[arg(long, value_parser = units::parse_bytes, value_name = "BYTES")]
    rendezvous_above: Option<u64>,
    /// The model's own eager / rendezvous threshold (`CommModel::rendezvous_above`: the
    /// open-mpi-openib preset's 12 KiB, LogGPO's eager limit; all eager where it has none).
    #[arg(long, conflicts_with = "rendezvous_above")]
    model_protocols: bool,
    #[command(flatten)]
    platform: PlatformArgs,
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
    /// Nodes of several ranks: the model above inside a node, another between nodes (or the
    /// model file's `nodes` section).
    #[command(flatten)]
    nodes: crate::nodes::NodesArgs,
}

/// What was simulated, for the report.
enum Subject {
    Collective {
        collective: String,
        algorithm: String,
        processes: u64,
        bytes: u64,
        family: Family,
        closed_form: f64,
        exact: bool,
    },
    Goal {
        path: PathBuf,
    },
}

/// What the platform adds to the simulation: how rendezvous sends complete, shared cores,
/// shaped links (`SimOptions`' platform fields).
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct PlatformArgs {
    /// A rendezvous send completes once the receiver acknowledges its request (the data still
    /// streaming: Open MPI's TCP transport), not with the receive.
    #[arg(long)]
    pub handshake: bool,
    /// The ranks share this many cores (oversubscribed runs): CPU work waits for a free core.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub cores: Option<u32>,
    /// Links shaped by a token bucket of this many bytes (`tc tbf`, cloud shaping): a lone
    /// message crosses at line speed, a train is held to the rate.
    #[arg(long, value_parser = units::parse_bytes, value_name = "BYTES")]
    pub link_burst: Option<u64>,
    /// A rendezvous acknowledgement leaves only after the sends the receiver has handed to its
    /// NIC (two ranks exchanging rendezvous messages take turns).
    #[arg(long)]
    pub ack_behind_sends: bool,
}

impl PlatformArgs {
    /// Whether any platform flag is given.
    pub fn given(self) -> bool {
        self.handshake || self.cores.is_some() || self.link_burst.is_some() || self.ack_behind_sends
    }

    /// These flags as a platform (a term not given: none), with `rendezvous_above`.
    pub fn platform(self, rendezvous_above: Option<u64>) -> Platform {
        Platform {
            rendezvous_above,
            rendezvous_completion: if self.handshake {
                RendezvousCompletion::AtHandshake
            } else {
                RendezvousCompletion::WithReceive
            },
            cores: self.cores,
            link_burst: self.link_burst,
            ack_behind_sends: self.ack_behind_sends,
        }
    }

    /// `options` on the model file's platform, these flags (and `rendezvous_above`) on top.
    pub fn apply(
        self,
        file: &Platform,
        rendezvous_above: Option<u64>,
        options: SimOptions,
    ) -> SimOptions {
        file.overridden_by(self.platform(rendezvous_above))
            .apply(options)
    }
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
    if max_memory == 0 {
        return fail("--max-memory must be above 0 bytes");
    }
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
                (args.family.is_some(), "--family"),
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
            let family = args.family.unwrap_or_default().0;
            let (collective, built) =
                build_collective(family, name, algorithm, Some(model), &problem, max_memory)?;
            let (closed_form, exact) = built.closed.unwrap_or((0.0, false));
            (
                built.schedule,
                Subject::Collective {
                    collective: collective.to_string(),
                    algorithm: built.algorithm,
                    processes: procs,
                    bytes,
                    family,
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
        noise,
        ..SimOptions::default()
    };
    // the model file's platform, the flags on top
    let rendezvous_above = if args.model_protocols {
        model.rendezvous_above()
    } else {
        args.rendezvous_above
    };
    let options = args
        .platform
        .apply(&loaded.platform, rendezvous_above, options);
    let mut simulator = Simulator::new();
    simulator.set_max_memory(max_memory);
    let nodes = args.nodes.resolve(schedule.ranks(), loaded)?;
    let result = match &nodes {
        None => simulator.simulate(&schedule, model, &options),
        Some(n) => {
            simulator.simulate_two_level(&schedule, model, n.platform(), &n.options(options))
        }
    }
    .map_err(|e| Failure(format!("simulation: {e}")))?;
    let mut notes = Vec::new();
    if let Some(n) = &nodes {
        notes.push(format!("on {}", n.describe()));
    }
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
    let on_nodes = nodes.as_ref().map(crate::nodes::Nodes::describe);
    report(
        args,
        &options,
        loaded,
        &subject,
        &schedule,
        &result,
        &notes,
        on_nodes.as_deref(),
    )
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
            family,
            ..
        } => format!(
            "{collective} {algorithm} ({family}), P = {processes}, {} bytes, model {}",
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

#[allow(clippy::too_many_arguments)]
fn report(
    args: &SimulateArgs,
    options: &SimOptions,
    loaded: &Loaded,
    subject: &Subject,
    schedule: &Schedule,
    result: &SimResult,
    notes: &[String],
    on_nodes: Option<&str>,
) -> Result<(), Failure> {
    let stats = finish_stats(&result.rank_finish);
    // (the closed forms are flat: no comparison on nodes)
    let closed = match subject {
        Subject::Collective {
            closed_form, exact, ..
        } if on_nodes.is_none() => Some((*closed_form, *exact)),
        _ => None,
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
                family,
                ..
            } => serde_json::json!({
                "collective": collective, "algorithm": algorithm, "processes": processes,
                "bytes": bytes, "family": family.name(),
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
                "mean_seconds": result.mean_finish(),
                "max_seconds": stats.max,
                "last_rank": stats.last_rank,
            },
            "closed_form": closed_json,
            "nodes": on_nodes,
            "critical_path": critical_json(result.critical_path.as_ref()),
            "options": {
                "rendezvous_above_bytes": options.rendezvous_above,
                "rendezvous_send_completes_at_handshake":
                    options.rendezvous_completion == RendezvousCompletion::AtHandshake,
                "cores": options.cores,
                "link_burst_bytes": options.link_burst,
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
        "  rank finish   min {}   median {}   mean {}   max {} (rank {} is last)",
        human_time(stats.min),
        human_time(stats.median),
        human_time(result.mean_finish()),
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

/// The critical path's outline.
pub const CRITICAL_COLOUR: RGBColor = RGBColor(214, 39, 40);

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
