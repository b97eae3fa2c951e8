//! Tuning files that MPI libraries read: the model's best algorithms, in the library's terms.
//!
//! * [`ompi_rules`]: Open MPI's classic dynamic rules file for the tuned component (read by
//!   Open MPI 4.x and 5.x with `--mca coll_tuned_use_dynamic_rules 1 --mca
//!   coll_tuned_dynamic_rules_filename FILE`), from the algorithms of
//!   [`collectives::ompi`].
//! * [`mpich_json`]: MPICH's collective selection JSON (`MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE`)
//!   from the textbook algorithms MPICH runs ([`MpichAlgorithm`](crate::collectives::MpichAlgorithm)),
//!   for a stated MPICH version ([`MpichVersion`]): complete (MPICH's own default decisions for
//!   what the model does not price) and guarded by each algorithm's preconditions.
//!
//! Both price every candidate of a collective at each (communicator size, message size) point
//! of a grid, take the cheapest, and merge neighbouring points with the same choice into
//! ranges. A choice made at grid point `(P_i, S_j)` applies to communicator sizes
//! `P_i <= P < P_{i+1}` and message sizes `S_j <= S < S_{j+1}`, as Open MPI applies its rules
//! (the last block with comm size `<= P`, the last rule with message size `<= S`); the first
//! message-size rule of each block is widened down to 0, and communicators smaller than the
//! first grid size are left to the library's own decision (Open MPI: no block applies, so its
//! fixed decision; MPICH: the file's first branch, `comm_size<P₁`, holds MPICH's default
//! subtree).
//!
//! Both reject a collective given twice, a communicator size above `2^31 - 1` (the MPI `int`
//! both libraries keep it in) and grids of more than [`MAX_CELLS`] cells.
//!
//! # Message sizes
//!
//! The `sizes` given are in the file's own convention for each collective
//! ([`OmpiCollective::rules_size`]: `m P` for allgather, alltoall, gather and scatter; `m` for
//! the rest; barrier has one rule at 0). For MPICH, `avg_msg_size` is the buffer `m`
//! (per-pair block for alltoall) and `total_msg_size` (allgather, gather, scatter) is `m P`.

use std::fmt;

use crate::collectives::ompi::{self, OmpiAlgorithm, OmpiCollective};
use crate::collectives::{self, LocalWork, Operator, Problem};
use crate::error::CollectiveError;
use crate::{CommModel, Message};

mod error;
mod mpich;

pub use error::ExportError;
pub use mpich::{MpichJsonOptions, MpichVersion, mpich_json, mpich_json_with_options};

/// The most grid cells (communicator sizes × message sizes × collectives) one export prices.
///
/// An export of the full default grid (`--procs 2..4096 --bytes 1..4M`, all collectives) is
/// about 3 000 cells; the bound keeps a mistaken list from running for minutes.
pub const MAX_CELLS: usize = 200_000;

/// The largest communicator size Open MPI and MPICH can hold (a C `int`).
pub const MAX_PROCESSES: u64 = i32::MAX as u64;

/// At most 80 characters of user input, for an error message.
fn echo(s: &str) -> String {
    if s.chars().count() <= 80 {
        s.to_string()
    } else {
        let head: String = s.chars().take(77).collect();
        format!("{head}...")
    }
}

/// No collective twice, no communicator size an MPI `int` cannot hold, a bounded grid.
fn check_collectives(
    collectives: &[OmpiCollective],
    processes: &[u64],
    sizes: &[u64],
) -> Result<(), ExportError> {
    for (i, c) in collectives.iter().enumerate() {
        if collectives[..i].contains(c) {
            return Err(ExportError::Grid {
                what: "collectives",
                detail: format!("{} given twice", c.ompi_name()),
            });
        }
    }
    if let Some(&p) = processes.iter().find(|&&p| p > MAX_PROCESSES) {
        return Err(ExportError::Grid {
            what: "processes",
            detail: format!(
                "communicator size {p} is above {MAX_PROCESSES}, the largest an MPI library's `int` holds"
            ),
        });
    }
    let cells = processes
        .len()
        .saturating_mul(sizes.len())
        .saturating_mul(collectives.len());
    if cells > MAX_CELLS {
        return Err(ExportError::Grid {
            what: "grid",
            detail: format!(
                "{} communicator sizes × {} message sizes × {} collectives = {cells} cells, more than {MAX_CELLS}; use fewer sizes",
                processes.len(),
                sizes.len(),
                collectives.len()
            ),
        });
    }
    Ok(())
}

/// One rule of a block: from message size `size` on, run `algorithm`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmpiRule {
    /// First message size (bytes, in the collective's rules-file convention) the rule applies
    /// to; 0 for a block's first rule.
    pub size: u64,
    /// Open MPI's algorithm ID (1-based; 0 is "use the fixed decision": in files read back, and
    /// written by [`ompi_rules_with_options`] with [`OnTie::Defer`] where algorithms tie).
    pub algorithm: u32,
    /// The `faninout` field (the chain fan-out, else 0).
    pub faninout: u64,
    /// The `segsize` field, bytes (0 = unsegmented).
    pub segment: u64,
    /// The algorithm as this crate writes it (`chain:segment=8192,fanout=4`), for the comment
    /// (in a file read back: the algorithm's name).
    pub label: String,
}

/// The rules of one communicator size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmpiBlock {
    /// The smallest communicator size the block applies to.
    pub processes: u64,
    /// Rules, message sizes strictly increasing, the first at 0.
    pub rules: Vec<OmpiRule>,
}

/// The blocks of one collective.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmpiCollectiveRules {
    /// The collective.
    pub collective: OmpiCollective,
    /// Blocks, communicator sizes strictly increasing.
    pub blocks: Vec<OmpiBlock>,
}

/// An Open MPI dynamic rules file; [`Display`](fmt::Display) writes it.
///
/// The format (Open MPI `coll_tuned_dynamic_file.c`): decimal integers separated by white
/// space, `#` to the end of the line a comment — the number of collectives; per collective its
/// ID and number of communicator-size blocks; per block the communicator size and number of
/// rules; per rule `msg_size algorithm faninout segsize`. Open MPI reads the numbers with C's
/// `%li`, so none is written with a leading zero, and rejects the whole file (silently) when a
/// block's first message size is not 0.
///
/// # Examples
///
/// ```
/// use commcost::export::OmpiRules;
///
/// // allreduce (2): from 4 processes, recursive doubling (3), Rabenseifner (6) from 64 KiB
/// let rules: OmpiRules = "1\n2 1\n4 2\n0 3 0 0\n65536 6 0 0\n".parse()?;
/// let text = rules.to_string();
/// assert!(text.contains("65536 6 0 0 # rabenseifner"));
/// assert_eq!(text.parse::<OmpiRules>()?, rules);
/// # Ok::<(), commcost::export::ExportError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmpiRules {
    /// One entry per collective, in the order asked for.
    pub collectives: Vec<OmpiCollectiveRules>,
}

impl OmpiRules {
    /// The rule Open MPI applies to `collective` on `processes` processes and a message of
    /// `size` bytes (rules-file convention): the last block whose communicator size is
    /// `<= processes`, then its last rule whose message size is `<= size`. `None` when the file
    /// has no such block (Open MPI then uses its fixed decision).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::ompi::OmpiCollective;
    /// use commcost::export::OmpiRules;
    ///
    /// let rules: OmpiRules = "1\n7 1\n4 2\n0 6 0 0\n8192 3 0 1024\n".parse()?;
    /// let rule = rules.lookup(OmpiCollective::Bcast, 16, 10_000).unwrap();
    /// assert_eq!((rule.algorithm, rule.segment), (3, 1024));
    /// assert!(rules.lookup(OmpiCollective::Bcast, 2, 10_000).is_none());
    /// # Ok::<(), commcost::export::ExportError>(())
    /// ```
    pub fn lookup(
        &self,
        collective: OmpiCollective,
        processes: u64,
        size: u64,
    ) -> Option<&OmpiRule> {
        let c = self
            .collectives
            .iter()
            .find(|c| c.collective == collective)?;
        let block = c.blocks.iter().rev().find(|b| b.processes <= processes)?;
        block.rules.iter().rev().find(|r| r.size <= size)
    }
}

/// Reads a rules file as Open MPI 4.1 does, and checks it more strictly than Open MPI (which
/// silently falls back to its fixed decisions on a malformed file).
///
/// # Errors
///
/// [`ExportError::Parse`] naming the line: a token that is not a decimal integer (or has a
/// leading zero, which C's `%li` would read as octal), a file that ends early or has numbers
/// left over, a collective this crate does not price (or twice), an algorithm ID above the
/// collective's range (0, "use the fixed decision", is accepted), a block whose first message
/// size is not 0, communicator or message sizes not strictly increasing.
impl std::str::FromStr for OmpiRules {
    type Err = ExportError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut tokens: Vec<(usize, u64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let data = line.split('#').next().unwrap_or("");
            for t in data.split_whitespace() {
                let bad = |detail: String| ExportError::Parse {
                    line: i + 1,
                    detail,
                };
                if !t.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad(format!("`{t}` is not a decimal integer")));
                }
                if t.len() > 1 && t.starts_with('0') {
                    return Err(bad(format!("`{t}` has a leading zero (read as octal)")));
                }
                let v = t
                    .parse::<u64>()
                    .map_err(|_| bad(format!("`{t}` is too large")))?;
                tokens.push((i + 1, v));
            }
        }
        let last_line = text.lines().count().max(1);
        let mut it = tokens.into_iter().peekable();
        let mut next = |what: &str| {
            it.next().ok_or_else(|| ExportError::Parse {
                line: last_line,
                detail: format!("the file ends before {what}"),
            })
        };
        let err = |line: usize, detail: String| ExportError::Parse { line, detail };
        let (_, n) = next("the number of collectives")?;
        let mut collectives: Vec<OmpiCollectiveRules> = Vec::new();
        for _ in 0..n {
            let (line, id) = next("a collective ID")?;
            let collective = OmpiCollective::ALL
                .iter()
                .copied()
                .find(|c| u64::from(c.id()) == id)
                .ok_or_else(|| {
                    err(
                        line,
                        format!("collective ID {id} is not one this crate prices"),
                    )
                })?;
            if collectives.iter().any(|c| c.collective == collective) {
                return Err(err(line, format!("collective {collective} given twice")));
            }
            let (_, n_blocks) = next("the number of communicator sizes")?;
            let mut blocks: Vec<OmpiBlock> = Vec::new();
            for _ in 0..n_blocks {
                let (line, processes) = next("a communicator size")?;
                if blocks.last().is_some_and(|b| b.processes >= processes) {
                    return Err(err(line, "communicator sizes must increase".into()));
                }
                let (_, n_rules) = next("the number of message sizes")?;
                let mut rules: Vec<OmpiRule> = Vec::new();
                for _ in 0..n_rules {
                    let (line, size) = next("a message size")?;
                    let (_, algorithm) = next("an algorithm ID")?;
                    let (_, faninout) = next("a fan-in/out")?;
                    let (_, segment) = next("a segment size")?;
                    if rules.is_empty() && size != 0 {
                        return Err(err(
                            line,
                            format!("a block's first message size must be 0, got {size}"),
                        ));
                    }
                    if rules.last().is_some_and(|r| r.size >= size) {
                        return Err(err(line, "message sizes must increase".into()));
                    }
                    let algorithm = u32::try_from(algorithm)
                        .ok()
                        .filter(|&a| a <= collective.max_algorithm_id())
                        .ok_or_else(|| {
                            err(
                                line,
                                format!(
                                    "{collective} algorithm {algorithm} is not in 0..={}",
                                    collective.max_algorithm_id()
                                ),
                            )
                        })?;
                    rules.push(OmpiRule {
                        size,
                        algorithm,
                        faninout,
                        segment,
                        label: algorithm_name(collective, algorithm),
                    });
                }
                if rules.is_empty() {
                    return Err(err(line, "a block needs at least one rule".into()));
                }
                blocks.push(OmpiBlock { processes, rules });
            }
            collectives.push(OmpiCollectiveRules { collective, blocks });
        }
        if let Some((line, v)) = it.next() {
            return Err(err(line, format!("number {v} after the last collective")));
        }
        Ok(Self { collectives })
    }
}

/// The kebab-case name of algorithm `id` of `collective` (`default` for 0).
fn algorithm_name(collective: OmpiCollective, id: u32) -> String {
    fn name<A: OmpiAlgorithm>(id: u32) -> String {
        id.to_string()
            .parse::<A>()
            .map(|a| a.name().to_string())
            .unwrap_or_else(|_| "default".into())
    }
    match collective {
        OmpiCollective::Allgather => name::<ompi::Allgather>(id),
        OmpiCollective::Allreduce => name::<ompi::Allreduce>(id),
        OmpiCollective::Alltoall => name::<ompi::Alltoall>(id),
        OmpiCollective::Barrier => name::<ompi::Barrier>(id),
        OmpiCollective::Bcast => name::<ompi::Bcast>(id),
        OmpiCollective::Gather => name::<ompi::Gather>(id),
        OmpiCollective::Reduce => name::<ompi::Reduce>(id),
        OmpiCollective::ReduceScatter => name::<ompi::ReduceScatter>(id),
        OmpiCollective::Scatter => name::<ompi::Scatter>(id),
    }
}

impl fmt::Display for OmpiRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "# Open MPI coll_tuned dynamic rules, written by commcost {}",
            env!("CARGO_PKG_VERSION")
        )?;
        writeln!(
            f,
            "# mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE"
        )?;
        writeln!(f, "{} # collectives", self.collectives.len())?;
        for c in &self.collectives {
            writeln!(f, "{} # {}", c.collective.id(), c.collective.ompi_name())?;
            writeln!(f, "{} # communicator sizes", c.blocks.len())?;
            for b in &c.blocks {
                writeln!(f, "{} # communicator size", b.processes)?;
                writeln!(f, "{} # message sizes", b.rules.len())?;
                for r in &b.rules {
                    writeln!(
                        f,
                        "{} {} {} {} # {}",
                        r.size, r.algorithm, r.faninout, r.segment, r.label
                    )?;
                }
            }
        }
        Ok(())
    }
}

fn check_grid(what: &'static str, axis: &[u64], min: u64) -> Result<(), ExportError> {
    if axis.is_empty() || axis.windows(2).any(|w| w[1] <= w[0]) {
        return Err(ExportError::Grid {
            what,
            detail: "must be non-empty and strictly increasing".into(),
        });
    }
    if axis[0] < min {
        return Err(ExportError::Grid {
            what,
            detail: format!("values must be at least {min}, got {}", axis[0]),
        });
    }
    Ok(())
}

/// The model's best Open MPI algorithms as a dynamic rules file, operators free.
///
/// Same as [`ompi_rules_with_operator`] with [`Operator::FREE`].
///
/// # Errors
///
/// As [`ompi_rules_with_operator`].
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::OmpiCollective;
/// use commcost::{export, presets};
///
/// let openib = presets::open_mpi_openib();
/// let rules = export::ompi_rules(
///     &openib,
///     &[OmpiCollective::Bcast, OmpiCollective::Allreduce],
///     &[2, 4, 8],
///     &[1, 1024, 65536, 1 << 20],
/// )?;
/// let text = rules.to_string();
/// assert!(text.contains("2 # collectives"));
/// // every block starts at message size 0
/// assert!(rules.collectives.iter().all(|c| c.blocks.iter().all(|b| b.rules[0].size == 0)));
/// # Ok::<(), commcost::export::ExportError>(())
/// ```
pub fn ompi_rules(
    model: &dyn CommModel,
    collectives: &[OmpiCollective],
    processes: &[u64],
    sizes: &[u64],
) -> Result<OmpiRules, ExportError> {
    ompi_rules_with_operator(model, collectives, processes, sizes, Operator::FREE)
}

/// The model's best Open MPI algorithms as a dynamic rules file, reductions (allreduce, reduce,
/// reduce_scatter) priced with `operator`.
///
/// For each collective and each communicator size `P` of `processes`, every candidate of the
/// collective's enum ([`Algorithm::candidates`](crate::collectives::Algorithm::candidates)) is priced at each size `S` of `sizes`, on a
/// contiguous message of [`OmpiCollective::problem_bytes`]`(S, P)` bytes; the cheapest becomes
/// the rule at `S` (0 for the first). Equal neighbouring rules merge, and a block equal to the
/// previous block is left out. Open MPI's `two_proc` algorithms fail on more than 2 processes,
/// and a block covers every communicator size up to the next block, so they are chosen only
/// for a block at `P = 2` followed by one at `P = 3`.
///
/// # Errors
///
/// [`ExportError::Grid`] for an empty or unsorted `processes` or `sizes`, or a communicator
/// size of 0; [`ExportError::Collective`] if a candidate cannot be priced.
///
/// # Examples
///
/// ```
/// use commcost::collectives::Operator;
/// use commcost::collectives::ompi::OmpiCollective;
/// use commcost::{export, presets};
///
/// let openib = presets::open_mpi_openib();
/// // a sum of doubles at 1 ns per byte
/// let sum = Operator::new(0.0, 1e-9)?;
/// let rules = export::ompi_rules_with_operator(
///     &openib,
///     &[OmpiCollective::Allreduce],
///     &[4, 16],
///     &[8, 1 << 16, 1 << 22],
///     sum,
/// )?;
/// let block = &rules.collectives[0].blocks[0];
/// assert_eq!(block.processes, 4);
/// assert_eq!(block.rules[0].size, 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn ompi_rules_with_operator(
    model: &dyn CommModel,
    collectives: &[OmpiCollective],
    processes: &[u64],
    sizes: &[u64],
    operator: Operator,
) -> Result<OmpiRules, ExportError> {
    ompi_rules_with_options(
        model,
        collectives,
        processes,
        sizes,
        &OmpiRulesOptions {
            operator,
            ..OmpiRulesOptions::default()
        },
    )
}

/// What an exported rule names where several algorithms (different Open MPI ids) tie for the
/// cheapest: equal costs within a relative `1e-9` — on 2 processes many algorithms send the
/// same single message, and no term of the model tells them apart. Variants of one algorithm
/// (segment sizes, fan-outs) that tie are not a tie between algorithms: the rule names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnTie {
    /// The tied algorithm of the previous (smaller) message size if it is among them, else the
    /// first tied one in the collective's candidate order: every rule names an algorithm.
    #[default]
    FirstCandidate,
    /// Algorithm `0`: Open MPI's own fixed decision, which the file then leaves in place. The
    /// model has no preference between the tied algorithms, so it overrides Open MPI only where
    /// it has one.
    Defer,
}

/// Options of [`ompi_rules_with_options`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OmpiRulesOptions {
    /// The reduction operator of allreduce, reduce and reduce_scatter ([`Operator::FREE`]:
    /// pure communication).
    pub operator: Operator,
    /// Rules where algorithms tie.
    pub on_tie: OnTie,
    /// The smallest predicted gain over Open MPI's own choice worth a rule, as a fraction:
    /// with `Some(g)` a rule names the model's pick only where its predicted time is below
    /// `(1 - g)` times that of the algorithm Open MPI 4.1.4's fixed decision runs
    /// ([`fixed_algorithm`](ompi::fixed_algorithm), priced by the same model); elsewhere it
    /// writes algorithm `0` (Open MPI decides). `Some(0.0)` defers wherever the fixed decision
    /// is predicted as fast as the pick; `None` (the default) never compares.
    pub min_gain: Option<f64>,
    /// The prices of copies and temporary buffers every algorithm is charged for
    /// ([`LocalWork::FREE`]: messages and operator only).
    pub local: LocalWork,
}

impl Default for OmpiRulesOptions {
    fn default() -> Self {
        Self {
            operator: Operator::FREE,
            on_tie: OnTie::FirstCandidate,
            min_gain: None,
            local: LocalWork::FREE,
        }
    }
}

/// [`ompi_rules_with_operator`] with every option: the reduction operator and what a rule
/// names where algorithms tie ([`OnTie::Defer`] writes algorithm `0`, Open MPI's fixed
/// decision, there).
///
/// # Errors
///
/// As [`ompi_rules_with_operator`].
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::OmpiCollective;
/// use commcost::export::{self, OmpiRulesOptions, OnTie};
/// use commcost::presets;
///
/// let openib = presets::open_mpi_openib();
/// let options = OmpiRulesOptions { on_tie: OnTie::Defer, ..OmpiRulesOptions::default() };
/// // on 2 processes a one-message broadcast is the same message for most algorithms
/// let rules = export::ompi_rules_with_options(
///     &openib, &[OmpiCollective::Bcast], &[2, 64], &[8, 1 << 20], &options)?;
/// assert_eq!(rules.lookup(OmpiCollective::Bcast, 2, 8).unwrap().algorithm, 0);
/// // on 64 processes the model has a preference
/// assert_ne!(rules.lookup(OmpiCollective::Bcast, 64, 8).unwrap().algorithm, 0);
/// # Ok::<(), commcost::export::ExportError>(())
/// ```
pub fn ompi_rules_with_options(
    model: &dyn CommModel,
    collectives: &[OmpiCollective],
    processes: &[u64],
    sizes: &[u64],
    options: &OmpiRulesOptions,
) -> Result<OmpiRules, ExportError> {
    check_grid("processes", processes, 1)?;
    check_grid("sizes", sizes, 0)?;
    check_collectives(collectives, processes, sizes)?;
    if let Some(g) = options.min_gain
        && !(0.0..1.0).contains(&g)
    {
        return Err(ExportError::Grid {
            what: "min_gain",
            detail: format!("{g} is not a fraction in [0, 1)"),
        });
    }
    let grid = Grid {
        model,
        processes,
        sizes,
        operator: options.operator,
        on_tie: options.on_tie,
        min_gain: options.min_gain,
        local: options.local,
    };
    let collectives = collectives
        .iter()
        .map(|&c| {
            let blocks = match c {
                OmpiCollective::Allgather => grid.blocks::<ompi::Allgather>(),
                OmpiCollective::Allreduce => grid.blocks::<ompi::Allreduce>(),
                OmpiCollective::Alltoall => grid.blocks::<ompi::Alltoall>(),
                OmpiCollective::Barrier => grid.blocks::<ompi::Barrier>(),
                OmpiCollective::Bcast => grid.blocks::<ompi::Bcast>(),
                OmpiCollective::Gather => grid.blocks::<ompi::Gather>(),
                OmpiCollective::Reduce => grid.blocks::<ompi::Reduce>(),
                OmpiCollective::ReduceScatter => grid.blocks::<ompi::ReduceScatter>(),
                OmpiCollective::Scatter => grid.blocks::<ompi::Scatter>(),
            }?;
            Ok(OmpiCollectiveRules {
                collective: c,
                blocks,
            })
        })
        .collect::<Result<Vec<_>, ExportError>>()?;
    Ok(OmpiRules { collectives })
}

/// Open MPI 4.1.4's own fixed decisions ([`ompi::fixed_decision`]) written as a rules file:
/// one block per communicator size of `processes`, commutative operators, every rule with
/// segment size and fan-out 0 (what the fixed decisions pass). Open MPI given this file runs
/// what it runs without one, at those communicator sizes — which
/// `scripts/ompi_rules_check.sh --run-with none FILE` checks against the real library; and a
/// rules file to edit by hand starts from it.
///
/// # Errors
///
/// [`ExportError::Grid`] for an empty or unsorted `processes`, a communicator size of 0 or
/// above [`MAX_PROCESSES`], or a collective given twice.
///
/// # Examples
///
/// ```
/// use commcost::collectives::ompi::OmpiCollective;
/// use commcost::export;
///
/// let rules = export::ompi_fixed_rules(&[OmpiCollective::Allgather], &[4])?;
/// // Open MPI decides allgather on the per-process block, the file on the total: from 4
/// // processes on, recursive doubling (3) at every size
/// let rule = rules.lookup(OmpiCollective::Allgather, 4, 1 << 20).unwrap();
/// assert_eq!((rule.algorithm, rule.segment, rule.faninout), (3, 0, 0));
/// # Ok::<(), commcost::export::ExportError>(())
/// ```
pub fn ompi_fixed_rules(
    collectives: &[OmpiCollective],
    processes: &[u64],
) -> Result<OmpiRules, ExportError> {
    check_grid("processes", processes, 1)?;
    check_collectives(collectives, processes, &[0])?;
    let collectives = collectives
        .iter()
        .map(|&c| {
            let mut blocks: Vec<OmpiBlock> = Vec::new();
            for &p in processes {
                let mut rules: Vec<OmpiRule> = Vec::new();
                for &(from, algorithm) in ompi::fixed_rules(c, p, true) {
                    let size = c.rules_size(from, p);
                    // a per-process threshold times P can saturate: drop rules that collapse
                    if rules.last().is_some_and(|r| r.size >= size) {
                        continue;
                    }
                    rules.push(OmpiRule {
                        size,
                        algorithm,
                        faninout: 0,
                        segment: 0,
                        label: format!("fixed decision: {}", algorithm_name(c, algorithm)),
                    });
                }
                if blocks.last().is_some_and(|b| b.rules == rules) {
                    continue;
                }
                blocks.push(OmpiBlock {
                    processes: p,
                    rules,
                });
            }
            OmpiCollectiveRules {
                collective: c,
                blocks,
            }
        })
        .collect();
    Ok(OmpiRules { collectives })
}

struct Grid<'a> {
    model: &'a dyn CommModel,
    processes: &'a [u64],
    sizes: &'a [u64],
    operator: Operator,
    on_tie: OnTie,
    min_gain: Option<f64>,
    local: LocalWork,
}

impl Grid<'_> {
    fn blocks<A: OmpiAlgorithm>(&self) -> Result<Vec<OmpiBlock>, ExportError> {
        let barrier = A::COLLECTIVE == OmpiCollective::Barrier;
        let sizes: &[u64] = if barrier { &[0] } else { self.sizes };
        let mut blocks: Vec<OmpiBlock> = Vec::new();
        for (i, &p) in self.processes.iter().enumerate() {
            let two_proc_allowed = p == 2 && self.processes.get(i + 1) == Some(&3);
            let mut rules: Vec<OmpiRule> = Vec::new();
            for &s in sizes {
                let bytes = A::COLLECTIVE.problem_bytes(s, p);
                let problem = Problem::new(p, Message::contiguous(bytes))
                    .with_operator(self.operator)
                    .with_local(self.local);
                let previous = rules.last().map(|r| (r.algorithm, r.faninout, r.segment));
                let (choice, tied) = choose::<A>(
                    self.model,
                    &problem,
                    |a| two_proc_allowed || !a.ompi_name().starts_with("two_proc"),
                    |a| previous == Some((a.ompi_id(), a.faninout(), a.segment_size())),
                )?;
                let size = if rules.is_empty() { 0 } else { s };
                // variants of one algorithm that differ only in a segment size or fan-out the
                // message does not reach are not a choice between algorithms
                let tied = tied.iter().any(|a| a.ompi_id() != choice.ompi_id());
                let small_gain = match self.min_gain {
                    Some(g) => {
                        let fixed: A = ompi::fixed_algorithm(p, bytes, true).map_err(|e| {
                            ExportError::Grid {
                                what: "fixed decision",
                                detail: e.to_string(),
                            }
                        })?;
                        let ours = choice.cost(self.model, &problem)?;
                        let theirs = fixed.cost(self.model, &problem)?;
                        ours >= (1.0 - g) * theirs
                    }
                    None => false,
                };
                let rule = if small_gain || (tied && self.on_tie == OnTie::Defer) {
                    OmpiRule {
                        size,
                        algorithm: 0,
                        faninout: 0,
                        segment: 0,
                        label: "default".into(),
                    }
                } else {
                    OmpiRule {
                        size,
                        algorithm: choice.ompi_id(),
                        faninout: choice.faninout(),
                        segment: choice.segment_size(),
                        label: choice.to_string(),
                    }
                };
                let same = rules.last().is_some_and(|r| {
                    (r.algorithm, r.faninout, r.segment)
                        == (rule.algorithm, rule.faninout, rule.segment)
                });
                if !same {
                    rules.push(rule);
                }
            }
            if blocks.last().is_some_and(|b| b.rules == rules) {
                continue;
            }
            blocks.push(OmpiBlock {
                processes: p,
                rules,
            });
        }
        Ok(blocks)
    }
}

/// Relative cost difference below which two algorithms count as equally fast.
const TIE: f64 = 1e-9;

/// The cheapest allowed candidate of `problem`. Candidates within a relative [`TIE`] of the
/// cheapest count as equal (on 2 processes many algorithms are the same single message, and
/// rounding must not make the file alternate between them): the one `keep` accepts (the
/// previous rule's algorithm) if it is among them, else the first in candidate order; and
/// every tied candidate.
fn choose<A: collectives::Algorithm>(
    model: &dyn CommModel,
    problem: &Problem,
    allowed: impl Fn(&A) -> bool,
    keep: impl Fn(&A) -> bool,
) -> Result<(A, Vec<A>), CollectiveError> {
    let mut priced = Vec::new();
    for a in A::candidates(model, problem) {
        if allowed(&a) {
            let cost = a.cost(model, problem)?;
            priced.push((a, cost));
        }
    }
    let cheapest = priced.iter().map(|&(_, c)| c).fold(f64::INFINITY, f64::min);
    let limit = cheapest + cheapest.abs() * TIE;
    let ties: Vec<A> = priced
        .into_iter()
        .filter(|&(_, c)| c <= limit)
        .map(|(a, _)| a)
        .collect();
    let first = *ties.first().ok_or(CollectiveError::EmptyRange {
        what: "candidates",
        detail: format!("no allowed algorithm on {} processes", problem.processes),
    })?;
    let pick = ties.iter().copied().find(|a| keep(a)).unwrap_or(first);
    Ok((pick, ties))
}
