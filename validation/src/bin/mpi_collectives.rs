//! Time MPI collectives over a range of message sizes: the measurement side of comparing the
//! collectives' predicted costs with real runs.
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
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// The collectives this harness times, by the name the CSV uses.
const COLLECTIVES: [&str; 9] = [
    "bcast",
    "allreduce",
    "reduce",
    "allgather",
    "alltoall",
    "barrier",
    "reduce_scatter_block",
    "gather",
    "scatter",
];

/// Open MPI's tuned component's collective id (the rules-file numbering).
fn ompi_id(collective: &str) -> u32 {
    match collective {
        "allgather" => 0,
        "allreduce" => 2,
        "alltoall" => 3,
        "barrier" => 6,
        "bcast" => 7,
        "gather" => 9,
        "reduce" => 11,
        "reduce_scatter_block" => 13,
        "scatter" => 15,
        _ => u32::MAX,
    }
}

/// Whether Open MPI looks a collective up by the total over all ranks (`count × P`).
fn total_convention(collective: &str) -> bool {
    matches!(
        collective,
        "allgather" | "alltoall" | "gather" | "scatter" | "reduce_scatter_block"
    )
}

struct Buffers {
    send: Vec<f64>,
    recv: Vec<f64>,
}

/// One call of `collective` with per-rank element count `count`.
fn call(world: &SimpleCommunicator, collective: &str, count: usize, b: &mut Buffers) {
    let root = world.process_at_rank(0);
    let me = world.rank();
    let p = world.size() as usize;
    match collective {
        "bcast" => root.broadcast_into(&mut b.send[..count]),
        "allreduce" => world.all_reduce_into(
            &b.send[..count],
            &mut b.recv[..count],
            SystemOperation::sum(),
        ),
        "reduce" => {
            if me == 0 {
                root.reduce_into_root(
                    &b.send[..count],
                    &mut b.recv[..count],
                    SystemOperation::sum(),
                )
            } else {
                root.reduce_into(&b.send[..count], SystemOperation::sum())
            }
        }
        "allgather" => world.all_gather_into(&b.send[..count], &mut b.recv[..count * p]),
        "alltoall" => world.all_to_all_into(&b.send[..count * p], &mut b.recv[..count * p]),
        "barrier" => world.barrier(),
        "reduce_scatter_block" => world.reduce_scatter_block_into(
            &b.send[..count * p],
            &mut b.recv[..count],
            SystemOperation::sum(),
        ),
        "gather" => {
            if me == 0 {
                root.gather_into_root(&b.send[..count], &mut b.recv[..count * p])
            } else {
                root.gather_into(&b.send[..count])
            }
        }
        "scatter" => {
            if me == 0 {
                root.scatter_into_root(&b.send[..count * p], &mut b.recv[..count])
            } else {
                root.scatter_into(&mut b.recv[..count])
            }
        }
        _ => {}
    }
}

/// The slowest rank's value.
fn slowest(world: &SimpleCommunicator, local: f64) -> f64 {
    let mut global = 0.0f64;
    world.all_reduce_into(&local, &mut global, SystemOperation::max());
    global
}

/// The slowest rank's value, element by element.
fn slowest_each(world: &SimpleCommunicator, local: &[f64]) -> Vec<f64> {
    let mut global = vec![0.0f64; local.len()];
    world.all_reduce_into(local, &mut global[..], SystemOperation::max());
    global
}

/// Seconds since an origin all ranks share: the ranks of one machine read the same system
/// clock, and rank 0's reading at start-up (broadcast) is the origin, so that an `f64` keeps
/// nanosecond resolution.
struct SharedClock {
    origin_ns: u64,
}

impl SharedClock {
    fn new(world: &SimpleCommunicator) -> Self {
        let mut origin_ns = Self::system_ns();
        world.process_at_rank(0).broadcast_into(&mut origin_ns);
        SharedClock { origin_ns }
    }
    fn system_ns() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }
    fn now(&self) -> f64 {
        let now = Self::system_ns();
        if now >= self.origin_ns {
            (now - self.origin_ns) as f64 * 1e-9
        } else {
            -((self.origin_ns - now) as f64 * 1e-9)
        }
    }
}

/// Seconds per call over `reps` back-to-back calls, slowest rank.
fn sample(
    world: &SimpleCommunicator,
    collective: &str,
    count: usize,
    reps: u32,
    b: &mut Buffers,
) -> f64 {
    world.barrier();
    let t0 = Instant::now();
    for _ in 0..reps {
        call(world, collective, count, b);
    }
    let local = t0.elapsed().as_secs_f64() / f64::from(reps);
    slowest(world, local)
}

struct Options {
    collectives: Vec<String>,
    sizes: Vec<u64>,
    algorithm: String,
    name: String,
    segsize: u64,
    samples: usize,
    warmup: u32,
    target_us: f64,
    output: PathBuf,
    reduce_local: Option<PathBuf>,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        collectives: COLLECTIVES.iter().map(|s| s.to_string()).collect(),
        sizes: (0..9).map(|k| 8u64 << (2 * k)).chain([1 << 20]).collect(),
        algorithm: "default".into(),
        name: "default".into(),
        segsize: 0,
        samples: 15,
        warmup: 3,
        target_us: 2000.0,
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
                    o.collectives = v.split(',').map(str::to_string).collect();
                }
            }
            "--sizes" => {
                o.sizes = value()?
                    .split(',')
                    .map(|s| s.parse::<u64>().map_err(|e| format!("--sizes {s}: {e}")))
                    .collect::<Result<_, _>>()?
            }
            "--algorithm" => o.algorithm = value()?,
            "--name" => o.name = value()?,
            "--segsize" => o.segsize = value()?.parse().map_err(|e| format!("--segsize: {e}"))?,
            "--samples" => o.samples = value()?.parse().map_err(|e| format!("--samples: {e}"))?,
            "--warmup" => o.warmup = value()?.parse().map_err(|e| format!("--warmup: {e}"))?,
            "--target-us" => {
                o.target_us = value()?.parse().map_err(|e| format!("--target-us: {e}"))?
            }
            "--output" => o.output = value()?.into(),
            "--reduce-local" => o.reduce_local = Some(value()?.into()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    for c in &o.collectives {
        if !COLLECTIVES.contains(&c.as_str()) {
            return Err(format!("unknown collective {c} (one of {COLLECTIVES:?})"));
        }
    }
    if o.sizes.iter().any(|&s| s == 0 || s % 8 != 0 || s > 1 << 24) {
        return Err("--sizes: per-rank bytes, multiples of 8 in 8 ..= 16 MiB".into());
    }
    if !((1..=1000).contains(&o.samples) && o.target_us > 0.0 && o.target_us <= 1e6) {
        return Err("--samples in 1..=1000, --target-us in (0, 1e6]".into());
    }
    if o.algorithm.contains(',') || o.name.contains(',') {
        return Err("--algorithm and --name must not contain commas (CSV)".into());
    }
    Ok(o)
}

const HEADER: &str = "collective,ompi_coll_id,procs,algorithm_id,algorithm,segsize,bytes,count,elem_bytes,calls,min_s,median_s,reps,pipelined_s";

/// Times `MPI_Reduce_local` (`MPI_SUM`, `f64`) per size on this rank and writes
/// `bytes,calls,min_s,median_s`.
fn reduce_local(o: &Options, path: &PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    let max_count = o.sizes.iter().max().copied().unwrap_or(8) as usize / 8;
    // a ring of buffer pairs larger than the last-level cache (32 MiB here), so that every
    // timed call finds its operands in memory, not in cache, as after a receive
    let pairs = ((64usize << 20) / (16 * max_count).max(1)).clamp(2, 4096);
    let inputs: Vec<Vec<f64>> = (0..pairs).map(|i| vec![i as f64; max_count]).collect();
    let mut outputs: Vec<Vec<f64>> = (0..pairs).map(|_| vec![1.0; max_count]).collect();
    let mut text = String::from("bytes,calls,min_s,median_s\n");
    let mut next = 0usize;
    for &size in &o.sizes {
        let count = size as usize / 8;
        let mut once = |next: &mut usize| {
            let k = *next % pairs;
            *next += 1;
            let t0 = Instant::now();
            mpi::collective::reduce_local_into(
                &inputs[k][..count],
                &mut outputs[k][..count],
                SystemOperation::sum(),
            );
            t0.elapsed().as_secs_f64()
        };
        for _ in 0..o.warmup {
            once(&mut next);
        }
        let mut times: Vec<f64> = (0..o.samples).map(|_| once(&mut next)).collect();
        times.sort_by(f64::total_cmp);
        text.push_str(&format!(
            "{size},{},{:.9e},{:.9e}\n",
            o.samples,
            times[0],
            times[times.len() / 2]
        ));
    }
    std::hint::black_box(&outputs);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, &text)?;
    print!("{text}");
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o = parse()?;
    let universe = mpi::initialize().ok_or("MPI could not be initialised")?;
    let world = universe.world();
    if let Some(path) = &o.reduce_local {
        if world.rank() == 0 {
            reduce_local(&o, path)?;
        }
        return Ok(());
    }
    let p = world.size() as usize;
    let max_count = o.sizes.iter().max().copied().unwrap_or(8) as usize / 8;
    let mut b = Buffers {
        send: vec![1.0; max_count * p],
        recv: vec![0.0; max_count * p],
    };
    let clock = SharedClock::new(&world);
    let mut rows = Vec::new();
    for collective in &o.collectives {
        let sizes: &[u64] = if collective == "barrier" {
            &[8]
        } else {
            &o.sizes
        };
        for &size in sizes {
            let count = size as usize / 8;
            for _ in 0..o.warmup {
                call(&world, collective, count, &mut b);
            }
            // synchronised calls: barrier, then one call; its time runs from the moment the
            // last rank entered to the moment the last rank left (one clock for all ranks)
            let mut starts = vec![0.0f64; o.samples];
            let mut ends = vec![0.0f64; o.samples];
            for i in 0..o.samples {
                world.barrier();
                starts[i] = clock.now();
                call(&world, collective, count, &mut b);
                ends[i] = clock.now();
            }
            let (last_start, last_end) =
                (slowest_each(&world, &starts), slowest_each(&world, &ends));
            let mut times: Vec<f64> = last_end
                .iter()
                .zip(&last_start)
                .map(|(e, s)| (e - s).max(0.0))
                .collect();
            times.sort_by(f64::total_cmp);
            // back to back: one timed call fixes the repetitions every rank then runs
            let once = sample(&world, collective, count, 1, &mut b).max(1e-9);
            let reps = ((o.target_us * 1e-6 / once).ceil() as u32).clamp(1, 1000);
            let pipelined = (0..3)
                .map(|_| sample(&world, collective, count, reps, &mut b))
                .fold(f64::INFINITY, f64::min);
            let (bytes, count_col) = if collective == "barrier" {
                (0, 0)
            } else if total_convention(collective) {
                (size * p as u64, count)
            } else {
                (size, count)
            };
            rows.push(format!(
                "{collective},{},{p},{},{},{},{bytes},{count_col},8,{},{:.9e},{:.9e},{reps},{pipelined:.9e}",
                ompi_id(collective),
                o.algorithm,
                o.name,
                o.segsize,
                o.samples,
                times[0],
                times[times.len() / 2],
            ));
        }
    }
    if world.rank() == 0 {
        if let Some(dir) = o.output.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let fresh = !o.output.exists();
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&o.output)?;
        if fresh {
            writeln!(f, "{HEADER}")?;
        }
        for r in &rows {
            writeln!(f, "{r}")?;
        }
        println!("{}", rows.join("\n"));
    }
    Ok(())
}
