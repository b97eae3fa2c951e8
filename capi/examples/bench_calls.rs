//! Calls per second of the Rust API, the baseline of the C and Python figures in
//! `docs/PERFORMANCE.md` (`scripts/bindings_bench.sh` runs all three in one go).
//!
//! The same calls as `bench_calls.c` and `python/examples/bench_calls.py`, on the
//! `open-mpi-openib` preset: `p2p` one call at a time over 4096 sizes, the best Open MPI
//! broadcast for one `(P, bytes)`, and a decision-table lookup.

use std::hint::black_box;
use std::time::Instant;

use commcost::collectives::ompi::Bcast;
use commcost::collectives::{DecisionTable, Problem, best};
use commcost::{CommModel, Message, ModelSpec, presets};

fn rate(label: &str, calls: u64, f: impl FnOnce()) {
    let t = Instant::now();
    f();
    let s = t.elapsed().as_secs_f64();
    println!("rust {label:<34} {:>12.3e} calls/s", calls as f64 / s);
}

fn main() {
    let spec = ModelSpec::from(presets::open_mpi_openib());
    let model: &dyn CommModel = &spec;
    let sizes: Vec<u64> = (0..4096u64).map(|i| (i * 7919) % (1 << 22)).collect();
    let rounds = 5000u64;
    rate("p2p (one call per size)", rounds * 4096, || {
        let mut acc = 0.0;
        for _ in 0..rounds {
            for &s in &sizes {
                acc += model.p2p(&Message::contiguous(black_box(s)));
            }
        }
        black_box(acc);
    });
    let n = 20_000u64;
    rate("best bcast (Open MPI, P=64, 64 KiB)", n, || {
        for _ in 0..n {
            black_box(best::<Bcast>(model, &Problem::new(64, Message::contiguous(65536))).ok());
        }
    });
    let procs: Vec<u64> = (1..=10).map(|k| 1u64 << k).collect();
    let grid: Vec<u64> = (0..=22).map(|k| 1u64 << k).collect();
    let template = Problem::new(1, Message::contiguous(0));
    let table = DecisionTable::<Bcast>::build(model, &procs, &grid, &template).expect("table");
    let m = 20_000_000u64;
    rate("table lookup", m, || {
        for i in 0..m {
            black_box(table.lookup(black_box(1 + (i & 1023)), black_box(i & 0x3f_ffff)));
        }
    });
}
