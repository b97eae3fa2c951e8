//! Collectives: closed forms against sums by hand, lower bounds, Open MPI's algorithms,
//! selection, the exported rules files and model-guided tuning.

mod closed_forms;
mod collective_lower_bound;
mod collective_sums;
mod export;
mod ompi_algorithms;
mod tune;
mod tune_mpich;
