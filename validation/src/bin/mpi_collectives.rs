//! Time MPI collectives over a range of message sizes: the measurement side of comparing the
//! collectives' predicted costs with real runs. The timing itself is the library's
//! (`commcost::probe::mpi::time_collective`, `time_reduce_local`); this harness parses its
//! options and appends the rows.
//!
//! ```sh
//! cargo build --release -p commcost-validation --features mpi --bin mpi_collectives
//! mpirun -np 4 --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_bcast_algorithm 6 \
//!   target/release/mpi_collectives --collective bcast --algorithm 6 --name binomial \
//!   --output runs.csv
//! ```
//!
//! `--algorithm`, `--name` and `--segsize` only label the rows: the algorithm is forced (or not)
//! by mpirun's `--mca coll_tuned_*` options. (`scripts/ompi_collectives_sweep.sh` runs it for every forced Open MPI algorithm and for
//! Open MPI's default.) For each collective and size: `--warmup` calls, then `--samples`
//! synchronised calls, each `barrier; start; collective; end` on every rank, timed from the last
//! rank's start to the last rank's end on the system clock all ranks of one machine share
//! (`min_s`, `median_s` over the calls: the latency of one collective started together, what
//! the models predict); then back-to-back calls (`reps` agreed by all ranks, enough for about
//! `--target-us`, at most 1000; best of 3 samples of the slowest rank's mean, `pipelined_s`:
//! successive calls may overlap, as in OSU- and IMB-style loops). Rank 0 appends one CSV row per
//! (collective, size).
//!
//! Elements are `f64` (reductions: `MPI_SUM`). Sizes (`--sizes`, per-rank bytes, multiples of
//! 8) are the bytes one rank contributes or receives per peer: the whole buffer for bcast,
//! reduce and allreduce, one block for allgather, alltoall, gather, scatter and
//! reduce_scatter_block. The CSV gives both that per-rank `count` (elements) and `bytes` in Open
//! MPI's rules-file lookup convention: `8 × count` for bcast, reduce, allreduce;
//! `8 × count × P` for allgather, alltoall, gather, scatter and reduce_scatter_block; 0 for
//! barrier. rsmpi wraps `MPI_Reduce_scatter_block`, not `MPI_Reduce_scatter`: in Open MPI's
//! tuned component that is its own collective (`coll_tuned_reduce_scatter_block_algorithm`:
//! 1 basic linear, 2 recursive doubling, 3 recursive halving, 4 butterfly).
//!
//! `--reduce-local FILE` instead times the reduction operator alone, on rank 0, no
//! communication: `MPI_Reduce_local` with `MPI_SUM` on `f64` buffers of each `--sizes` size
//! (`--warmup` calls, then `--samples` timed calls, each on fresh data so the operator reads
//! both operands from memory as a collective's receive-and-reduce does), and writes
//! `bytes,calls,min_s,median_s` (seconds per call). That is the local cost a reduction
//! collective adds per reduced block; `validation/src/bin/collective_regret` fits
//! `Operator::new(per_call, per_byte)` to it by least squares.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use commcost::probe::Budget;
use commcost::probe::mpi::{CSV_HEADER, CollectivePlan, time_collective, time_reduce_local};

struct Options {
    collectives: Vec<commcost::collectives::Collective>,
    plan: CollectivePlan,
    algorithm: String,
    name: String,
    segsize: u64,
    output: PathBuf,
    reduce_local: Option<PathBuf>,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        collectives: commcost::probe::TIMED.to_vec(),
        plan: CollectivePlan::standard((0..9).map(|k| 8u64 << (2 * k)).chain([1 << 20]).collect()),
        algorithm: "default".into(),
        name: "default".into(),
        segsize: 0,
        output: PathBuf::from("target/mpi_collectives.csv"),
        reduce_local: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--collective" => {
                let v = value()?;
                if v != "all" {
                    o.collectives = v
                        .split(',')
                        .map(|c| c.parse().map_err(|e| format!("--collective: {e}")))
                        .collect::<Result<_, _>>()?;
                }
            }
            "--sizes" => {
                o.plan.sizes = value()?
                    .split(',')
                    .map(|s| s.parse::<u64>().map_err(|e| format!("--sizes {s}: {e}")))
                    .collect::<Result<_, _>>()?
            }
            "--algorithm" => o.algorithm = value()?,
            "--name" => o.name = value()?,
            "--segsize" => o.segsize = value()?.parse().map_err(|e| format!("--segsize: {e}"))?,
            "--samples" => {
                o.plan.samples = value()?.parse().map_err(|e| format!("--samples: {e}"))?
            }
            "--warmup" => o.plan.warmup = value()?.parse().map_err(|e| format!("--warmup: {e}"))?,
            "--target-us" => {
                let us: f64 = value()?.parse().map_err(|e| format!("--target-us: {e}"))?;
                if !(us > 0.0 && us <= 1e6) {
                    return Err("--target-us in (0, 1e6]".into());
                }
                o.plan.pipelined_target = Duration::from_secs_f64(us * 1e-6);
            }
            "--output" => o.output = value()?.into(),
            "--reduce-local" => o.reduce_local = Some(value()?.into()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    o.plan.validate().map_err(|e| e.to_string())?;
    if o.algorithm.contains(',') || o.name.contains(',') {
        return Err("--algorithm and --name must not contain commas (CSV)".into());
    }
    Ok(o)
}

fn write_text(path: &PathBuf, text: &str, append_to_csv: bool) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    if !append_to_csv {
        return std::fs::write(path, text);
    }
    let fresh = !path.exists();
    let mut f = OpenOptions::new().create(true).append(true).open(path)?;
    if fresh {
        writeln!(f, "{CSV_HEADER}")?;
    }
    f.write_all(text.as_bytes())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o = parse()?;
    let universe = mpi::initialize().ok_or("MPI could not be initialised")?;
    let world = universe.world();
    use mpi::traits::Communicator;
    let budget = Budget::new(Duration::from_secs(3600), 4 << 30);
    if let Some(path) = &o.reduce_local {
        if world.rank() == 0 {
            let mut text = String::from("bytes,calls,min_s,median_s\n");
            for t in time_reduce_local(&o.plan, &budget)? {
                text.push_str(&format!(
                    "{},{},{:.9e},{:.9e}\n",
                    t.bytes, t.calls, t.min_s, t.median_s
                ));
            }
            write_text(path, &text, false)?;
            print!("{text}");
        }
        return Ok(());
    }
    let mut rows = String::new();
    for &collective in &o.collectives {
        let mut quiet = |_: &str, _: usize, _: usize| {};
        for t in time_collective(&world, collective, &o.plan, &budget, &mut quiet)? {
            rows.push_str(&t.csv_row(&o.algorithm, &o.name, o.segsize));
            rows.push('\n');
        }
    }
    if world.rank() == 0 {
        write_text(&o.output, &rows, true)?;
        print!("{rows}");
    }
    Ok(())
}
