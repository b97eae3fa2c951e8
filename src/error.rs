//! Typed errors, split by concern.
//!
//! * [`MessageError`] — an impossible message layout.
//! * [`ParameterError`] — a parameter set, table or protocol list that fails validation. Every
//!   constructor of a parameter struct returns it, and so does deserialisation (the `serde`
//!   feature routes loading through the same constructors).
//! * [`FitError`] — a fit that cannot be computed from the data it was given.
//! * [`CalibrationError`] — measurements that cannot be turned into parameters.
//! * [`CollectiveError`], [`TimelineError`] — a collective or a LogGPO question that cannot be
//!   evaluated.
//! * [`LinesError`] — an impossible layout for the memory-lines calculator.
//! * [`ProbeError`] — a measurement on this machine that stopped.
//!
//! Every variant names the offending field and carries the offending value, so a message read
//! from a log says what to fix.

use thiserror::Error;

/// An impossible [`Message`](crate::Message) layout.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum MessageError {
    /// More than one block with stride 0: the blocks would all start at the same byte.
    #[error("a vector of {count} blocks needs a stride > 0, got stride 0")]
    ZeroStride {
        /// Number of blocks requested.
        count: u64,
    },
    /// Blocks would overlap because a block is longer than the distance between block starts.
    #[error("block_len = {block_len} bytes is longer than stride = {stride} bytes: blocks overlap")]
    BlockLongerThanStride {
        /// Bytes per block.
        block_len: u64,
        /// Bytes between the starts of consecutive blocks.
        stride: u64,
    },
    /// The total size or the extent of the layout does not fit in a `u64`.
    #[error(
        "layout of {count} blocks of {block_len} bytes with stride {stride} overflows u64 bytes"
    )]
    Overflow {
        /// Number of blocks.
        count: u64,
        /// Bytes per block.
        block_len: u64,
        /// Bytes between the starts of consecutive blocks.
        stride: u64,
    },
}

/// A parameter set, table or protocol list that fails validation.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ParameterError {
    /// A real-valued parameter outside its allowed range (NaN and infinities always fail).
    #[error("parameter `{name}` = {value} is invalid: it must be {expected}")]
    OutOfRange {
        /// The parameter's field name.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// The allowed range in words, e.g. "finite and >= 0".
        expected: &'static str,
    },
    /// An integer parameter below its minimum.
    #[error("parameter `{name}` = {value} is invalid: it must be at least {min}")]
    TooSmall {
        /// The parameter's field name.
        name: &'static str,
        /// The rejected value.
        value: u64,
        /// The smallest allowed value.
        min: u64,
    },
    /// A table with no points.
    #[error("table `{name}` has no points")]
    EmptyTable {
        /// Which axis or table.
        name: &'static str,
    },
    /// Two table arrays whose lengths must agree do not.
    #[error("table `{name}`: expected {expected} values, got {got}")]
    LengthMismatch {
        /// Which table.
        name: &'static str,
        /// The length required by the axes.
        expected: usize,
        /// The length supplied.
        got: usize,
    },
    /// A non-finite number inside a table.
    #[error("table `{name}`: entry {index} is {value}, which is not finite")]
    NonFiniteEntry {
        /// Which axis or value array.
        name: &'static str,
        /// Position of the entry (row-major for 2-D values).
        index: usize,
        /// The rejected value.
        value: f64,
    },
    /// A table axis that is not strictly increasing.
    #[error(
        "table axis `{name}` must be strictly increasing: entry {index} = {value} follows {previous}"
    )]
    NotIncreasing {
        /// Which axis.
        name: &'static str,
        /// Position of the offending entry.
        index: usize,
        /// The offending entry.
        value: f64,
        /// The entry before it.
        previous: f64,
    },
    /// A negative entry in a cost table.
    #[error("table `{name}`: entry {index} is {value}, but costs cannot be negative")]
    NegativeCost {
        /// Which table.
        name: &'static str,
        /// Position of the entry (row-major for 2-D values).
        index: usize,
        /// The rejected value.
        value: f64,
    },
    /// A strided-cost table that is not zero at (or below) the unit stride: `l(s, unit) = 0` by
    /// definition (log_n P §2, memory logP §4).
    #[error(
        "table `{name}` must be 0 at strides <= the unit stride {unit_stride}, but is {value} at stride {stride}"
    )]
    StridedCostAtUnitStride {
        /// Which table.
        name: &'static str,
        /// The unit stride (bytes).
        unit_stride: u64,
        /// The stride of the offending column.
        stride: f64,
        /// The offending value.
        value: f64,
    },
    /// A chain (of hops, stages, levels) with nothing in it.
    #[error("`{name}` needs at least one element")]
    EmptyChain {
        /// Which chain.
        name: &'static str,
    },
    /// An invalid element of a chain, with its position.
    #[error("{name} {index}: {source}")]
    InChain {
        /// Which chain ("hop", "stage", "cache level").
        name: &'static str,
        /// Position in the chain.
        index: usize,
        /// What is wrong with it.
        source: Box<ParameterError>,
    },
    /// A strided bandwidth above the contiguous one: strided access would be cheaper.
    #[error(
        "`{name}`: bandwidth {value} bytes/s at stride {stride} exceeds the contiguous bandwidth {contiguous} bytes/s"
    )]
    StridedFasterThanContiguous {
        /// Which table.
        name: &'static str,
        /// The stride (bytes).
        stride: f64,
        /// The strided bandwidth.
        value: f64,
        /// The contiguous bandwidth.
        contiguous: f64,
    },
    /// A protocol / progress / transfer-mechanism combination the LogGPO paper does not
    /// analyse; the crate does not guess its costs.
    #[error(
        "LogGPO does not analyse the {protocol} protocol with {progress} progress and the {mechanism} transfer mechanism (analysed: eager with T; rendezvous with dependent progress + RAT or independent progress + RTA)"
    )]
    UnsupportedCombination {
        /// "eager" or "rendezvous".
        protocol: &'static str,
        /// "dependent" or "independent".
        progress: &'static str,
        /// "T", "TA", "RAT" or "RTA".
        mechanism: &'static str,
    },
    /// A protocol list with no ranges.
    #[error("a protocol list needs at least one size range")]
    NoProtocolRanges,
    /// The first protocol range must start at 0 or 1 byte.
    #[error("the first protocol range must start at 0 or 1 byte, got {start}")]
    FirstRangeStart {
        /// The rejected start.
        start: u64,
    },
    /// A range whose end is not after its start.
    #[error("protocol range {index} is empty: start {start} >= end {end}")]
    EmptyRange {
        /// Position of the range.
        index: usize,
        /// Its first size (bytes).
        start: u64,
        /// Its exclusive end (bytes).
        end: u64,
    },
    /// A bounded range that is not the last, or an unbounded range that is not the last.
    #[error("protocol range {index} is unbounded but is not the last range")]
    UnboundedRangeNotLast {
        /// Position of the range.
        index: usize,
    },
    /// The last range has an end: sizes beyond it would have no model.
    #[error("the last protocol range must be unbounded, but it ends at {end} bytes")]
    LastRangeBounded {
        /// The end of the last range.
        end: u64,
    },
    /// Consecutive ranges that overlap, leave a gap or are out of order.
    #[error(
        "protocol range {index} starts at {start} bytes but the previous range ends at {previous_end} bytes ({problem})"
    )]
    RangesNotContiguous {
        /// Position of the later range.
        index: usize,
        /// Its start.
        start: u64,
        /// The previous range's exclusive end.
        previous_end: u64,
        /// "overlap", "gap" or "unsorted".
        problem: &'static str,
    },
    /// A finite table entry outside its accepted range (magnitude, spacing or a subnormal
    /// number; the ranges are in [`limits`](crate::limits)).
    #[error("table `{name}`: entry {index} is {value}, but it must be {expected}")]
    OutOfRangeEntry {
        /// Which axis or value array.
        name: &'static str,
        /// Position of the entry (row-major for 2-D values).
        index: usize,
        /// The rejected value.
        value: f64,
        /// The accepted range in words.
        expected: &'static str,
    },
}

impl ParameterError {
    /// Checks `value >= 0` and finite; NaN fails.
    /// Also rejects subnormal values and values above [`MAX_SECONDS`](crate::limits::MAX_SECONDS)
    /// (every caller reads a time or a time per unit).
    pub(crate) fn non_negative(name: &'static str, value: f64) -> Result<f64, Self> {
        if (0.0..=crate::limits::MAX_SECONDS).contains(&value)
            && crate::limits::zero_or_normal(value)
        {
            Ok(value)
        } else {
            Err(Self::OutOfRange {
                name,
                value,
                expected: "0 or a normal number in [2.2e-308, 1e9] (limits::MAX_SECONDS)",
            })
        }
    }

    /// Checks `value > 0` and finite; NaN fails.
    /// Also rejects values outside [`MIN_BANDWIDTH`](crate::limits::MIN_BANDWIDTH) ..=
    /// [`MAX_BANDWIDTH`](crate::limits::MAX_BANDWIDTH) (every caller reads a bandwidth).
    pub(crate) fn positive(name: &'static str, value: f64) -> Result<f64, Self> {
        if (crate::limits::MIN_BANDWIDTH..=crate::limits::MAX_BANDWIDTH).contains(&value) {
            Ok(value)
        } else {
            Err(Self::OutOfRange {
                name,
                value,
                expected: "a bandwidth in [1e-3, 1e30] bytes/s (limits::MIN_BANDWIDTH, MAX_BANDWIDTH)",
            })
        }
    }

    /// Wraps an error of element `index` of the chain `name`.
    pub(crate) fn in_chain(name: &'static str, index: usize) -> impl FnOnce(Self) -> Self {
        move |source| Self::InChain {
            name,
            index,
            source: Box::new(source),
        }
    }

    /// Checks an integer against its minimum.
    pub(crate) fn at_least(name: &'static str, value: u64, min: u64) -> Result<u64, Self> {
        if value >= min {
            Ok(value)
        } else {
            Err(Self::TooSmall { name, value, min })
        }
    }
}

/// Measurements that cannot be turned into parameters.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum CalibrationError {
    /// A NaN, infinite or (where it must be positive) non-positive measurement.
    #[error("{what}: entry {index} is {value}, which is not a valid measurement")]
    InvalidValue {
        /// Which input.
        what: &'static str,
        /// Position of the entry.
        index: usize,
        /// The rejected value.
        value: f64,
    },
    /// A measurement the method needs is missing.
    #[error("size {size} bytes: missing {what}")]
    MissingMeasurement {
        /// Message size (bytes).
        size: u64,
        /// Which measurement.
        what: &'static str,
    },
    /// Too few points (sizes, samples) for the method.
    #[error("{what}: need at least {needed}, got {got}")]
    TooFew {
        /// What is counted.
        what: &'static str,
        /// Minimum.
        needed: usize,
        /// Supplied.
        got: usize,
    },
    /// Inputs whose shapes do not match (one value per size, ...).
    #[error("{what}: expected {expected} entries, got {got}")]
    LengthMismatch {
        /// Which input.
        what: &'static str,
        /// Required length.
        expected: usize,
        /// Supplied length.
        got: usize,
    },
    /// Measurements that imply a negative cost component: names the measurement at fault.
    #[error("size {size} bytes{at_stride}: {component} = {value:e} s < 0 — {explanation}")]
    Inconsistent {
        /// Message size (bytes).
        size: u64,
        /// ", stride d bytes" when the component depends on a stride (else empty).
        at_stride: String,
        /// The derived component, e.g. `o_mw = T00 - T_mem`.
        component: &'static str,
        /// Its value.
        value: f64,
        /// Which measurement is inconsistent with which.
        explanation: &'static str,
    },
    /// A line of an input file that cannot be read.
    #[error("line {line}: {message}")]
    Parse {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A measurement failed on the prober's side.
    #[error("measurement failed: {0}")]
    Probe(String),
    /// A fit failed.
    #[error(transparent)]
    Fit(#[from] FitError),
    /// The fitted parameters are invalid.
    #[error(transparent)]
    Parameters(#[from] ParameterError),
    /// The fitted local-work or operator prices are invalid.
    #[error(transparent)]
    Collective(#[from] CollectiveError),
}

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

/// An impossible LogGPO timeline or question.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum TimelineError {
    /// A time that is NaN or infinite, or a negative duration.
    #[error("timeline `{name}` = {value} is invalid: it must be {expected}")]
    OutOfRange {
        /// The field.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// What it must be.
        expected: &'static str,
    },
    /// A wait that arrives before its own non-blocking call.
    #[error("`{wait}` = {wait_time} arrives before `{start}` = {start_time}")]
    WaitBeforeStart {
        /// The wait's field name.
        wait: &'static str,
        /// Its arrival time.
        wait_time: f64,
        /// The call's field name.
        start: &'static str,
        /// Its arrival time.
        start_time: f64,
    },
    /// An overlap ratio that no computation reaches (1 with a non-zero overhead).
    #[error("an overlap ratio of {ratio} cannot be reached: the overhead is {overhead} s")]
    UnreachableRatio {
        /// The requested ratio.
        ratio: f64,
        /// The overhead that always stays exposed.
        overhead: f64,
    },
}

/// A fit that cannot be computed from the data it was given.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum FitError {
    /// Fewer observations than coefficients (or than the method needs).
    #[error("{what}: need at least {needed} points, got {got}")]
    TooFewPoints {
        /// What was being fitted.
        what: &'static str,
        /// The minimum number of points.
        needed: usize,
        /// The number supplied.
        got: usize,
    },
    /// A design matrix or observation vector with the wrong shape.
    #[error("{what}: expected {expected} entries, got {got}")]
    DimensionMismatch {
        /// Which input.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length supplied.
        got: usize,
    },
    /// A NaN or infinite input.
    #[error("{what}: entry {index} is {value}, which is not finite")]
    NonFinite {
        /// Which input.
        what: &'static str,
        /// Position of the entry.
        index: usize,
        /// The rejected value.
        value: f64,
    },
    /// The columns of the design matrix are linearly dependent (or a column is all zero), so the
    /// coefficients are not determined by the data.
    #[error(
        "design matrix has rank {rank} < {columns} columns: the coefficients are not identifiable (column {column} is a combination of the others or zero)"
    )]
    RankDeficient {
        /// Numerical rank found.
        rank: usize,
        /// Number of columns (coefficients).
        columns: usize,
        /// A column that is (numerically) dependent on the others.
        column: usize,
    },
    /// The singular value decomposition did not converge (pathological input).
    #[error("{what}: the singular value decomposition did not converge")]
    NotConverged {
        /// What was being fitted.
        what: &'static str,
    },
    /// A fit that produced an invalid parameter set.
    #[error("fitted parameters are invalid: {0}")]
    InvalidParameters(#[from] ParameterError),
}

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

/// A file or value that could not be loaded, with the path of the offending field (feature
/// `serde`; [`deserialize_with_path`](crate::deserialize_with_path)).
#[cfg(feature = "serde")]
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("at `{path}`: {message}")]
#[non_exhaustive]
pub struct LoadError {
    /// Where the problem is, e.g. `ranges[1].model.gap` (`.` for the top level).
    pub path: String,
    /// What is wrong: the format's message or the validation error.
    pub message: String,
}

/// A text file that cannot be read within its bound
/// ([`limits::read_text_file`](crate::limits::read_text_file)).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum FileError {
    /// The file cannot be opened or read.
    #[error("{path}: cannot read: {message}")]
    Io {
        /// The file, as given.
        path: String,
        /// The system's message.
        message: String,
    },
    /// Not a regular file: a directory, a device (`/dev/zero`), a FIFO or a socket, which may
    /// never end.
    #[error("{path}: not a regular file ({kind}); give a file")]
    NotRegular {
        /// The file, as given.
        path: String,
        /// What it is instead.
        kind: &'static str,
    },
    /// Larger than the bound for its kind of file.
    #[error("{path}: larger than the {limit} bytes a {what} may have")]
    TooLarge {
        /// The file, as given.
        path: String,
        /// What kind of file (`"model file"`, `"GOAL file"`).
        what: &'static str,
        /// The bound, bytes.
        limit: u64,
    },
    /// Not UTF-8 text.
    #[error("{path}: line {line}: not UTF-8 text")]
    NotText {
        /// The file, as given.
        path: String,
        /// 1-based line of the first invalid byte.
        line: usize,
    },
}

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

impl From<ProbeError> for CalibrationError {
    fn from(e: ProbeError) -> Self {
        Self::Probe(e.to_string())
    }
}

/// A schedule that cannot be built or simulated ([`sim`](crate::sim)).
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SimError {
    /// A schedule of 0 ranks.
    #[error("a schedule needs at least one rank, got 0")]
    NoRanks,
    /// A rank (of an operation, or its peer) outside `0..ranks`.
    #[error("{what} = {rank} is outside 0..{ranks}")]
    RankOutOfRange {
        /// Which field (`"rank"`, `"peer"`).
        what: &'static str,
        /// The rejected rank.
        rank: u64,
        /// The schedule's number of ranks.
        ranks: u64,
    },
    /// A dependency that names an operation that does not exist.
    #[error("dependency of operation {op} on operation {on}: only {ops} operations exist")]
    UnknownOperation {
        /// The dependent operation.
        op: u64,
        /// The operation it depends on.
        on: u64,
        /// Number of operations.
        ops: u64,
    },
    /// A dependency between operations of two different ranks (GOAL dependencies are local).
    #[error("operation {op} (rank {rank}) depends on operation {on} of rank {other_rank}")]
    CrossRankDependency {
        /// The dependent operation.
        op: u64,
        /// Its rank.
        rank: u64,
        /// The operation it depends on.
        on: u64,
        /// That operation's rank.
        other_rank: u64,
    },
    /// The dependencies of a rank form a cycle through this operation.
    #[error("the dependencies of rank {rank} form a cycle through operation {op}")]
    Cycle {
        /// The rank.
        rank: u64,
        /// An operation on the cycle.
        op: u64,
    },
    /// A send or receive without a partner: matching by `(source, destination, tag)` in the
    /// order of the operation lists found no counterpart.
    #[error("{kind} {op} of rank {rank} (peer {peer}, tag {tag}) has no matching {missing}")]
    Unmatched {
        /// `"send"` or `"recv"`.
        kind: &'static str,
        /// The operation.
        op: u64,
        /// Its rank.
        rank: u64,
        /// Its peer.
        peer: u64,
        /// Its tag.
        tag: u64,
        /// `"recv"` or `"send"`.
        missing: &'static str,
    },
    /// A send and the receive it matched disagree on the size.
    #[error("send {send} ({send_bytes} bytes) matched recv {recv} of {recv_bytes} bytes")]
    SizeMismatch {
        /// The send.
        send: u64,
        /// Its bytes.
        send_bytes: u64,
        /// The receive.
        recv: u64,
        /// Its bytes.
        recv_bytes: u64,
    },
    /// An invalid time or cost (negative, NaN or infinite).
    #[error("`{name}` = {value} is invalid: it must be finite and >= 0")]
    InvalidTime {
        /// Which quantity.
        name: &'static str,
        /// The rejected value.
        value: f64,
    },
    /// A time above the simulator's bound for it (so that no sum of times overflows).
    #[error("`{name}` = {value:e} s is above the {limit:e} s accepted")]
    TimeTooLarge {
        /// Which quantity.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// The bound, seconds.
        limit: f64,
    },
    /// More operations than the simulator indexes (`u32`).
    #[error("{what}: {count} exceeds the limit of {limit}")]
    TooLarge {
        /// What is counted.
        what: &'static str,
        /// How many were requested.
        count: u64,
        /// The limit.
        limit: u64,
    },
    /// Operations that never ran: their dependencies and messages wait on each other across
    /// ranks (e.g. two ranks that each receive before they send, in rendezvous mode).
    #[error("deadlock: {stuck} operations never ran, first operation {op} of rank {rank}")]
    Deadlock {
        /// Number of operations that never completed.
        stuck: u64,
        /// The first of them.
        op: u64,
        /// Its rank.
        rank: u64,
    },
    /// A collective problem the builder cannot express.
    #[error(transparent)]
    Collective(#[from] CollectiveError),
    /// The schedule and its simulation would need more memory than the budget allows
    /// ([`sim::DEFAULT_MAX_MEMORY`](crate::sim::DEFAULT_MAX_MEMORY) unless set otherwise);
    /// nothing of that size was allocated.
    #[error(
        "the schedule and its simulation need about {needed} bytes ({:.1} GiB), more than the \
         memory budget of {budget} bytes ({:.1} GiB); raise it with --max-memory on the \
         command line, `max_memory` in the library",
        *needed as f64 / f64::from(1u32 << 30),
        *budget as f64 / f64::from(1u32 << 30)
    )]
    MemoryBudget {
        /// The bytes the schedule and its simulation would need (an upper bound).
        needed: u64,
        /// The budget, bytes.
        budget: u64,
    },
}

/// A GOAL schedule text that cannot be read ([`sim::parse_goal`](crate::sim::parse_goal)).
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum GoalError {
    /// A syntax error.
    #[error("line {line}: {message}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// What was expected and what was found.
        message: String,
    },
    /// A construct of the format this reader does not simulate (wildcard source or tag).
    #[error("line {line}: unsupported: {message}")]
    Unsupported {
        /// 1-based line number.
        line: usize,
        /// What is not supported.
        message: String,
    },
    /// The dependencies of a rank form a cycle through the operation at this line.
    #[error("line {line}: the dependencies of rank {rank} form a cycle through {}", if label.is_empty() { "this operation".to_string() } else { format!("`{label}`") })]
    Cycle {
        /// The rank.
        rank: u64,
        /// 1-based line of an operation on the cycle.
        line: usize,
        /// Its label (empty if it has none).
        label: String,
    },
    /// The parsed schedule fails validation.
    #[error("{0}")]
    Schedule(#[from] SimError),
}
