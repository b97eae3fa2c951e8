//! Calibrate over MPI: LogGP with protocol ranges from PRTT measurements between rank 0 and
//! rank 1 (Listing 1 of Hoefler et al. 2007, blocking `MPI_Send` / `MPI_Recv`), and log_3 P from
//! half round trips with MPI vector datatypes (lognp §4.1), validated against measured remote
//! strided transfers.
//!
//! ```sh
//! cargo build --release -p commcost-validation --features mpi --bin mpi_calibrate
//! mpirun -np 2 target/release/mpi_calibrate [--quick] [--check] [--diagnostics] [--separate-buffers] [--output FILE]
//!     [--samples FILE]
//! mpirun -np 2 target/release/mpi_calibrate --netgauge-grid PREFIX [--order in-order|shuffled|both] [--passes N]
//! ```
//!
//! `--netgauge-grid PREFIX` measures only PRTT samples, on Netgauge's size grid (1, 1025, 2049,
//! … 261121 B: 256 sizes) with Netgauge's `n = 10`, twice: `PREFIX-shuffled.prtt` with
//! [`measure_prtt`] (shuffled passes, medians) and `PREFIX-in-order.prtt`, one pass in
//! increasing size order as Netgauge measures (so that drift and level shifts of the machine
//! show up as Netgauge sees them). Each file has one sample per line:
//! `size n delay_us time_us` (`# ` comment lines first). `--order in-order|shuffled|both`
//! (default both) measures only one of the two files, `--passes N` sets the shuffled passes.
//!
//! `--samples FILE` also writes the PRTT samples the LogGP assessment fitted, in the same
//! format.
//!
//! Rank 0 measures and reports; rank 1 answers; further ranks wait. Place the two ranks on the
//! two nodes (or sockets) whose link you want to calibrate. `--check` also verifies that PRTT
//! grows with `n` and `s` and that the parameters are finite and non-negative (CI runs it);
//! `--diagnostics` prints `G_all(s)` and `o(s)` per size with its range (`*`: outlier).
//! `--separate-buffers` makes every PRTT trial send from a buffer the sender never writes and
//! receive into another ([`PayloadBuffers::Separate`], as `osu_latency` and benchmark loops
//! over unchanged buffers do); by default each message is returned from the buffer it was
//! received into ([`PayloadBuffers::Echo`]: the bytes sent were just written).
//! The JSON file maps `loggp_mpi`, `plogp_mpi` and `log3p_mpi` to `ModelSpec`s and marks
//! `"preferred": "loggp_mpi"` (the LogGP with protocol ranges: the model `commcost --model FILE`
//! loads; `FILE#plogp_mpi` picks another).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use commcost::calibrate::{AssessmentConfig, assess_loggp, derive_log3p, relative_errors};
use commcost::probe::mpi::{MpiProber, PayloadBuffers, measure_layouts, serve};
use commcost::probe::{Budget, CopyKind, CopyPlan, Log3PPlan, Methodology, measure_copies};
use commcost::probe::{Prober, PrttPlan, measure_prtt};
use commcost::{CommModel, ModelSpec};
use mpi::traits::Communicator;

const MAX_SIZE: u64 = 1 << 16;
/// Largest size of Netgauge's grid: `1 + 1024 · 255`.
const NETGAUGE_MAX: u64 = 1 + 1024 * 255;

/// Writes PRTT samples as `size n delay_us time_us` lines under a comment header.
fn write_samples(
    path: &str,
    header: &str,
    samples: &[commcost::calibrate::PrttSample],
) -> Result<(), Box<dyn std::error::Error>> {
    let mut text = String::new();
    for line in header.lines() {
        text.push_str(&format!("# {line}\n"));
    }
    text.push_str("# size n delay_us time_us\n");
    for s in samples {
        text.push_str(&format!(
            "{} {} {:.4} {:.4}\n",
            s.size,
            s.n,
            s.delay * 1e6,
            s.time * 1e6
        ));
    }
    std::fs::write(path, text)?;
    Ok(())
}

/// The `--netgauge-grid` mode (rank 0).
fn netgauge_grid(
    prober: &mut dyn Prober,
    prefix: &str,
    passes: usize,
    order: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let sizes: Vec<u64> = (0..256).map(|k| 1 + 1024 * k).collect();
    let n = 10;
    let header = format!(
        "PRTT samples measured by validation/src/bin/mpi_calibrate.rs --netgauge-grid (MpiProber: blocking\nMPI_Send/MPI_Recv, Listing 1 of Hoefler, Lichei, Rehm, IPDPS 2007), n = {n}, 256 sizes\n1 + 1024 k B; times are the minimum over samples of the mean of repetitions."
    );
    let plan = PrttPlan {
        sizes: sizes.clone(),
        n,
        passes,
        seed: 3,
    };
    if order != "shuffled" {
        in_order(prober, prefix, &header, &sizes, n)?;
    }
    if order == "in-order" {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let measured = measure_prtt(prober, &plan)?;
    println!("shuffled passes: {:.1} s", started.elapsed().as_secs_f64());
    write_samples(
        &format!("{prefix}-shuffled.prtt"),
        &format!(
            "{header}\nmeasure_prtt: pilot pass + {passes} shuffled passes, median per size; d = PRTT(1,0,s)\n(or PRTT(2,0,s) when PRTT(1,0,s) <= G_all(s))."
        ),
        &measured.samples,
    )?;
    println!("wrote {prefix}-shuffled.prtt");
    Ok(())
}

/// Netgauge's order: increasing sizes, one pass, `d = PRTT(1, 0, s)`.
fn in_order(
    prober: &mut dyn Prober,
    prefix: &str,
    header: &str,
    sizes: &[u64],
    n: u32,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut samples = Vec::with_capacity(3 * sizes.len());
    let started = std::time::Instant::now();
    for (k, &size) in sizes.iter().enumerate() {
        if k % 32 == 0 {
            println!(
                "in order: size {size} at {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
        let single = prober.prtt(1, 0.0, size)?;
        let burst = prober.prtt(n, 0.0, size)?;
        let delayed = prober.prtt(n, single, size)?;
        for (k, delay, time) in [(1, 0.0, single), (n, 0.0, burst), (n, single, delayed)] {
            samples.push(commcost::calibrate::PrttSample {
                n: k,
                delay,
                size,
                time,
            });
        }
    }
    write_samples(
        &format!("{prefix}-in-order.prtt"),
        &format!(
            "{header}\none pass in increasing size order (as Netgauge measures); d = PRTT(1,0,s)."
        ),
        &samples,
    )?;
    println!("wrote {prefix}-in-order.prtt");
    Ok(())
}

fn errors(pairs: &[(f64, f64)]) -> (f64, f64) {
    relative_errors(pairs).unwrap_or((f64::NAN, f64::NAN))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut quick = false;
    let mut check = false;
    let mut diagnostics = false;
    let mut output = PathBuf::from("target/commcost-mpi.json");
    let mut grid: Option<String> = None;
    let mut payload = PayloadBuffers::Echo;
    let mut order = String::from("both");
    let mut passes: Option<usize> = None;
    let mut samples_out: Option<String> = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--check" => check = true,
            "--diagnostics" => diagnostics = true,
            "--separate-buffers" => payload = PayloadBuffers::Separate,
            "--output" => output = it.next().ok_or("--output needs a path")?.into(),
            "--samples" => samples_out = Some(it.next().ok_or("--samples needs a path")?),
            "--netgauge-grid" => grid = Some(it.next().ok_or("--netgauge-grid needs a prefix")?),
            "--order" => {
                order = it
                    .next()
                    .ok_or("--order needs in-order, shuffled or both")?;
                if !["in-order", "shuffled", "both"].contains(&order.as_str()) {
                    return Err(format!("--order {order}: in-order, shuffled or both").into());
                }
            }
            "--passes" => {
                let p: usize = it.next().ok_or("--passes needs a number")?.parse()?;
                if p == 0 {
                    return Err("--passes must be at least 1".into());
                }
                passes = Some(p);
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let universe = mpi::initialize().ok_or("MPI could not be initialised")?;
    let world = universe.world();
    if world.size() < 2 {
        return Err("run with at least 2 ranks: mpirun -np 2 ...".into());
    }
    let l3_plan = Log3PPlan {
        sizes: vec![1 << 10, 1 << 12, 1 << 14, MAX_SIZE],
        strides: vec![24, 80, 320, 1280],
        element: 8,
    };
    let span = l3_plan.span();
    let max_size = if grid.is_some() {
        NETGAUGE_MAX
    } else {
        MAX_SIZE
    };
    match world.rank() {
        0 => {}
        1 => {
            serve(&world, 0, max_size as usize, span as usize)?;
            return Ok(());
        }
        _ => return Ok(()),
    }

    let methodology = if quick {
        Methodology {
            repetitions: 10,
            samples: 5,
            min_sample_time: Duration::from_micros(50),
            passes: 2,
            seed: 9,
        }
    } else {
        Methodology {
            repetitions: 20,
            samples: 10,
            min_sample_time: Duration::from_micros(100),
            passes: 3,
            seed: 9,
        }
    };
    // the grid mode measures 256 sizes up to 255 KiB: fewer repetitions keep a run to minutes
    let methodology = if grid.is_some() && quick {
        Methodology {
            repetitions: 5,
            samples: 4,
            ..methodology
        }
    } else {
        methodology
    };
    let budget = Budget::new(Duration::from_secs(600), 1 << 30);
    let mut prober = MpiProber::new(&world, 1, max_size, span, methodology, budget.clone())?
        .with_payload_buffers(payload)?;
    if payload == PayloadBuffers::Separate {
        println!("PRTT trials send from buffers the sender never writes (--separate-buffers)");
    }
    if let Some(prefix) = grid {
        let passes = passes.unwrap_or(methodology.passes);
        let result = netgauge_grid(&mut prober, &prefix, passes, &order);
        prober.finish();
        return result;
    }
    let mut quiet = |_: &str, _: usize, _: usize| {};

    // LogGP with protocol ranges
    let step = if quick { 4096 } else { 1024 };
    // dense where MPI libraries switch protocol (fast paths for tiny messages, eager limits):
    // 32-byte steps below 512 B, 256-byte steps to 8 KiB, then `step` — each protocol range
    // needs several points before the detector can tell it from outliers
    let sizes: Vec<u64> = std::iter::once(1)
        .chain((1..16).map(|k| k * 32))
        .chain((2..=32).map(|k| k * 256))
        .chain((8192 / step + 1..=MAX_SIZE / step).map(|k| k * step))
        .collect();
    let plan = PrttPlan {
        sizes: sizes.clone(),
        n: 16,
        passes: methodology.passes,
        seed: 3,
    };
    let measured = measure_prtt(&mut prober, &plan)?;
    if let Some(path) = &samples_out {
        write_samples(
            path,
            &format!(
                "PRTT samples measured by validation/src/bin/mpi_calibrate.rs{} (MpiProber: blocking\n\
                 MPI_Send/MPI_Recv, Listing 1 of Hoefler, Lichei, Rehm, IPDPS 2007), n = 16, {} sizes;\n\
                 times are the medians over passes of the minimum over samples of the mean of repetitions.",
                if quick { " --quick" } else { "" },
                sizes.len()
            ),
            &measured.samples,
        )?;
    }
    let assessment = assess_loggp(&measured.samples, &AssessmentConfig::default())?;
    if check {
        let one_small = prober.prtt(1, 0.0, 1)?;
        let one_large = prober.prtt(1, 0.0, MAX_SIZE)?;
        let many_large = prober.prtt(16, 0.0, MAX_SIZE)?;
        if !(one_large > one_small && many_large > one_large) {
            return Err(format!(
                "PRTT does not grow: PRTT(1,0,1) = {one_small}, PRTT(1,0,64K) = {one_large}, PRTT(16,0,64K) = {many_large}"
            )
            .into());
        }
        for r in assessment.model.ranges() {
            let m = r.model();
            for v in [m.latency(), m.overhead(), m.gap(), m.gap_per_byte()] {
                if !(v.is_finite() && v >= 0.0) {
                    return Err(format!("invalid parameter {v} in {m:?}").into());
                }
            }
        }
        println!(
            "check: PRTT grows with n and s; {} range(s), all parameters finite and >= 0",
            assessment.ranges.len()
        );
    }

    // log_3 P: sends to self and to rank 1, contiguous and with vector datatypes; memcpy
    let layouts = l3_plan.layouts()?;
    let times = measure_layouts(&mut prober, &layouts, &methodology, &budget, &mut quiet)?;
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
    let remote_strided = l3_plan.remote_strided(&times)?;
    let log3p = derive_log3p(&measurements);
    prober.finish();

    println!(
        "LogGP over MPI (rank 0 <-> rank 1, n = 16, {} sizes 1 B … 64 KiB)",
        sizes.len()
    );
    // the ranges, the switches and (with --diagnostics) the per-size table they were cut from
    if diagnostics {
        println!("{assessment:#}");
    } else {
        println!("{assessment}");
    }
    let mut models: BTreeMap<&str, ModelSpec> = BTreeMap::new();
    models.insert("loggp_mpi", ModelSpec::from(assessment.model.clone()));
    models.insert("plogp_mpi", ModelSpec::from(assessment.plogp.clone()));
    match log3p {
        Ok(log3p) => {
            let l3: Vec<(f64, f64)> = remote_strided
                .iter()
                .map(|(m, t)| (log3p.p2p(m), *t))
                .collect();
            let lg: Vec<(f64, f64)> = remote_strided
                .iter()
                .map(|(m, t)| (assessment.model.p2p(m), *t))
                .collect();
            let ((l3m, l3p), (lgm, lgp)) = (errors(&l3), errors(&lg));
            println!(
                "log_3 P over MPI vector datatypes (adjusted: {} strided sends to self faster than contiguous, {} memcpy slower than the send to self)",
                cleaning.strided_faster, cleaning.copy_slower
            );
            println!(
                "  remote strided transfers: log_3 P median error {:.1} % (90th {:.1} %), LogGP {:.1} % ({:.1} %)",
                l3m * 100.0,
                l3p * 100.0,
                lgm * 100.0,
                lgp * 100.0
            );
            let (m, measured) = remote_strided[2 * l3_plan.strides.len() + 2];
            let b = log3p.breakdown(&m);
            println!(
                "  {} B at stride {} B: o_mw = {:.2} µs, l_mw = {:.2} µs, o_net = {:.2} µs; measured {:.2} µs",
                m.bytes(),
                m.stride(),
                b.middleware_overhead * 1e6,
                b.middleware_latency * 1e6,
                b.network_overhead * 1e6,
                measured * 1e6
            );
            models.insert("log3p_mpi", ModelSpec::from(log3p));
        }
        Err(e) => println!("log_3 P could not be derived from this run's measurements: {e}"),
    }
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    // the models by name, and which one a reader takes when it is given the file alone
    let mut file = serde_json::Map::new();
    file.insert("preferred".into(), "loggp_mpi".into());
    for (name, spec) in &models {
        file.insert((*name).into(), serde_json::to_value(spec)?);
    }
    std::fs::write(&output, serde_json::to_string_pretty(&file)?)?;
    println!("wrote {} ({} models)", output.display(), models.len());
    Ok(())
}
