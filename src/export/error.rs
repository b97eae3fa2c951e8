//! Errors of the tuning-file exports.

use thiserror::Error;

use crate::collectives::CollectiveError;

/// A tuning file that cannot be produced.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ExportError {
    /// An empty or unsorted list of communicator sizes or message sizes.
    #[error("{what}: {detail}")]
    Grid {
        /// Which list.
        what: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// A collective could not be priced.
    #[error(transparent)]
    Collective(#[from] CollectiveError),
    /// A collective could not be simulated on nodes ([`ompi_rules_on_nodes`](super::ompi_rules_on_nodes)).
    #[error(transparent)]
    Simulation(#[from] crate::sim::SimError),
    /// A rules file that does not read back.
    #[error("line {line}: {detail}")]
    Parse {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// A collective the target file cannot describe.
    #[error("{collective}: not supported in the {target}")]
    Unsupported {
        /// The collective.
        collective: &'static str,
        /// The file format.
        target: &'static str,
    },
}
