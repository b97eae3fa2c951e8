//! `calibrate`: measure (host memory, TCP loopback) or import (Netgauge, OSU, IMB), fit, and
//! write a model file with provenance.

use std::path::PathBuf;
use std::time::Duration;

use commcost::calibrate::CalibrationError;
use commcost::calibrate::{
    Adjustment, AssessmentConfig, BenchmarkFit, BenchmarkFitConfig, BenchmarkSeries,
    CopyMeasurements, Prober, PrttPlan, SeriesKind, assess_loggp, derive_memory_logp,
    fit_loggp_from_benchmarks, fit_plogp_from_benchmarks, measure_prtt, parse_netgauge,
    relative_errors,
};
use commcost::probe::{Budget, CopyKind, CopyPlan, Methodology, TcpLoopbackProber, measure_copies};
use commcost::{CommModel, LogGP, Message, ModelSpec, Protocols};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Map, Value, json};

use crate::collective::{Collective, dispatch};
use crate::model::{LocalSection, ModelFile, Provenance, host_name, now_utc, write_file};
use crate::plot::{Format, read_benchmark};
use crate::units::{self, human_time};
use crate::{Failure, fail};

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
        /// or log_3 P (half round trips with MPI vector datatypes and memory copies).
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum MpiModel {
    /// LogGP with protocol ranges.
    Loggp,
    /// pLogP: L and the tables o_s(m), o_r(m), g(m).
    Plogp,
    /// log_3 P: middleware and network costs of strided transfers.
    Log3p,
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

fn benchmark_fit(
    latency: &BenchmarkSeries,
    bandwidth: Option<&BenchmarkSeries>,
    overhead_share: f64,
) -> Result<BenchmarkFit, Failure> {
    let config = BenchmarkFitConfig {
        overhead_share,
        ..BenchmarkFitConfig::default()
    };
    Ok(fit_loggp_from_benchmarks(latency, bandwidth, &config)?)
}

fn benchmark_accuracy(fit: &BenchmarkFit) -> Map<String, Value> {
    let mut acc = Map::new();
    acc.insert("latency_series".into(), pct(fit.latency_error));
    acc.insert(
        "latency_series_direct_piecewise_linear_fit".into(),
        pct(fit.direct_latency_error),
    );
    if let Some(e) = fit.bandwidth_error {
        acc.insert("bandwidth_series_message_interval".into(), pct(e));
    }
    acc
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

/// Prints what a benchmark fit found: steps, ranges, errors, adjustments.
fn describe_benchmark_fit(fit: &BenchmarkFit) -> Result<(), Failure> {
    if fit.steps.is_empty() {
        outln!("  no level step in the latency series");
    }
    for step in &fit.steps {
        outln!(
            "  step between {} B and {} B: x{:.2} ({:.1} standard errors)",
            step.between.0,
            step.between.1,
            step.ratio,
            step.z
        );
    }
    for r in &fit.ranges {
        outln!(
            "  from {:>9} B ({}, {} points {}..{} B): 2o + L = {}, g = {}, G = {:.4} ns/B",
            r.start,
            r.boundary,
            r.latency_points,
            r.measured_sizes.0,
            r.measured_sizes.1,
            human_time(r.fixed),
            human_time(r.gap),
            r.gap_per_byte * 1e9
        );
    }
    outln!(
        "  latency series: median relative error {:.1} % (a direct piecewise-linear fit with {} \
         pieces: {:.1} %)",
        fit.latency_error.0 * 100.0,
        fit.ranges.len(),
        fit.direct_latency_error.0 * 100.0
    );
    for line in adjustment_lines(&fit.adjustments) {
        outln!("  adjusted: {line}");
    }
    Ok(())
}

fn plogp_roles() -> Map<String, Value> {
    let mut m = Map::new();
    for (k, v) in [
        (
            "latency",
            "L: end-to-end latency without the sender's share g(m) (s)",
        ),
        (
            "gap",
            "g(m): time between consecutive messages of m bytes (a table, s)",
        ),
        (
            "send_overhead",
            "o_s(m): not determined by ping-pong or streaming-bandwidth output (0)",
        ),
        (
            "recv_overhead",
            "o_r(m): not determined by ping-pong or streaming-bandwidth output (0)",
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

const PLOGP_METHOD: &str = "pLogP (Kielmann, Bal & Verstoep 2000), T(m) = L + g(m): g(m) = \
    m / bandwidth(m) from the streaming-bandwidth series, L = T(1) - g(1) from the 1-byte \
    one-way time (without a bandwidth series g(m) = T(m) and L = 0); o_s, o_r are not \
    determined by these benchmarks and are 0 (commcost::calibrate::fit_plogp_from_benchmarks)";

/// Writes the model `which` asks for from a latency and an optional bandwidth series, with
/// the LogGP and the pLogP errors side by side in the report.
#[allow(clippy::too_many_arguments)]
fn write_benchmark_model(
    output: Option<PathBuf>,
    which: FitModel,
    latency: &BenchmarkSeries,
    bandwidth: Option<&BenchmarkSeries>,
    overhead_share: f64,
    collectives: &[BenchmarkSeries],
    procs: u64,
    inputs: Vec<String>,
) -> Result<(), Failure> {
    let fit = benchmark_fit(latency, bandwidth, overhead_share)?;
    describe_benchmark_fit(&fit)?;
    let plogp = fit_plogp_from_benchmarks(latency, bandwidth, 2)?;
    outln!(
        "  pLogP (g(m) from the {} series): median relative error {:.1} % on the latency series{}",
        plogp.gap_source,
        plogp.latency_error.0 * 100.0,
        plogp
            .bandwidth_error
            .map(|e| format!(", {:.1} % on the bandwidth series' intervals", e.0 * 100.0))
            .unwrap_or_default()
    );
    let measured = format!(
        "{}{}",
        latency.title,
        bandwidth
            .map(|b| format!(" and {}", b.title))
            .unwrap_or_default()
    );
    let mut accuracy = benchmark_accuracy(&fit);
    let mut plogp_acc = Map::new();
    plogp_acc.insert("latency_series".into(), pct(plogp.latency_error));
    if let Some(e) = plogp.bandwidth_error {
        plogp_acc.insert("bandwidth_series_message_interval".into(), pct(e));
    }
    match which {
        FitModel::Loggp => {
            accuracy.insert("plogp_for_comparison".into(), Value::Object(plogp_acc));
            collective_accuracy(&fit.model, collectives, procs, &mut accuracy);
            finish(
                output,
                fit.model.into(),
                measured,
                BENCHMARK_METHOD,
                inputs,
                loggp_roles(),
                accuracy,
                adjustment_lines(&fit.adjustments),
            )
        }
        FitModel::Plogp => {
            let mut loggp_acc = accuracy;
            collective_accuracy(&fit.model, collectives, procs, &mut loggp_acc);
            plogp_acc.insert("loggp_for_comparison".into(), Value::Object(loggp_acc));
            finish(
                output,
                plogp.model.into(),
                measured,
                PLOGP_METHOD,
                inputs,
                plogp_roles(),
                plogp_acc,
                adjustment_lines(&plogp.adjustments),
            )
        }
    }
}

/// The fitted model's best collective algorithm against measured collective series: the
/// relative error of the predicted time of the algorithm the model ranks first (the MPI
/// library may have run another one, so this is a check, not a fit).
fn collective_accuracy(
    model: &Protocols<LogGP>,
    series: &[BenchmarkSeries],
    default_procs: u64,
    accuracy: &mut Map<String, Value>,
) {
    for s in series {
        let SeriesKind::Collective(name) = &s.kind else {
            continue;
        };
        let Some(c) = Collective::ALL
            .iter()
            .copied()
            .find(|c| c.matches_series(name))
        else {
            continue;
        };
        let procs = s.processes.unwrap_or(default_procs);
        let pairs: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|p| p.bytes > 0 && p.value > 0.0)
            .filter_map(|p| {
                let predicted = dispatch!(c, best_time(model, procs, p.bytes)).ok()?;
                Some((predicted, p.value))
            })
            .collect();
        if let Some(e) = relative_errors(&pairs) {
            accuracy.insert(format!("{name}_{procs}_processes_best_algorithm"), pct(e));
        }
    }
}

fn best_time<A: commcost::collectives::Algorithm>(
    model: &Protocols<LogGP>,
    procs: u64,
    bytes: u64,
) -> Result<f64, commcost::collectives::CollectiveError> {
    let problem = commcost::collectives::Problem::new(procs, Message::contiguous(bytes));
    commcost::collectives::best::<A>(model, &problem).map(|(_, t)| t)
}

const BENCHMARK_METHOD: &str = "protocol ranges at the level steps of the latency series \
    (commcost::calibrate::detect_steps) and at slope changes; per range a relative-weighted \
    least-squares line T(s) = (2o + L) + (s - 1) G through the half round trips, constrained to \
    non-negative coefficients (every change reported under adjustments), g = mean of s / bandwidth(s) - (s - 1) G (commcost::calibrate::\
    fit_loggp_from_benchmarks). Ping-pong and bandwidth tests do not separate o from L: 2o is \
    the chosen overhead share of the fixed time.";

pub fn run(args: CalibrateArgs) -> Result<(), Failure> {
    match args.what {
        What::Osu {
            files,
            overhead_share,
            procs,
            model,
        } => {
            let mut latency = None;
            let mut bandwidth = None;
            let mut collectives = Vec::new();
            for path in &files {
                for series in read_benchmark(path, Format::Osu)? {
                    match series.kind {
                        SeriesKind::Latency if latency.is_none() => latency = Some(series),
                        SeriesKind::Bandwidth if bandwidth.is_none() => bandwidth = Some(series),
                        SeriesKind::Collective(_) => collectives.push(series),
                        _ => eprintln!(
                            "commcost: note: {}: `{}` is not used for the p2p fit",
                            path.display(),
                            series.title
                        ),
                    }
                }
            }
            let Some(latency) = latency else {
                return fail("none of the files is osu_latency output (`# Size  Latency (us)`)");
            };
            write_benchmark_model(
                args.output,
                model,
                &latency,
                bandwidth.as_ref(),
                overhead_share,
                &collectives,
                procs,
                files.iter().map(|p| p.display().to_string()).collect(),
            )
        }
        What::Imb {
            file,
            overhead_share,
            model,
        } => {
            let all = read_benchmark(&file, Format::Imb)?;
            let Some(latency) = all.iter().find(|s| s.kind == SeriesKind::Latency) else {
                return fail(format!("{}: no PingPong table", file.display()));
            };
            let collectives: Vec<BenchmarkSeries> = all
                .iter()
                .filter(|s| matches!(s.kind, SeriesKind::Collective(_)))
                .cloned()
                .collect();
            write_benchmark_model(
                args.output,
                model,
                latency,
                None,
                overhead_share,
                &collectives,
                2,
                vec![file.display().to_string()],
            )
        }
        What::Netgauge { file } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| Failure(format!("{}: cannot read: {e}", file.display())))?;
            let run =
                parse_netgauge(&text).map_err(|e| Failure(format!("{}: {e}", file.display())))?;
            let config = AssessmentConfig {
                n: run
                    .rows
                    .first()
                    .map_or(AssessmentConfig::default().n, |r| r.n),
                ..AssessmentConfig::default()
            };
            let assessment = assess_loggp(&run.samples(), &config)
                .map_err(|e| Failure(format!("{}: {e}", file.display())))?;
            describe_ranges(&assessment.model)?;
            let pairs: Vec<(f64, f64)> = assessment
                .sizes
                .iter()
                .map(|d| {
                    (
                        assessment.model.p2p(&Message::contiguous(d.size)),
                        d.prtt_single / 2.0,
                    )
                })
                .collect();
            let mut acc = Map::new();
            if let Some(e) = relative_errors(&pairs) {
                acc.insert("half_round_trip".into(), pct(e));
            }
            finish(
                args.output,
                assessment.model.into(),
                "Netgauge LogGP pattern: PRTT(1,0,s), PRTT(n,0,s), PRTT(n,d,s)".into(),
                "LogGP parameter assessment with protocol-change detection (Hoefler, Lichei & \
                 Rehm, IPDPS 2007), commcost::calibrate::assess_loggp",
                vec![file.display().to_string()],
                loggp_roles(),
                acc,
                adjustment_lines(&assessment.adjustments),
            )
        }
        What::Tcp { quick } => tcp(args.output, quick),
        What::Host { quick } => host(args.output, quick),
        What::Local { into, quick } => local(&into, args.output, quick),
        What::Mpi {
            quick,
            model,
            separate_buffers,
            max_size,
        } => mpi_calibration(args.output, quick, model, separate_buffers, max_size),
    }
}

/// Forwards to a prober and advances a progress bar.
struct Counting<'a, P: Prober> {
    inner: &'a mut P,
    bar: &'a ProgressBar,
}

impl<P: Prober> Prober for Counting<'_, P> {
    fn prtt(&mut self, n: u32, delay: f64, size: u64) -> Result<f64, CalibrationError> {
        self.bar.inc(1);
        self.inner.prtt(n, delay, size)
    }
}

fn tcp(output: Option<PathBuf>, quick: bool) -> Result<(), Failure> {
    let methodology = if quick {
        Methodology::quick()
    } else {
        Methodology::standard()
    };
    let budget = Budget::new(Duration::from_secs(600), 1 << 30);
    let step = if quick { 8192 } else { 2048 };
    let sizes: Vec<u64> = std::iter::once(1)
        .chain((1..=65536 / step).map(|k| k * step))
        .collect();
    let passes = if quick { 2 } else { 3 };
    let plan = PrttPlan {
        sizes: sizes.clone(),
        n: 16,
        passes,
        seed: 11,
    };
    let mut prober = TcpLoopbackProber::start(65536 + 4096, methodology, budget)?;
    let bar = progress_bar((3 * sizes.len() * (passes + 1)) as u64, "TCP loopback PRTT");
    let mut counting = Counting {
        inner: &mut prober,
        bar: &bar,
    };
    let measured = measure_prtt(&mut counting, &plan)?;
    bar.finish();
    let assessment = assess_loggp(&measured.samples, &AssessmentConfig::default())?;
    describe_ranges(&assessment.model)?;
    // held out: half round trips between the grid's sizes
    let mut pairs = Vec::new();
    for s in sizes.iter().map(|&s| s + step / 2).filter(|&s| s <= 65536) {
        let half = prober.prtt(1, 0.0, s)? / 2.0;
        pairs.push((assessment.model.p2p(&Message::contiguous(s)), half));
    }
    let mut acc = Map::new();
    if let Some(e) = relative_errors(&pairs) {
        acc.insert("held_out_half_round_trips".into(), pct(e));
    }
    finish(
        output,
        assessment.model.into(),
        format!(
            "TCP loopback round trips PRTT(1,0,s), PRTT(16,0,s), PRTT(16,d,s), {} sizes 1..64 KiB, {passes} shuffled passes",
            sizes.len()
        ),
        "LogGP parameter assessment with protocol-change detection (Hoefler, Lichei & Rehm, \
         IPDPS 2007), commcost::calibrate::assess_loggp",
        vec![],
        loggp_roles(),
        acc,
        adjustment_lines(&assessment.adjustments),
    )
}

fn host(output: Option<PathBuf>, quick: bool) -> Result<(), Failure> {
    let methodology = if quick {
        Methodology::quick()
    } else {
        Methodology::standard()
    };
    let budget = Budget::new(Duration::from_secs(600), 1 << 30);
    let strides: Vec<u64> = vec![24, 40, 80, 160, 320, 640, 1280];
    let sizes: Vec<u64> = (10..=if quick { 15 } else { 18 })
        .map(|k| 1u64 << k)
        .collect();
    let plan = CopyPlan {
        element: 8,
        sizes: sizes.clone(),
        strides: strides.clone(),
        kinds: vec![CopyKind::Contiguous, CopyKind::Pack],
    };
    let bar = progress_bar(0, "memory copies");
    let mut progress = advance(&bar);
    let samples = measure_copies(&plan, &methodology, &budget, &mut progress)?;
    bar.finish();
    let time_of = |kind: CopyKind, size: u64, stride: u64| {
        samples
            .iter()
            .find(|s| {
                s.kind == kind
                    && s.size == size
                    && (kind == CopyKind::Contiguous || s.stride == stride)
            })
            .map_or(f64::NAN, |s| s.time)
    };
    let contiguous: Vec<f64> = sizes
        .iter()
        .map(|&s| time_of(CopyKind::Contiguous, s, 8))
        .collect();
    let strided: Vec<Vec<f64>> = sizes
        .iter()
        .zip(&contiguous)
        .map(|(&s, &c)| {
            strides
                .iter()
                .map(|&d| time_of(CopyKind::Pack, s, d).max(c)) // faster than contiguous: noise
                .collect()
        })
        .collect();
    let memory = derive_memory_logp(&CopyMeasurements {
        sizes: sizes.clone(),
        contiguous,
        strides: strides.clone(),
        strided,
        element: 8,
    })?;
    // held out: sizes between the grid's, strides off the grid
    let held_plan = CopyPlan {
        element: 8,
        sizes: sizes[..sizes.len() - 1].iter().map(|s| s * 3 / 2).collect(),
        strides: vec![56, 112, 224, 448, 896],
        kinds: vec![CopyKind::Pack],
    };
    let bar = progress_bar(0, "held-out packs");
    let mut progress = advance(&bar);
    let held = measure_copies(&held_plan, &methodology, &budget, &mut progress)?;
    bar.finish();
    let pairs: Vec<(f64, f64)> = held
        .iter()
        .filter_map(|s| {
            let msg = Message::vector(s.size / 8, 8, s.stride).ok()?;
            Some((memory.p2p(&msg), s.time))
        })
        .collect();
    let mut acc = Map::new();
    if let Some(e) = relative_errors(&pairs) {
        acc.insert("held_out_packs".into(), pct(e));
    }
    let mut roles = Map::new();
    roles.insert(
        "o".into(),
        "o(s): time to copy s contiguous bytes (a table over sizes, s)".into(),
    );
    roles.insert(
        "l".into(),
        "l(s, d): extra time to pack s bytes of 8-byte elements at stride d (a table, s)".into(),
    );
    finish(
        output,
        memory.into(),
        format!(
            "memory copies and packs of 8-byte elements, {} sizes 1 KiB..{} KiB, strides {:?} bytes",
            sizes.len(),
            sizes.last().copied().unwrap_or(0) / 1024,
            strides
        ),
        "memory logP derivation from copy timings (Cameron & Sun, IPDPS 2003), \
         commcost::calibrate::derive_memory_logp",
        vec![],
        roles,
        acc,
        vec![],
    )
}

/// Cache capacities (L2, L3 unified or data caches) of CPU 0 from sysfs; empty where unknown.
fn cache_sizes() -> Vec<u64> {
    let mut out = Vec::new();
    for index in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(size), Some(kind)) = (read("level"), read("size"), read("type"))
        else {
            continue;
        };
        if kind.trim() == "Instruction" || !matches!(level.trim(), "2" | "3") {
            continue;
        }
        let size = size.trim();
        let (digits, unit) = size.split_at(
            size.find(|c: char| !c.is_ascii_digit())
                .unwrap_or(size.len()),
        );
        let Ok(n) = digits.parse::<u64>() else {
            continue;
        };
        let bytes = match unit {
            "K" => n.checked_mul(1 << 10),
            "M" => n.checked_mul(1 << 20),
            "" => Some(n),
            _ => None,
        };
        out.extend(bytes);
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn local(into: &std::path::Path, output: Option<PathBuf>, quick: bool) -> Result<(), Failure> {
    use commcost::calibrate::fit_local_work;
    use commcost::probe::{LocalKind, measure_local};
    let text = commcost::limits::read_text_file(
        into,
        "model file",
        commcost::limits::MAX_MODEL_FILE_BYTES,
    )?;
    let mut file: ModelFile = serde_json::from_str(&text).map_err(|e| {
        Failure(format!(
            "{}: --into needs a model file written by `commcost calibrate` ({e})",
            into.display()
        ))
    })?;
    let methodology = if quick {
        Methodology::quick()
    } else {
        Methodology::standard()
    };
    let largest: u32 = if quick { 24 } else { 26 };
    let budget = Budget::new(Duration::from_secs(300), 4 << largest);
    // copies 64 B .. 16 (64) MiB, every power of four; held out: 1.5 times each
    let sizes: Vec<u64> = (3..=largest / 2).map(|k| 1u64 << (2 * k)).collect();
    let held_sizes: Vec<u64> = sizes[..sizes.len() - 1].iter().map(|s| s / 2 * 3).collect();
    let caches = cache_sizes();
    let mut starts: Vec<u64> = vec![0];
    // a copy reads one buffer and writes another: it fits a cache of twice its size
    for c in &caches {
        let from = c / 2;
        if from > *starts.last().unwrap_or(&0)
            && starts.len() < commcost::collectives::MAX_COPY_CLASSES
        {
            starts.push(from);
        }
    }
    let bar = progress_bar(0, "copies");
    let mut progress = advance(&bar);
    let plan = |sizes: &[u64]| CopyPlan {
        element: 8,
        sizes: sizes.to_vec(),
        strides: vec![],
        kinds: vec![CopyKind::Contiguous],
    };
    let copies = measure_copies(&plan(&sizes), &methodology, &budget, &mut progress)?;
    let held = measure_copies(&plan(&held_sizes), &methodology, &budget, &mut progress)?;
    bar.finish();
    let local_sizes: Vec<u64> = (6..=10).map(|k| 1u64 << (2 * k)).collect();
    let bar = progress_bar(0, "buffers and operator");
    let mut progress = advance(&bar);
    let samples = measure_local(
        &local_sizes,
        &[LocalKind::TempBuffer, LocalKind::SumF32],
        &methodology,
        &budget,
        &mut progress,
    )?;
    bar.finish();
    let pick = |k: LocalKind| -> Vec<(u64, f64)> {
        samples
            .iter()
            .filter(|s| s.kind == k)
            .map(|s| (s.bytes, s.time))
            .collect()
    };
    let copy_pairs: Vec<(u64, f64)> = copies.iter().map(|s| (s.size, s.time)).collect();
    let (work, operator) = fit_local_work(
        &copy_pairs,
        &starts,
        &pick(LocalKind::TempBuffer),
        &pick(LocalKind::SumF32),
    )?;
    let held_pairs: Vec<(f64, f64)> = held
        .iter()
        .map(|s| (work.copy().cost(s.size), s.time))
        .collect();
    let mut acc = Map::new();
    if let Some(e) = relative_errors(&held_pairs) {
        acc.insert("held_out_copies".into(), pct(e));
    }
    let mut roles = Map::new();
    roles.insert(
        "copy".into(),
        "copy(b) = per_call + b * rate of the last class starting at or below b (s, s/byte); classes start at 0 and at half of each L2/L3 cache size".into(),
    );
    roles.insert(
        "temp_buffer".into(),
        "allocating and releasing one temporary buffer (s)".into(),
    );
    roles.insert(
        "operator".into(),
        "op(b) = per_call + per_byte * b: y[i] += x[i] on f32 (MPI_SUM on MPI_FLOAT)".into(),
    );
    let measured = format!(
        "contiguous copies of {} sizes 64 B..{} MiB (held out: {} sizes between them), \
         allocation and release of buffers and a f32 sum at {} sizes 4 KiB..1 MiB; caches {:?} bytes",
        sizes.len(),
        sizes.last().copied().unwrap_or(0) >> 20,
        held_sizes.len(),
        local_sizes.len(),
        caches
    );
    file.local = Some(LocalSection {
        work,
        operator,
        provenance: Provenance {
            measured,
            method: "per-class median copy rate above the smallest copy's time, median buffer \
                     time, least-squares operator line (commcost::calibrate::fit_local_work)"
                .into(),
            date: now_utc(),
            host: host_name(),
            inputs: vec![],
            parameters: roles,
            accuracy: acc.clone(),
            adjustments: vec![],
            tool: format!("commcost {}", env!("CARGO_PKG_VERSION")),
        },
    });
    let path = output.unwrap_or_else(|| into.to_path_buf());
    write_file(&path, &file)?;
    outln!("wrote {} (local work)", path.display());
    for &(from, rate) in work.copy().classes() {
        outln!(
            "  copies from {}: {:.3} ns/B (+ {} per copy)",
            units::human_bytes(from),
            rate * 1e9,
            human_time(work.copy().per_call())
        );
    }
    outln!("  temporary buffer: {}", human_time(work.temp_buffer()));
    outln!(
        "  operator: {} + {:.3} ns/B",
        human_time(operator.cost(0)),
        (operator.cost(1 << 20) - operator.cost(0)) / f64::from(1u32 << 20) * 1e9
    );
    if let Some(v) = acc.get("held_out_copies") {
        outln!("  held-out copies: {v}");
    }
    Ok(())
}

#[cfg(not(feature = "mpi"))]
fn mpi_calibration(
    _: Option<PathBuf>,
    _: bool,
    _: MpiModel,
    _: bool,
    _: u64,
) -> Result<(), Failure> {
    fail(
        "this commcost was built without MPI: `cargo install --path cli --features mpi`, then \
         `mpirun -np 2 commcost calibrate mpi -o FILE` (or the library's example mpi_calibrate)",
    )
}

#[cfg(feature = "mpi")]
fn mpi_calibration(
    output: Option<PathBuf>,
    quick: bool,
    which: MpiModel,
    separate_buffers: bool,
    max_size: u64,
) -> Result<(), Failure> {
    use commcost::calibrate::derive_log3p;
    use commcost::probe::mpi::{MpiProber, PayloadBuffers, measure_layouts, serve};
    use commcost::probe::{CopyKind, CopyPlan, Log3PPlan, measure_copies};
    use mpi::traits::Communicator;

    const DENSE: u64 = 1 << 16;
    if !(DENSE..=1 << 26).contains(&max_size) {
        return fail(format!(
            "--max-size {max_size}: between 64 KiB and 64 MiB (65536 ..= 67108864 bytes)"
        ));
    }
    let Some(universe) = mpi::initialize() else {
        return fail("MPI could not be initialised");
    };
    let world = universe.world();
    if world.size() < 2 {
        return fail("run inside an MPI job of two ranks: mpirun -np 2 commcost calibrate mpi");
    }
    let l3_plan = Log3PPlan {
        sizes: vec![1 << 10, 1 << 12, 1 << 14, DENSE],
        strides: vec![24, 80, 320, 1280],
        element: 8,
    };
    let span = l3_plan.span().max(max_size);
    match world.rank() {
        0 => {}
        1 => return Ok(serve(&world, 0, max_size as usize, span as usize)?),
        _ => return Ok(()),
    }
    if output.is_none() {
        return fail("give the model file to write with -o FILE");
    }
    let methodology = if quick {
        Methodology::quick()
    } else {
        Methodology::standard()
    };
    let budget = Budget::new(Duration::from_secs(600), 1 << 30);
    let payload = if separate_buffers {
        PayloadBuffers::Separate
    } else {
        PayloadBuffers::Echo
    };
    let mut prober = MpiProber::new(&world, 1, max_size, span, methodology, budget.clone())?
        .with_payload_buffers(payload)?;
    let buffers = if separate_buffers {
        "sent from buffers the sender never writes"
    } else {
        "each returned from the buffer it was received into"
    };
    if which == MpiModel::Log3p {
        let mut quiet = |_: &str, _: usize, _: usize| {};
        let layouts = l3_plan.layouts()?;
        let times = measure_layouts(&mut prober, &layouts, &methodology, &budget, &mut quiet);
        prober.finish();
        let times = times?;
        let copies = measure_copies(
            &CopyPlan {
                element: 8,
                sizes: l3_plan.sizes.clone(),
                strides: vec![],
                kinds: vec![CopyKind::Contiguous],
            },
            &methodology,
            &budget,
            &mut quiet,
        )?;
        let copy_times: Vec<f64> = copies.iter().map(|c| c.time).collect();
        let (measurements, cleaning) = l3_plan.measurements(&times, &copy_times)?;
        let remote = l3_plan.remote_strided(&times)?;
        let log3p = derive_log3p(&measurements)?;
        let pairs: Vec<(f64, f64)> = remote.iter().map(|(m, t)| (log3p.p2p(m), *t)).collect();
        let mut acc = Map::new();
        if let Some(e) = relative_errors(&pairs) {
            acc.insert("remote_strided_transfers".into(), pct(e));
        }
        let mut roles = Map::new();
        roles.insert(
            "log3p".into(),
            "o_mw, l_mw (middleware, per size and stride), o_net (network, per size)".into(),
        );
        let adjustments = vec![format!(
            "{} strided sends to self faster than contiguous and {} memory copies slower than \
             the send to self were adjusted (log_3 P measurement cleaning)",
            cleaning.strided_faster, cleaning.copy_slower
        )];
        return finish(
            output,
            log3p.into(),
            format!(
                "MPI half round trips between ranks 0 and 1 with vector datatypes (sizes {:?} \
                 bytes, strides {:?} bytes) and memory copies",
                l3_plan.sizes, l3_plan.strides
            ),
            "log_3 P derivation from half round trips (Cameron, Ge & Sun, IEEE Trans. \
             Computers 2007, §4.1), commcost::calibrate::derive_log3p",
            vec![],
            roles,
            acc,
            adjustments,
        );
    }
    // dense where MPI libraries switch protocol (small-message paths, eager limits), then the
    // powers of two up to --max-size
    let step = if quick { 4096 } else { 1024 };
    let sizes: Vec<u64> = std::iter::once(1)
        .chain((1..16).map(|k| k * 32))
        .chain((2..=32).map(|k| k * 256))
        .chain((8192 / step + 1..=DENSE / step).map(|k| k * step))
        .chain((17..=26).map(|k| 1u64 << k).filter(|&s| s <= max_size))
        .collect();
    let plan = PrttPlan {
        sizes: sizes.clone(),
        n: 16,
        passes: methodology.passes,
        seed: 3,
    };
    let bar = progress_bar(
        (3 * sizes.len() * (methodology.passes + 1)) as u64,
        "MPI PRTT",
    );
    let mut counting = Counting {
        inner: &mut prober,
        bar: &bar,
    };
    let measured = measure_prtt(&mut counting, &plan);
    bar.finish();
    let measured = measured?;
    let assessment = assess_loggp(&measured.samples, &AssessmentConfig::default())?;
    describe_ranges(&assessment.model)?;
    // held out: half round trips between the grid's sizes
    let mut held = Vec::new();
    for s in sizes.windows(2).map(|w| (w[0] + w[1]) / 2).step_by(3) {
        held.push((s, prober.prtt(1, 0.0, s)? / 2.0));
    }
    prober.finish();
    let spec: ModelSpec = match which {
        MpiModel::Plogp => assessment.plogp.clone().into(),
        _ => assessment.model.clone().into(),
    };
    let errors_of = |model: &dyn CommModel| {
        relative_errors(
            &held
                .iter()
                .map(|&(s, t)| (model.p2p(&Message::contiguous(s)), t))
                .collect::<Vec<_>>(),
        )
    };
    let mut acc = Map::new();
    if let Some(e) = errors_of(&spec) {
        acc.insert("held_out_half_round_trips".into(), pct(e));
    }
    let other: ModelSpec = match which {
        MpiModel::Plogp => assessment.model.clone().into(),
        _ => assessment.plogp.clone().into(),
    };
    if let Some(e) = errors_of(&other) {
        let name = if which == MpiModel::Plogp {
            "loggp"
        } else {
            "plogp"
        };
        acc.insert(
            format!("{name}_for_comparison_held_out_half_round_trips"),
            pct(e),
        );
    }
    let (method, roles) = match which {
        MpiModel::Plogp => (
            "pLogP from the parametrised round trips (Kielmann, Bal & Verstoep 2000; \
             commcost::calibrate::assess_loggp's plogp)",
            plogp_roles_measured(),
        ),
        _ => (
            "LogGP parameter assessment with protocol-change detection (Hoefler, Lichei & \
             Rehm, IPDPS 2007), commcost::calibrate::assess_loggp",
            loggp_roles(),
        ),
    };
    finish(
        output,
        spec,
        format!(
            "MPI round trips between ranks 0 and 1, PRTT(1,0,s), PRTT(16,0,s), PRTT(16,d,s), \
             {} sizes 1 B..{} B, {} shuffled passes, payloads {buffers}",
            sizes.len(),
            sizes.last().copied().unwrap_or(0),
            methodology.passes
        ),
        method,
        vec![],
        roles,
        acc,
        adjustment_lines(&assessment.adjustments),
    )
}

/// The parameter roles of a pLogP measured by round trips (its overheads are measured).
#[cfg(feature = "mpi")]
fn plogp_roles_measured() -> Map<String, Value> {
    let mut m = Map::new();
    for (k, v) in [
        (
            "latency",
            "L: end-to-end latency without the sender's share g(m) (s)",
        ),
        (
            "gap",
            "g(m): time between consecutive messages of m bytes (a table, s)",
        ),
        (
            "send_overhead",
            "o_s(m): CPU time to send m bytes (a table, s)",
        ),
        (
            "recv_overhead",
            "o_r(m): CPU time to receive m bytes (a table, s)",
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
