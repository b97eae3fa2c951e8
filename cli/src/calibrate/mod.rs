//! `calibrate`: measure (host memory, TCP loopback) or import (Netgauge, OSU, IMB), fit, and
//! write a model file with provenance.

use std::path::PathBuf;

use commcost::calibrate::Adjustment;
use commcost::probe::ProbeError;
use commcost::probe::Prober;
use commcost::{LogGP, ModelSpec, Protocols};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Map, Value, json};

use crate::model::{ModelFile, Provenance, host_name, now_utc, write_file};
use crate::units::{self, human_time};
use crate::{Failure, fail};

mod collectives;
pub(crate) mod collectives_measure;
mod host;
mod import;
pub(crate) mod launcher;
mod local;
mod mpi;
mod platform;
mod tcp;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    commcost calibrate osu osu_latency.txt osu_bw.txt -o mine.json\n  \
    commcost calibrate imb imb_pingpong.txt -o mine.json\n  \
    commcost calibrate netgauge ng_loggp.out -o mine.json\n  \
    commcost calibrate tcp --quick -o loopback.json\n  \
    commcost calibrate host -o memory.json\n  \
    commcost calibrate local --into mine.json")]
pub struct CalibrateArgs {
    #[command(subcommand)]
    what: What,
    /// The model file to write.
    #[arg(short, long, value_name = "FILE", global = true)]
    output: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// Memory logP of this machine from timed copies and packs (a few seconds).
    Host {
        /// Fewer repetitions and sizes.
        #[arg(long)]
        quick: bool,
    },
    /// Local work of collectives on this machine — memory copies by cache class, allocating a
    /// temporary buffer, a sum operator — written into an existing model file (its `local`
    /// section), which select, table and export then use (a minute; `--quick` a few seconds).
    #[command(
        after_help = "Example:\n  commcost calibrate osu osu_latency.txt osu_bw.txt -o mine.json\n  \
        commcost calibrate local --into mine.json\n  \
        commcost export ompi-rules --model mine.json --procs 2..64 --min-gain 0.1 -o rules.conf"
    )]
    Local {
        /// The model file to add the section to (written back in place unless -o is given).
        #[arg(long, value_name = "FILE")]
        into: PathBuf,
        /// Fewer repetitions and sizes.
        #[arg(long)]
        quick: bool,
    },
    /// Per-call costs of Open MPI's algorithms from runs with each algorithm forced: fitted
    /// at small sizes on 2 ranks, checked on the runs held out (other sizes and process
    /// counts), written into the model file's `local` section, which select, table and export
    /// then use.
    #[command(after_help = "Examples:\n  \
        commcost calibrate collectives --model mine.json forced_runs.csv\n  \
        commcost calibrate collectives --model mpi.json#plogp_mpi runs.csv -o mine.json")]
    Collectives {
        /// The model the runs are priced with (FILE or FILE#NAME); a commcost model file is
        /// written back in place unless -o is given.
        #[arg(long, value_name = "FILE")]
        model: PathBuf,
        /// The forced runs: CSV with the columns collective, procs, algorithm_id, segsize,
        /// bytes, count, elem_bytes and the time column of --stat (what the validation harness
        /// mpi_collectives and scripts/ompi_collectives_sweep.sh write).
        runs: Option<PathBuf>,
        /// Which time of each run to fit.
        #[arg(long, value_enum, default_value_t = StatArg::Median)]
        stat: StatArg,
        /// Fit on runs of this many processes.
        #[arg(long, value_parser = units::parse_procs, default_value = "2")]
        fit_procs: u64,
        /// Fit on runs of at most this many bytes per rank (suffixes K, M).
        #[arg(long, value_parser = units::parse_bytes, default_value = "512")]
        fit_max_bytes: u64,
        /// Forced runs measured separately (another run, day or process count) to check the
        /// fitted costs on, all of them held out.
        #[arg(long, value_name = "FILE")]
        check: Option<PathBuf>,
        /// Measure the forced runs first (build with `--features mpi`; at most 2 minutes, as
        /// `collectives-measure`) and write them to RUNS if given.
        #[arg(long)]
        measure: bool,
        /// With --measure: the launcher of each run.
        #[arg(long, value_name = "CMD", default_value = collectives_measure::DEFAULT_MPIRUN)]
        mpirun: String,
        /// With --measure: fewer sizes and samples.
        #[arg(long)]
        quick: bool,
    },
    /// LogGP with protocol ranges of TCP loopback from parametrised round trips (PRTT).
    Tcp {
        /// Fewer sizes and passes.
        #[arg(long)]
        quick: bool,
    },
    /// LogGP with protocol ranges over MPI, between ranks 0 and 1 of an MPI job (build with
    /// `--features mpi`).
    #[command(
        after_help = "Run inside a job of two ranks; rank 0 writes the file:\n  \
        cargo install --path cli --features mpi\n  \
        mpirun -np 2 commcost calibrate mpi -o mpi.json"
    )]
    Mpi {
        /// Fewer sizes and passes.
        #[arg(long)]
        quick: bool,
        /// The model to write: LogGP with protocol ranges, pLogP (from the same round trips),
        /// a shaped link (LogGP of a train of messages and the token bucket's burst, for the
        /// simulator's --link-burst), or log_3 P (half round trips with MPI vector datatypes and
        /// memory copies).
        #[arg(long, value_enum, default_value_t = MpiModel::Loggp)]
        model: MpiModel,
        /// Send every PRTT trial from a buffer the sender never writes and receive into
        /// another (as osu_latency does), instead of returning each message from the buffer
        /// it was received into.
        #[arg(long)]
        separate_buffers: bool,
        /// Largest message size of the round trips (64 KiB to 64 MiB; suffixes K, M): sizes
        /// above 64 KiB are the powers of two up to it, so that the range beyond the caches
        /// is measured, not extrapolated.
        #[arg(long, value_parser = units::parse_bytes, default_value = "4M")]
        max_size: u64,
    },
    /// Everything the collectives' prices need, from two ranks, into one model file (build with
    /// `--features mpi`; a few minutes): the link (`calibrate mpi`, under --mpirun), the local
    /// work (`calibrate local`) and the per-call costs of Open MPI's forced algorithms
    /// (`calibrate collectives --measure`). Written once at the end: a failed step leaves no
    /// file.
    #[command(after_help = "Examples:\n  \
        commcost calibrate platform --quick -o node.json\n  \
        commcost calibrate platform --mpirun 'mpirun --host a,b --mca btl self,tcp' -o net.json")]
    Platform {
        /// The launcher without -np (`-np 2` is added); to `mpirun` without `--mca btl`,
        /// `--mca btl self,vader` is added.
        #[arg(long, value_name = "CMD", default_value = "mpirun --allow-run-as-root")]
        mpirun: String,
        /// The link's model: a shaped link (LogGP of a train and the token bucket's burst),
        /// LogGP with protocol ranges, or `auto`: the shaped link unless it misses the held-out
        /// round trips by more than twice pLogP's error (shared memory), then LogGP.
        #[arg(long, value_enum, default_value_t = LinkModel::Auto)]
        model: LinkModel,
        /// Fewer sizes and samples in every step.
        #[arg(long)]
        quick: bool,
        /// Largest round trip (64 KiB to 64 MiB; suffixes K, M).
        #[arg(long, value_parser = units::parse_bytes, default_value = "256K")]
        max_size: u64,
        /// The link's calibration is killed after this many seconds (1 ..= 3600).
        #[arg(long, value_name = "SECONDS", default_value_t = 600)]
        timeout: u64,
    },
    /// Time every Open MPI coll_tuned algorithm of nine collectives, each forced in its own
    /// mpirun of two ranks, and Open MPI's default, into a CSV of forced runs (build with
    /// `--features mpi`; at most 2 minutes, `--quick` seconds).
    #[command(
        after_help = "Example:\n  commcost calibrate collectives-measure -o forced_runs.csv\n  \
        commcost calibrate collectives-measure --quick --only bcast,allreduce -o quick.csv"
    )]
    CollectivesMeasure(collectives_measure::MeasureArgs),
    /// One mpirun of the collectives measurement (started by collectives-measure).
    #[command(hide = true)]
    CollectivesWorker(collectives_measure::WorkerArgs),
    /// Import Netgauge's LogGP output and assess LogGP from its round trips.
    Netgauge {
        /// Netgauge's output file.
        file: PathBuf,
    },
    /// Import OSU Micro-Benchmarks output: osu_latency (required), osu_bw (optional), and
    /// collective tests (osu_allreduce, osu_bcast, ...) to check the fitted model on.
    Osu {
        /// Output files of osu_latency, osu_bw, collective tests (any order).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Processes the collective tests ran with (OSU does not print it; at least 1).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..), allow_negative_numbers = true)]
        procs: u64,
        /// Share of the fixed one-way time assigned to the two overheads 2o (0..1); the
        /// benchmarks cannot measure it.
        #[arg(long, default_value_t = 0.0, value_parser = parse_share, allow_negative_numbers = true)]
        overhead_share: f64,
        /// The model to write: LogGP with protocol ranges, or pLogP (g(m) from osu_bw).
        #[arg(long, value_enum, default_value_t = FitModel::Loggp)]
        model: FitModel,
    },
    /// Import Intel MPI Benchmarks output (its PingPong table).
    Imb {
        /// IMB-MPI1 output.
        file: PathBuf,
        /// Share of the fixed one-way time assigned to the two overheads 2o (0..1).
        #[arg(long, default_value_t = 0.0, value_parser = parse_share, allow_negative_numbers = true)]
        overhead_share: f64,
        /// The model to write: LogGP with protocol ranges, or pLogP.
        #[arg(long, value_enum, default_value_t = FitModel::Loggp)]
        model: FitModel,
    },
}

/// `--overhead-share`: a number in `[0, 1]` (a share of a time, not a time).
fn parse_share(text: &str) -> Result<f64, String> {
    let shown: String = text.chars().take(80).collect();
    match text.trim().parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Ok(_) => Err(format!("`{shown}` is not a share in [0, 1]")),
        Err(_) => Err(format!("`{shown}` is not a number (a share in [0, 1])")),
    }
}

/// The model `calibrate mpi` writes.
/// The time column of a forced run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum StatArg {
    /// The median of synchronised calls.
    Median,
    /// The fastest synchronised call.
    Min,
    /// Back-to-back calls (as OSU's loops).
    Pipelined,
    /// Each rank's own time per call, averaged over the ranks (OSU's average latency).
    RankMean,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum MpiModel {
    /// LogGP with protocol ranges.
    Loggp,
    /// pLogP: L and the tables o_s(m), o_r(m), g(m).
    Plogp,
    /// LogGP of a link shaped by a token bucket: G and g of a train of messages, and the
    /// bucket's burst (`calibrate::assess_shaped_link`; simulate with --link-burst).
    Shaped,
    /// log_3 P: middleware and network costs of strided transfers.
    Log3p,
}

/// The link model `calibrate platform` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LinkModel {
    /// The shaped link unless LogGP with ranges is clearly better on held-out round trips.
    Auto,
    /// LogGP of a link shaped by a token bucket.
    Shaped,
    /// LogGP with protocol ranges.
    Loggp,
}

/// The model `calibrate osu` / `calibrate imb` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FitModel {
    /// LogGP with protocol ranges.
    Loggp,
    /// pLogP: L and the gap table g(m).
    Plogp,
}

fn progress_bar(total: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("{msg:>24} [{bar:40}] {pos}/{len} {elapsed}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}

/// A probe's progress callback that moves `bar`.
fn advance(bar: &ProgressBar) -> impl FnMut(&str, usize, usize) + '_ {
    |_, done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    }
}

fn loggp_roles() -> Map<String, Value> {
    let mut m = Map::new();
    for (k, v) in [
        (
            "ranges",
            "protocol ranges by message size (start inclusive, bytes)",
        ),
        ("latency", "L: wire latency of a message (s)"),
        (
            "overhead",
            "o: CPU time to send or to receive a message (s)",
        ),
        (
            "gap",
            "g: least time between consecutive message injections (s)",
        ),
        (
            "gap_per_byte",
            "G: time per byte of a long message, 1 / bandwidth (s/byte)",
        ),
        (
            "processors",
            "P: processes the parameters were measured with",
        ),
    ] {
        m.insert(k.into(), v.into());
    }
    m
}

fn describe_ranges(model: &Protocols<LogGP>) -> Result<(), Failure> {
    for r in model.ranges() {
        let m = r.model();
        outln!(
            "  from {:>9} B: L = {}, o = {}, g = {}, G = {:.4} ns/B",
            r.start(),
            human_time(m.latency()),
            human_time(m.overhead()),
            human_time(m.gap()),
            m.gap_per_byte() * 1e9
        );
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn finish(
    output: Option<PathBuf>,
    spec: ModelSpec,
    measured: String,
    method: &str,
    inputs: Vec<String>,
    parameters: Map<String, Value>,
    accuracy: Map<String, Value>,
    adjustments: Vec<String>,
) -> Result<(), Failure> {
    finish_on(
        output,
        (spec, None),
        measured,
        method,
        inputs,
        parameters,
        accuracy,
        adjustments,
    )
}

/// [`finish`] for a model with the platform it was measured on (the file's `platform`).
#[allow(clippy::too_many_arguments)]
fn finish_on(
    output: Option<PathBuf>,
    (spec, platform): (ModelSpec, Option<commcost::sim::Platform>),
    measured: String,
    method: &str,
    inputs: Vec<String>,
    parameters: Map<String, Value>,
    accuracy: Map<String, Value>,
    adjustments: Vec<String>,
) -> Result<(), Failure> {
    let Some(path) = output else {
        return fail("give the model file to write with -o FILE");
    };
    for warning in spec.unit_warnings() {
        eprintln!("commcost: warning: {warning}");
    }
    let file = ModelFile {
        commcost_model_file: 1,
        provenance: Provenance {
            measured,
            method: method.into(),
            date: now_utc(),
            host: host_name(),
            inputs,
            parameters,
            accuracy: accuracy.clone(),
            adjustments,
            tool: format!("commcost {}", env!("CARGO_PKG_VERSION")),
        },
        spec,
        local: None,
        platform,
        nodes: None,
    };
    write_file(&path, &file)?;
    outln!("wrote {}", path.display());
    for (k, v) in accuracy
        .iter()
        .filter(|(_, v)| v.get("median_relative_error").is_some())
    {
        let at = |q: &str| v.get(q).and_then(Value::as_f64).unwrap_or(f64::NAN) * 100.0;
        outln!(
            "  accuracy on {}: median relative error {:.1} %, 90th percentile {:.1} %",
            k.replace('_', " "),
            at("median_relative_error"),
            at("p90_relative_error")
        );
    }
    Ok(())
}

fn pct((median, p90): (f64, f64)) -> Value {
    json!({"median_relative_error": median, "p90_relative_error": p90})
}

fn adjustment_lines(adjustments: &[Adjustment]) -> Vec<String> {
    adjustments
        .iter()
        .map(|a| {
            let range = a.range.map_or_else(String::new, |r| format!("range {r}: "));
            let fitted = if a.fitted.is_finite() {
                format!("fitted {:e}, ", a.fitted)
            } else {
                String::new()
            };
            format!(
                "{range}{}: {fitted}used {:e} ({})",
                a.parameter, a.used, a.how
            )
        })
        .collect()
}

pub fn run(args: CalibrateArgs) -> Result<(), Failure> {
    match args.what {
        What::Osu {
            files,
            overhead_share,
            procs,
            model,
        } => import::osu(args.output, files, overhead_share, procs, model),
        What::Imb {
            file,
            overhead_share,
            model,
        } => import::imb(args.output, file, overhead_share, model),
        What::Netgauge { file } => import::netgauge(args.output, file),
        What::Tcp { quick } => tcp::tcp(args.output, quick),
        What::Host { quick } => host::host(args.output, quick),
        What::Local { into, quick } => local::local(&into, args.output, quick),
        What::Collectives {
            model,
            runs,
            stat,
            fit_procs,
            fit_max_bytes,
            check,
            measure,
            mpirun,
            quick,
        } => collectives::collectives(collectives::CollectivesArgs {
            model,
            measure: measure.then(|| collectives_measure::MeasureOptions {
                mpirun,
                quick,
                ..collectives_measure::MeasureOptions::default()
            }),
            runs,
            check,
            stat: match stat {
                StatArg::Median => commcost::calibrate::ForcedStat::Median,
                StatArg::Min => commcost::calibrate::ForcedStat::Min,
                StatArg::Pipelined => commcost::calibrate::ForcedStat::Pipelined,
                StatArg::RankMean => commcost::calibrate::ForcedStat::RankMean,
            },
            plan: commcost::calibrate::CallCostPlan {
                fit_processes: fit_procs,
                fit_max_bytes,
            },
            output: args.output,
        }),
        What::Mpi {
            quick,
            model,
            separate_buffers,
            max_size,
        } => mpi::mpi_calibration(args.output, quick, model, separate_buffers, max_size),
        What::Platform {
            mpirun,
            model,
            quick,
            max_size,
            timeout,
        } => {
            let model = match model {
                LinkModel::Auto => None,
                LinkModel::Shaped => Some("shaped"),
                LinkModel::Loggp => Some("loggp"),
            };
            if !((64 << 10)..=(64 << 20)).contains(&max_size) {
                return fail("--max-size: 64K ..= 64M");
            }
            if !(1..=3600).contains(&timeout) {
                return fail("--timeout: 1 ..= 3600 seconds");
            }
            platform::platform(
                args.output,
                &platform::PlatformOptions {
                    mpirun,
                    model,
                    quick,
                    max_size,
                    timeout: std::time::Duration::from_secs(timeout),
                },
            )
        }
        What::CollectivesMeasure(measure) => {
            collectives_measure::measure_command(args.output, measure)
        }
        What::CollectivesWorker(worker) => collectives_measure::worker(args.output, worker),
    }
}

/// Forwards to a prober and advances a progress bar.
struct Counting<'a, P: Prober> {
    inner: &'a mut P,
    bar: &'a ProgressBar,
}

impl<P: Prober> Prober for Counting<'_, P> {
    fn prtt(&mut self, n: u32, delay: f64, size: u64) -> Result<f64, ProbeError> {
        self.bar.inc(1);
        self.inner.prtt(n, delay, size)
    }
}
