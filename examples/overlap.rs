//! How much of a send does computation hide? LogGP (all of it, given enough computation) versus
//! LogGPO with dependent and independent progress, for a 4 KiB (eager) and a 1 MiB
//! (rendezvous) message.
//!
//! The LogGPO paper publishes no parameter values, so they are derived from the Open MPI /
//! openib LogGP row of Hoefler et al. (2007), Table 2 (InfiniBand, like the paper's Explorer3):
//! `L`, `G` and the eager limit `S = 12288` come from the table; the control-message and
//! initialisation overheads `O'` and `Oi` are taken as the table's `o`; the receiver's memory copy
//! `Oc(K)` is assumed to run at the eager range's `G`. The example prints these choices.
//!
//! "Hidden" is the share of the communication cost `T` that is not exposed to the sender, with
//! exposed = `max(o, T - comp)` under LogGP and `max(Os, Tc - comp)` under LogGPO
//! (`LogGpo::exposed_send_time`).
//!
//! Run with `cargo run --release --example overlap`.

use commcost::models::loggpo::Mechanism;
use commcost::models::loggpo::Progress;
use commcost::table::Table1D;
use commcost::{CommModel, LogGpo, Message, presets};

const US: f64 = 1e-6;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let loggp = presets::open_mpi_openib();
    let eager = loggp.model_for(1);
    let rendezvous = loggp.model_for(1 << 20);
    let o = eager.overhead();
    let loggpo_with = |progress, mechanism| {
        LogGpo::new(
            rendezvous.latency(),
            rendezvous.gap_per_byte(),
            12288,
            progress,
            Mechanism::T,
            mechanism,
            o,
            Table1D::constant(o)?,
            Table1D::linear(0.0, eager.gap_per_byte())?,
        )
    };
    let dependent = loggpo_with(Progress::Dependent, Mechanism::Rat)?;
    let independent = loggpo_with(Progress::Independent, Mechanism::Rta)?;

    println!(
        "LogGP: Open MPI/openib (Table 2). LogGPO: L = {:.2} µs, G = {:.5} µs/B, S = 12288 B,",
        rendezvous.latency() / US,
        rendezvous.gap_per_byte() / US
    );
    println!(
        "O' = Oi = o = {:.2} µs, Oc(K) = K · {:.5} µs (assumed: copy at the eager G)\n",
        o / US,
        eager.gap_per_byte() / US
    );
    println!(
        "{:>8} {:>10} | {:>15} | {:>22} | {:>22}",
        "message", "comp (µs)", "LogGP hidden", "LogGPO dependent", "LogGPO independent"
    );
    for (label, bytes) in [("4 KiB", 4096u64), ("1 MiB", 1 << 20)] {
        let msg = Message::contiguous(bytes);
        for comp_us in [0.0, 50.0, 200.0, 1000.0] {
            let comp = comp_us * US;
            let t = loggp.p2p(&msg);
            let exposed = loggp.send_overhead(&msg).max(t - comp);
            let hidden = |total: f64, exposed: f64| 100.0 * (total - exposed) / total;
            let mut row = format!(
                "{label:>8} {comp_us:>10.0} | {:>6.1} % of {:>5.0} |",
                hidden(t, exposed),
                t / US
            );
            for model in [&dependent, &independent] {
                let total = model.p2p(&msg);
                let exposed = model.exposed_send_time(&msg, comp)?;
                row.push_str(&format!(
                    " {:>6.1} % of {:>5.0} µs |",
                    hidden(total, exposed),
                    total / US
                ));
            }
            println!("{}", row.trim_end_matches(" |"));
        }
    }
    println!(
        "\nWith dependent progress the rendezvous transfer happens inside MPI_Wait, so no amount"
    );
    println!("of computation hides it; independent progress hides all but 2O'.");
    Ok(())
}
