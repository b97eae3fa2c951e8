//! Collectives: closed forms against sums by hand, lower bounds, Open MPI's algorithms,
//! selection and the exported rules files.

mod closed_forms;
mod collective_lower_bound;
mod collective_sums;
mod export;
mod ompi_algorithms;
