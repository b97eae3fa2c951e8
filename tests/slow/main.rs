//! The slow suites, opt-in (`test = false` in Cargo.toml: a plain `cargo test` neither builds nor
//! runs them; CI runs `cargo test --release --test slow`): every closed form against the
//! simulated schedule, every schedule builder through GOAL and back, and the nested-layout lines
//! against enumeration.

#[path = "../common/mod.rs"]
mod common;

mod mlines_nested;
mod sim_crosscheck;
mod sim_goal_roundtrip;
mod sim_ompi_crosscheck;
