//! Writes an Open MPI dynamic rules file (or MPICH's selection JSON) for a model.
//!
//! ```text
//! cargo run --example export_ompi_rules -- [--preset openib|gm|sci|tcp] [--model FILE.json]
//!     [--key NAME] [--procs 2,4,8] [--sizes 1,1024,65536] [--collectives bcast,allreduce]
//!     [--on-tie first|defer] [--mpich] [-o FILE]
//! ```
//!
//! `--on-tie defer` writes algorithm 0 (Open MPI's own fixed decision) wherever several
//! algorithms cost the same under the model; the default names the first of them.
//!
//! `--model` loads a `ModelSpec` (JSON), or one of a map of them as `mpi_calibrate` writes
//! (`--key`, default `loggp_mpi`); `--sizes` are in each collective's rules-file convention
//! (`m P` for allgather, alltoall, gather, scatter). Without `--model` a preset of
//! Hoefler et al.'s Table 2 is used (default: Open MPI over InfiniBand). The file then goes to
//! Open MPI as
//! `mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE`.

use std::collections::BTreeMap;
use std::error::Error;
use std::process::ExitCode;

use commcost::collectives::ompi::OmpiCollective;
use commcost::{CommModel, ModelSpec, export, presets};

fn list(value: &str, what: &str) -> Result<Vec<u64>, String> {
    value
        .split(',')
        .map(|v| {
            v.trim()
                .parse::<u64>()
                .map_err(|_| format!("{what}: `{v}` is not an unsigned integer"))
        })
        .collect()
}

/// One `ModelSpec`, or a map of them as `mpi_calibrate` writes (`--key NAME` picks one; default
/// the model the map marks `"preferred"`, else `loggp_mpi`, else the only entry).
fn load_model(text: &str, key: Option<&str>) -> Result<Box<dyn CommModel>, String> {
    if key.is_none()
        && let Ok(spec) = serde_json::from_str::<ModelSpec>(text)
    {
        return Ok(spec.into_model());
    }
    let mut value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let preferred = match value.as_object_mut().map(|m| m.remove("preferred")) {
        Some(Some(serde_json::Value::String(p))) => Some(p),
        Some(Some(other)) => return Err(format!("`preferred` must name a model, found {other}")),
        _ => None,
    };
    let mut map: BTreeMap<String, ModelSpec> = serde_json::from_value(value)
        .map_err(|e| format!("neither a model nor a map of models: {e}"))?;
    let names = map.keys().cloned().collect::<Vec<_>>().join(", ");
    let wanted = match (key, preferred) {
        (Some(k), _) => k.to_string(),
        (None, Some(p)) => p,
        (None, None) if map.contains_key("loggp_mpi") => "loggp_mpi".to_string(),
        (None, None) if map.len() == 1 => names.clone(),
        (None, None) => return Err(format!("several models ({names}): choose one with --key")),
    };
    map.remove(&wanted)
        .map(ModelSpec::into_model)
        .ok_or(format!("no model `{wanted}` (there are: {names})"))
}

fn run() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let mut model: Box<dyn CommModel> = Box::new(presets::open_mpi_openib());
    let mut procs = vec![2, 4, 8];
    let mut sizes: Vec<u64> = std::iter::once(1)
        .chain((0..=22).step_by(2).map(|k| 4u64 << k))
        .collect();
    let mut collectives = OmpiCollective::ALL.to_vec();
    let mut mpich = false;
    let mut output: Option<String> = None;
    let mut key: Option<String> = None;
    let mut on_tie = export::OnTie::FirstCandidate;
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--preset" => {
                model = match value()?.as_str() {
                    "openib" => Box::new(presets::open_mpi_openib()),
                    "gm" => Box::new(presets::open_mpi_gm()),
                    "sci" => Box::new(presets::nmpi_sci()),
                    "tcp" => Box::new(presets::mpich2_tcp()),
                    other => {
                        return Err(
                            format!("unknown preset `{other}` (openib, gm, sci, tcp)").into()
                        );
                    }
                }
            }
            "--model" => {
                let path = value()?;
                let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
                model = load_model(&text, key.as_deref()).map_err(|e| format!("{path}: {e}"))?;
            }
            "--key" => key = Some(value()?),
            "--procs" => procs = list(&value()?, "--procs")?,
            "--sizes" => sizes = list(&value()?, "--sizes")?,
            "--collectives" => {
                collectives = value()?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?;
            }
            "--mpich" => mpich = true,
            "--on-tie" => {
                on_tie = match value()?.as_str() {
                    "first" => export::OnTie::FirstCandidate,
                    "defer" => export::OnTie::Defer,
                    other => return Err(format!("--on-tie {other}: first or defer").into()),
                }
            }
            "-o" | "--output" => output = Some(value()?),
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    let text = if mpich {
        collectives.retain(|&c| c != OmpiCollective::ReduceScatter);
        export::mpich_json(
            model.as_ref(),
            &collectives,
            &procs,
            &sizes,
            &Default::default(),
        )?
    } else {
        let options = export::OmpiRulesOptions {
            on_tie,
            ..export::OmpiRulesOptions::default()
        };
        export::ompi_rules(model.as_ref(), &collectives, &procs, &sizes, &options)?.to_string()
    };
    match output {
        Some(path) => std::fs::write(&path, text).map_err(|e| format!("{path}: {e}"))?,
        None => print!("{text}"),
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
