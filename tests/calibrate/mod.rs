//! Calibration: fits on exact and on real measured data, the benchmark importers, the
//! probes, and no panic on hostile samples.

mod benchmark_importers;
mod benchmark_runs;
mod benchmark_steps;
mod calibrate_derive;
mod calibrate_loggp;
mod calibrate_no_panic;
mod calibrate_real_data;
mod forced_runs;
mod least_squares;
mod mlines_regression;
mod probes;
