//! `calibrate osu`, `calibrate imb`, `calibrate netgauge`: fit a model to the output of the
//! standard benchmarks, check it on their collective tests, and write it.

use std::path::PathBuf;

use commcost::calibrate::{
    AssessmentConfig, BenchmarkFit, BenchmarkFitConfig, BenchmarkSeries, SeriesKind, assess_loggp,
    fit_loggp_from_benchmarks, fit_plogp_from_benchmarks, parse_netgauge, relative_errors,
};
use commcost::{CommModel, LogGP, Message, Protocols};
use serde_json::{Map, Value};

use super::{FitModel, adjustment_lines, describe_ranges, finish, loggp_roles, pct};
use crate::collective::matches_series;
use crate::plot::{Format, read_benchmark};
use crate::units::human_time;
use crate::{Failure, fail};
use commcost::collectives::{Collective, Family, Problem, best_in};

/// `calibrate osu`.
pub(super) fn osu(
    output: Option<PathBuf>,
    files: Vec<PathBuf>,
    overhead_share: f64,
    procs: u64,
    model: FitModel,
) -> Result<(), Failure> {
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
        output,
        model,
        &latency,
        bandwidth.as_ref(),
        overhead_share,
        &collectives,
        procs,
        files.iter().map(|p| p.display().to_string()).collect(),
    )
}

/// `calibrate imb`.
pub(super) fn imb(
    output: Option<PathBuf>,
    file: PathBuf,
    overhead_share: f64,
    model: FitModel,
) -> Result<(), Failure> {
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
        output,
        model,
        latency,
        None,
        overhead_share,
        &collectives,
        2,
        vec![file.display().to_string()],
    )
}

/// `calibrate netgauge`.
pub(super) fn netgauge(output: Option<PathBuf>, file: PathBuf) -> Result<(), Failure> {
    let text = commcost::limits::read_text_file(
        &file,
        "benchmark output file",
        commcost::limits::MAX_BENCHMARK_FILE_BYTES,
    )?;
    let run = parse_netgauge(&text).map_err(|e| Failure(format!("{}: {e}", file.display())))?;
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
        output,
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
            .into_iter()
            .find(|&c| matches_series(c, name))
        else {
            continue;
        };
        let procs = s.processes.unwrap_or(default_procs);
        let pairs: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|p| p.bytes > 0 && p.value > 0.0)
            .filter_map(|p| {
                let problem = Problem::new(procs, Message::contiguous(p.bytes));
                let predicted = best_in(model, Family::DEFAULT, c, &problem).ok()?.cost;
                Some((predicted, p.value))
            })
            .collect();
        if let Some(e) = relative_errors(&pairs) {
            accuracy.insert(format!("{name}_{procs}_processes_best_algorithm"), pct(e));
        }
    }
}

const BENCHMARK_METHOD: &str = "protocol ranges at the level steps of the latency series \
    (commcost::calibrate::detect_steps) and at slope changes; per range a relative-weighted \
    least-squares line T(s) = (2o + L) + (s - 1) G through the half round trips, constrained to \
    non-negative coefficients (every change reported under adjustments), g = mean of s / bandwidth(s) - (s - 1) G (commcost::calibrate::\
    fit_loggp_from_benchmarks). Ping-pong and bandwidth tests do not separate o from L: 2o is \
    the chosen overhead share of the fixed time.";
