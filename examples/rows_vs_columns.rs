//! Rows versus columns of a 2000 x 2000 matrix of 4-byte integers with 64-byte lines: bytes,
//! exact unique memory lines, and the cost the Mlines model predicts for sending 1 … 8 rows and
//! 1 … 8 columns.
//!
//! The Mlines paper's fitted coefficients did not survive text extraction, so rather than
//! invent numbers this example calibrates the model on this machine first: it times packing
//! random row and column blocks into a contiguous buffer (what MPI does before sending a
//! strided block; SPEC §10 practice: warm-up, repetitions averaged, minimum of several samples),
//! fits M1 (`T = α + β b + γ Mlines`) and S1 (`T = α + β b`) on 100 shapes and scores them on 100
//! others, as the paper does. Takes about a second.
//!
//! Run with `cargo run --release --example rows_vs_columns`.

use std::hint::black_box;
use std::time::Instant;

use commcost::calibrate::{MlinesSample, RegressionVariant, fit_regression};
use commcost::mlines::lines_touched;
use commcost::{CommModel, Message};

const N: usize = 2000;
const ELEMENT: u64 = 4;
const LINE: u64 = 64;
const ROW_BYTES: u64 = N as u64 * ELEMENT;

/// Packs `k` rows or `k` columns starting at `first` into `out`; returns the message shape.
fn pack(matrix: &[u32], out: &mut [u32], rows: bool, first: usize, k: usize) -> Message {
    if rows {
        out[..k * N].copy_from_slice(&matrix[first * N..(first + k) * N]);
        Message::contiguous(k as u64 * ROW_BYTES).with_offset(first as u64 * ROW_BYTES)
    } else {
        for (r, chunk) in out.chunks_exact_mut(k).take(N).enumerate() {
            chunk.copy_from_slice(&matrix[r * N + first..r * N + first + k]);
        }
        Message::vector(N as u64, k as u64 * ELEMENT, ROW_BYTES)
            .expect("k columns fit in a row")
            .with_offset(first as u64 * ELEMENT)
    }
}

/// Minimum over 5 samples of the mean time of enough repetitions to last ≥ 20 µs.
fn time_pack(matrix: &[u32], out: &mut [u32], rows: bool, first: usize, k: usize) -> f64 {
    let _ = pack(matrix, out, rows, first, k); // warm-up
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let mut reps = 0u32;
        let start = Instant::now();
        while start.elapsed().as_secs_f64() < 20e-6 || reps == 0 {
            black_box(pack(black_box(matrix), out, rows, first, k));
            reps += 1;
        }
        best = best.min(start.elapsed().as_secs_f64() / f64::from(reps));
    }
    best
}

/// SplitMix64, so the shapes are reproducible.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn samples(matrix: &[u32], out: &mut [u32], seed: &mut u64, count: usize) -> Vec<MlinesSample> {
    (0..count)
        .map(|_| {
            let rows = next(seed).is_multiple_of(2);
            let k = 1 + (next(seed) % 32) as usize;
            let first = (next(seed) % (N - k) as u64) as usize;
            let time = time_pack(matrix, out, rows, first, k);
            let msg = pack(matrix, out, rows, first, k);
            MlinesSample::from_message(&msg, LINE, time).expect("64-byte lines")
        })
        .collect()
}

fn main() {
    let matrix: Vec<u32> = (0..(N * N) as u32).collect();
    let mut out = vec![0u32; N * 32];
    let mut seed = 2026;

    println!("Calibrating on this machine: packing 200 random row/column blocks ...");
    let training = samples(&matrix, &mut out, &mut seed, 100);
    let test = samples(&matrix, &mut out, &mut seed, 100);
    let m1 = fit_regression(RegressionVariant::M1, LINE, &training, &test).expect("M1 fits");
    let s1 = fit_regression(RegressionVariant::S1, LINE, &training, &test).expect("S1 fits");
    let c = m1.coefficients();
    println!(
        "M1: α = {:.3} µs, β = {:.4} ns/byte, γ = {:.3} ns/line; test σ_ε = {:.3} µs (S1: {:.3} µs)\n",
        c[0] * 1e6,
        c[1] * 1e9,
        c[2] * 1e9,
        m1.test().sigma_eps().unwrap_or(f64::NAN) * 1e6,
        s1.test().sigma_eps().unwrap_or(f64::NAN) * 1e6,
    );

    println!("2000 x 2000 matrix of 4-byte integers, 64-byte lines, aligned");
    println!(
        "{:>3}  {:>9} {:>8} {:>10}   {:>9} {:>8} {:>10}",
        "k", "row bytes", "Mlines", "M1 (µs)", "col bytes", "Mlines", "M1 (µs)"
    );
    for k in 1..=8u64 {
        let rows = Message::contiguous(k * ROW_BYTES);
        let cols = Message::vector(N as u64, k * ELEMENT, ROW_BYTES).expect("fits");
        let (row_lines, col_lines) = (
            lines_touched(&rows, LINE).expect("64-byte lines"),
            lines_touched(&cols, LINE).expect("64-byte lines"),
        );
        println!(
            "{k:>3}  {:>9} {row_lines:>8} {:>10.3}   {:>9} {col_lines:>8} {:>10.3}",
            rows.bytes(),
            m1.p2p(&rows) * 1e6,
            cols.bytes(),
            m1.p2p(&cols) * 1e6,
        );
    }
    println!(
        "\nSame bytes, different lines: k columns touch 2000 lines while k rows touch {} · k.",
        ROW_BYTES / LINE
    );
    println!(
        "The coefficients are an unconstrained least-squares fit of this machine's timings: a\n\
         β near or below zero means the bytes explain nothing the line count does not."
    );
}
