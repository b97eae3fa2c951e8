//! `commcost tune`: model-guided tuning on this machine (`commcost::tune`). The model picks the
//! candidates per cell (simulated on the model file's platform where a closed form is not
//! exact), each candidate and the library's default are timed by one launch of the hidden
//! `calibrate collectives-worker` per round (Open MPI: forced through `--mca
//! coll_tuned_<coll>_algorithm`; MPICH, `--mpich`: through a selection JSON file naming the
//! algorithm), and the rules file (MPICH: selection JSON) names an algorithm only where the
//! measurements say it is faster. The file is written whole or not at all.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use commcost::collectives::Collective;
use commcost::export::{MpichDecision, mpich_json_decided};
use commcost::sim::SimOptions;
use commcost::tune::{
    Library, Run, Runner, TuneConfig, TuneError, TuneNodes, Verdict, plan_tuning, tune,
};

use crate::calibrate::collectives_measure::{HEADER, Outcome, Scratch, complete_rows, run_bounded};
use crate::calibrate::launcher::{Launcher, parse_launcher};
use crate::units::{self, human_bytes, human_time};
use crate::{Failure, ModelSource, fail, model};

/// The collectives `tune` measures: those the worker times whose Open MPI algorithms the crate
/// prices (reduce_scatter is timed as reduce_scatter_block, another collective in a rules file).
const TUNED: [Collective; 8] = [
    Collective::Bcast,
    Collective::Allreduce,
    Collective::Reduce,
    Collective::Allgather,
    Collective::Alltoall,
    Collective::Gather,
    Collective::Scatter,
    Collective::Barrier,
];

/// `commcost tune`'s arguments.
#[derive(Debug, clap::Args)]
pub struct TuneArgs {
    #[command(flatten)]
    source: ModelSource,
    /// Communicator sizes to tune (at least 2 each; `-np P` is added to the launcher).
    #[arg(long, value_parser = units::parse_list, value_name = "LIST")]
    procs: units::List,
    /// Collectives (comma-separated; default every one but barrier: bcast, allreduce, reduce,
    /// allgather, alltoall, gather, scatter). Barrier rules change how OSU and any code
    /// synchronising with MPI_Barrier times everything else.
    #[arg(long, value_name = "LIST")]
    collectives: Option<String>,
    /// Message sizes per rank as the collective takes them (the buffer of bcast, reduce,
    /// allreduce; one rank's block of the others), multiples of 8 bytes up to 16M.
    #[arg(long, value_parser = units::parse_list, value_name = "LIST", default_value = "8,64,512,4K,32K,256K,1M")]
    sizes: units::List,
    /// The time budget in seconds (1 ..= 86400): no run starts that would end after it; cells
    /// left undecided keep Open MPI's default.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    budget: u64,
    /// The launcher without `-np` (words split as a shell does), e.g. `mpirun --hostfile H
    /// --mca btl self,tcp`; to Open MPI's `mpirun`, `mpiexec` or `orterun` without `--mca btl`,
    /// `--mca btl self,vader` is added (a wrapper script such as `scripts/cluster-emu.sh mpirun
    /// --` passes its own). Default: `mpirun --allow-run-as-root --oversubscribe`; with
    /// `--mpich`, `mpiexec.mpich` (Debian's name of MPICH's launcher).
    #[arg(long, value_name = "CMD")]
    mpirun: Option<String>,
    /// Tune MPICH instead of Open MPI: candidates from MPICH's algorithms, MPICH's own table as
    /// the default, each forced through a selection JSON file with
    /// `MPIR_CVAR_DEVICE_COLLECTIVES=none`, and `-o` written as MPICH's selection JSON (use it
    /// with `MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=<file> MPIR_CVAR_DEVICE_COLLECTIVES=none`).
    /// The worker must be linked against MPICH (`--worker`).
    #[arg(long)]
    mpich: bool,
    /// With `--mpich`: the MPICH release series (4.0, 4.1, 4.2; default what `mpichversion`
    /// reports).
    #[arg(long, value_name = "VERSION", requires = "mpich")]
    mpich_version: Option<String>,
    /// The commcost binary the launcher runs to time the calls (default: this one). With
    /// `--mpich`, one built against MPICH: `MPICC=mpicc.mpich cargo install --path cli
    /// --features mpi --root DIR`.
    #[arg(long, value_name = "EXE")]
    worker: Option<PathBuf>,
    /// Candidates: the algorithms predicted within this fraction of the cheapest (the model's
    /// measured error).
    #[arg(long, default_value_t = 0.25)]
    margin: f64,
    /// One run's limit in seconds (a hung algorithm is killed and never chosen).
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    run_timeout: u64,
    /// Rank the candidates by their closed forms only (default: by simulating each schedule on
    /// the model file's platform and the flags below wherever a closed form is not exact).
    #[arg(long)]
    closed_form: bool,
    /// Nodes of several ranks (or the model file's `nodes` section): the candidates are ranked
    /// by simulation on the two-level platform, the model being the one inside a node.
    #[command(flatten)]
    nodes: crate::nodes::NodesArgs,
    /// The platform the candidates are simulated on, on top of the model file's: Open MPI's TCP
    /// rendezvous, shared cores, shaped links.
    #[command(flatten)]
    platform: crate::simulate::PlatformArgs,
    /// Messages larger than this many bytes use the rendezvous protocol (default: the model
    /// file's platform, else the model's own threshold, else all eager).
    #[arg(long, value_parser = units::parse_bytes, value_name = "BYTES", conflicts_with = "closed_form")]
    rendezvous_above: Option<u64>,
    /// Every measurement as CSV (default: the rules file with `.csv` appended).
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// The rules file to write.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
}

fn parse_collectives(text: Option<&str>) -> Result<Vec<Collective>, Failure> {
    let Some(text) = text else {
        return Ok(TUNED
            .into_iter()
            .filter(|c| *c != Collective::Barrier)
            .collect());
    };
    let mut out = Vec::new();
    for name in text.split(',') {
        let shown: String = name.trim().chars().take(40).collect();
        let names = || TUNED.map(|c| c.name()).join(", ");
        let c: Collective = name.trim().parse().map_err(|_| {
            Failure(format!(
                "--collectives: unknown `{shown}` (one of {})",
                names()
            ))
        })?;
        if !TUNED.contains(&c) {
            return fail(format!(
                "--collectives: `{shown}` is not tuned (one of {})",
                names()
            ));
        }
        if out.contains(&c) {
            return fail(format!("--collectives: `{shown}` given twice"));
        }
        out.push(c);
    }
    Ok(out)
}

/// Times runs with `mpirun` of the worker.
struct MpirunRunner {
    launcher: Launcher,
    exe: PathBuf,
    scratch: Scratch,
    timeout: Duration,
    library: Library,
}

impl MpirunRunner {
    /// Open MPI: `--mca` forcing the run's algorithm; MPICH: a selection JSON file running it
    /// (MPICH's own table for the default) named in the environment.
    fn force(&self, command: &mut Command, run: &Run) -> Result<(), String> {
        let c = run.collective.name();
        match self.library {
            Library::OpenMpi => {
                if self.launcher.adds_default_btl() {
                    command.args(["--mca", "btl", "self,vader"]);
                }
                if let Some(f) = &run.algorithm {
                    command
                        .args(["--mca", "coll_tuned_use_dynamic_rules", "1"])
                        .args([
                            "--mca",
                            &format!("coll_tuned_{c}_algorithm"),
                            &f.id.to_string(),
                        ])
                        .args([
                            "--mca",
                            &format!("coll_tuned_{c}_algorithm_segmentsize"),
                            &f.segment.to_string(),
                        ]);
                    if f.faninout > 0 {
                        command.args([
                            "--mca",
                            &format!("coll_tuned_{c}_algorithm_chain_fanout"),
                            &f.faninout.to_string(),
                        ]);
                    }
                }
            }
            Library::Mpich(version) => {
                let function = run.algorithm.as_ref().and_then(|f| f.mpich.clone());
                let forcing = MpichDecision {
                    collective: run.collective,
                    processes: run.processes,
                    size: 0,
                    function,
                };
                let json = if forcing.function.is_some() {
                    mpich_json_decided(version, &[forcing]).map_err(|e| e.to_string())?
                } else {
                    version.default_table().to_string()
                };
                let path = self.scratch.0.join("force.json");
                std::fs::write(&path, json).map_err(|e| format!("{}: {e}", path.display()))?;
                command
                    .env("MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", &path)
                    .env("MPIR_CVAR_DEVICE_COLLECTIVES", "none");
            }
        }
        Ok(())
    }
}

impl Runner for MpirunRunner {
    fn time(&mut self, run: &Run) -> Result<Vec<f64>, String> {
        let csv = self.scratch.0.join("run.csv");
        let log = self.scratch.0.join("run.log");
        std::fs::write(&csv, format!("{HEADER}\n")).map_err(|e| e.to_string())?;
        let mut command = Command::new(&self.launcher.words[0]);
        command.args(&self.launcher.words[1..]);
        self.force(&mut command, run)?;
        command.args(["-np", &run.processes.to_string()]);
        let c = run.collective.name();
        let id = match &run.algorithm {
            Some(f) if self.library == Library::OpenMpi => f.id.to_string(),
            _ => "default".into(),
        };
        // barrier is timed once whatever the size (the worker wants one valid size)
        let sizes: Vec<String> = run.bytes.iter().map(|&b| b.max(8).to_string()).collect();
        command
            .arg(&self.exe)
            .args(["calibrate", "collectives-worker", "--collective", c])
            .args(["--algorithm", &id, "--sizes", &sizes.join(",")])
            .args(["--warmup", "2", "--samples", "7", "--target-us", "300"])
            .arg("-o")
            .arg(&csv);
        let outcome = run_bounded(command, self.timeout, &log).map_err(|e| e.0)?;
        let text = std::fs::read_to_string(&csv).map_err(|e| e.to_string())?;
        // rank_mean_s (each rank's own time per call averaged over the ranks, as OSU's average
        // latency) by the row's size (the rules-file convention the worker writes)
        let column = |name: &str| HEADER.split(',').position(|c| c == name);
        let (Some(at_procs), Some(at_bytes), Some(at_time)) =
            (column("procs"), column("bytes"), column("rank_mean_s"))
        else {
            return Err("the worker's CSV has no procs, bytes or rank_mean_s column".into());
        };
        let mut times = vec![f64::NAN; run.sizes.len()];
        for row in complete_rows(&text) {
            let f: Vec<&str> = row.split(',').collect();
            let (Some(Ok(procs)), Some(Ok(bytes)), Some(Ok(t))) = (
                f.get(at_procs).map(|x| x.parse::<u64>()),
                f.get(at_bytes).map(|x| x.parse::<u64>()),
                f.get(at_time).map(|x| x.parse::<f64>()),
            ) else {
                continue;
            };
            if procs != run.processes {
                return Err(format!(
                    "the worker ran on {procs} process(es), not {}: is {} linked against the \
                     launcher's MPI library?{}",
                    run.processes,
                    self.exe.display(),
                    if matches!(self.library, Library::Mpich(_)) {
                        " (--mpich needs --worker built against MPICH)"
                    } else {
                        ""
                    }
                ));
            }
            let k = run
                .bytes
                .iter()
                .position(|&b| run.collective.ompi_rules_size(b, run.processes) == bytes);
            if let Some(k) = k {
                times[k] = t;
            }
        }
        match outcome {
            Outcome::Done => Ok(times),
            Outcome::Failed(why) => Err(why),
            Outcome::Killed(after) => Err(format!("killed after {:.1} s", after.as_secs_f64())),
        }
    }
}

/// `commcost tune`.
pub fn run(args: TuneArgs) -> Result<(), Failure> {
    if !(1..=86_400).contains(&args.budget) {
        return fail("--budget: 1 ..= 86400 seconds");
    }
    if !(1..=3600).contains(&args.run_timeout) {
        return fail("--run-timeout: 1 ..= 3600 seconds");
    }
    let library = if args.mpich {
        Library::Mpich(crate::export::mpich_version(args.mpich_version.as_deref())?)
    } else {
        Library::OpenMpi
    };
    let mpirun = args.mpirun.clone().unwrap_or_else(|| {
        if args.mpich {
            "mpiexec.mpich".into()
        } else {
            "mpirun --allow-run-as-root --oversubscribe".into()
        }
    });
    let launcher = parse_launcher(&mpirun)?;
    if launcher.procs.is_some() {
        return fail("--mpirun: leave out -np; tune adds `-np P` for every --procs value");
    }
    let collectives = parse_collectives(args.collectives.as_deref())?;
    if let Some(bad) = args
        .sizes
        .0
        .iter()
        .find(|&&s| s == 0 || s % 8 != 0 || s > 1 << 24)
    {
        return fail(format!(
            "--sizes: {bad} bytes is not a multiple of 8 in 8 ..= 16777216 (f64 elements)"
        ));
    }
    let loaded = model::load(&args.source)?;
    if args.closed_form && args.platform.given() {
        return fail("--closed-form: the platform flags apply to the simulation it turns off");
    }
    let layout = args.nodes.layout(&loaded)?;
    if args.closed_form && layout.is_some() {
        return fail("--closed-form: on nodes every candidate is simulated");
    }
    let simulation = (!args.closed_form).then(|| {
        let o = args.platform.apply(
            &loaded.platform,
            args.rendezvous_above,
            SimOptions::default().with_protocols_of(&loaded.spec),
        );
        // the inter-node file's shaped link, unless the flags gave one; --finish
        match &layout {
            Some(l) => l.options(o),
            None => o,
        }
    });
    let nodes = layout.map(|l| TuneNodes {
        inter_rendezvous_above: l.inter_rendezvous_above(),
        layout: l.layout,
        inter: std::sync::Arc::new(l.inter.spec),
    });
    let config = TuneConfig {
        margin: args.margin,
        operator: loaded.operator,
        local: loaded.local,
        simulation,
        library,
        nodes,
        ..TuneConfig::new(collectives, args.procs.0.clone(), args.sizes.0.clone())
    };
    let plan = plan_tuning(&loaded.spec, &config).map_err(|e| match e {
        TuneError::Config { field, detail } => {
            let option = match field {
                "processes" => "procs",
                "nodes" => "ranks-per-node",
                other => other,
            };
            Failure(format!("--{option}: {detail}"))
        }
        other => Failure(other.to_string()),
    })?;
    if !cfg!(feature = "mpi") {
        return fail(
            "this commcost was built without MPI: `cargo install --path cli --features mpi` to tune",
        );
    }
    let csv_path = args.csv.clone().unwrap_or_else(|| {
        let mut p = args.output.clone().into_os_string();
        p.push(".csv");
        PathBuf::from(p)
    });
    let exe = match &args.worker {
        Some(w) if w.is_file() => w.clone(),
        Some(w) => return fail(format!("--worker: {} is not a file", w.display())),
        None => std::env::current_exe()
            .map_err(|e| Failure(format!("locating this commcost binary: {e}")))?,
    };
    let cells = plan.cells.len();
    let candidates: usize = plan.cells.iter().map(|c| c.candidates.len()).sum();
    let exhaustive: usize = plan.cells.iter().map(|c| c.priced + 1).sum();
    eprintln!(
        "tuning {cells} cells of model {}: {candidates} candidates and the default (an \
         exhaustive sweep: {exhaustive}); budget {} s",
        loaded.name, args.budget
    );
    let mut runner = MpirunRunner {
        launcher,
        exe,
        scratch: Scratch::new()?,
        timeout: Duration::from_secs(args.run_timeout),
        library,
    };
    let report = tune(
        plan,
        &mut runner,
        &config,
        Duration::from_secs(args.budget),
        &mut |line| eprintln!("{line}"),
    );
    if report.runs_made > 0 && report.measurements.iter().all(|m| m.seconds.is_none()) {
        let why = report
            .failures
            .first()
            .map_or_else(|| "no time measured".to_string(), |(_, _, w)| w.clone());
        return fail(format!(
            "--mpirun `{}` measured nothing: {why}",
            mpirun.chars().take(200).collect::<String>()
        ));
    }
    // a model of another platform: its prices of the default are far from what this one measures
    let mut fit: Vec<f64> = report
        .cells
        .iter()
        .zip(&report.plan.cells)
        .filter_map(|(r, c)| Some(r.default_median? / c.default_predicted))
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    fit.sort_by(f64::total_cmp);
    let fit = fit.get(fit.len() / 2).copied();
    if let Some(k) = fit
        && !(1.0 / 3.0..=3.0).contains(&k)
    {
        eprintln!(
            "warning: this machine measures the default at {k:.2} times the price of model              {} (median over the cells): the model describes another platform, so its candidates              may miss the fastest algorithm; calibrate on this one (commcost calibrate mpi)",
            loaded.name
        );
    }
    // switches between measured sizes where the model, corrected by the measurements, crosses
    let file = match library {
        Library::OpenMpi => report
            .rules_filled(&loaded.spec, &config)
            .map(|r| r.to_string()),
        Library::Mpich(_) => report.mpich_json(),
    }
    .map_err(|e| Failure(e.to_string()))?;
    model::write_whole(&csv_path, &report.csv())?;
    model::write_whole(&args.output, &file)?;

    outln!(
        "{:<10} {:>5} {:>9} {:>11}  {:<34} {:>9} {:>8} {:>5}  decision",
        "collective",
        "P",
        "size",
        "default",
        "candidate",
        "predicted",
        "measured",
        "runs"
    );
    let mut gains: Vec<(Collective, Vec<f64>)> = Vec::new();
    for (result, cell) in report.cells.iter().zip(&report.plan.cells) {
        // the algorithm switched to, else the measured-fastest candidate
        let (best, ratio) = match (&result.verdict, &result.best) {
            (
                Verdict::Switch {
                    algorithm,
                    median_ratio,
                    ..
                },
                _,
            ) => (Some(algorithm), *median_ratio),
            (_, Some((f, r))) => (Some(f), *r),
            (_, None) => (None, f64::NAN),
        };
        // the model's ratio of the same candidate to the default
        let predicted = best
            .and_then(|b| cell.candidates.iter().find(|(f, _)| f == b))
            .map_or(f64::NAN, |(_, t)| t / cell.default_predicted);
        let best = best.map_or_else(|| "-".to_string(), |b| b.name.clone());
        let shown = |r: f64| {
            if r.is_finite() {
                format!("{r:.3}")
            } else {
                "-".into()
            }
        };
        let decision = match &result.verdict {
            Verdict::Switch {
                algorithm, p_value, ..
            } => {
                format!("switch to {} (p = {p_value:.3})", algorithm.name)
            }
            Verdict::Default => "default".into(),
            Verdict::Undecided => "default (undecided)".into(),
        };
        let gain = match &result.verdict {
            Verdict::Switch { median_ratio, .. } => *median_ratio,
            _ => 1.0,
        };
        match gains.iter_mut().find(|(c, _)| *c == cell.collective) {
            Some((_, v)) => v.push(gain),
            None => gains.push((cell.collective, vec![gain])),
        }
        outln!(
            "{:<10} {:>5} {:>9} {:>11}  {:<34} {:>9} {:>8} {:>5}  {decision}",
            cell.collective.name(),
            cell.processes,
            human_bytes(cell.bytes),
            result.default_median.map_or("-".into(), human_time),
            best.chars().take(34).collect::<String>(),
            shown(predicted),
            shown(ratio),
            result.rounds
        );
    }
    for (c, v) in &gains {
        let geo = (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
        outln!(
            "{}: expected time with the rules / default, geometric mean over sizes {geo:.3}",
            c.name()
        );
    }
    // an exhaustive sweep of the same cells: every variant the model priced and the default,
    // one run per (collective, communicator size, variant), min_rounds rounds, at this tuning's
    // mean time per run
    let exhaustive_runs: usize = report
        .plan
        .runs
        .iter()
        .filter(|r| r.algorithm.is_none())
        .map(|r| {
            1 + report
                .plan
                .cells
                .iter()
                .filter(|c| (c.collective, c.processes) == (r.collective, r.processes))
                .map(|c| c.priced)
                .max()
                .unwrap_or(0)
        })
        .sum::<usize>()
        * config.min_rounds as usize;
    if report.runs_made > 0 {
        let per_run = report.elapsed.as_secs_f64() / report.runs_made as f64;
        outln!(
            "an exhaustive sweep of these cells ({exhaustive_runs} runs: every variant, {} rounds) \
             would take about {:.0} s at this tuning's {:.1} s per run",
            config.min_rounds,
            exhaustive_runs as f64 * per_run,
            per_run
        );
    }
    if let Some(k) = fit {
        outln!(
            "measured / predicted time of the default, median over the cells: {k:.2} (model {})",
            loaded.name
        );
    }
    outln!(
        "{} runs in {:.0} s{}; {} failed; wrote {} and {}",
        report.runs_made,
        report.elapsed.as_secs_f64(),
        if report.budget_spent {
            " (budget spent: undecided cells keep the default)"
        } else {
            ""
        },
        report.failures.len(),
        args.output.display(),
        csv_path.display()
    );
    Ok(())
}
