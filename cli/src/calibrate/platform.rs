//! `commcost calibrate platform`: everything the collectives' prices need, from two ranks, into
//! one model file — the link (`calibrate mpi`, under the launcher), the local work (`calibrate
//! local`) and the per-call costs of Open MPI's forced algorithms (`calibrate collectives
//! --measure`). The file is written once, at the end: a failed step leaves no file.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use commcost::calibrate::{CallCostPlan, ForcedStat};

use super::collectives::{CollectivesArgs, collectives};
use super::collectives_measure::{MeasureOptions, Outcome, Scratch, run_bounded};
use super::launcher::parse_launcher;
use super::local::local;
use crate::{Failure, fail, model};

/// `calibrate platform`'s options.
pub(crate) struct PlatformOptions {
    /// The launcher without `-np` (`-np 2` is added).
    pub mpirun: String,
    /// `calibrate mpi`'s model: `shaped` or `loggp`; `None`: shaped unless its held-out error is
    /// more than twice pLogP's (and above 15 %), then loggp.
    pub model: Option<&'static str>,
    /// Fewer sizes and samples in every step.
    pub quick: bool,
    /// The round trips' largest size, bytes.
    pub max_size: u64,
    /// The longest the link's calibration may take under the launcher.
    pub timeout: Duration,
}

/// Runs the three steps and writes `output`.
pub(crate) fn platform(output: Option<PathBuf>, opts: &PlatformOptions) -> Result<(), Failure> {
    let Some(output) = output else {
        return fail("give the model file to write with -o FILE");
    };
    let launcher = parse_launcher(&opts.mpirun)?;
    if launcher.procs.is_some() {
        return fail("--mpirun: leave out -np; the calibration runs on 2 ranks (`-np 2` is added)");
    }
    if !cfg!(feature = "mpi") {
        return fail(
            "this commcost was built without MPI: `cargo install --path cli --features mpi` to calibrate over MPI",
        );
    }
    let exe = std::env::current_exe()
        .map_err(|e| Failure(format!("locating this commcost binary: {e}")))?;
    let scratch = Scratch::new()?;
    let link = scratch.0.join("link.json");
    let with_local = scratch.0.join("local.json");
    let done = scratch.0.join("platform.json");

    let model = opts.model.unwrap_or("shaped");
    eprintln!(
        "1/3 the link between two ranks: {} -np 2 commcost calibrate mpi --model {model}",
        opts.mpirun
    );
    link_calibration(&launcher, &exe, opts, model, &link, &scratch.0)?;
    if opts.model.is_none()
        && let Some((shaped, plogp)) = shaped_and_plogp_errors(&link)
        && shaped > 0.15
        && shaped > 2.0 * plogp
    {
        eprintln!(
            "1/3 the shaped link misses held-out round trips by {:.0} % (pLogP {:.0} %): LogGP with \
             protocol ranges instead",
            100.0 * shaped,
            100.0 * plogp
        );
        link_calibration(&launcher, &exe, opts, "loggp", &link, &scratch.0)?;
    }

    eprintln!("2/3 local work on this machine: copies, temporary buffers, the operator");
    local(&link, Some(with_local.clone()), opts.quick)?;

    eprintln!("3/3 per-call costs of Open MPI's forced algorithms on 2 ranks");
    collectives(CollectivesArgs {
        model: with_local,
        runs: None,
        check: None,
        measure: Some(MeasureOptions {
            mpirun: format!("{} -np 2", opts.mpirun),
            quick: opts.quick,
            ..MeasureOptions::default()
        }),
        stat: ForcedStat::Median,
        plan: CallCostPlan::default(),
        output: Some(done.clone()),
    })?;
    let text = std::fs::read_to_string(&done)
        .map_err(|e| Failure(format!("reading {}: {e}", done.display())))?;
    model::write_whole(&output, &text)?;
    outln!(
        "wrote {} (link, local work and per-call costs)",
        output.display()
    );
    Ok(())
}

/// Runs `calibrate mpi --model MODEL -o link` under the launcher on 2 ranks.
fn link_calibration(
    launcher: &super::launcher::Launcher,
    exe: &Path,
    opts: &PlatformOptions,
    model: &str,
    link: &Path,
    scratch: &Path,
) -> Result<(), Failure> {
    let _ = std::fs::remove_file(link);
    let mut command = Command::new(&launcher.words[0]);
    command.args(&launcher.words[1..]);
    if launcher.adds_default_btl() {
        command.args(["--mca", "btl", "self,vader"]);
    }
    command
        .args(["-np", "2"])
        .arg(exe)
        .args(["calibrate", "mpi", "--model", model]);
    command.args(["--max-size", &opts.max_size.to_string()]);
    if opts.quick {
        command.arg("--quick");
    }
    command.arg("-o").arg(link);
    let log = scratch.join("link.log");
    match run_bounded(command, opts.timeout, &log)? {
        Outcome::Done => {}
        Outcome::Failed(why) => {
            return fail(format!("--mpirun: the link's calibration failed: {why}"));
        }
        Outcome::Killed(after) => {
            return fail(format!(
                "--timeout: the link's calibration did not finish in {:.0} s (a node that does not answer?)",
                after.as_secs_f64()
            ));
        }
    }
    print_log(&log)?;
    if !link.is_file() {
        return fail("--mpirun: the link's calibration wrote no model file (did rank 0 run?)");
    }
    Ok(())
}

/// The shaped link's and pLogP's median errors on held-out round trips, from the file's
/// provenance.
fn shaped_and_plogp_errors(link: &Path) -> Option<(f64, f64)> {
    let text = std::fs::read_to_string(link).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let acc = &json["provenance"]["accuracy"];
    let median = |k: &str| acc[k]["median_relative_error"].as_f64();
    Some((
        median("one_message_with_burst_credit")?,
        median("plogp_for_comparison_held_out_half_round_trips")?,
    ))
}

/// What the link's calibration printed (rank 0's report).
fn print_log(log: &Path) -> Result<(), Failure> {
    if let Ok(text) = std::fs::read_to_string(log) {
        for line in text.lines().filter(|l| !l.trim().is_empty()).take(200) {
            outln!("  {line}");
        }
    }
    Ok(())
}
