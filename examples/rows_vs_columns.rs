//! Rows versus columns of a 2000 × 2000 matrix of 4-byte integers with 64-byte lines: bytes,
//! exact unique memory lines, and the cost the Mlines model predicts for sending 1 … 8 rows and
//! 1 … 8 columns.
//!
//! The Mlines paper's fitted coefficients did not survive text extraction, so rather than
//! invent numbers this example calibrates the model on this machine first: it times marshalling
//! random row and column blocks into a contiguous buffer (`probe::measure_matrix_transfers`:
//! what MPI does before sending a strided block), fits M1 (`T = α + β b + γ Mlines`, with
//! non-negative coefficients) and compares S1 and M1 on held-out shapes. Takes about a second.
//!
//! Run with `cargo run --release --example rows_vs_columns`.

use std::time::Duration;

use commcost::calibrate::{MlinesSample, RegressionVariant, fit_mlines_model, fit_regression};
use commcost::mlines::lines_touched;
use commcost::probe::{Budget, MatrixPlan, Methodology, measure_matrix_transfers};
use commcost::{CommModel, Message};

const N: u64 = 2000;
const ELEMENT: u64 = 4;
const LINE: u64 = 64;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("Calibrating on this machine: marshalling 200 random row/column blocks ...");
    let budget = Budget::new(Duration::from_secs(60), 1 << 28);
    let plan = MatrixPlan {
        height: N,
        width: N,
        shapes: 200,
        max_k: 32,
        seed: 2026,
    };
    let measured =
        measure_matrix_transfers(&plan, &Methodology::quick(), &budget, &mut |_, _, _| {})?;
    let samples: Vec<MlinesSample> = measured
        .iter()
        .map(|s| MlinesSample::from_message(&s.message, LINE, s.time))
        .collect::<Result<_, _>>()?;
    let (training, test) = samples.split_at(100);
    let m1 = fit_regression(RegressionVariant::M1, LINE, training, test)?;
    let s1 = fit_regression(RegressionVariant::S1, LINE, training, test)?;
    let model = fit_mlines_model(training, LINE)?;
    println!(
        "M1 (non-negative): α = {:.3} µs, β = {:.4} ns/byte, γ = {:.3} ns/line; held-out σ_ε: M1 {:.3} µs, S1 {:.3} µs\n",
        model.per_message() * 1e6,
        model.per_byte() * 1e9,
        model.per_line() * 1e9,
        m1.test().sigma_eps().unwrap_or(f64::NAN) * 1e6,
        s1.test().sigma_eps().unwrap_or(f64::NAN) * 1e6,
    );

    println!("{N} x {N} matrix of 4-byte integers, {LINE}-byte lines, aligned");
    println!(
        "{:>3}  {:>9} {:>8} {:>10}   {:>9} {:>8} {:>10}",
        "k", "row bytes", "Mlines", "M1 (µs)", "col bytes", "Mlines", "M1 (µs)"
    );
    let row_bytes = N * ELEMENT;
    for k in 1..=8u64 {
        let rows = Message::contiguous(k * row_bytes);
        let cols = Message::vector(N, k * ELEMENT, row_bytes)?;
        println!(
            "{k:>3}  {:>9} {:>8} {:>10.3}   {:>9} {:>8} {:>10.3}",
            rows.bytes(),
            lines_touched(&rows, LINE)?,
            model.p2p(&rows) * 1e6,
            cols.bytes(),
            lines_touched(&cols, LINE)?,
            model.p2p(&cols) * 1e6,
        );
    }
    println!(
        "\nSame bytes, different lines: k columns touch {N} lines while k rows touch {} · k.",
        row_bytes / LINE
    );
    Ok(())
}
