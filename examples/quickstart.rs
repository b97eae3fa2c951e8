//! Predicted point-to-point times of the four transports of Table 2 of Hoefler, Lichei & Rehm
//! (IPDPS 2007), from 1 byte to 1 MiB, using the embedded presets; then, for Open MPI over
//! InfiniBand, the best broadcast and allreduce algorithm by communicator and message size, and
//! the sizes where the choice changes. Needs no input.
//!
//! Run with `cargo run --release --example quickstart`.

use commcost::collectives::{Algorithm, Allreduce, Bcast, Problem, best, crossover};
use commcost::{CommModel, LogGP, Message, Protocols, presets};

fn main() {
    let transports = presets::table2_transports();
    println!("Point-to-point time T(s) = 2o + L + (s - 1) G, in µs (LogGP, Table 2 presets)");
    println!("'*' marks the first listed size that uses a new protocol range.\n");

    print!("{:>10}", "size (B)");
    for (name, _) in &transports {
        print!("  {name:>16}");
    }
    println!();

    let sizes: Vec<u64> = (0..=10).map(|k| 4u64.pow(k)).collect();
    let mut previous_range = [0usize; 4];
    for &size in &sizes {
        print!("{size:>10}");
        for (i, (_, model)) in transports.iter().enumerate() {
            let t = model.p2p(&Message::contiguous(size)) * 1e6;
            let range = model.range_index(size);
            let mark = if range != previous_range[i] { '*' } else { ' ' };
            previous_range[i] = range;
            print!("  {t:>15.3}{mark}");
        }
        println!();
    }

    println!("\nProtocol switches:");
    for (name, model) in &transports {
        describe_switches(name, model);
    }

    let openib = presets::open_mpi_openib();
    let processes = [4u64, 64, 1024];
    // 8 B … 4 MiB
    let sizes: Vec<u64> = (0..=19)
        .step_by(2)
        .map(|k| 8u64 << k)
        .chain([4 << 20])
        .collect();
    println!("\nAlgorithm selection on Open MPI/openib (LogGP, Table 2 presets)");
    selection_table::<Bcast>("broadcast", &openib, &processes, &sizes);
    selection_table::<Allreduce>("allreduce", &openib, &processes, &sizes);
}

/// The best algorithm per (size, P), then the exact sizes where the choice changes.
fn selection_table<A: Algorithm>(
    what: &str,
    model: &dyn CommModel,
    processes: &[u64],
    sizes: &[u64],
) {
    println!("\n  best {what} algorithm");
    print!("  {:>10}", "size (B)");
    for p in processes {
        print!("  {:>28}", format!("P = {p}"));
    }
    println!();
    let problem = |p: u64, s: u64| Problem::new(p, Message::contiguous(s));
    let choice = |p: u64, s: u64| best::<A>(model, &problem(p, s)).expect("P >= 1").0;
    for &s in sizes {
        print!("  {s:>10}");
        for &p in processes {
            print!("  {:>28}", choice(p, s).label());
        }
        println!();
    }
    println!("  crossovers (exact byte where the cheaper of the two neighbours changes):");
    for &p in processes {
        let mut changes = Vec::new();
        for pair in sizes.windows(2) {
            let (a, b) = (choice(p, pair[0]), choice(p, pair[1]));
            if a.name() != b.name() {
                let at = crossover(model, a, b, &problem(p, 1), pair[0]..=pair[1])
                    .expect("valid range")
                    .unwrap_or(pair[1]);
                changes.push(format!("{} -> {} at {at} B", a.name(), b.name()));
            }
        }
        if changes.is_empty() {
            changes.push("none".into());
        }
        println!("    P = {p:>4}: {}", changes.join("; "));
    }
}

fn describe_switches(name: &str, model: &Protocols<LogGP>) {
    let switches: Vec<String> = model.switch_points().map(|s| format!("{s} B")).collect();
    if switches.is_empty() {
        println!("  {name:<16} one protocol for all sizes");
    } else {
        println!("  {name:<16} new protocol from {}", switches.join(", "));
    }
}
