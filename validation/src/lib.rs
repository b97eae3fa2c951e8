//! Validation of commcost against real MPI runs.
//!
//! [`selection`] reads what `scripts/selection_sweep.sh` measured — the OSU Micro-Benchmarks'
//! collective tests run with Open MPI's default decision, with a rules file exported by
//! `commcost export ompi-rules`, and with every algorithm forced — and says, per collective and
//! message size, whether the exported rules made the run faster, and how far the rules' pick is
//! from the fastest forced algorithm. The binary `selection_report` prints the tables of
//! docs/ACCURACY.md; the tests of this package check the committed measurements.
//! [`tune_validation`] compares the rules `commcost tune` writes (and a model-only file) with the
//! default and with the fastest forced algorithm per cell (binary `tune_report`).
//! [`han_accuracy`] prices Open MPI's `han` against its default on nodes of several ranks
//! (binary `forced_accuracy --han`).

pub mod forced_accuracy;
pub mod han_accuracy;
pub mod selection;
pub mod stats;
pub mod tune_validation;
