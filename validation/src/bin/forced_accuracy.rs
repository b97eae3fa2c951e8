//! Prints how well a model predicts OSU's forced runs of Open MPI's algorithms: the tables of
//! docs/ACCURACY.md ([`commcost_validation::forced_accuracy`]).
//!
//! ```sh
//! cargo run --release -p commcost-validation --bin forced_accuracy -- MODEL.json SWEEP.csv... \
//!     [--operator PER_CALL_S,PER_BYTE_S] [--rendezvous-above BYTES] [--handshake] \
//!     [--ack-behind-sends] [--cores N] [--burst BYTES] [--unshaped] [--configurations] \
//!     [--intra-model FILE.json --ranks-per-node K [--intra-rendezvous-above BYTES] [--han]]
//! ```
//!
//! `MODEL.json` is a model file `commcost calibrate` writes (its `spec`) or a bare model;
//! `SAMPLES.prtt` (PRTT samples, `mpi_calibrate --samples`) is assessed as a shaped link
//! (`commcost::calibrate::assess_shaped_link`: LogGP with the train's rate, and its burst as
//! the links' token-bucket credit unless `--burst` is given), or with `--unshaped` as the
//! crate's LogGP assessment (`commcost::calibrate::assess_loggp`: LogGP with protocol ranges).
//! With `--intra-model` and `--ranks-per-node`, MODEL is the link between nodes and the ranks
//! run K to a node, consecutive ranks together (`commcost::sim::Simulator::simulate_two_level`);
//! with `--han` too, the table is Open MPI's `han` against its default instead
//! ([`commcost_validation::han_accuracy`]).

use commcost::calibrate::{AssessmentConfig, assess_loggp, assess_shaped_link};
use commcost::collectives::Operator;
use commcost::sim::RendezvousCompletion;
use commcost::{CommModel, ModelSpec};
use commcost_validation::forced_accuracy::{
    Nodes, Pricing, markdown, parse_prtt_samples, price_on,
};
use commcost_validation::han_accuracy::{han_markdown, price_han};
use commcost_validation::selection::parse;

fn main() {
    if let Err(e) = run() {
        eprintln!("forced_accuracy: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mut files = Vec::new();
    let mut pricing = Pricing {
        operator: Operator::FREE,
        rendezvous_above: None,
        rendezvous_completion: RendezvousCompletion::WithReceive,
        cores: None,
        link_burst: None,
        ack_behind_sends: false,
    };
    let mut list = false;
    let mut han = false;
    let mut unshaped = false;
    let mut intra_path: Option<String> = None;
    let mut ranks_per_node: u32 = 1;
    let mut intra_rendezvous_above: Option<u64> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--operator" => {
                let v = args.next().ok_or("--operator needs PER_CALL,PER_BYTE")?;
                let (c, b) = v.split_once(',').ok_or("--operator PER_CALL,PER_BYTE")?;
                let c: f64 = c.parse().map_err(|e| format!("--operator: {e}"))?;
                let b: f64 = b.parse().map_err(|e| format!("--operator: {e}"))?;
                pricing.operator = Operator::new(c, b).map_err(|e| format!("--operator: {e}"))?;
            }
            "--rendezvous-above" => {
                let v = args.next().ok_or("--rendezvous-above needs BYTES")?;
                pricing.rendezvous_above =
                    Some(v.parse().map_err(|e| format!("--rendezvous-above: {e}"))?);
            }
            "--configurations" => list = true,
            "--han" => han = true,
            "--intra-model" => {
                intra_path = Some(args.next().ok_or("--intra-model needs FILE.json")?);
            }
            "--ranks-per-node" => {
                let v = args.next().ok_or("--ranks-per-node needs K")?;
                ranks_per_node = v.parse().map_err(|e| format!("--ranks-per-node: {e}"))?;
            }
            "--intra-rendezvous-above" => {
                let v = args.next().ok_or("--intra-rendezvous-above needs BYTES")?;
                intra_rendezvous_above = Some(
                    v.parse()
                        .map_err(|e| format!("--intra-rendezvous-above: {e}"))?,
                );
            }
            "--unshaped" => unshaped = true,
            "--handshake" => pricing.rendezvous_completion = RendezvousCompletion::AtHandshake,
            "--ack-behind-sends" => pricing.ack_behind_sends = true,
            "--burst" => {
                let v = args.next().ok_or("--burst needs BYTES")?;
                pricing.link_burst = Some(v.parse().map_err(|e| format!("--burst: {e}"))?);
            }
            "--cores" => {
                let v = args.next().ok_or("--cores needs N")?;
                pricing.cores = Some(v.parse().map_err(|e| format!("--cores: {e}"))?);
            }
            _ => files.push(a),
        }
    }
    if files.len() < 2 {
        return Err("usage: forced_accuracy MODEL.json SWEEP.csv... [options]".into());
    }
    let model_path = files.remove(0);
    let text = std::fs::read_to_string(&model_path).map_err(|e| format!("{model_path}: {e}"))?;
    let model: Box<dyn CommModel> = if model_path.ends_with(".prtt") {
        // PRTT samples: the shaped link assessed from them, its burst unless given
        let samples = parse_prtt_samples(&text).map_err(|e| format!("{model_path}: {e}"))?;
        let assessment = assess_loggp(&samples, &AssessmentConfig::default())
            .map_err(|e| format!("{model_path}: {e}"))?;
        if unshaped {
            eprintln!("{model_path}: LogGP with protocol ranges (assess_loggp)");
            return report(
                &files,
                &assessment.model,
                &pricing,
                (list, han),
                intra(&intra_path)?.as_deref(),
                ranks_per_node,
                intra_rendezvous_above,
            );
        }
        let link = assess_shaped_link(&assessment).map_err(|e| format!("{model_path}: {e}"))?;
        eprintln!(
            "shaped link from {model_path}: L = {:.2} µs, o = {:.2} µs, g = {:.2} µs, G = {:.3} ns/B, \
             burst {} B; one-message error median {:.1} %, p90 {:.1} %",
            link.model.latency() * 1e6,
            link.model.overhead() * 1e6,
            link.model.gap() * 1e6,
            link.model.gap_per_byte() * 1e9,
            link.burst,
            link.one_way_error.0 * 100.0,
            link.one_way_error.1 * 100.0
        );
        if pricing.link_burst.is_none() {
            pricing.link_burst = Some(link.burst);
        }
        Box::new(link.model)
    } else {
        spec_of(&model_path, &text)?
    };
    let intra = intra(&intra_path)?;
    report(
        &files,
        model.as_ref(),
        &pricing,
        (list, han),
        intra.as_deref(),
        ranks_per_node,
        intra_rendezvous_above,
    )
}

/// The model of a model file (its `spec`) or a bare model.
fn spec_of(path: &str, text: &str) -> Result<Box<dyn CommModel>, String> {
    let mut value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("{path}: {e}"))?;
    if let Some(spec) = value.get_mut("spec") {
        value = spec.take();
    }
    let spec: ModelSpec = serde_json::from_value(value).map_err(|e| format!("{path}: {e}"))?;
    Ok(spec.into_model())
}

/// The `--intra-model` file's model, if given.
fn intra(path: &Option<String>) -> Result<Option<Box<dyn CommModel>>, String> {
    let Some(path) = path else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    spec_of(path, &text).map(Some)
}

fn report(
    files: &[String],
    model: &dyn CommModel,
    pricing: &Pricing,
    (list, han): (bool, bool),
    intra: Option<&dyn CommModel>,
    ranks_per_node: u32,
    intra_rendezvous_above: Option<u64>,
) -> Result<(), String> {
    let mut rows = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{f}: {e}"))?;
        rows.extend(parse(&text).map_err(|e| format!("{f}: {e}"))?);
    }
    let nodes = intra.map(|intra| Nodes {
        intra,
        ranks_per_node,
        intra_rendezvous_above,
    });
    if han {
        let nodes = nodes
            .as_ref()
            .ok_or("--han needs --intra-model and --ranks-per-node")?;
        let cells = price_han(&rows, model, pricing, nodes)?;
        if list {
            print_csv(
                "collective,procs,bytes,han_us,pred_han_us,default_us,pred_default_us,verdict",
                cells.iter().map(|c| {
                    format!(
                        "{},{},{},{:.2},{:.2},{:.2},{:.2},{:?}",
                        c.collective.name(),
                        c.procs,
                        c.bytes,
                        c.han * 1e6,
                        c.predicted_han * 1e6,
                        c.default * 1e6,
                        c.predicted_default * 1e6,
                        c.verdict
                    )
                }),
            );
            return Ok(());
        }
        let procs = cells.first().map_or(0, |c| c.procs);
        let label = format!(
            "{}x{}",
            procs / u64::from(ranks_per_node.max(1)),
            ranks_per_node
        );
        print!("{}", han_markdown(&[(label.as_str(), &cells)]));
        return Ok(());
    }
    let priced = price_on(&rows, model, pricing, nodes.as_ref())?;
    if list {
        print_csv(
            "collective,procs,id,segsize,bytes,avg_us,pred_avg_us,max_us,pred_max_us,spread",
            priced.iter().map(|p| {
                format!(
                    "{},{},{},{},{},{:.2},{:.2},{:.2},{:.2},{:.3}",
                    p.collective.name(),
                    p.procs,
                    p.id,
                    p.segsize,
                    p.bytes,
                    p.avg * 1e6,
                    p.predicted_avg * 1e6,
                    p.max * 1e6,
                    p.predicted_max * 1e6,
                    p.spread
                )
            }),
        );
    } else {
        print!("{}", markdown(&priced));
    }
    Ok(())
}

/// `--list`: a CSV header, then one line per cell.
fn print_csv(header: &str, lines: impl Iterator<Item = String>) {
    println!("{header}");
    for line in lines {
        println!("{line}");
    }
}
