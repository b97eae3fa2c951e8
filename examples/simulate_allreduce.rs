//! Simulates a recursive-doubling allreduce of 8 bytes on 2^20 processes (or the `P` given) over the Open MPI
//! openib preset (LogGP per protocol range, Hoefler, Lichei, Rehm, "Low-Overhead LogGP Parameter
//! Assessment for Modern Interconnection Networks", IPDPS 2007, Table 2), and prints the
//! makespan, the closed form and a summary of the critical path.
//!
//! ```text
//! cargo run --release --example simulate_allreduce [P] [plain]
//! ```
//!
//! With `plain`, the critical path is not recorded (the simulation's own memory and time only).

use std::time::Instant;

use commcost::Message;
use commcost::collectives::{Algorithm, Allreduce, Operator, Problem};
use commcost::presets;
use commcost::sim::{SimOptions, ToSchedule, simulate};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let p: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(1 << 20);
    let plain = std::env::args().nth(2).is_some_and(|a| a == "plain");
    let model = presets::open_mpi_openib();
    // 8 bytes (one double); the operator's cost is left out (Operator::FREE), which keeps the
    // schedule at 40 operations per rank (2^20 ranks: 42 million operations, computed from
    // the algorithm's structure rather than stored; 1.1 GB resident with the critical path,
    // 0.6 GB without, and 2.3 s on the 2-core machine of docs/PERFORMANCE.md)
    let problem = Problem::new(p, Message::contiguous(8)).with_operator(Operator::FREE);
    let algorithm = Allreduce::RecursiveDoubling;

    let built = Instant::now();
    let schedule = algorithm.schedule(&problem)?;
    let build_time = built.elapsed();
    let started = Instant::now();
    let options = SimOptions {
        critical_path: !plain,
        ..SimOptions::default()
    };
    let run = simulate(&schedule, &model, &options)?;
    let sim_time = started.elapsed();
    let closed = algorithm.cost(&model, &problem)?;

    println!("recursive-doubling allreduce, P = {p}, 8 bytes, Open MPI openib preset");
    println!(
        "schedule: {} operations, {} dependencies, built in {:.2} s",
        schedule.len(),
        schedule.dependencies(),
        build_time.as_secs_f64()
    );
    println!(
        "simulated in {:.2} s: {} events, {:.1} million events/s",
        sim_time.as_secs_f64(),
        run.events,
        run.events as f64 / sim_time.as_secs_f64() / 1e6
    );
    println!("makespan     {:10.3} µs", run.makespan * 1e6);
    println!("closed form  {:10.3} µs", closed * 1e6);
    let path = run.critical_path.unwrap_or_default();
    let (send, recv, calc) = path.time_by_kind();
    println!(
        "critical path: {} operations, {} messages, {} ranks; time in sends {:.3} µs, \
         receives {:.3} µs, operator {:.3} µs",
        path.steps.len(),
        path.messages(),
        path.ranks_visited(),
        send * 1e6,
        recv * 1e6,
        calc * 1e6
    );
    for s in path
        .steps
        .iter()
        .take(4)
        .chain(path.steps.iter().rev().take(2).rev())
    {
        println!(
            "  rank {:7} {:4} op {:9}  {:9.3} → {:9.3} µs",
            s.rank,
            s.kind.name(),
            s.op.0,
            s.start * 1e6,
            s.end * 1e6
        );
    }
    Ok(())
}
