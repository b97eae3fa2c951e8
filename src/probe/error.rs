//! Why a probe stopped.

use thiserror::Error;

/// Why a probe stopped.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// The budget's cancel flag was raised.
    #[error("the probe was cancelled")]
    Cancelled,
    /// The probe ran out of time.
    #[error("the probe exceeded its time budget of {limit:?}")]
    OutOfTime {
        /// The budget.
        limit: std::time::Duration,
    },
    /// The probe would need more memory than its budget allows.
    #[error("{what} needs {needed} bytes, over the budget of {limit} bytes")]
    OutOfMemory {
        /// What needs the memory.
        what: &'static str,
        /// Bytes needed.
        needed: u64,
        /// The budget.
        limit: u64,
    },
    /// A plan that cannot be measured (empty grid, zero element size, ...).
    #[error("invalid plan: {0}")]
    InvalidPlan(String),
    /// An I/O error (sockets).
    #[error("I/O error: {0}")]
    Io(String),
}

impl From<std::io::Error> for ProbeError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e.to_string())
    }
}
