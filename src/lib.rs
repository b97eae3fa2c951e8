//! # commcost — predict what communication costs in parallel programs
//!
//! Analytic, calibrated models of point-to-point communication behind one trait,
//! [`CommModel`]: pure functions from a [`Message`] (size and memory layout) to seconds, cheap
//! enough to call inside a runtime scheduler or an MPI algorithm selector.
//!
//! ## Quick start
//!
//! ```
//! use commcost::{CommModel, Message, presets};
//!
//! // Open MPI over InfiniBand, LogGP parameters of Hoefler et al. 2007, Table 2
//! let openib = presets::open_mpi_openib();
//! let t = openib.p2p(&Message::contiguous(64 * 1024));
//! // L + (s - 1) G = 5.96 + 65535 * 0.00103 µs (rendezvous range; Table 2's L is the
//! // end-to-end 1-byte time, LogGP's 2o + L)
//! assert!((t - 73.46105e-6).abs() < 1e-12);
//! ```
//!
//! ## Models
//!
//! | model | type | captures | paper |
//! |---|---|---|---|
//! | LogP | [`LogP`] | latency, CPU overhead, injection gap; fixed small messages | Culler et al. 1993 |
//! | LogGP | [`LogGP`] | LogP + per-byte gap of long messages | Alexandrov et al. 1995 |
//! | PRAM | [`Pram`] | unit cost, the baseline | Fortune & Wyllie 1978 |
//! | protocol ranges | [`Protocols`] | a transport as size ranges (eager / rendezvous), each with its model | Hoefler et al. 2007 |
//! | Mlines | [`MlinesModel`] | messages, bytes and unique memory lines touched (rows vs columns) | the Mlines paper (cache effects) |
//! | LogGPO | [`LogGpo`] | overlap of computation and communication under eager / rendezvous, dependent / independent progress | the LogGPO paper |
//! | log_n P | [`LogNP`] | `n` hops, each with measured unit-stride, strided and gap costs | Cameron, Ge & Sun 2007 |
//! | log_3 P | [`Log3P`] | middleware overhead and strided-data latency around the network | Cameron, Ge & Sun 2007 |
//! | memory logP | [`MemoryLogP`], [`MemoryNetworkLogP`] | copy / pack / unpack cost by size and stride, coupled with network LogP | Cameron & Sun 2003 |
//! | copy-transfer | [`CopyTransfer`] | a chain of copies and transfers with stride-dependent bandwidths | Stricker & Gross 1995 |
//! | pLogP | [`PLogP`] | latency plus size-dependent send / receive overheads and gap (tables) | Kielmann, Bal & Verstoep 2000 |
//!
//! Every classic model converts into [`LogNP`] with identical predictions (`LogNP::from`), and
//! [`LogNP::terms`] gives its complexity count. `docs/MODELS.md` in the repository is a guide to
//! choosing between the models.
//!
//! ## Data flow
//!
//! measurements → [`calibrate`] → parameter structs (validated on construction and on load) →
//! [`CommModel`] → predictions → [`collectives`] and algorithm selection. Models never call
//! calibration; collectives never name a concrete model.
//!
//! Measurements on the user's machine are in [`probe`] (memory copies, row / column
//! marshalling, TCP loopback round trips; MPI behind the `mpi` feature).
//!
//! Supporting pieces: [`Table1D`](table::Table1D) / [`Table2D`](table::Table2D) hold parameters measured at discrete sizes and
//! strides; [`mlines`] counts the unique memory lines of strided layouts exactly, in `O(log L)`;
//! [`calibrate::least_squares`] is the fitting routine every calibration uses and
//! [`calibrate::fit_regression`] fits the Mlines paper's six regression variants;
//! [`presets`] embeds published parameter sets; [`ModelSpec`] stores any model.
//!
//! ## Units
//!
//! Times are seconds (`f64`), sizes and strides bytes (`u64`). The papers quote µs; presets are
//! converted.
//!
//! ## Feature flags
//!
//! * `calibrate` (on by default): [`calibrate`] and [`probe`] — fitting parameters to
//!   measurements and measuring this machine; no further dependencies. A scheduler that only
//!   evaluates models can set `default-features = false` to compile less.
//! * `mpi` (off by default; turns `calibrate` on): `probe::mpi`, measurements over MPI
//!   (rsmpi) — PRTT between two ranks and half round trips with MPI vector datatypes. Needs an
//!   MPI library and libclang.
//! * `serde` (off by default): `Serialize` / `Deserialize` for every parameter struct, table,
//!   [`Message`] and [`ModelSpec`]. Deserialisation runs the same validation as the
//!   constructors, so a loaded file can never hold a value `new` would reject.
//! * `parallel` (off by default): two threads for the large passes — freezing a schedule of
//!   2^16 operations or more ([`sim::ScheduleBuilder::build`], which every schedule builder
//!   ends in), parsing and streaming GOAL text ([`sim::parse_goal`], [`sim::read_goal_file`]),
//!   reading a text file of 16 MiB or more ([`limits::read_text_file`]). Without it the
//!   library starts no thread: every function runs on the calling thread, with the same
//!   results and errors. The command-line tool turns it on.

#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "calibrate")]
#[cfg_attr(docsrs, doc(cfg(feature = "calibrate")))]
pub mod calibrate;
pub mod collectives;
mod error;
pub mod export;
pub mod limits;
mod message;
pub mod mlines;
mod model;
#[cfg(feature = "json")]
#[cfg_attr(docsrs, doc(cfg(feature = "json")))]
pub mod model_file;
pub mod models;
pub mod presets;
#[cfg(feature = "calibrate")]
#[cfg_attr(docsrs, doc(cfg(feature = "calibrate")))]
pub mod probe;
pub mod sim;
pub mod simgrid;
pub mod table;
pub mod tune;
mod util;

#[cfg(feature = "serde")]
pub use error::LoadError;
#[cfg(feature = "json")]
pub use error::ModelFileError;
pub use error::{FileError, MessageError, ParameterError};
pub use message::Message;
pub use model::{AffineCost, CommModel, PiecewiseCost, Quantities};
pub use models::copy_transfer::CopyTransfer;
pub use models::log3p::Log3P;
pub use models::loggp::LogGP;
pub use models::loggpo::LogGpo;
pub use models::lognp::LogNP;
pub use models::logp::LogP;
pub use models::memory_logp::{MemoryLogP, MemoryNetworkLogP};
pub use models::mlines::MlinesModel;
pub use models::plogp::PLogP;
pub use models::pram::Pram;
pub use models::protocol::Protocols;
pub use models::spec::ModelSpec;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The use-case guide (`docs/GUIDE.md`), compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/GUIDE.md")]
pub struct GuideDoctests;
