//! `commcost`: communication-cost predictions, collective algorithm selection, calibration,
//! benchmark import and plots from the command line.

/// `println!` that reports a closed or failing standard output as a [`Failure`] instead of
/// panicking (`commcost table ... | head`).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*).map_err(crate::Failure::from_output)?;
    }};
}

/// `print!` with the same error handling as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout(), $($arg)*).map_err(crate::Failure::from_output)?;
    }};
}

mod calibrate;
mod collective;
mod export;
mod goal;
mod model;
mod nodes;
mod plot;
mod simulate;
mod tune;
mod units;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// Predict what communication costs: LogP-family models, MPI collective algorithm selection,
/// calibration from measurements and benchmark output, plots.
#[derive(Debug, Parser)]
#[command(name = "commcost", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where a model comes from: a model file or an embedded preset.
#[derive(Debug, Args, Clone)]
#[group(required = true, multiple = false)]
pub struct ModelSource {
    /// A model file (JSON: a `ModelSpec`, a file written by `commcost calibrate`, or a map of
    /// named models such as `mpi_calibrate` writes); `FILE#NAME` picks one of several.
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// An embedded parameter set (see `commcost presets`).
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
}

#[derive(Debug, Subcommand)]
// every subcommand: `--bytes -1` is a value its parser refuses as negative, not an unknown
// option
enum Command {
    /// List the embedded parameter sets.
    #[command(
        allow_negative_numbers = true,
        after_help = "Examples:\n  commcost presets\n  commcost presets --json"
    )]
    Presets {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Point-to-point cost of one message.
    #[command(
        allow_negative_numbers = true,
        after_help = "Examples:\n  commcost predict --preset open-mpi-openib --bytes 65536\n  \
        commcost predict --model my.json --count 1000 --block 8 --stride 8000   # a matrix column\n  \
        commcost predict --preset mpich2-tcp --bytes 1M --json"
    )]
    Predict {
        #[command(flatten)]
        source: ModelSource,
        /// Message size in bytes (suffixes K, M, G = 2^10, 2^20, 2^30). Contiguous unless
        /// --count/--block/--stride describe a strided layout.
        #[arg(long, value_parser = units::parse_bytes)]
        bytes: Option<u64>,
        /// Strided layout: byte distance between block starts.
        #[arg(long, value_parser = units::parse_bytes, requires_all = ["block", "count"])]
        stride: Option<u64>,
        /// Strided layout: bytes per block.
        #[arg(long, value_parser = units::parse_bytes, requires_all = ["stride", "count"])]
        block: Option<u64>,
        /// Strided layout: number of blocks.
        #[arg(long, value_parser = units::parse_count, requires_all = ["stride", "block"])]
        count: Option<u64>,
        /// Machine-readable output (seconds).
        #[arg(long)]
        json: bool,
    },
    /// Rank every algorithm of a collective, with its cost and the ratio to the best.
    #[command(
        allow_negative_numbers = true,
        after_help = "Families and the collectives they price: ompi (the default): bcast, reduce, \
        allreduce, allgather, gather, scatter, barrier, alltoall, reduce-scatter; textbook and \
        mpich: the same but reduce-scatter, plus scan.\n\nExamples:\n  \
        commcost select allreduce --preset open-mpi-openib --procs 64 --bytes 1M\n  \
        commcost select bcast --family textbook --model my.json --procs 16 --bytes 8 --json\n  \
        commcost select gather --preset open-mpi-gm --procs 24 --bytes 64K --simulate"
    )]
    Select {
        /// The collective.
        collective: collective::CollectiveArg,
        /// The algorithm family ranked: Open MPI's tuned component (the default; the names and
        /// IDs a rules file uses), the textbook algorithms, or MPICH's.
        #[arg(long, value_enum, default_value_t)]
        family: collective::FamilyArg,
        #[command(flatten)]
        source: ModelSource,
        /// Number of processes.
        #[arg(long, value_parser = units::parse_procs)]
        procs: u64,
        /// Message size in bytes as MPI counts it (suffixes K, M, G).
        #[arg(long, value_parser = units::parse_bytes)]
        bytes: u64,
        /// Machine-readable output (seconds).
        #[arg(long)]
        json: bool,
        /// Rank by the simulated makespan where an algorithm's closed form is not exact for
        /// this model and problem (schedules of at most 1024 processes and 2^20 operations;
        /// larger ones keep the closed form, with a note where it is only an upper bound); each
        /// entry shows its closed form and its source (JSON: also `closed_form_exact`).
        #[arg(long)]
        simulate: bool,
        /// The platform the simulation runs on (with --simulate; the model file's `platform`
        /// otherwise): Open MPI's TCP rendezvous, shared cores, shaped links; every algorithm is
        /// then simulated.
        #[command(flatten)]
        platform: simulate::PlatformArgs,
        /// Messages larger than this many bytes use the rendezvous protocol (with --simulate;
        /// default: the model file's platform, else all eager).
        #[arg(long, value_parser = units::parse_bytes, value_name = "BYTES", requires = "simulate")]
        rendezvous_above: Option<u64>,
        /// Nodes of several ranks: the model above inside a node, another between nodes.
        #[command(flatten)]
        nodes: nodes::NodesArgs,
    },
    /// The decision table of a collective: best algorithm per process count and message size,
    /// with the exact switch points.
    #[command(
        allow_negative_numbers = true,
        after_help = "LIST is comma-separated (4,16,64) or a doubling range (2..1024); \
        RANGE is a doubling range of sizes (1..4M) or a list.\n\nExamples:\n  \
        commcost table allreduce --preset open-mpi-openib --procs 4,16,64 --bytes 8..4M\n  \
        commcost table bcast --model my.json --procs 2..256 --bytes 1..1M --csv\n  \
        commcost table gather --preset open-mpi-gm --procs 6,24,100 --bytes 1..1M --simulate\n  \
        commcost table scan --family textbook --preset mpich2-tcp --procs 2..64\n  \
        commcost table bcast --model shm.json --ranks-per-node 2 --inter-model net.json --procs 4,8 --bytes 8..1M"
    )]
    Table {
        /// The collective.
        collective: collective::CollectiveArg,
        /// The algorithm family tabulated: Open MPI's tuned component (the default; the names and
        /// IDs a rules file uses), the textbook algorithms, or MPICH's.
        #[arg(long, value_enum, default_value_t)]
        family: collective::FamilyArg,
        #[command(flatten)]
        source: ModelSource,
        /// Process counts.
        #[arg(long, value_parser = units::parse_list, value_name = "LIST")]
        procs: units::List,
        /// Message sizes.
        #[arg(long, value_parser = units::parse_list, value_name = "RANGE", default_value = "1..4M")]
        bytes: units::List,
        /// CSV output: one line per size range (processes, first and last byte, algorithm).
        #[arg(long)]
        csv: bool,
        /// Rank at every grid point (at most 1024; without --simulate 2^20) with the simulator
        /// where an algorithm's closed form is not exact (as `select --simulate`): spans of sampled sizes, switch points only known to
        /// lie between two sampled sizes, each span marked `(simulated)` when any of its
        /// winners was simulated. Costs one schedule build and simulation per inexact
        /// algorithm per (P, size); an inexact algorithm beyond the simulator's limits (1024
        /// processes, 2^20 operations) is an error. With --csv, first_bytes and last_bytes are
        /// the first and last sampled sizes of the span (sizes between two rows are not
        /// covered) and a fifth column `source` is `simulated` or `closed form`.
        #[arg(long)]
        simulate: bool,
        /// The platform the simulation runs on (with --simulate; the model file's `platform`
        /// otherwise): Open MPI's TCP rendezvous, shared cores, shaped links.
        #[command(flatten)]
        platform: simulate::PlatformArgs,
        /// Messages larger than this many bytes use the rendezvous protocol (with --simulate;
        /// default: the model file's platform, else all eager).
        #[arg(long, value_parser = units::parse_bytes, value_name = "BYTES", requires = "simulate")]
        rendezvous_above: Option<u64>,
        /// Nodes of several ranks (or the model file's `nodes` section): every grid point
        /// simulated on the two-level platform, each communicator size placed as a job of
        /// that size is (fewer ranks than a node holds: on one node).
        #[command(flatten)]
        nodes: nodes::NodesArgs,
    },
    /// Measure or import, fit, and write a model file with provenance.
    #[command(allow_negative_numbers = true)]
    Calibrate(calibrate::CalibrateArgs),
    /// Cost curves over message size as an SVG (log axes), with switch points and measurements.
    #[command(
        allow_negative_numbers = true,
        after_help = "Examples:\n  \
        commcost plot --preset open-mpi-openib --preset mpich2-tcp -o p2p.svg\n  \
        commcost plot --model my.json --measured osu_latency.txt -o fit.svg\n  \
        commcost plot --preset open-mpi-openib --collective allreduce --procs 64 -o allreduce.svg"
    )]
    Plot(plot::PlotArgs),
    /// MPI tuning files from the model's best algorithms: Open MPI dynamic rules, MPICH JSON.
    #[command(allow_negative_numbers = true)]
    Export(export::ExportArgs),
    /// Run a collective algorithm's schedule or a GOAL file through the LogGOPS simulator:
    /// makespan, closed form, per-rank finish, critical path, timeline CSV, Gantt chart.
    #[command(
        allow_negative_numbers = true,
        after_help = "Examples:\n  \
        commcost simulate bcast --algorithm binomial --preset mpich2-tcp --procs 8 --bytes 8\n  \
        commcost simulate allreduce --family textbook --algorithm ring --model my.json --procs 64 --bytes 1M \\\n    \
        --operator 1us,0.5ns --noise 42:1us --svg ring.svg --timeline ring.csv\n  \
        commcost simulate bcast --algorithm pipeline:segment=8192 --preset open-mpi-openib \\\n    \
        --procs 32 --bytes 1M --rendezvous-above 12K --json\n  \
        commcost simulate --goal trace.goal --goal-unit 1ns --preset open-mpi-gm"
    )]
    Simulate(simulate::SimulateArgs),
    /// Write a schedule as LogGOPSim's GOAL text: one of Schedgen's patterns by name, or a
    /// collective algorithm's schedule.
    #[command(
        allow_negative_numbers = true,
        after_help = "Patterns: binomialtreebcast, dissemination, allreduce_ring, \
        allreduce_recdoub (Schedgen's -p names; the same operations Schedgen writes).\n\n\
        Examples:\n  \
        commcost goal allreduce_ring --procs 1024 --bytes 1M -o ring.goal\n  \
        commcost goal binomialtreebcast --procs 16 --bytes 8\n  \
        commcost goal allreduce --algorithm rabenseifner --procs 64 --bytes 64K -o rab.goal\n  \
        commcost goal bcast --algorithm pipeline:segment=8192 --procs 32 --bytes 1M"
    )]
    Goal(goal::GoalArgs),
    /// Tune Open MPI on this machine: measure the algorithms the model says are worth it beside
    /// Open MPI's default and write a rules file that switches only where a candidate is faster
    /// with confidence (needs the `mpi` feature).
    #[command(
        allow_negative_numbers = true,
        after_help = "Examples:\n  \
        commcost tune --model mine.json --procs 2,4 --budget 300 -o rules.conf\n  \
        commcost tune --model cluster.json --procs 4,8 --collectives bcast,allreduce \\\n    \
        --mpirun 'mpirun --hostfile hosts --mca btl self,tcp' -o cluster.rules"
    )]
    Tune(tune::TuneArgs),
}

/// The most (processes, size) points a decision table computes (about a second).
const MAX_TABLE_POINTS: usize = 1 << 20;

/// The most points a `table --simulate` computes (each may simulate several schedules of up
/// to 2^20 operations).
const MAX_SIMULATED_TABLE_POINTS: usize = 1024;

/// A user-facing failure: one line, exit code 1.
#[derive(Debug)]
pub struct Failure(pub String);

/// The message of a closed standard output (the reader stopped early): not an error.
const CLOSED_OUTPUT: &str = "standard output closed";

impl Failure {
    /// A failed write to standard output; a closed pipe is reported as [`CLOSED_OUTPUT`].
    pub fn from_output(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Self(CLOSED_OUTPUT.into())
        } else {
            Self(format!("writing the output: {e}"))
        }
    }
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Self(e.to_string())
    }
}

/// Shorthand for a failure with a message.
pub fn fail<T>(message: impl Into<String>) -> Result<T, Failure> {
    Err(Failure(message.into()))
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Presets { json } => model::list_presets(json),
        Command::Predict {
            source,
            bytes,
            stride,
            block,
            count,
            json,
        } => model::predict(&source, bytes, stride, block, count, json),
        Command::Select {
            collective,
            family,
            source,
            procs,
            bytes,
            json,
            simulate,
            platform,
            rendezvous_above,
            nodes,
        } => {
            let loaded = model::load(&source)?;
            let nodes = nodes.resolve(procs, &loaded)?;
            if platform.given() && !simulate && nodes.is_none() {
                return fail(
                    "--handshake, --cores, --link-burst and --ack-behind-sends describe the simulation: \
                     add --simulate",
                );
            }
            // the model file's platform, the flags on top
            let options = (simulate || nodes.is_some()).then(|| {
                platform.apply(
                    &loaded.platform,
                    rendezvous_above,
                    commcost::sim::SimOptions::default(),
                )
            });
            collective::select(
                family.0,
                collective.0,
                &loaded,
                procs,
                bytes,
                json,
                options,
                nodes.as_ref(),
            )
        }
        Command::Table {
            collective,
            family,
            source,
            procs,
            bytes,
            csv,
            simulate,
            platform,
            rendezvous_above,
            nodes,
        } => {
            let loaded = model::load(&source)?;
            let layout = nodes.layout(&loaded)?;
            let simulate = simulate || layout.is_some();
            if platform.given() && !simulate {
                return fail(
                    "--handshake, --cores, --link-burst and --ack-behind-sends describe the simulation: \
                     add --simulate",
                );
            }
            let points = procs.0.len().saturating_mul(bytes.0.len());
            let limit = if simulate {
                MAX_SIMULATED_TABLE_POINTS
            } else {
                MAX_TABLE_POINTS
            };
            if points > limit {
                return fail(format!(
                    "--procs x --bytes: {} x {} = {points} grid points, more than the {limit} a \
                     table{} computes; give fewer process counts or sizes (a doubling range \
                     such as 2..1024 has 10)",
                    procs.0.len(),
                    bytes.0.len(),
                    if simulate { " with --simulate" } else { "" }
                ));
            }
            if simulate {
                let options = platform.apply(
                    &loaded.platform,
                    rendezvous_above,
                    commcost::sim::SimOptions::default(),
                );
                collective::table_simulated(
                    family.0,
                    collective.0,
                    &loaded,
                    &procs.0,
                    &bytes.0,
                    csv,
                    &options,
                    layout.as_ref(),
                )
            } else {
                collective::table(family.0, collective.0, &loaded, &procs.0, &bytes.0, csv)
            }
        }
        Command::Calibrate(args) => calibrate::run(args),
        Command::Plot(args) => plot::run(args),
        Command::Export(args) => export::run(args),
        Command::Simulate(args) => simulate::run(args),
        Command::Goal(args) => goal::run(args),
        Command::Tune(args) => tune::run(args),
    }
}

/// A usage error of clap on one line (exit code 2, as clap's own): its message without the
/// usage block, the value it echoes cut to 80 characters.
fn usage_error(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() == ErrorKind::ValueValidation
        && let (Some(ContextValue::String(arg)), Some(ContextValue::String(value))) = (
            e.get(ContextKind::InvalidArg),
            e.get(ContextKind::InvalidValue),
        )
    {
        let why = std::error::Error::source(e).map_or_else(String::new, |s| format!(": {s}"));
        return format!("invalid value `{}` for {arg}{why}", units::shown(value));
    }
    let text = e.render().to_string();
    let mut parts = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if !line.is_empty() {
            parts.push(line.strip_prefix("error: ").unwrap_or(line).to_string());
        }
    }
    units::shown(&parts.join(" ")).replace(" characters)", " characters; see --help)")
}

/// `message` with every word longer than 80 characters (400 for a path) cut short: input
/// echoed by any error stays readable.
fn capped_words(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(4096));
    for (i, word) in message.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let limit = if word.contains('/') { 400 } else { 80 };
        match word.char_indices().nth(limit) {
            Some((cut, _)) => {
                out.push_str(&word[..cut]);
                out.push_str(&format!("… ({} characters)", word.chars().count()));
            }
            None => out.push_str(word),
        }
    }
    out
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                e.exit();
            }
            eprintln!("commcost: error: {}", usage_error(&e));
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) if message == CLOSED_OUTPUT => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("commcost: error: {}", capped_words(&message));
            ExitCode::FAILURE
        }
    }
}
