//! The errors shared by the whole crate; the others live next to the module that returns them.
//!
//! * [`MessageError`] — an impossible message layout.
//! * [`ParameterError`] — a parameter set, table or protocol list that fails validation. Every
//!   constructor of a parameter struct returns it, and so does deserialisation (the `serde`
//!   feature routes loading through the same constructors).
//! * [`FileError`] — a text file that cannot be read within its bound.
//! * [`LoadError`] (feature `serde`) — a file or value that could not be loaded.
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

    /// Checks `value > min` and finite (NaN fails); `expected` says so in words for the
    /// message (`"finite and > 1"`).
    pub(crate) fn finite_above(
        name: &'static str,
        value: f64,
        min: f64,
        expected: &'static str,
    ) -> Result<f64, Self> {
        Self::out_of_range_unless(value > min && value.is_finite(), name, value, expected)
    }

    /// Checks `value` in `range` (NaN fails); `expected` says so in words
    /// (`"between 0 and 1"`).
    pub(crate) fn finite_in(
        name: &'static str,
        value: f64,
        range: std::ops::RangeInclusive<f64>,
        expected: &'static str,
    ) -> Result<f64, Self> {
        Self::out_of_range_unless(range.contains(&value), name, value, expected)
    }

    /// Checks `value >= min` and finite (NaN fails); `expected` says so in words.
    pub(crate) fn finite_at_least(
        name: &'static str,
        value: f64,
        min: f64,
        expected: &'static str,
    ) -> Result<f64, Self> {
        Self::out_of_range_unless(value >= min && value.is_finite(), name, value, expected)
    }

    /// `value` when `ok`, else [`OutOfRange`](Self::OutOfRange) naming it.
    fn out_of_range_unless(
        ok: bool,
        name: &'static str,
        value: f64,
        expected: &'static str,
    ) -> Result<f64, Self> {
        if ok {
            Ok(value)
        } else {
            Err(Self::OutOfRange {
                name,
                value,
                expected,
            })
        }
    }

    /// Checks an integer in `range`; `expected` says so in words (`"between 1 and 64"`).
    pub(crate) fn in_range(
        name: &'static str,
        value: u64,
        range: std::ops::RangeInclusive<u64>,
        expected: &'static str,
    ) -> Result<u64, Self> {
        Self::out_of_range_unless(range.contains(&value), name, value as f64, expected)
            .map(|_| value)
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

/// A file or value that could not be loaded, with the path of the offending field (feature
/// `serde`; [`deserialize_with_path`](crate::models::spec::deserialize_with_path)).
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

/// A model file that cannot be loaded
/// ([`model_file::load_model_file`](crate::model_file::load_model_file), feature `json`).
#[cfg(feature = "json")]
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ModelFileError {
    /// The file cannot be read within its bound.
    #[error(transparent)]
    File(#[from] FileError),
    /// Not JSON, or a key given twice in one object (with the line and column).
    #[error("{origin}: not JSON: {message}")]
    Syntax {
        /// The file, as given (or what the text is called).
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// A field that does not load or validate.
    #[error("{origin}: invalid {what}{}: {message}", at_path(path))]
    Invalid {
        /// The file, as given.
        origin: String,
        /// `"model file"` or `"model"`.
        what: &'static str,
        /// The field path (`spec.ranges[1].model.gap`); empty for the top level.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A `commcost_model_file` version this crate does not read.
    #[error(
        "{origin}: commcost_model_file: format version {found} is not supported (this commcost \
         reads version 1)"
    )]
    Version {
        /// The file, as given.
        origin: String,
        /// The version found, as JSON.
        found: String,
    },
    /// Not a model file's shape, or the model asked for is not in it.
    #[error("{origin}: {message}")]
    Selection {
        /// The file, as given.
        origin: String,
        /// What is wrong and what the file has.
        message: String,
    },
}

/// ` at `path`` for a field path, nothing for the top level.
#[cfg(feature = "json")]
fn at_path(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!(" at `{path}`")
    }
}
