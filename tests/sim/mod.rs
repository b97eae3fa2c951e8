//! The LogGOPS simulator: engine semantics, GOAL files, and LogGOPSim's outputs.

mod hierarchical;
mod sim_engine;
mod sim_goal;
mod sim_loggopsim;
mod two_level;
