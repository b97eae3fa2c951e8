//! The LogGOPS simulator: engine semantics, GOAL files, and LogGOPSim's outputs.

#[path = "../common/mod.rs"]
mod common;

mod sim_engine;
mod sim_goal;
mod sim_loggopsim;
