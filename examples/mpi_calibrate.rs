//! Calibrate over MPI: LogGP with protocol ranges from PRTT measurements between rank 0 and
//! rank 1 (Listing 1 of Hoefler et al. 2007, blocking `MPI_Send` / `MPI_Recv`), and log_3 P from
//! half round trips with MPI vector datatypes (lognp §4.1), validated against measured remote
//! strided transfers.
//!
//! ```sh
//! cargo build --release --features mpi,serde --example mpi_calibrate
//! mpirun -np 2 target/release/examples/mpi_calibrate [--quick] [--check] [--output FILE]
//! ```
//!
//! Rank 0 measures and reports; rank 1 answers; further ranks wait. Place the two ranks on the
//! two nodes (or sockets) whose link you want to calibrate. `--check` also verifies that PRTT
//! grows with `n` and `s` and that the parameters are finite and non-negative (CI runs it).
//! The JSON file maps `loggp_mpi` and `log3p_mpi` to `ModelSpec`s.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use commcost::calibrate::{
    AssessmentConfig, Log3PMeasurements, Prober, PrttPlan, assess_loggp, derive_log3p, measure_prtt,
};
use commcost::probe::mpi::{MpiProber, measure_layouts, serve};
use commcost::probe::{Budget, CopyKind, CopyPlan, Methodology, measure_copies};
use commcost::{CommModel, Message, ModelSpec};
use mpi::traits::Communicator;

const MAX_SIZE: u64 = 1 << 16;

fn errors(pairs: &[(f64, f64)]) -> (f64, f64) {
    let mut e: Vec<f64> = pairs.iter().map(|(p, m)| ((p - m) / m).abs()).collect();
    e.sort_by(f64::total_cmp);
    let at = |q: f64| e[((e.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut quick = false;
    let mut check = false;
    let mut output = PathBuf::from("target/commcost-mpi.json");
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--check" => check = true,
            "--output" => output = it.next().ok_or("--output needs a path")?.into(),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let universe = mpi::initialize().ok_or("MPI could not be initialised")?;
    let world = universe.world();
    if world.size() < 2 {
        return Err("run with at least 2 ranks: mpirun -np 2 ...".into());
    }
    let sizes_l3: Vec<u64> = vec![1 << 10, 1 << 12, 1 << 14, 1 << 16];
    let strides_l3: Vec<u64> = vec![24, 80, 320, 1280];
    let strided = |s: u64, d: u64| Message::vector(s / 8, 8, d).expect("valid layout");
    let span = strided(MAX_SIZE, 1280).extent();
    match world.rank() {
        0 => {}
        1 => {
            serve(&world, 0, MAX_SIZE as usize, span as usize)?;
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
    let budget = Budget::new(Duration::from_secs(600), 1 << 30);
    let mut prober = MpiProber::new(&world, 1, MAX_SIZE, span, methodology, budget.clone())?;
    let mut quiet = |_: &str, _: usize, _: usize| {};

    // LogGP with protocol ranges
    let step = if quick { 4096 } else { 1024 };
    let sizes: Vec<u64> = std::iter::once(1)
        .chain((1..=MAX_SIZE / step).map(|k| k * step))
        .collect();
    let plan = PrttPlan {
        sizes: sizes.clone(),
        n: 16,
        passes: methodology.passes,
        seed: 3,
    };
    let measured = measure_prtt(&mut prober, &plan)?;
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
    let mut layouts = Vec::new();
    for &s in &sizes_l3 {
        layouts.push((Message::contiguous(s), true));
        layouts.push((Message::contiguous(s), false));
        for &d in &strides_l3 {
            layouts.push((strided(s, d), true));
            layouts.push((strided(s, d), false));
        }
    }
    let times = measure_layouts(&mut prober, &layouts, &methodology, &budget, &mut quiet)?;
    let time = |m: &Message, to_self: bool| {
        layouts
            .iter()
            .zip(&times)
            .find(|((l, t), _)| l == m && *t == to_self)
            .map_or(f64::NAN, |(_, &v)| v)
    };
    let copies = measure_copies(
        &CopyPlan {
            element: 8,
            sizes: sizes_l3.clone(),
            strides: vec![],
            kinds: vec![CopyKind::Contiguous],
        },
        &methodology,
        &budget,
        &mut quiet,
    )?;
    let mut clamped = 0;
    let mut mem_clamped = 0;
    let log3p = derive_log3p(&Log3PMeasurements {
        sizes: sizes_l3.clone(),
        self_contiguous: sizes_l3
            .iter()
            .map(|&s| time(&Message::contiguous(s), true))
            .collect(),
        remote_contiguous: sizes_l3
            .iter()
            .map(|&s| time(&Message::contiguous(s), false))
            .collect(),
        // a send to self can be cheaper than our memcpy (MPI's self path is one optimised copy):
        // the middleware then adds nothing, o_mw = 0
        memory_copy: copies
            .iter()
            .zip(&sizes_l3)
            .map(|(c, &s)| {
                let self_send = time(&Message::contiguous(s), true);
                if c.time > self_send {
                    mem_clamped += 1;
                    self_send
                } else {
                    c.time
                }
            })
            .collect(),
        strides: strides_l3.clone(),
        self_strided: sizes_l3
            .iter()
            .map(|&s| {
                let c = time(&Message::contiguous(s), true);
                strides_l3
                    .iter()
                    .map(|&d| {
                        let t = time(&strided(s, d), true);
                        if t < c {
                            clamped += 1;
                            c
                        } else {
                            t
                        }
                    })
                    .collect()
            })
            .collect(),
        unit_stride: 8,
    });
    prober.finish();

    println!(
        "LogGP over MPI (rank 0 <-> rank 1, n = 16, {} sizes 1 B … 64 KiB)",
        sizes.len()
    );
    for r in &assessment.ranges {
        let m = assessment.model.model_for(r.first_size);
        println!(
            "  {:>6} … {:>6} B: L = {:.3} µs, o = {:.3} µs, g = {:.3} µs, G = {:.6} µs/B",
            r.first_size,
            r.last_size,
            m.latency() * 1e6,
            m.overhead() * 1e6,
            m.gap() * 1e6,
            m.gap_per_byte() * 1e6
        );
    }
    let switches: Vec<String> = assessment
        .model
        .switch_points()
        .map(|s| format!("{s} B"))
        .collect();
    println!(
        "  protocol switches detected: {}; end-to-end latency {:.3} µs",
        if switches.is_empty() {
            "none".to_string()
        } else {
            switches.join(", ")
        },
        assessment.end_to_end_latency * 1e6
    );
    let mut models: BTreeMap<&str, ModelSpec> = BTreeMap::new();
    models.insert("loggp_mpi", ModelSpec::from(assessment.model.clone()));
    match log3p {
        Ok(log3p) => {
            let (mut l3, mut lg) = (Vec::new(), Vec::new());
            for &s in &sizes_l3 {
                for &d in &strides_l3 {
                    let m = strided(s, d);
                    l3.push((log3p.p2p(&m), time(&m, false)));
                    lg.push((assessment.model.p2p(&m), time(&m, false)));
                }
            }
            let ((l3m, l3p), (lgm, lgp)) = (errors(&l3), errors(&lg));
            println!(
                "log_3 P over MPI vector datatypes ({clamped} strided sends to self faster than contiguous set to it; {mem_clamped} sizes where the send to self beat memcpy: o_mw = 0)"
            );
            println!(
                "  remote strided transfers: log_3 P median error {:.1} % (90th {:.1} %), LogGP {:.1} % ({:.1} %)",
                l3m * 100.0,
                l3p * 100.0,
                lgm * 100.0,
                lgp * 100.0
            );
            let m = strided(1 << 14, 320);
            let b = log3p.breakdown(&m);
            println!(
                "  16 KiB at stride 320 B: o_mw = {:.2} µs, l_mw = {:.2} µs, o_net = {:.2} µs; measured {:.2} µs",
                b.middleware_overhead * 1e6,
                b.middleware_latency * 1e6,
                b.network_overhead * 1e6,
                time(&m, false) * 1e6
            );
            models.insert("log3p_mpi", ModelSpec::from(log3p));
        }
        Err(e) => println!("log_3 P could not be derived from this run's measurements: {e}"),
    }
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&output, serde_json::to_string_pretty(&models)?)?;
    println!("wrote {} ({} models)", output.display(), models.len());
    Ok(())
}
