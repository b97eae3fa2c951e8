//! Collectives: closed forms against sums by hand, lower bounds, Open MPI's algorithms,
//! selection and the exported rules files.

mod collective_lower_bound;
mod collective_sums;
mod closed_forms;
mod export;
mod ompi_algorithms;
