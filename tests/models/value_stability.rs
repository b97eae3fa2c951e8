//! Value stability: some thousands of predictions of every model, every collective algorithm (the
//! textbook set and Open MPI's), the simulator and the lines calculator, pinned bit for bit.
//!
//! The pinned values are what the crate computed when this test was written; they are not
//! claims of correctness (the other suites check the formulas against papers, measurements and
//! independent oracles). Their job is to make any change of a prediction visible: a refactoring
//! must leave every value identical. A change that is meant to move predictions regenerates the
//! file with `COMMCOST_BLESS=1 cargo test --test integration value_stability` and says why in the CHANGELOG.
//!
//! Models come from `tests/fixtures/value_stability/models.tsv` (name, `ModelSpec` JSON), so the
//! test does not depend on how models are constructed in Rust.

use commcost::collectives::{self, Algorithm, Operator, Problem, ompi};
use commcost::sim::{SimOptions, ToSchedule, simulate};
use commcost::{CommModel, Message, ModelSpec};
use std::fmt::Write as _;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/value_stability/values.tsv"
);

fn models() -> Vec<(String, ModelSpec)> {
    let text = include_str!("../fixtures/value_stability/models.tsv");
    text.lines()
        .map(|line| {
            let (name, json) = line.split_once('\t').expect("name<TAB>json");
            let spec: ModelSpec = serde_json::from_str(json).expect("a valid ModelSpec");
            (name.to_string(), spec)
        })
        .collect()
}

fn record(out: &mut String, key: &str, value: f64) {
    writeln!(out, "{key}\t{:016x}\t{value:e}", value.to_bits()).unwrap();
}

fn messages() -> Vec<(String, Message)> {
    let mut v: Vec<(String, Message)> = [
        0u64,
        1,
        8,
        9,
        63,
        64,
        257,
        1000,
        4096,
        12288,
        12289,
        16384,
        65536,
        1 << 20,
        1 << 24,
    ]
    .iter()
    .map(|&b| (format!("c{b}"), Message::contiguous(b)))
    .collect();
    for (count, block, stride, offset) in [(16, 8, 64, 0), (1000, 4, 4096, 3), (3, 100, 128, 60)] {
        v.push((
            format!("v{count}x{block}s{stride}o{offset}"),
            Message::vector(count, block, stride)
                .unwrap()
                .with_offset(offset),
        ));
    }
    v
}

fn point_to_point(out: &mut String, name: &str, model: &dyn CommModel) {
    for (m, msg) in messages() {
        record(out, &format!("{name}/p2p/{m}"), model.p2p(&msg));
        record(out, &format!("{name}/os/{m}"), model.send_overhead(&msg));
        record(out, &format!("{name}/or/{m}"), model.recv_overhead(&msg));
        record(out, &format!("{name}/g/{m}"), model.gap(&msg));
        record(
            out,
            &format!("{name}/interval/{m}"),
            model.send_interval(&msg),
        );
    }
}

fn family<A: Algorithm>(out: &mut String, name: &str, model: &dyn CommModel, family: &str) {
    for p in [2u64, 5, 64] {
        for bytes in [8u64, 1 << 20] {
            let problem = Problem::new(p, Message::contiguous(bytes))
                .with_operator(Operator::new(1e-7, 2e-10).unwrap());
            for (i, a) in A::candidates(model, &problem).iter().enumerate() {
                let cost = a.cost(model, &problem).unwrap_or(f64::NEG_INFINITY);
                record(
                    out,
                    &format!("{name}/{family}/P{p}/m{bytes}/{i}:{}", a.label()),
                    cost,
                );
            }
        }
    }
}

fn simulated<A: Algorithm + ToSchedule>(
    out: &mut String,
    name: &str,
    model: &dyn CommModel,
    family: &str,
) {
    for p in [5u64, 16] {
        for bytes in [8u64, 65536] {
            let problem = Problem::new(p, Message::contiguous(bytes))
                .with_operator(Operator::new(1e-7, 2e-10).unwrap());
            for (i, a) in A::candidates(model, &problem).iter().enumerate() {
                let makespan = match a.schedule(&problem) {
                    Ok(s) => simulate(&s, model, &SimOptions::default())
                        .map(|r| r.makespan)
                        .unwrap_or(f64::NEG_INFINITY),
                    Err(_) => f64::NEG_INFINITY,
                };
                record(
                    out,
                    &format!("{name}/sim/{family}/P{p}/m{bytes}/{i}:{}", a.label()),
                    makespan,
                );
            }
        }
    }
}

fn compute() -> String {
    let mut out = String::new();
    let models = models();
    for (name, spec) in &models {
        point_to_point(&mut out, name, spec.as_model());
    }
    for (name, spec) in &models {
        if !matches!(
            name.as_str(),
            "logp" | "loggp" | "loggp_openib" | "plogp_vader" | "loggp_vader_calibrated" | "loggpo"
        ) {
            continue;
        }
        let m = spec.as_model();
        family::<collectives::Bcast>(&mut out, name, m, "bcast");
        family::<collectives::Scan>(&mut out, name, m, "scan");
        family::<collectives::Reduce>(&mut out, name, m, "reduce");
        family::<collectives::Allreduce>(&mut out, name, m, "allreduce");
        family::<collectives::Allgather>(&mut out, name, m, "allgather");
        family::<collectives::Gather>(&mut out, name, m, "gather");
        family::<collectives::Scatter>(&mut out, name, m, "scatter");
        family::<collectives::Barrier>(&mut out, name, m, "barrier");
        family::<collectives::Alltoall>(&mut out, name, m, "alltoall");
        family::<ompi::Bcast>(&mut out, name, m, "ompi_bcast");
        family::<ompi::Reduce>(&mut out, name, m, "ompi_reduce");
        family::<ompi::Allreduce>(&mut out, name, m, "ompi_allreduce");
        family::<ompi::Allgather>(&mut out, name, m, "ompi_allgather");
        family::<ompi::Alltoall>(&mut out, name, m, "ompi_alltoall");
        family::<ompi::Barrier>(&mut out, name, m, "ompi_barrier");
        family::<ompi::ReduceScatter>(&mut out, name, m, "ompi_reduce_scatter");
        family::<ompi::Gather>(&mut out, name, m, "ompi_gather");
        family::<ompi::Scatter>(&mut out, name, m, "ompi_scatter");
        if matches!(name.as_str(), "loggp" | "plogp_vader") {
            simulated::<collectives::Bcast>(&mut out, name, m, "bcast");
            simulated::<collectives::Allreduce>(&mut out, name, m, "allreduce");
            simulated::<collectives::Alltoall>(&mut out, name, m, "alltoall");
            simulated::<ompi::Bcast>(&mut out, name, m, "ompi_bcast");
            simulated::<ompi::Reduce>(&mut out, name, m, "ompi_reduce");
            simulated::<ompi::Allreduce>(&mut out, name, m, "ompi_allreduce");
            simulated::<ompi::Allgather>(&mut out, name, m, "ompi_allgather");
            simulated::<ompi::ReduceScatter>(&mut out, name, m, "ompi_reduce_scatter");
            simulated::<ompi::Gather>(&mut out, name, m, "ompi_gather");
            simulated::<ompi::Scatter>(&mut out, name, m, "ompi_scatter");
            simulated::<ompi::Barrier>(&mut out, name, m, "ompi_barrier");
            simulated::<ompi::Alltoall>(&mut out, name, m, "ompi_alltoall");
        }
    }
    for (count, block, stride, offset, line) in [
        (100u64, 5u64, 36u64, 5u64, 16u64),
        (100, 20, 36, 5, 16),
        (1 << 20, 3, 1000, 999, 64),
        (12345, 64, 64, 0, 64),
        (7, 1, 1 << 40, 63, 128),
    ] {
        let lines = commcost::mlines::vector_lines(count, block, stride, offset, line)
            .map(|l| l as f64)
            .unwrap_or(f64::NEG_INFINITY);
        record(
            &mut out,
            &format!("mlines/vector_lines/{count},{block},{stride},{offset},{line}"),
            lines,
        );
    }
    out
}

#[test]
fn every_prediction_is_unchanged() {
    let now = compute();
    if std::env::var_os("COMMCOST_BLESS").is_some() {
        std::fs::write(FIXTURE, &now).unwrap();
        return;
    }
    let pinned = std::fs::read_to_string(FIXTURE).expect("the pinned values");
    let pinned: Vec<&str> = pinned.lines().collect();
    let now: Vec<&str> = now.lines().collect();
    let changed: Vec<String> = pinned
        .iter()
        .zip(&now)
        .filter(|(a, b)| a != b)
        .take(20)
        .map(|(a, b)| format!("pinned {a}\n   now {b}"))
        .collect();
    assert!(
        changed.is_empty() && pinned.len() == now.len(),
        "{} pinned values, {} now; first differences:\n{}",
        pinned.len(),
        now.len(),
        changed.join("\n")
    );
    assert!(pinned.len() > 1000, "only {} values pinned", pinned.len());
}
