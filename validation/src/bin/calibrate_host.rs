//! Calibrate this machine: one command runs the probes, fits the models, reports how well they
//! predict measurements they were not fitted on, and writes the parameters as JSON.
//!
//! ```sh
//! cargo run --release -p commcost-validation --bin calibrate_host              # about 1-3 minutes
//! cargo run --release -p commcost-validation --bin calibrate_host -- --quick   # about 20 seconds
//! cargo run --release -p commcost-validation --bin calibrate_host -- --output my-host.json
//! ```
//!
//! What it does (nothing is simulated):
//!
//! 1. **memory logP** — times contiguous copies and packs (strided → contiguous) of doubles on a
//!    size × stride grid, derives `o(s)` and `l(s, d)` (`calibrate::derive_memory_logp`), and
//!    checks the model on packs at sizes and strides between the grid's.
//! 2. **Mlines** — times marshalling random blocks of rows and columns of a matrix of 4-byte
//!    integers (the Mlines paper's experiment), fits S1-S3 and M1-M3 on 100 shapes and scores
//!    them on 100 others, rows and columns apart (the paper's Table 2).
//! 3. **LogGP over TCP loopback** — measures PRTT(n, d, s) against an echo thread in shuffled
//!    passes (`probe::measure_prtt`), assesses LogGP with protocol ranges, and checks it on
//!    half round trips at sizes between the grid's.
//!
//! 4. **log_3 P over TCP loopback** — half round trips to self and to the echo thread,
//!    contiguous and strided (packing and unpacking around the transport, as MPI does with a
//!    derived datatype), and memcpy times give `o_mw`, `o_net`, `l_mw` (lognp §4.1); log_3 P and
//!    LogGP then predict remote strided transfers, which are measured to compare.
//!
//! The JSON file maps names to `ModelSpec`s (`memory_logp`, `mlines`, `loggp_tcp_loopback`,
//! `log3p_tcp_loopback`);
//! `commcost predict --model FILE#NAME` (or `cargo run --example predict_from_file -- FILE`)
//! loads it and predicts.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use commcost::calibrate::{
    AssessmentConfig, CopyMeasurements, MlinesSample, RegressionVariant, assess_loggp,
    derive_log3p, derive_memory_logp, fit_mlines_model, fit_regression, relative_errors,
};
use commcost::probe::{
    Budget, CopyKind, CopyPlan, Log3PPlan, MatrixPlan, Methodology, TcpLoopbackProber,
    cache_line_size, measure_copies, measure_layouts, measure_matrix_transfers,
};
use commcost::probe::{Prober, PrttPlan, measure_prtt};
use commcost::{CommModel, Message, ModelSpec};

struct Args {
    quick: bool,
    output: PathBuf,
}

fn args() -> Result<Args, String> {
    let mut args = Args {
        quick: false,
        output: PathBuf::from("target/commcost-host.json"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => args.quick = true,
            "--output" => args.output = it.next().ok_or("--output needs a path")?.into(),
            "--help" | "-h" => {
                return Err("usage: calibrate_host [--quick] [--output FILE]".into());
            }
            other => return Err(format!("unknown argument {other}; try --help")),
        }
    }
    Ok(args)
}

/// Median and 90th percentile of the relative errors (`calibrate::relative_errors`).
fn errors(pairs: &[(f64, f64)]) -> (f64, f64) {
    relative_errors(pairs).unwrap_or((f64::NAN, f64::NAN))
}

fn progress() -> impl FnMut(&str, usize, usize) {
    let mut last = Instant::now();
    move |stage: &str, done: usize, total: usize| {
        if done == total || last.elapsed() > Duration::from_millis(200) {
            eprint!("\r  {stage}: {done}/{total}   ");
            if done == total {
                eprintln!();
            }
            let _ = std::io::stderr().flush();
            last = Instant::now();
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = args()?;
    let start = Instant::now();
    let (methodology, limit) = if args.quick {
        let m = Methodology {
            repetitions: 10,
            samples: 5,
            min_sample_time: Duration::from_micros(50),
            passes: 3,
            seed: 2026,
        };
        (m, Duration::from_secs(120))
    } else {
        let m = Methodology {
            repetitions: 20,
            samples: 10,
            min_sample_time: Duration::from_micros(100),
            passes: 5,
            seed: 2026,
        };
        (m, Duration::from_secs(600))
    };
    let line = cache_line_size();
    println!(
        "commcost host calibration ({} mode), cache line {line} B, {} logical CPUs",
        if args.quick { "quick" } else { "full" },
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let mut models: BTreeMap<&str, ModelSpec> = BTreeMap::new();

    // ---- 1. memory logP --------------------------------------------------------------------
    eprintln!("[1/4] memory copies (doubles)");
    let budget = Budget::new(limit, 1 << 30);
    // strides that are not powers of two: at power-of-two strides the elements of a pack fall
    // into few cache sets (conflict misses) and cost up to 3x more than at neighbouring strides,
    // which no interpolation in the stride can represent; they are reported apart below
    let copy_strides: Vec<u64> = vec![24, 40, 80, 160, 320, 640, 1280];
    let sizes: Vec<u64> = if args.quick {
        (10..=16).map(|k| 1u64 << k).collect()
    } else {
        (10..=18).map(|k| 1u64 << k).collect()
    };
    let plan = CopyPlan {
        element: 8,
        sizes: sizes.clone(),
        strides: copy_strides.clone(),
        kinds: vec![CopyKind::Contiguous, CopyKind::Pack],
    };
    let samples = measure_copies(&plan, &methodology, &budget, &mut progress())?;
    let time_of = |kind: CopyKind, size: u64, stride: u64| {
        samples
            .iter()
            .find(|s| s.kind == kind && s.size == size && s.stride == stride)
            .map_or(f64::NAN, |s| s.time)
    };
    let contiguous: Vec<f64> = sizes
        .iter()
        .map(|&s| time_of(CopyKind::Contiguous, s, 8))
        .collect();
    let mut clamped = 0;
    let strided: Vec<Vec<f64>> = sizes
        .iter()
        .zip(&contiguous)
        .map(|(&s, &c)| {
            copy_strides
                .iter()
                .map(|&d| {
                    let t = time_of(CopyKind::Pack, s, d);
                    if t < c {
                        clamped += 1; // faster than contiguous: noise; l = 0 there
                        c
                    } else {
                        t
                    }
                })
                .collect()
        })
        .collect();
    let memory = derive_memory_logp(&CopyMeasurements {
        sizes: sizes.clone(),
        contiguous,
        strides: copy_strides.clone(),
        strided,
        element: 8,
    })?;
    // held out: sizes 1.5x the grid's, strides between the grid's (and powers of two apart)
    let held_sizes: Vec<u64> = sizes[..sizes.len() - 1].iter().map(|s| s * 3 / 2).collect();
    let held_plan = |strides: Vec<u64>| CopyPlan {
        element: 8,
        sizes: held_sizes.clone(),
        strides,
        kinds: vec![CopyKind::Pack],
    };
    let held = measure_copies(
        &held_plan(vec![56, 112, 224, 448, 896]),
        &methodology,
        &budget,
        &mut progress(),
    )?;
    let held_pow2 = measure_copies(
        &held_plan(vec![64, 256, 1024]),
        &methodology,
        &budget,
        &mut progress(),
    )?;
    let compare = |held: &[commcost::probe::CopySample]| -> Vec<(f64, f64)> {
        held.iter()
            .map(|s| {
                let msg = Message::vector(s.size / 8, 8, s.stride).expect("valid layout");
                (memory.p2p(&msg), s.time)
            })
            .collect()
    };
    let pairs = compare(&held);
    let (memory_median, memory_p90) = errors(&pairs);
    let (pow2_median, pow2_p90) = errors(&compare(&held_pow2));
    models.insert("memory_logp", ModelSpec::from(memory.clone()));

    // ---- 2. Mlines -------------------------------------------------------------------------
    eprintln!("[2/4] row and column transfers");
    let n = if args.quick { 1024 } else { 2000 };
    let matrix = measure_matrix_transfers(
        &MatrixPlan {
            height: n,
            width: n,
            shapes: 200,
            max_k: 16,
            seed: 7,
        },
        &methodology,
        &budget,
        &mut progress(),
    )?;
    let to_samples = |m: &[commcost::probe::MatrixSample]| -> Vec<MlinesSample> {
        m.iter()
            .map(|s| MlinesSample::from_message(&s.message, line, s.time).expect("line > 0"))
            .collect()
    };
    let (train, test) = matrix.split_at(100);
    let (train_s, test_s) = (to_samples(train), to_samples(test));
    let rows_test: Vec<MlinesSample> =
        to_samples(&test.iter().filter(|s| s.rows).copied().collect::<Vec<_>>());
    let cols_test: Vec<MlinesSample> =
        to_samples(&test.iter().filter(|s| !s.rows).copied().collect::<Vec<_>>());
    let mut table = Vec::new();
    for variant in RegressionVariant::ALL {
        let fit = fit_regression(variant, line, &train_s, &test_s)?;
        let on = |s: &[MlinesSample]| fit.evaluate(s).ok();
        table.push((variant.name(), on(&rows_test), on(&cols_test), fit));
    }
    let m1 = &table[3].3;
    let pairs: Vec<(f64, f64)> = test_s
        .iter()
        .map(|s| (m1.predict(s).max(0.0), s.time))
        .collect();
    let (mlines_median, mlines_p90) = errors(&pairs);
    // the stored model: M1 with non-negative coefficients (exact NNLS)
    let mlines_model = fit_mlines_model(&train_s, line)?;
    models.insert("mlines", ModelSpec::from(mlines_model.clone()));

    // ---- 3. LogGP over TCP loopback --------------------------------------------------------
    eprintln!("[3/4] TCP loopback PRTT");
    let step = if args.quick { 4096 } else { 1024 };
    let sizes: Vec<u64> = std::iter::once(1)
        .chain((1..=65536 / step).map(|k| k * step))
        .collect();
    let mut prober = TcpLoopbackProber::start(65536 + 4096, methodology, budget.clone())?;
    let passes = if args.quick { 2 } else { 3 };
    let plan = PrttPlan {
        sizes: sizes.clone(),
        n: 16,
        passes,
        seed: 11,
    };
    let total = 3 * sizes.len() * (passes + 1);
    let mut report = progress();
    let mut counting = CountingProber {
        inner: &mut prober,
        done: 0,
        total,
        report: &mut report,
    };
    let measured = measure_prtt(&mut counting, &plan)?;
    eprintln!();
    let assessment = assess_loggp(&measured.samples, &AssessmentConfig::default())?;
    // held out: half round trips between the grid's sizes
    let pairs: Vec<(f64, f64)> = sizes
        .iter()
        .step_by(2)
        .map(|&s| s + step / 2)
        .filter(|&s| s <= 65536)
        .map(|s| -> Result<(f64, f64), Box<dyn std::error::Error>> {
            let half = prober.prtt(1, 0.0, s)? / 2.0;
            Ok((assessment.model.p2p(&Message::contiguous(s)), half))
        })
        .collect::<Result<_, _>>()?;
    let (loggp_median, loggp_p90) = errors(&pairs);
    models.insert(
        "loggp_tcp_loopback",
        ModelSpec::from(assessment.model.clone()),
    );

    // ---- 4. log_3 P over TCP loopback, and LogGP vs log_3 P on strided transfers -----------
    eprintln!("[4/4] strided transfers: sends to self and to the echo thread");
    let l3_plan = Log3PPlan {
        sizes: vec![1 << 10, 1 << 12, 1 << 14, 1 << 16],
        strides: vec![24, 80, 320, 1280],
        element: 8,
    };
    let layouts = l3_plan.layouts()?;
    let mut big_prober =
        TcpLoopbackProber::start_with_span(1 << 16, l3_plan.span(), methodology, budget.clone())?;
    let times = measure_layouts(
        &mut big_prober,
        &layouts,
        &methodology,
        &budget,
        &mut progress(),
    )?;
    let copies: Vec<f64> = l3_plan
        .sizes
        .iter()
        .map(|&s| time_of(CopyKind::Contiguous, s, 8))
        .collect();
    let (measurements, l3_cleaning) = l3_plan.measurements(&times, &copies)?;
    let remote_strided = l3_plan.remote_strided(&times)?;
    let log3p_result = derive_log3p(&measurements);
    let mut strided_report = Vec::new();
    if let Ok(log3p) = &log3p_result {
        let l3_pairs: Vec<(f64, f64)> = remote_strided
            .iter()
            .map(|(m, t)| (log3p.p2p(m), *t))
            .collect();
        let loggp_pairs: Vec<(f64, f64)> = remote_strided
            .iter()
            .map(|(m, t)| (assessment.model.p2p(m), *t))
            .collect();
        strided_report.push(("log_3 P", errors(&l3_pairs)));
        strided_report.push(("LogGP", errors(&loggp_pairs)));
        models.insert("log3p_tcp_loopback", ModelSpec::from(log3p.clone()));
    }

    // ---- report ----------------------------------------------------------------------------
    println!(
        "\nmemory logP (doubles; {} grid points, {clamped} packs faster than memcpy set to it)",
        samples.len()
    );
    println!(
        "  at 4 KiB: o = {:.3} ns/B; l = {} ns/B",
        memory.overhead_per_byte().eval(4096.0) * 1e9,
        copy_strides
            .iter()
            .map(|&d| format!(
                "{:.3} at {d} B",
                memory
                    .latency_per_byte()
                    .map_or(0.0, |l| l.eval(4096.0, d as f64))
                    * 1e9
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "  held-out packs ({}, strides 56 … 896 B): median relative error {:.1} %, 90th percentile {:.1} %",
        held.len(),
        memory_median * 100.0,
        memory_p90 * 100.0
    );
    println!(
        "  held-out packs at power-of-two strides ({}, 64, 256, 1024 B): median {:.1} %, 90th percentile {:.1} %",
        held_pow2.len(),
        pow2_median * 100.0,
        pow2_p90 * 100.0
    );
    println!(
        "\nMlines ({n} x {n} matrix of 4-byte integers, 100 training + 100 test shapes, line {line} B)"
    );
    println!(
        "  {:<6} {:>14} {:>14} {:>14} {:>14}",
        "model", "rows σε (µs)", "rows unexpl.", "cols σε (µs)", "cols unexpl."
    );
    for (name, rows, cols, _) in &table {
        let fmt = |s: &Option<commcost::calibrate::FitStatistics>| match s {
            Some(s) => (
                s.sigma_eps()
                    .map_or("-".into(), |v| format!("{:.3}", v * 1e6)),
                s.unexplained_variance_ratio()
                    .map_or("-".into(), |v| format!("{v:.4}")),
            ),
            None => ("-".into(), "-".into()),
        };
        let (rs, ru) = fmt(rows);
        let (cs, cu) = fmt(cols);
        println!("  {name:<6} {rs:>14} {ru:>14} {cs:>14} {cu:>14}");
    }
    println!(
        "  M1 on the test shapes: median relative error {:.1} %, 90th percentile {:.1} %",
        mlines_median * 100.0,
        mlines_p90 * 100.0
    );
    println!(
        "  stored: α = {:.3} µs, β = {:.4} ns/B, γ = {:.3} ns/line",
        mlines_model.per_message() * 1e6,
        mlines_model.per_byte() * 1e9,
        mlines_model.per_line() * 1e9
    );
    println!(
        "\nLogGP over TCP loopback (n = 16, {} sizes 1 B … 64 KiB, {passes} shuffled passes)",
        sizes.len()
    );
    println!("{assessment}");
    // LogGP's p2p assumes one message pays G per byte: compare with the slope of PRTT(1, 0, s)/2
    let single_slope = {
        let d = &assessment.sizes;
        let design: Vec<f64> = d.iter().flat_map(|x| [1.0, x.size as f64]).collect();
        let half: Vec<f64> = d.iter().map(|x| x.prtt_single / 2.0).collect();
        commcost::calibrate::least_squares(&design, 2, &half)
            .map_or(f64::NAN, |f| f.coefficients()[1])
    };
    println!(
        "  one message: {:.5} µs/B (slope of PRTT(1, 0, s)/2); streaming gap G: {:.5} µs/B",
        single_slope * 1e6,
        assessment.model.model_for(1).gap_per_byte() * 1e6
    );
    let worst_spread = measured
        .spread
        .iter()
        .map(|s| s.burst.max(s.single))
        .fold(0.0, f64::max);
    println!(
        "  largest spread between passes {:.0} %",
        worst_spread * 100.0
    );
    println!(
        "  held-out half round trips ({}): median relative error {:.1} %, 90th percentile {:.1} %",
        pairs.len(),
        loggp_median * 100.0,
        loggp_p90 * 100.0
    );

    println!(
        "\nLogGP vs log_3 P on remote strided transfers (doubles, {} sizes 1 … 64 KiB × strides 24 … 1280 B)",
        l3_plan.sizes.len()
    );
    println!(
        "  log_3 P from sends to self, contiguous remote transfers and memcpy (lognp §4.1); adjusted: {} strided sends to self faster than contiguous, {} memcpy slower than the send to self",
        l3_cleaning.strided_faster, l3_cleaning.copy_slower
    );
    for (name, (median, p90)) in &strided_report {
        println!(
            "  {name:<8} median relative error {:>6.1} %, 90th percentile {:>6.1} %",
            median * 100.0,
            p90 * 100.0
        );
    }
    if let Err(e) = &log3p_result {
        println!("  log_3 P could not be derived from this run's measurements: {e}");
    }
    if let Ok(log3p) = &log3p_result {
        let (m, measured) = remote_strided[2 * l3_plan.strides.len() + 2];
        let b = log3p.breakdown(&m);
        println!(
            "  {} B at stride {} B: o_mw = {:.2} µs, l_mw = {:.2} µs, o_net = {:.2} µs; measured {:.2} µs, LogGP {:.2} µs",
            m.bytes(),
            m.stride(),
            b.middleware_overhead * 1e6,
            b.middleware_latency * 1e6,
            b.network_overhead * 1e6,
            measured * 1e6,
            assessment.model.p2p(&m) * 1e6
        );
    }

    if let Some(dir) = args.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&args.output, serde_json::to_string_pretty(&models)?)?;
    println!(
        "\nwrote {} ({} models) in {:.0} s",
        args.output.display(),
        models.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Forwards to a prober and reports progress.
struct CountingProber<'a, P: Prober> {
    inner: &'a mut P,
    done: usize,
    total: usize,
    report: &'a mut dyn FnMut(&str, usize, usize),
}

impl<P: Prober> Prober for CountingProber<'_, P> {
    fn prtt(&mut self, n: u32, delay: f64, size: u64) -> Result<f64, commcost::probe::ProbeError> {
        self.done += 1;
        (self.report)("PRTT measurements", self.done.min(self.total), self.total);
        self.inner.prtt(n, delay, size)
    }
}
