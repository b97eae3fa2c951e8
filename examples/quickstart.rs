//! Predicted point-to-point times of the four transports of Table 2 of Hoefler, Lichei & Rehm
//! (IPDPS 2007), from 1 byte to 1 MiB, using the embedded presets. Needs no input.
//!
//! Run with `cargo run --release --example quickstart`.

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
}

fn describe_switches(name: &str, model: &Protocols<LogGP>) {
    let switches: Vec<String> = model.switch_points().map(|s| format!("{s} B")).collect();
    if switches.is_empty() {
        println!("  {name:<16} one protocol for all sizes");
    } else {
        println!("  {name:<16} new protocol from {}", switches.join(", "));
    }
}
