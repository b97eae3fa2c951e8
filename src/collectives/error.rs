//! Errors of the collectives: a collective that cannot be evaluated, an algorithm name that does
//! not parse.

use thiserror::Error;

/// A collective that cannot be evaluated.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum CollectiveError {
    /// A communicator of 0 processes.
    #[error("a collective needs at least one process, got 0")]
    NoProcesses,
    /// A pipelined algorithm with segments of 0 bytes.
    #[error("the pipeline segment size must be at least 1 byte")]
    ZeroSegment,
    /// An empty or inverted size range, or an empty grid.
    #[error("{what}: {detail}")]
    EmptyRange {
        /// Which input.
        what: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// An invalid operator cost.
    #[error("operator cost `{name}` = {value} must be finite and >= 0")]
    InvalidOperator {
        /// The field.
        name: &'static str,
        /// The rejected value.
        value: f64,
    },
    /// Invalid local-work prices ([`LocalWork`](crate::collectives::LocalWork),
    /// [`CopyCost`](crate::collectives::CopyCost)).
    #[error("local work: {detail}")]
    InvalidLocalWork {
        /// What is wrong, naming the field.
        detail: String,
    },
    /// A collective the algorithm family does not price (scan in Open MPI's family,
    /// reduce_scatter in the textbook one); [`Collective::families`](crate::collectives::Collective::families) lists the families that do.
    #[error("{family}'s algorithms do not include {collective} (families that price it: {})", families_of(*collective))]
    NotPriced {
        /// The family asked for.
        family: crate::collectives::Family,
        /// The collective asked for.
        collective: crate::collectives::Collective,
    },
    /// An algorithm that cannot run on this many processes (Open MPI's `two_proc` algorithms
    /// need exactly 2).
    #[error("algorithm `{algorithm}` cannot run on {processes} processes: {requirement}")]
    NotApplicable {
        /// The algorithm's name.
        algorithm: &'static str,
        /// The communicator size asked for.
        processes: u64,
        /// What it needs.
        requirement: &'static str,
    },
    /// An algorithm named by something that does not parse (an Open MPI ID the collective does
    /// not have).
    #[error(transparent)]
    UnknownAlgorithm(#[from] AlgorithmParseError),
    /// An algorithm parameter outside its range (a fan-out of 0, a k-nomial radix below 2).
    #[error("algorithm `{algorithm}`: parameter `{name}` = {value} must be {expected}")]
    InvalidParameter {
        /// The algorithm's name.
        algorithm: &'static str,
        /// The parameter.
        name: &'static str,
        /// The rejected value.
        value: u64,
        /// The allowed range in words.
        expected: &'static str,
    },
}

fn families_of(collective: crate::collectives::Collective) -> String {
    let names: Vec<&str> = collective.families().iter().map(|f| f.name()).collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// An algorithm name that does not parse ([`std::str::FromStr`] of the collective algorithms).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AlgorithmParseError {
    /// No algorithm of this collective has this name.
    #[error("`{name}` is not a known {collective} name (known: {known})")]
    Unknown {
        /// The collective.
        collective: &'static str,
        /// The name given.
        name: String,
        /// The accepted names, comma-separated.
        known: String,
    },
    /// A parameter (`name:key=value,...`) that is missing, unknown, repeated or not a number.
    #[error("algorithm `{algorithm}`: {detail}")]
    Parameter {
        /// The algorithm.
        algorithm: String,
        /// What is wrong.
        detail: String,
    },
}
