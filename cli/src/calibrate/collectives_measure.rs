//! Measuring Open MPI's `coll_tuned` algorithms on this machine (feature `mpi`): for each of
//! nine collectives and each algorithm Open MPI 4.1.4 accepts for it (forced with
//! `--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_<coll>_algorithm N --mca
//! coll_tuned_<coll>_algorithm_segmentsize 0`), plus Open MPI's default, one `mpirun` of this
//! binary's hidden `calibrate collectives-worker`, which times the sizes with
//! [`commcost::probe::mpi::time_collective`] and appends one CSV row per size (the format of
//! `tests/fixtures/collectives/ompi_runs.csv`).
//!
//! Bounded: each `mpirun` has a timeout (its process group is killed on overrun), the whole
//! sweep a budget (no run starts once it is spent; the rows measured are kept), and a progress
//! line per run goes to standard error.
//!
//! ```sh
//! cargo install --path cli --features mpi
//! commcost calibrate collectives-measure -o forced_runs.csv            # at most 2 minutes
//! commcost calibrate collectives-measure -o quick.csv --quick --only bcast,allreduce
//! ```

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use commcost::collectives::Collective;

use super::launcher::parse_launcher;
use crate::{Failure, fail};

/// The launcher prefix when none is given.
pub(crate) const DEFAULT_MPIRUN: &str = "mpirun --allow-run-as-root -np 2";

/// Columns of a row (`probe::mpi::CSV_HEADER`, which needs the `mpi` feature).
pub(crate) const HEADER: &str = "collective,ompi_coll_id,procs,algorithm_id,algorithm,segsize,bytes,count,elem_bytes,calls,min_s,median_s,reps,pipelined_s,rank_mean_s,rank_max_s";

/// The collectives measured, in order: those the probe times whose forced runs the crate
/// prices (every one of `probe::TIMED` but scan).
fn measured_collectives() -> Vec<Collective> {
    commcost::probe::TIMED
        .into_iter()
        .filter(|c| c.ompi_priced_as(1).is_some())
        .collect()
}

/// Per-rank sizes: small ones to fit per-call costs on, larger ones to check them on.
const SIZES: [u64; 6] = [8, 64, 512, 4 << 10, 32 << 10, 256 << 10];
const QUICK_SIZES: [u64; 4] = [8, 512, 4 << 10, 32 << 10];

/// What [`measure`] runs.
#[derive(Debug, Clone)]
pub(crate) struct MeasureOptions {
    /// The launcher prefix, split into words as a shell does for quotes (`'...'`, `"..."`):
    /// `mpirun`'s options and the
    /// number of processes; to `mpirun` itself, `--mca btl self,vader` is added unless it names
    /// `--mca btl`.
    pub mpirun: String,
    /// Fewer sizes and samples.
    pub quick: bool,
    /// The collectives to measure (CSV names); empty: all nine.
    pub only: Vec<Collective>,
    /// Per-rank sizes in bytes (multiples of 8, 8 B ..= 16 MiB); `None`: the defaults.
    pub sizes: Option<Vec<u64>>,
    /// The whole sweep's budget (at most 1 hour).
    pub budget: Duration,
    /// One `mpirun`'s limit (at most the budget).
    pub run_timeout: Duration,
}

impl Default for MeasureOptions {
    fn default() -> Self {
        Self {
            mpirun: DEFAULT_MPIRUN.into(),
            quick: false,
            only: Vec::new(),
            sizes: None,
            budget: Duration::from_secs(120),
            run_timeout: Duration::from_secs(20),
        }
    }
}

/// `collectives-measure`'s options.
#[derive(Debug, clap::Args)]
pub(crate) struct MeasureArgs {
    /// The launcher prefix (words split as a shell does, quotes kept together: `--mca
    /// plm_rsh_agent "ssh -x"`); `--mca btl self,vader` is added unless it sets `--mca btl`.
    #[arg(long, value_name = "CMD", default_value = DEFAULT_MPIRUN)]
    mpirun: String,
    /// Fewer sizes and samples (seconds instead of a minute or two).
    #[arg(long)]
    quick: bool,
    /// Only these collectives (comma-separated: bcast, allreduce, reduce, allgather, alltoall,
    /// barrier, reduce_scatter_block, gather, scatter).
    #[arg(long, value_name = "LIST")]
    only: Option<String>,
    /// Per-rank sizes (comma-separated, suffixes K, M; multiples of 8 bytes up to 16M).
    #[arg(long, value_name = "LIST")]
    sizes: Option<String>,
    /// The whole sweep's budget in seconds (1 ..= 3600).
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    budget: u64,
}

/// The hidden worker's options (one `mpirun` of it times one forced algorithm).
#[derive(Debug, clap::Args)]
pub(crate) struct WorkerArgs {
    /// The collective (CSV name).
    #[arg(long)]
    collective: String,
    /// Open MPI's algorithm id, or `default`: only labels the rows.
    #[arg(long, default_value = "default")]
    algorithm: String,
    /// Per-rank sizes in bytes, comma-separated.
    #[arg(long)]
    sizes: String,
    /// Synchronised calls per size.
    #[arg(long, default_value_t = 15)]
    samples: u32,
    /// Untimed calls per size.
    #[arg(long, default_value_t = 3)]
    warmup: u32,
    /// About how long one sample of back-to-back calls lasts, microseconds.
    #[arg(long, default_value_t = 1000)]
    target_us: u64,
}

/// `--sizes`: comma-separated sizes with suffixes, multiples of 8 in 8 B ..= 16 MiB, at most
/// 64 of them.
pub(crate) fn parse_sizes(text: &str) -> Result<Vec<u64>, Failure> {
    let sizes = text
        .split(',')
        .map(|s| crate::units::parse_bytes(s.trim()).map_err(|e| Failure(format!("--sizes: {e}"))))
        .collect::<Result<Vec<u64>, Failure>>()?;
    check_sizes(&sizes)?;
    Ok(sizes)
}

fn check_sizes(sizes: &[u64]) -> Result<(), Failure> {
    if sizes.is_empty() || sizes.len() > 64 {
        return fail("--sizes: give 1 to 64 sizes");
    }
    if let Some(bad) = sizes.iter().find(|&&s| s == 0 || s % 8 != 0 || s > 1 << 24) {
        return fail(format!(
            "--sizes: {bad} bytes is not a multiple of 8 in 8 ..= 16777216 (f64 elements per rank)"
        ));
    }
    Ok(())
}

/// `--only`: measured collectives, comma-separated.
fn parse_only(text: &str) -> Result<Vec<Collective>, Failure> {
    let measured = measured_collectives();
    let mut out = Vec::new();
    for name in text.split(',') {
        let known = || {
            let names: Vec<&str> = measured.iter().map(|c| c.name()).collect();
            names.join(", ")
        };
        let shown: String = name.trim().chars().take(40).collect();
        let c: Collective = name.parse().map_err(|_| {
            Failure(format!(
                "--only: unknown collective `{shown}` (one of {})",
                known()
            ))
        })?;
        if !measured.contains(&c) {
            return fail(format!(
                "--only: `{shown}` is not measured (one of {})",
                known()
            ));
        }
        if !out.contains(&c) {
            out.push(c);
        }
    }
    Ok(out)
}

/// One planned `mpirun`: the collective and the forced algorithm (`None`: Open MPI's default).
#[derive(Debug, Clone)]
struct Run {
    collective: Collective,
    algorithm: Option<(u32, &'static str)>,
}

fn plan_runs(only: &[Collective], procs: Option<u64>) -> Vec<Run> {
    let mut runs = Vec::new();
    for collective in measured_collectives()
        .into_iter()
        .filter(|c| only.is_empty() || only.contains(c))
    {
        for id in 1..=collective.ompi_max_algorithm_id() {
            let Some(name) = collective.ompi_algorithm_name(id) else {
                continue;
            };
            // two_proc algorithms fail on any other process count
            if name == "two_proc" && procs.is_some_and(|p| p != 2) {
                continue;
            }
            runs.push(Run {
                collective,
                algorithm: Some((id, name)),
            });
        }
        runs.push(Run {
            collective,
            algorithm: None,
        });
    }
    runs
}

/// A scratch directory for the runs' CSV and logs, removed when dropped.
pub(crate) struct Scratch(pub(crate) PathBuf);

impl Scratch {
    pub(crate) fn new() -> Result<Self, Failure> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "commcost-collectives-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| Failure(format!("creating {}: {e}", dir.display())))?;
        Ok(Self(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// How one `mpirun` ended.
pub(crate) enum Outcome {
    Done,
    Failed(String),
    Killed(Duration),
}

/// Kills `child` and every process of its group (mpirun and the ranks it started).
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The last non-empty line of a log file, at most 200 characters.
fn last_line(path: &Path) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let tail = &text[text.len().saturating_sub(4096)..];
    String::from_utf8_lossy(tail)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim().chars().take(200).collect())
        .unwrap_or_else(|| "no output".into())
}

/// Starts `command` in a process group of its own, waits at most `limit`, kills the group on
/// overrun.
pub(crate) fn run_bounded(
    mut command: Command,
    limit: Duration,
    log: &Path,
) -> Result<Outcome, Failure> {
    let log_file = std::fs::File::create(log)
        .map_err(|e| Failure(format!("creating {}: {e}", log.display())))?;
    let err_file = log_file
        .try_clone()
        .map_err(|e| Failure(format!("opening {}: {e}", log.display())))?;
    command
        .stdin(Stdio::null())
        .stdout(log_file)
        .stderr(err_file);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = command.spawn().map_err(|e| {
        let program = command.get_program().to_string_lossy().into_owned();
        Failure(format!(
            "--mpirun: cannot start `{program}`: {e} (is MPI installed? give the launcher with --mpirun)"
        ))
    })?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(Outcome::Done),
            Ok(Some(status)) => {
                return Ok(Outcome::Failed(format!("{status}: {}", last_line(log))));
            }
            Ok(None) => {}
            Err(e) => {
                kill_group(&mut child);
                return Ok(Outcome::Failed(format!("waiting for mpirun: {e}")));
            }
        }
        if start.elapsed() >= limit {
            kill_group(&mut child);
            return Ok(Outcome::Killed(start.elapsed()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Complete rows of the runs' CSV: lines ending in a line break with the header's fields,
/// the header itself left out.
pub(crate) fn complete_rows(text: &str) -> Vec<&str> {
    let complete = match text.rfind('\n') {
        Some(end) => &text[..end],
        None => "",
    };
    complete
        .lines()
        .filter(|l| *l != HEADER && l.split(',').count() == HEADER.split(',').count())
        .collect()
}

/// Runs the sweep and returns the CSV text (header and one row per collective, algorithm and
/// size). Progress goes to standard error, a line per run.
///
/// # Errors
///
/// Bad options (naming `--mpirun`, `--sizes`, `--only`), a launcher that cannot be started,
/// a first run that fails (the launcher cannot run the worker), no row measured at all.
pub(crate) fn measure(opts: &MeasureOptions) -> Result<String, Failure> {
    if !cfg!(feature = "mpi") {
        return fail(
            "this commcost was built without MPI: `cargo install --path cli --features mpi` to \
             measure collectives",
        );
    }
    let launcher = parse_launcher(&opts.mpirun)?;
    let only = &opts.only;
    let sizes = match &opts.sizes {
        Some(s) => {
            check_sizes(s)?;
            s.clone()
        }
        None if opts.quick => QUICK_SIZES.to_vec(),
        None => SIZES.to_vec(),
    };
    if opts.budget.is_zero() || opts.budget > Duration::from_secs(3600) {
        return fail("--budget: 1 ..= 3600 seconds");
    }
    let run_timeout = opts
        .run_timeout
        .min(opts.budget)
        .max(Duration::from_secs(1));
    // per size: warm-up calls, synchronised timed calls, back-to-back sample length (µs)
    let (warmup, samples, target_us) = if opts.quick {
        (2, 5, 300)
    } else {
        (5, 25, 2000)
    };
    let exe = std::env::current_exe()
        .map_err(|e| Failure(format!("locating this commcost binary: {e}")))?;
    let scratch = Scratch::new()?;
    let csv = scratch.0.join("runs.csv");
    std::fs::write(&csv, format!("{HEADER}\n"))
        .map_err(|e| Failure(format!("writing {}: {e}", csv.display())))?;
    let log = scratch.0.join("run.log");
    let sizes_arg = sizes
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",");

    let runs = plan_runs(only, launcher.procs);
    let total = runs.len();
    let start = Instant::now();
    let mut rows_before = 0usize;
    let mut not_started = 0usize;
    let mut failures = 0usize;
    for (i, run) in runs.iter().enumerate() {
        let left = opts.budget.saturating_sub(start.elapsed());
        if left < Duration::from_millis(500) {
            not_started = total - i;
            break;
        }
        let mut command = Command::new(&launcher.words[0]);
        command.args(&launcher.words[1..]);
        if launcher.adds_default_btl() {
            command.args(["--mca", "btl", "self,vader"]);
        }
        if let Some((id, _)) = run.algorithm {
            let c = run.collective.name();
            command
                .args(["--mca", "coll_tuned_use_dynamic_rules", "1"])
                .args([
                    "--mca",
                    &format!("coll_tuned_{c}_algorithm"),
                    &id.to_string(),
                ])
                .args([
                    "--mca",
                    &format!("coll_tuned_{c}_algorithm_segmentsize"),
                    "0",
                ]);
        }
        command
            .arg(&exe)
            .args([
                "calibrate",
                "collectives-worker",
                "--collective",
                run.collective.name(),
            ])
            .args([
                "--algorithm",
                &run.algorithm
                    .map_or("default".into(), |(id, _)| id.to_string()),
            ])
            .args(["--sizes", &sizes_arg])
            .args(["--warmup", &warmup.to_string()])
            .args(["--samples", &samples.to_string()])
            .args(["--target-us", &target_us.to_string()])
            .arg("-o")
            .arg(&csv);
        let run_start = Instant::now();
        let outcome = run_bounded(command, run_timeout.min(left), &log)?;
        let text = std::fs::read_to_string(&csv).unwrap_or_default();
        let rows = complete_rows(&text).len();
        let label = match run.algorithm {
            Some((id, name)) => format!("{} {id} ({name})", run.collective),
            None => format!("{} default", run.collective),
        };
        let how = match &outcome {
            Outcome::Done => "done".to_string(),
            Outcome::Failed(why) => format!("FAILED ({why})"),
            Outcome::Killed(after) => format!("KILLED after {:.1} s", after.as_secs_f64()),
        };
        eprintln!(
            "[{:>2}/{total}] {label:<40} {} rows in {:.2} s, {how}; {:.0} of {} s spent",
            i + 1,
            rows.saturating_sub(rows_before),
            run_start.elapsed().as_secs_f64(),
            start.elapsed().as_secs_f64(),
            opts.budget.as_secs()
        );
        if !matches!(outcome, Outcome::Done) {
            failures += 1;
            if i == 0 && rows == 0 {
                let why = match outcome {
                    Outcome::Failed(why) => why,
                    _ => format!("no row within {} s", run_timeout.as_secs()),
                };
                return fail(format!(
                    "--mpirun `{}` could not run the measurement: {why}",
                    launcher.words.join(" ")
                ));
            }
        }
        rows_before = rows;
    }
    let text = std::fs::read_to_string(&csv)
        .map_err(|e| Failure(format!("reading {}: {e}", csv.display())))?;
    let rows = complete_rows(&text);
    if rows.is_empty() {
        return fail(format!(
            "--mpirun `{}`: no run measured anything",
            launcher.words.join(" ")
        ));
    }
    if not_started > 0 {
        eprintln!(
            "budget of {} s spent: {not_started} of {total} runs not started; the {} rows measured are kept",
            opts.budget.as_secs(),
            rows.len()
        );
    }
    if failures > 0 {
        eprintln!("{failures} of {total} runs failed or were killed (see the lines above)");
    }
    let mut out = String::with_capacity(text.len());
    out.push_str(HEADER);
    out.push('\n');
    for r in rows {
        out.push_str(r);
        out.push('\n');
    }
    Ok(out)
}

/// `commcost calibrate collectives-measure -o FILE.csv`: [`measure`], then the CSV written.
pub(crate) fn measure_command(output: Option<PathBuf>, args: MeasureArgs) -> Result<(), Failure> {
    let Some(path) = output else {
        return fail("give the CSV file to write with -o FILE.csv");
    };
    let opts = MeasureOptions {
        mpirun: args.mpirun,
        quick: args.quick,
        only: match &args.only {
            Some(list) => parse_only(list)?,
            None => Vec::new(),
        },
        sizes: args.sizes.as_deref().map(parse_sizes).transpose()?,
        budget: Duration::from_secs(args.budget),
        ..MeasureOptions::default()
    };
    if !(1..=3600).contains(&args.budget) {
        return fail("--budget: 1 ..= 3600 seconds");
    }
    let start = Instant::now();
    let text = measure(&opts)?;
    std::fs::write(&path, &text)
        .map_err(|e| Failure(format!("writing {}: {e}", path.display())))?;
    outln!(
        "wrote {} ({} rows) in {:.1} s",
        path.display(),
        text.lines().count().saturating_sub(1),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

#[cfg(not(feature = "mpi"))]
pub(crate) fn worker(_: Option<PathBuf>, _: WorkerArgs) -> Result<(), Failure> {
    fail("this commcost was built without MPI: `cargo install --path cli --features mpi`")
}

/// The worker: inside an MPI job, times one collective at the sizes and appends (rank 0) one
/// row per size to the output file as soon as it is measured, so that a run killed on its
/// timeout keeps the sizes it finished.
#[cfg(feature = "mpi")]
pub(crate) fn worker(output: Option<PathBuf>, args: WorkerArgs) -> Result<(), Failure> {
    use std::io::Write;

    use commcost::probe::Budget;
    use commcost::probe::mpi::{CollectivePlan, time_collective};
    use mpi::traits::Communicator;

    let Some(path) = output else {
        return fail("give the CSV file to append to with -o FILE");
    };
    let collective: Collective = args
        .collective
        .parse()
        .map_err(|e| Failure(format!("--collective: {e}")))?;
    let (id, name) = if args.algorithm == "default" {
        ("default".to_string(), "default")
    } else {
        let id: u32 = args
            .algorithm
            .parse()
            .map_err(|_| Failure(format!("--algorithm: `{}` is not an id", args.algorithm)))?;
        let Some(name) = collective.ompi_algorithm_name(id) else {
            return fail(format!(
                "--algorithm: {id} is not an Open MPI 4.1.4 algorithm of {collective}"
            ));
        };
        (id.to_string(), name)
    };
    let sizes = parse_sizes(&args.sizes)?;
    if !(1..=100_000).contains(&args.target_us) {
        return fail("--target-us: 1 ..= 100000");
    }
    let plan = CollectivePlan {
        sizes: sizes.clone(),
        warmup: args.warmup,
        samples: args.samples,
        pipelined_target: Duration::from_micros(args.target_us),
        max_reps: 1000,
    };
    plan.validate()?;
    let Some(universe) = mpi::initialize() else {
        return fail("MPI could not be initialised");
    };
    let world = universe.world();
    let budget = Budget::new(Duration::from_secs(600), 1 << 30);
    let per_size: Vec<Vec<u64>> = if collective == Collective::Barrier {
        vec![vec![8]]
    } else {
        sizes.iter().map(|&s| vec![s]).collect()
    };
    for one in per_size {
        let plan = CollectivePlan {
            sizes: one,
            ..plan.clone()
        };
        let mut quiet = |_: &str, _: usize, _: usize| {};
        let timings = time_collective(&world, collective, &plan, &budget, &mut quiet)?;
        if world.rank() == 0 {
            let mut text = String::new();
            for t in &timings {
                text.push_str(&t.csv_row(&id, name, 0));
                text.push('\n');
            }
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| Failure(format!("opening {}: {e}", path.display())))?;
            f.write_all(text.as_bytes())
                .map_err(|e| Failure(format!("writing {}: {e}", path.display())))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Open MPI 4.1.4's names (`ompi_info --param coll tuned --level 9`), as
    /// `scripts/ompi_collectives_sweep.sh` lists them.
    #[test]
    fn algorithm_names_are_open_mpis() {
        let name = |c: &str, id| c.parse::<Collective>().unwrap().ompi_algorithm_name(id);
        assert_eq!(name("bcast", 6), Some("binomial"));
        assert_eq!(name("reduce", 6), Some("in-order_binary"));
        assert_eq!(name("allgather", 6), Some("two_proc"));
        assert_eq!(name("reduce_scatter_block", 4), Some("butterfly"));
        assert_eq!(name("gather", 4), None);
        // 9 + 6 + 7 + 6 + 5 + 6 + 4 + 3 + 3 forced runs, and 9 defaults
        assert_eq!(plan_runs(&[], Some(2)).len(), 49 + 9);
        // no two_proc run at 4 processes (allgather, alltoall, barrier)
        assert_eq!(plan_runs(&[], Some(4)).len(), 46 + 9);
    }

    #[test]
    fn bad_options_name_the_option() {
        assert!(parse_sizes("8,12").unwrap_err().0.starts_with("--sizes"));
        assert!(parse_sizes("8,x").unwrap_err().0.starts_with("--sizes"));
        assert!(parse_sizes("32M").unwrap_err().0.starts_with("--sizes"));
        assert_eq!(parse_sizes("8,4K").unwrap(), vec![8, 4096]);
        assert!(
            parse_only("bcast,scan")
                .unwrap_err()
                .0
                .starts_with("--only")
        );
        assert!(
            parse_launcher("  ")
                .err()
                .unwrap()
                .0
                .starts_with("--mpirun")
        );
        let l = parse_launcher("mpirun --mca btl tcp,self -np 4").unwrap();
        assert!(l.sets_btl);
        assert_eq!(l.procs, Some(4));
    }

    /// The worker writes the library's rows; the sweep reads them under its own copy of the
    /// header.
    #[cfg(feature = "mpi")]
    #[test]
    fn header_is_the_librarys() {
        assert_eq!(HEADER, commcost::probe::mpi::CSV_HEADER);
    }

    #[test]
    fn partial_rows_are_dropped() {
        // a complete row, one of the older 14 fields, and a row cut short by a killed run
        let text = format!(
            "{HEADER}\nbcast,7,2,1,a,0,8,1,8,5,1e-6,1e-6,10,1e-6,2e-6,3e-6\n\
             bcast,7,2,1,a,0,8,1,8,5,1e-6,1e-6,10,1e-6\nbcast,7,2,1,a"
        );
        assert_eq!(complete_rows(&text).len(), 1);
    }
}
