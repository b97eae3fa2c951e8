//! LogGOPSim's GOAL text format: read it into a [`Schedule`], write a schedule as GOAL.
//!
//! The grammar follows LogGOPSim's reader (`src/LogGOPSim/txt2bin.re` in the `spcl/LogGOPSim`
//! repository; T. Hoefler, T. Schneider, A. Lumsdaine, "LogGOPSim — Simulating Large-Scale
//! Applications in the LogGOPS Model", HPDC/LSAP 2010) and what its Schedgen writes
//! (`src/Schedgen/schedgen.cpp`):
//!
//! ```text
//! num_ranks <N>
//! rank <r> {
//!   [<label>:] send <bytes>b to <peer> [tag <t>] [cpu <c>] [nic <n>]
//!   [<label>:] recv <bytes>b from <peer> [tag <t>] [cpu <c>] [nic <n>]
//!   [<label>:] calc <time> [cpu <c>]
//!   <label> requires <label>
//!   <label> irequires <label>
//! }
//! ```
//!
//! One statement per line (`;` is also accepted as a separator); `// …` comments to the end of
//! the line and `/* … */` comments, which may span lines; labels are `[a-zA-Z][a-zA-Z0-9_]*`
//! and local to their `rank` block (a dependency may name a label defined later in the same
//! block). The tag defaults to 0. Departures from LogGOPSim, each reported as an error that
//! names the line rather than guessed: wildcard sources and tags (`-1`) are
//! [`GoalError::Unsupported`] (matching here is static, see the [module docs](super)); a label
//! defined twice in one block is a syntax error; a second `rank r { … }` block for a rank that
//! already had one is a syntax error naming both lines (LogGOPSim's reader would append the
//! second block's operations to the first's, with labels local to each block; here each rank
//! is one block, so that a label names one operation of its rank). The `cpu` and `nic` fields
//! are read and ignored: the simulator gives each rank one CPU and one NIC. `calc` times are
//! integers in LogGOPSim's time unit; the caller gives its length in seconds.
//!
//! Reading is one pass over the text, with no token list: a statement of the shape Schedgen
//! writes (`l<n>: send <bytes>b to <peer> tag <t>`, `… recv <bytes>b from <peer> tag <t>`, the
//! tag optional, `l<n>: calc <t>`, `l<n> requires l<m>`, single spaces, one per line) is read
//! straight from its bytes and appended to the schedule; anything else goes through a reader
//! of one token at a time. Labels `l<n>` of the rank block being read are kept in a vector indexed by `n` (4
//! bytes per entry, `n` up to 2^22), any other label in a hash map of slices of the text
//! ([`LABEL_BYTES`] per entry); both are emptied when the block ends. A dependency is applied as
//! soon as both its labels are known; one naming a label defined later waits for the end of
//! the block, and so do the block's dependencies after it, so that dependencies reach the
//! schedule in the order of the text. The memory read needs is that of the schedule plus the
//! text and the labels of one rank block, counted against the memory budget
//! ([`parse_goal_within`]). A cycle of dependencies is reported with the label and line of an
//! operation on it, a message without a partner ([`GoalError::Unmatched`]) with those of its
//! send or receive, a send and receive of different sizes ([`GoalError::SizeMismatch`]) with
//! those of both: found by reading the text again, only then.
//!
//! [`read_goal_file`] reads a file of at least 1 MiB without holding its text: in pieces of
//! about 1 MiB that end before a line `rank …`, each parsed into the schedule before the next
//! is read (with the `parallel` feature by two threads, from the start and from the middle);
//! the text is read only when a piece does not read, for the error and its line (an error of
//! the schedule naming operations finds their lines in pieces too).
//!
//! With the `parallel` feature (off by default) a text of at least 16 MiB is read by two
//! threads, split before a line `rank …` near its
//! middle, each half into a schedule builder of its own within half the budget; the second
//! half's operations are then appended to the first's, in the order of the text, which gives
//! the schedule one pass gives. Should either half not read (an error, a split that lies
//! inside a comment, a rank with a block in both halves) or the schedule read in one pass
//! possibly not fit the budget, the text is read again in one pass, whose error is reported.

mod fast;
mod file;
mod labels;
mod lex;
mod locate;
mod read;
mod write;

pub use file::read_goal_file;
pub(super) use lex::echo;
pub use read::{parse_goal, parse_goal_within};
pub use write::{write_goal, write_goal_to};

/// Bytes counted per label of the rank block being read that is not of Schedgen's form `l<n>`
/// (its entry in the block's hash map: the slice of the text, the operation, the map's slack)
/// and per dependency waiting for a label defined later; a label `l<n>` costs 4 bytes per
/// entry of its block's vector, up to the highest `n`.
pub const LABEL_BYTES: u64 = 48;
