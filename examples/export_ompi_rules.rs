//! Writes an Open MPI dynamic rules file from a model: for every collective Open MPI's tuned
//! component decides, the algorithm the model prices cheapest at each process count and size.
//!
//! ```text
//! cargo run --example export_ompi_rules -- [FILE]
//! ```
//!
//! The model is the Open MPI over InfiniBand preset (Hoefler et al.'s Table 2); the rules go to
//! FILE (default: standard output), and from there to Open MPI as
//! `mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE`.
//! Where several algorithms cost the same (`OnTie::Defer`) the file names algorithm 0, Open MPI's
//! own fixed decision. The command-line tool does the same for a calibrated model file, and
//! writes MPICH's selection JSON:
//! `commcost export ompi-rules --model FILE` / `commcost export mpich-json --model FILE`.

use std::process::ExitCode;

use commcost::collectives::Family;
use commcost::{export, presets};

fn main() -> ExitCode {
    let model = presets::open_mpi_openib();
    let procs = [2, 4, 8, 16];
    // 1 B, then 4 B ... 16 MiB in steps of 4x (each collective's rules-file convention)
    let sizes: Vec<u64> = std::iter::once(1)
        .chain((0..=22).step_by(2).map(|k| 4u64 << k))
        .collect();
    let options = export::OmpiRulesOptions {
        on_tie: export::OnTie::Defer,
        ..export::OmpiRulesOptions::default()
    };
    let rules = match export::ompi_rules(
        &model,
        &Family::Ompi.collectives(),
        &procs,
        &sizes,
        &options,
    ) {
        Ok(rules) => rules.to_string(),
        Err(e) => {
            eprintln!("export_ompi_rules: {e}");
            return ExitCode::FAILURE;
        }
    };
    match std::env::args().nth(1) {
        Some(path) => {
            if let Err(e) = std::fs::write(&path, rules) {
                eprintln!("export_ompi_rules: {path}: {e}");
                return ExitCode::FAILURE;
            }
        }
        None => print!("{rules}"),
    }
    ExitCode::SUCCESS
}
