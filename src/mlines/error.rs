//! Errors of the memory-lines calculator.

/// Errors of the memory-lines calculator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinesError {
    /// A line size of 0 bytes.
    #[error("line size must be at least 1 byte, got 0")]
    ZeroLine,
    /// Blocks that overlap (a block longer than the stride) or a zero stride with several blocks.
    #[error("{what}: block of {block} bytes does not fit in stride {stride}")]
    Overlap {
        /// Which level of the layout.
        what: &'static str,
        /// Bytes per block (or per plane).
        block: u128,
        /// Bytes between block (or plane) starts.
        stride: u64,
    },
    /// An array region that lies outside the array (e.g. columns past the row's end).
    #[error("{what}: {first} + {count} exceeds {limit}")]
    OutOfArray {
        /// Which dimension.
        what: &'static str,
        /// First row / column selected.
        first: u64,
        /// Rows / columns selected.
        count: u64,
        /// Rows / columns in the array.
        limit: u64,
    },
    /// An exact count that would take more than the calculator's step limit (a 3-D layout in
    /// case B with long periods and many rows): refused rather than run for minutes.
    #[error("the exact count needs {steps} floor-sum steps, over the limit of {limit}")]
    TooManySteps {
        /// Steps the count would take.
        steps: u128,
        /// The limit.
        limit: u64,
    },
}
