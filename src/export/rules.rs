//! Open MPI's dynamic rules file: its records, reading ([`FromStr`](std::str::FromStr)) and
//! writing ([`Display`](fmt::Display)).

use std::fmt;

use crate::collectives::ompi::{self, OmpiAlgorithm};
use crate::collectives::{Collective, Family, FamilyAlgorithm};
use crate::export::ExportError;

/// One rule of a block: from message size `size` on, run `algorithm`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmpiRule {
    /// First message size (bytes, in the collective's rules-file convention) the rule applies
    /// to; 0 for a block's first rule.
    pub size: u64,
    /// Open MPI's algorithm ID (1-based; 0 is "use the fixed decision": in files read back, and
    /// written by [`ompi_rules`](super::ompi_rules) with [`OnTie::Defer`](super::OnTie::Defer) where algorithms tie).
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
    pub collective: Collective,
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
    /// use commcost::collectives::Collective;
    /// use commcost::export::OmpiRules;
    ///
    /// let rules: OmpiRules = "1\n7 1\n4 2\n0 6 0 0\n8192 3 0 1024\n".parse()?;
    /// let rule = rules.lookup(Collective::Bcast, 16, 10_000).unwrap();
    /// assert_eq!((rule.algorithm, rule.segment), (3, 1024));
    /// assert!(rules.lookup(Collective::Bcast, 2, 10_000).is_none());
    /// # Ok::<(), commcost::export::ExportError>(())
    /// ```
    pub fn lookup(&self, collective: Collective, processes: u64, size: u64) -> Option<&OmpiRule> {
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
            let collective = Family::Ompi
                .collectives()
                .into_iter()
                .find(|c| u64::from(c.ompi_id()) == id)
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
                        .filter(|&a| a <= collective.ompi_max_algorithm_id())
                        .ok_or_else(|| {
                            err(
                                line,
                                format!(
                                    "{collective} algorithm {algorithm} is not in 0..={}",
                                    collective.ompi_max_algorithm_id()
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
pub(super) fn algorithm_name(collective: Collective, id: u32) -> String {
    struct Name(u32);
    impl ompi::OmpiVisitor for Name {
        type Output = Option<String>;
        fn visit<A: OmpiAlgorithm + FamilyAlgorithm>(self) -> Option<String> {
            let a: A = self.0.to_string().parse().ok()?;
            Some(a.name().to_string())
        }
    }
    ompi::visit(collective, Name(id))
        .ok()
        .flatten()
        .unwrap_or_else(|| "default".into())
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
            writeln!(f, "{} # {}", c.collective.ompi_id(), c.collective.name())?;
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
