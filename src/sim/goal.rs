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
//! writes (`l<n>: send <bytes>b to <peer> tag <t>`, `… recv <bytes>b from <peer> tag <t>`,
//! `l<n>: calc <t>`, `l<n> requires l<m>`, single spaces, one per line) is read straight from
//! its bytes and appended to the schedule; anything else goes through a reader of one token at
//! a time. Labels `l<n>` of the rank block being read are kept in a vector indexed by `n` (4
//! bytes per entry, `n` up to 2^22), any other label in a hash map of slices of the text
//! ([`LABEL_BYTES`] per entry); both are emptied when the block ends. A dependency is applied as
//! soon as both its labels are known; one naming a label defined later waits for the end of
//! the block, and so do the block's dependencies after it, so that dependencies reach the
//! schedule in the order of the text. The memory read needs is that of the schedule plus the
//! text and the labels of one rank block, counted against the memory budget
//! ([`parse_goal_within`]). A cycle of dependencies is reported with the label and line of an
//! operation on it.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::builder::ScheduleBuilder;
use super::op::{OpId, OpKind};
use super::schedule::Schedule;
use crate::error::{GoalError, SimError};

/// Bytes counted per label of the rank block being read that is not of Schedgen's form `l<n>`
/// (its entry in the block's hash map: the slice of the text, the operation, the map's slack)
/// and per dependency waiting for a label defined later; a label `l<n>` costs 4 bytes per
/// entry of its block's vector, up to the highest `n`.
pub const LABEL_BYTES: u64 = 48;

/// The most characters of the input an error message repeats.
const ECHO: usize = 40;

/// `text`, cut to its first [`ECHO`] characters (`…` marks the cut).
fn echo(text: &str) -> String {
    match text.char_indices().nth(ECHO) {
        None => text.to_string(),
        Some((i, _)) => format!("{}…", &text[..i]),
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok<'a> {
    Word(&'a str),
    Int(u64),
    MinusOne,
    Colon,
    Open,
    Close,
    /// End of a statement (a newline or `;`).
    End,
    /// End of the text.
    Eof,
}

impl std::fmt::Display for Tok<'_> {
    /// What an error message says was found.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Word(w) => write!(f, "`{}`", echo(w)),
            Tok::Int(v) => write!(f, "the number {v}"),
            Tok::MinusOne => f.write_str("`-1`"),
            Tok::Colon => f.write_str("`:`"),
            Tok::Open => f.write_str("`{`"),
            Tok::Close => f.write_str("`}`"),
            Tok::End => f.write_str("the end of the line"),
            Tok::Eof => f.write_str("the end of the file"),
        }
    }
}

fn syntax(line: usize, message: impl Into<String>) -> GoalError {
    GoalError::Syntax {
        line,
        message: message.into(),
    }
}

/// Reads the text one token at a time, each with its 1-based line.
struct Lexer<'a> {
    text: &'a str,
    i: usize,
    line: usize,
}

impl<'a> Lexer<'a> {
    fn next_token(&mut self) -> Result<(Tok<'a>, usize), GoalError> {
        let text = self.text;
        let bytes = text.as_bytes();
        loop {
            let i = self.i;
            let line = self.line;
            let Some(&c) = bytes.get(i) else {
                return Ok((Tok::Eof, line));
            };
            match c {
                b'\n' => {
                    self.line += 1;
                    self.i += 1;
                    return Ok((Tok::End, line));
                }
                b';' => {
                    self.i += 1;
                    return Ok((Tok::End, line));
                }
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    let rest = &bytes[i..];
                    self.i += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                }
                b'/' if bytes.get(i + 1) == Some(&b'*') => {
                    let mut j = i + 2;
                    loop {
                        if j + 1 >= bytes.len() {
                            return Err(syntax(line, "unterminated /* comment"));
                        }
                        if bytes[j] == b'*' && bytes[j + 1] == b'/' {
                            j += 2;
                            break;
                        }
                        if bytes[j] == b'\n' {
                            self.line += 1;
                        }
                        j += 1;
                    }
                    self.i = j;
                }
                b':' => {
                    self.i += 1;
                    return Ok((Tok::Colon, line));
                }
                b'{' => {
                    self.i += 1;
                    return Ok((Tok::Open, line));
                }
                b'}' => {
                    self.i += 1;
                    return Ok((Tok::Close, line));
                }
                b'-' if bytes.get(i + 1) == Some(&b'1')
                    && !bytes.get(i + 2).is_some_and(u8::is_ascii_alphanumeric) =>
                {
                    self.i += 2;
                    return Ok((Tok::MinusOne, line));
                }
                b'0'..=b'9' => {
                    let len = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
                    self.i += len;
                    let digits = &text[i..i + len];
                    let v = digits.parse::<u64>().map_err(|_| {
                        syntax(
                            line,
                            format!("number `{}` does not fit in 64 bits", echo(digits)),
                        )
                    })?;
                    return Ok((Tok::Int(v), line));
                }
                c if c.is_ascii_alphabetic() => {
                    let len = bytes[i..]
                        .iter()
                        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                        .count();
                    self.i += len;
                    return Ok((Tok::Word(&text[i..i + len]), line));
                }
                _ => {
                    let ch = text[i..].chars().next().unwrap_or('?');
                    return Err(syntax(
                        line,
                        format!("unexpected character `{}`", ch.escape_debug()),
                    ));
                }
            }
        }
    }
}

/// A pending dependency of a rank block: `(op label, on label, irequires, line)`.
type PendingDep<'a> = (&'a str, &'a str, bool, usize);

/// A parser with a lookahead of up to two tokens.
struct Parser<'a> {
    lexer: Lexer<'a>,
    ahead: [Option<(Tok<'a>, usize)>; 2],
}

impl<'a> Parser<'a> {
    fn fill(&mut self, k: usize) -> Result<(), GoalError> {
        for j in 0..=k {
            if self.ahead[j].is_none() {
                self.ahead[j] = Some(self.lexer.next_token()?);
            }
        }
        Ok(())
    }
    /// The token `k` (0 or 1) ahead.
    fn peek_at(&mut self, k: usize) -> Result<Tok<'a>, GoalError> {
        self.fill(k)?;
        Ok(self.ahead[k].map_or(Tok::Eof, |t| t.0))
    }
    fn peek(&mut self) -> Result<Tok<'a>, GoalError> {
        self.peek_at(0)
    }
    /// The line of the next token.
    fn line(&mut self) -> Result<usize, GoalError> {
        self.fill(0)?;
        Ok(self.ahead[0].map_or(self.lexer.line, |t| t.1))
    }
    fn next(&mut self) -> Result<Tok<'a>, GoalError> {
        let t = self.peek()?;
        self.ahead = [self.ahead[1], None];
        Ok(t)
    }
    fn int(&mut self, what: &str) -> Result<u64, GoalError> {
        let line = self.line()?;
        match self.next()? {
            Tok::Int(v) => Ok(v),
            Tok::MinusOne => Err(GoalError::Unsupported {
                line,
                message: format!("wildcard {what} -1"),
            }),
            other => Err(syntax(
                line,
                format!("expected {what} (a whole number), found {other}"),
            )),
        }
    }
    fn word(&mut self, expected: &str) -> Result<(), GoalError> {
        let line = self.line()?;
        match self.next()? {
            Tok::Word(w) if w == expected => Ok(()),
            other => Err(syntax(
                line,
                format!("expected `{expected}`, found {other}"),
            )),
        }
    }
    fn end(&mut self) -> Result<(), GoalError> {
        let line = self.line()?;
        match self.peek()? {
            Tok::End => {
                self.next()?;
                Ok(())
            }
            // a `}` may close the block right after a statement
            Tok::Close | Tok::Eof => Ok(()),
            other => Err(syntax(
                line,
                format!("expected the end of the statement, found {other}"),
            )),
        }
    }
    fn skip_ends(&mut self) -> Result<(), GoalError> {
        while self.peek()? == Tok::End {
            self.next()?;
        }
        Ok(())
    }
}

/// Reads a GOAL schedule; `seconds_per_unit` is the length of one `calc` time unit in seconds
/// (1e-9 when the GOAL file counts nanoseconds). The memory budget is
/// [`DEFAULT_MAX_MEMORY`](super::DEFAULT_MAX_MEMORY) ([`parse_goal_within`] sets another).
///
/// # Errors
///
/// [`GoalError::Syntax`] and [`GoalError::Unsupported`] name the line;
/// [`GoalError::Cycle`] names the label and line of an operation on a cycle of dependencies;
/// [`GoalError::Schedule`] when the parsed schedule fails validation otherwise (an unmatched
/// send, a peer out of range, [`SimError::MemoryBudget`]).
///
/// # Examples
///
/// ```
/// use commcost::sim::{SimOptions, parse_goal, simulate};
/// use commcost::{LogGP, Pram};
///
/// let text = "num_ranks 2
/// rank 0 {
///   l1: send 8b to 1 tag 0
///   l2: calc 100
///   l2 requires l1
/// }
/// rank 1 {
///   l1: recv 8b from 0 tag 0
/// }
/// ";
/// let schedule = parse_goal(text, 1e-9)?;
/// assert_eq!(schedule.len(), 3);
/// // PRAM: every message costs 2 µs and no CPU time; the calc costs 100 ns
/// let run = simulate(&schedule, &Pram::new(2e-6)?, &SimOptions::default())?;
/// assert!((run.makespan - 2e-6).abs() < 1e-18);
/// assert!((run.rank_finish[0] - 100e-9).abs() < 1e-18);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn parse_goal(text: &str, seconds_per_unit: f64) -> Result<Schedule, GoalError> {
    parse_goal_within(text, seconds_per_unit, super::memory::DEFAULT_MAX_MEMORY)
}

/// [`parse_goal`] within a memory budget of `max_memory` bytes: the text, the schedule, its
/// simulation ([`stored_schedule_memory`](super::stored_schedule_memory)) and the labels of
/// the rank block being read ([`LABEL_BYTES`] each) must fit, else [`SimError::MemoryBudget`] before the
/// arrays grow beyond it.
///
/// # Errors
///
/// As [`parse_goal`].
///
/// # Examples
///
/// ```
/// use commcost::sim::parse_goal_within;
/// use commcost::{GoalError, SimError};
///
/// let mut text = String::from("num_ranks 1\nrank 0 {\n");
/// for i in 0..10_000 {
///     text.push_str(&format!("l{i}: calc 1\n"));
/// }
/// text.push_str("}\n");
/// assert!(parse_goal_within(&text, 1e-9, 1 << 30).is_ok());
/// assert!(matches!(
///     parse_goal_within(&text, 1e-9, 1 << 16),
///     Err(GoalError::Schedule(SimError::MemoryBudget { budget: 65536, .. }))
/// ));
/// ```
pub fn parse_goal_within(
    text: &str,
    seconds_per_unit: f64,
    max_memory: u64,
) -> Result<Schedule, GoalError> {
    if !(0.0..=crate::limits::MAX_SECONDS).contains(&seconds_per_unit) {
        return Err(SimError::InvalidTime {
            name: "seconds_per_unit",
            value: seconds_per_unit,
        }
        .into());
    }
    let mut p = Parser {
        lexer: Lexer {
            text,
            i: 0,
            line: 1,
        },
        ahead: [None, None],
    };
    p.skip_ends()?;
    let line = p.line()?;
    p.word("num_ranks")
        .map_err(|_| syntax(line, "a GOAL file starts with `num_ranks <N>`"))?;
    let ranks = p.int("number of ranks")?;
    if ranks == 0 {
        return Err(syntax(line, "num_ranks must be at least 1"));
    }
    p.end()?;
    if ranks > super::MAX_RANKS {
        return Err(SimError::TooLarge {
            what: "ranks",
            count: ranks,
            limit: super::MAX_RANKS,
        }
        .into());
    }
    let mut b = ScheduleBuilder::new(ranks);
    b.set_max_memory(max_memory);
    // the text and the ranks within the budget, before anything per rank is allocated
    b.set_extra_memory(text.len() as u64)?;
    // which ranks had their block (one bit each)
    let mut seen = vec![0u64; ranks.div_ceil(64) as usize];
    // the labels of the block being read (their room kept from block to block)
    let mut labels = Labels {
        numbered: Vec::new(),
        high: 0,
        named: LabelMap::default(),
    };
    loop {
        p.skip_ends()?;
        if p.peek()? == Tok::Eof {
            break;
        }
        let line = p.line()?;
        p.word("rank")?;
        let rank = p.int("rank")?;
        if rank >= ranks {
            return Err(syntax(line, format!("rank {rank} >= num_ranks {ranks}")));
        }
        match p.next()? {
            Tok::Open => {}
            other => {
                return Err(syntax(
                    line,
                    format!("expected `{{` after the rank, found {other}"),
                ));
            }
        }
        let (word, bit) = ((rank / 64) as usize, 1u64 << (rank % 64));
        if seen[word] & bit != 0 {
            let first =
                block_line(text, rank).map_or_else(String::new, |l| format!(" at line {l}"));
            return Err(syntax(
                line,
                format!(
                    "a second block for rank {rank} (the first is{first}): give each rank one \
                     block"
                ),
            ));
        }
        seen[word] |= bit;
        rank_block(&mut p, &mut b, &mut labels, rank, ranks, seconds_per_unit)?;
    }
    drop(seen);
    b.build().map_err(|e| match e {
        SimError::Cycle { rank, op } => match locate(text, op) {
            Some((line, label)) => GoalError::Cycle { rank, line, label },
            None => GoalError::Schedule(e),
        },
        e => GoalError::Schedule(e),
    })
}

/// The line of the first `rank <rank> {` of the text: read again, only for the error about a
/// second block.
fn block_line(text: &str, rank: u64) -> Option<usize> {
    let mut lexer = Lexer {
        text,
        i: 0,
        line: 1,
    };
    let mut previous = [Tok::End, Tok::End];
    loop {
        let (tok, line) = lexer.next_token().ok()?;
        match (previous, tok) {
            (_, Tok::Eof) => return None,
            ([Tok::Word("rank"), Tok::Int(r)], Tok::Open) if r == rank => return Some(line),
            _ => {}
        }
        previous = [previous[1], tok];
    }
}

/// The line and label (empty if none) of operation `op` (counted in the order of the text):
/// read again, only when an error names an operation. A statement is an operation when it is
/// `<label>: <kind> …` or `<kind> …` (not `<kind> requires …`), as [`rank_block`] reads it.
fn locate(text: &str, op: u64) -> Option<(usize, String)> {
    let mut lexer = Lexer {
        text,
        i: 0,
        line: 1,
    };
    let mut count = 0u64;
    // the first three tokens of the statement being read
    let mut first: Vec<(Tok, usize)> = Vec::with_capacity(3);
    loop {
        let (tok, line) = lexer.next_token().ok()?;
        let boundary = matches!(tok, Tok::End | Tok::Open | Tok::Close | Tok::Eof);
        if !boundary && first.len() < 3 {
            first.push((tok, line));
        }
        if !boundary && first.len() < 3 {
            continue;
        }
        let is_kind = |t: &Tok| matches!(t, Tok::Word("send" | "recv" | "calc"));
        let found = match first.as_slice() {
            [(Tok::Word(label), _), (Tok::Colon, _), (kind, line), ..] if is_kind(kind) => {
                Some((*line, label.to_string()))
            }
            [(Tok::Word(_), _), (Tok::Colon, _), ..] => None,
            [
                (Tok::Word(_), _),
                (Tok::Word("requires" | "irequires"), _),
                ..,
            ] => None,
            [(kind, line), ..] if is_kind(kind) => Some((*line, String::new())),
            _ => None,
        };
        if let Some(at) = found {
            if count == op {
                return Some(at);
            }
            count += 1;
        }
        // skip to the end of the statement
        let mut end = tok;
        while !matches!(end, Tok::End | Tok::Open | Tok::Close | Tok::Eof) {
            end = lexer.next_token().ok()?.0;
        }
        if end == Tok::Eof {
            return None;
        }
        first.clear();
    }
}

/// The highest `n` of a label `l<n>` kept in a block's table of numbered labels (a vector
/// indexed by `n`, Schedgen's labels): 4 bytes per entry up to the highest `n` used, counted
/// against the memory budget; other labels are hashed.
const MAX_NUMBERED_LABEL: u32 = 1 << 22;

/// `n` of a label `l<n>` written as Schedgen writes it (`l1`, `l2`, …: no sign, no leading
/// zero), at most [`MAX_NUMBERED_LABEL`].
fn numbered(label: &[u8]) -> Option<u32> {
    let digits = label.strip_prefix(b"l")?;
    if digits.is_empty() || digits.len() > 7 || digits[0] == b'0' {
        return None;
    }
    let mut n = 0u32;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u32::from(d - b'0');
    }
    (n <= MAX_NUMBERED_LABEL).then_some(n)
}

/// A small, fast hash of labels (FxHash's multiply-rotate): labels are the text's own, a
/// collision costs only time.
#[derive(Default, Clone, Copy)]
struct LabelHasher(u64);

impl std::hash::Hasher for LabelHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
}

type LabelMap<'a> = HashMap<&'a str, OpId, std::hash::BuildHasherDefault<LabelHasher>>;

/// The labels of one rank block: `l<n>` in a vector indexed by `n` ([`NONE_OP`] where not
/// defined), any other label in a hash map.
struct Labels<'a> {
    numbered: Vec<u32>,
    /// The highest `n` defined in this block (the part of `numbered` to clear).
    high: usize,
    named: LabelMap<'a>,
}

/// No operation has this label.
const NONE_OP: u32 = u32::MAX;

impl<'a> Labels<'a> {
    fn get(&self, label: &str) -> Option<OpId> {
        match numbered(label.as_bytes()) {
            Some(n) => self
                .numbered
                .get(n as usize)
                .filter(|&&op| op != NONE_OP)
                .map(|&op| OpId(op)),
            None => self.named.get(label).copied(),
        }
    }
    fn get_numbered(&self, n: u32) -> Option<OpId> {
        self.numbered
            .get(n as usize)
            .filter(|&&op| op != NONE_OP)
            .map(|&op| OpId(op))
    }
    /// Bytes held (the numbered table, the map at [`LABEL_BYTES`] per entry of capacity).
    fn bytes(&self) -> u64 {
        (self.numbered.capacity() as u64)
            .saturating_mul(4)
            .saturating_add((self.named.capacity() as u64).saturating_mul(LABEL_BYTES))
    }
    /// Empties the table for the next block (keeping its room).
    fn clear(&mut self) {
        let high = self.high.min(self.numbered.len().saturating_sub(1));
        if !self.numbered.is_empty() {
            self.numbered[..=high].fill(NONE_OP);
        }
        self.high = 0;
        self.named.clear();
    }
}

/// A statement of the form Schedgen writes, read straight from the bytes (see
/// [`fast_statement`]).
enum Fast {
    /// `l<n>: send|recv <bytes>b to|from <peer> tag <tag>` (`send` when true).
    Message {
        label: u32,
        send: bool,
        bytes: u64,
        peer: u64,
        tag: u32,
    },
    /// `l<n>: calc <units>`.
    Calc { label: u32, units: u64 },
    /// `l<n> requires|irequires l<m>` (`irequires` when true).
    Dep { op: u32, on: u32, start: bool },
}

/// Reads a decimal number at `*i` (at least one digit, at most 19: no overflow).
fn fast_int(bytes: &[u8], i: &mut usize) -> Option<u64> {
    let start = *i;
    let mut v = 0u64;
    while let Some(&d) = bytes.get(*i) {
        if !d.is_ascii_digit() {
            break;
        }
        if *i - start == 19 {
            return None;
        }
        v = v * 10 + u64::from(d - b'0');
        *i += 1;
    }
    (*i > start).then_some(v)
}

/// Matches `word` at `*i`.
fn fast_word(bytes: &[u8], i: &mut usize, word: &[u8]) -> Option<()> {
    if bytes.get(*i..*i + word.len())? == word {
        *i += word.len();
        Some(())
    } else {
        None
    }
}

/// A label `l<n>` (as [`numbered`]) at `*i`, followed by a byte that cannot continue it.
fn fast_label(bytes: &[u8], i: &mut usize) -> Option<u32> {
    let start = *i;
    fast_word(bytes, i, b"l")?;
    while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
        *i += 1;
    }
    if bytes
        .get(*i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        return None;
    }
    numbered(&bytes[start..*i])
}

/// The statement at `i` when it is one of the three shapes Schedgen writes, with single
/// spaces and ended by a newline, and the position after that newline; `None` for anything
/// else (which the token reader then reads, with its errors). The values are not checked
/// here beyond their syntax.
fn fast_statement(bytes: &[u8], mut i: usize) -> Option<(Fast, usize)> {
    let i = &mut i;
    let label = fast_label(bytes, i)?;
    let statement = match bytes.get(*i)? {
        b':' => {
            fast_word(bytes, i, b": ")?;
            match bytes.get(*i)? {
                b's' | b'r' => {
                    let send = bytes[*i] == b's';
                    fast_word(bytes, i, if send { b"send " } else { b"recv " })?;
                    let size = fast_int(bytes, i)?;
                    fast_word(bytes, i, if send { b"b to " } else { b"b from " })?;
                    let peer = fast_int(bytes, i)?;
                    fast_word(bytes, i, b" tag ")?;
                    let tag = u32::try_from(fast_int(bytes, i)?).ok()?;
                    Fast::Message {
                        label,
                        send,
                        bytes: size,
                        peer,
                        tag,
                    }
                }
                b'c' => {
                    fast_word(bytes, i, b"calc ")?;
                    let units = fast_int(bytes, i)?;
                    Fast::Calc { label, units }
                }
                _ => return None,
            }
        }
        b' ' => {
            *i += 1;
            let start = bytes.get(*i) == Some(&b'i');
            if start {
                *i += 1;
            }
            fast_word(bytes, i, b"requires ")?;
            let on = fast_label(bytes, i)?;
            Fast::Dep {
                op: label,
                on,
                start,
            }
        }
        _ => return None,
    };
    fast_word(bytes, i, b"\n")?;
    Some((statement, *i))
}

fn rank_block<'a>(
    p: &mut Parser<'a>,
    b: &mut ScheduleBuilder,
    labels: &mut Labels<'a>,
    rank: u64,
    ranks: u64,
    seconds_per_unit: f64,
) -> Result<(), GoalError> {
    let mut deps: Vec<PendingDep<'a>> = Vec::new();
    // the labels and pending dependencies of this block, counted against the memory budget
    // before their tables grow
    let text = p.lexer.text.len() as u64;
    let grow = |b: &mut ScheduleBuilder, labels: u64, deps: usize| {
        let bytes = (deps as u64)
            .saturating_mul(LABEL_BYTES)
            .saturating_add(labels)
            .saturating_add(text);
        b.set_extra_memory(bytes).map_err(GoalError::Schedule)
    };
    let bytes = p.lexer.text.as_bytes();
    // a dependency was deferred (it names a label defined later): the block's later ones are
    // deferred too, so that they reach the builder in the order of the text
    let mut deferring = false;
    loop {
        // Schedgen's statements, straight from the bytes (no token is waiting)
        if p.ahead[0].is_none() {
            while bytes.get(p.lexer.i) == Some(&b'\n') {
                p.lexer.i += 1;
                p.lexer.line += 1;
            }
            if let Some((statement, next)) = fast_statement(bytes, p.lexer.i) {
                let line = p.lexer.line;
                let done = match statement {
                    Fast::Message {
                        label,
                        send,
                        bytes,
                        peer,
                        tag,
                    } if peer < ranks => {
                        let op = if send {
                            b.send(rank, peer, tag, bytes)
                        } else {
                            b.recv(rank, peer, tag, bytes)
                        };
                        define_numbered(b, labels, label, op, rank, line, &grow, &deps)?;
                        true
                    }
                    Fast::Calc { label, units } => {
                        let seconds = units as f64 * seconds_per_unit;
                        if seconds > crate::limits::MAX_SECONDS {
                            false
                        } else {
                            let op = b.calc(rank, seconds);
                            define_numbered(b, labels, label, op, rank, line, &grow, &deps)?;
                            true
                        }
                    }
                    Fast::Dep { op, on, start } => {
                        match (deferring, labels.get_numbered(op), labels.get_numbered(on)) {
                            (false, Some(a), Some(c)) => {
                                if start {
                                    b.irequires(a, c);
                                } else {
                                    b.requires(a, c);
                                }
                                true
                            }
                            // deferred: read again by the token reader below
                            _ => false,
                        }
                    }
                    // a peer out of range: the token reader reports it
                    Fast::Message { .. } => false,
                };
                if done {
                    p.lexer.i = next;
                    p.lexer.line += 1;
                    continue;
                }
            }
        }
        p.skip_ends()?;
        let line = p.line()?;
        let mut label = None;
        match (p.peek()?, p.peek_at(1)?) {
            (Tok::Eof, _) => {
                return Err(syntax(line, format!("rank {rank}: missing `}}`")));
            }
            (Tok::Close, _) => {
                p.next()?;
                break;
            }
            (Tok::Word(w), Tok::Colon) => {
                p.next()?;
                p.next()?;
                label = Some(w);
            }
            (Tok::Word(w), Tok::Word(x)) if x == "requires" || x == "irequires" => {
                p.next()?;
                p.next()?;
                let on = match p.next()? {
                    Tok::Word(on) => on,
                    other => {
                        return Err(syntax(line, format!("expected a label, found {other}")));
                    }
                };
                p.end()?;
                let irequires = x == "irequires";
                if !deferring && let (Some(a), Some(c)) = (labels.get(w), labels.get(on)) {
                    if irequires {
                        b.irequires(a, c);
                    } else {
                        b.requires(a, c);
                    }
                    continue;
                }
                deferring = true;
                if deps.len() == deps.capacity() {
                    let next = (deps.capacity() * 2).max(16);
                    grow(b, labels.bytes(), next)?;
                    deps.reserve_exact(next - deps.len());
                }
                deps.push((w, on, irequires, line));
                continue;
            }
            // an unlabelled operation: read below
            (Tok::Word(_), _) => {}
            (other, _) => {
                return Err(syntax(
                    line,
                    format!("expected an operation, a dependency or `}}`, found {other}"),
                ));
            }
        }
        let op = operation(p, b, rank, ranks, seconds_per_unit, line)?;
        if let Some(l) = label {
            match numbered(l.as_bytes()) {
                Some(n) => define_numbered(b, labels, n, op, rank, line, &grow, &deps)?,
                None => {
                    if labels.named.len() == labels.named.capacity() {
                        let next = (labels.named.capacity() * 2).max(16);
                        let more = (next - labels.named.len()) as u64 * LABEL_BYTES;
                        grow(b, labels.bytes().saturating_add(more), deps.capacity())?;
                        labels.named.reserve(next - labels.named.len());
                    }
                    match labels.named.entry(l) {
                        Entry::Occupied(_) => {
                            return Err(syntax(
                                line,
                                format!("label `{}` defined twice in rank {rank}", echo(l)),
                            ));
                        }
                        Entry::Vacant(v) => {
                            v.insert(op);
                        }
                    }
                }
            }
        }
        p.end()?;
    }
    for &(op, on, start, line) in &deps {
        let find = |l: &str| {
            labels.get(l).ok_or_else(|| {
                syntax(
                    line,
                    format!("undefined label `{}` in rank {rank}", echo(l)),
                )
            })
        };
        let (a, c) = (find(op)?, find(on)?);
        if start {
            b.irequires(a, c);
        } else {
            b.requires(a, c);
        }
    }
    drop(deps);
    labels.clear();
    grow(b, labels.bytes(), 0)?;
    Ok(())
}

/// Defines label `l<n>` as `op` (an error if the block defined it already), growing the
/// table within the memory budget.
#[allow(clippy::too_many_arguments)]
fn define_numbered<'a>(
    b: &mut ScheduleBuilder,
    labels: &mut Labels<'a>,
    n: u32,
    op: OpId,
    rank: u64,
    line: usize,
    grow: &impl Fn(&mut ScheduleBuilder, u64, usize) -> Result<(), GoalError>,
    deps: &[PendingDep<'a>],
) -> Result<(), GoalError> {
    if op.0 == NONE_OP {
        // the builder refused the operation: its error, now (nothing more can be added)
        return Err(GoalError::Schedule(b.refusal().unwrap_or(
            SimError::TooLarge {
                what: "operations",
                count: u64::from(NONE_OP),
                limit: super::MAX_OPERATIONS,
            },
        )));
    }
    let n = n as usize;
    if n >= labels.numbered.len() {
        if n >= labels.numbered.capacity() {
            let next = (labels.numbered.capacity() * 2).max(n + 1).max(64);
            let more = (next - labels.numbered.len()) as u64 * 4;
            grow(b, labels.bytes().saturating_add(more), deps.len())?;
            labels.numbered.reserve_exact(next - labels.numbered.len());
        }
        labels.numbered.resize(n + 1, NONE_OP);
    }
    if labels.numbered[n] != NONE_OP {
        return Err(syntax(
            line,
            format!("label `l{n}` defined twice in rank {rank}"),
        ));
    }
    labels.numbered[n] = op.0;
    labels.high = labels.high.max(n);
    Ok(())
}

fn operation(
    p: &mut Parser,
    b: &mut ScheduleBuilder,
    rank: u64,
    ranks: u64,
    seconds_per_unit: f64,
    line: usize,
) -> Result<OpId, GoalError> {
    let kind = match p.next()? {
        Tok::Word(w) => w,
        other => {
            return Err(syntax(
                line,
                format!("expected send, recv or calc, found {other}"),
            ));
        }
    };
    match kind {
        "calc" => {
            let units = p.int("calc time")?;
            optional_fields(p, &["cpu"])?;
            let seconds = units as f64 * seconds_per_unit;
            if seconds > crate::limits::MAX_SECONDS {
                return Err(syntax(
                    line,
                    format!(
                        "calc {units} of {seconds_per_unit:e} s each is {seconds:e} s, more \
                         than the {:e} s a time may be",
                        crate::limits::MAX_SECONDS
                    ),
                ));
            }
            Ok(b.calc(rank, seconds))
        }
        "send" | "recv" => {
            let bytes = p.int("size")?;
            p.word("b")?;
            p.word(if kind == "send" { "to" } else { "from" })?;
            let peer = p.int("peer")?;
            if peer >= ranks {
                return Err(syntax(line, format!("peer {peer} >= num_ranks {ranks}")));
            }
            let tag = optional_fields(p, &["tag", "cpu", "nic"])?;
            let tag = u32::try_from(tag).map_err(|_| syntax(line, "tag exceeds u32"))?;
            Ok(if kind == "send" {
                b.send(rank, peer, tag, bytes)
            } else {
                b.recv(rank, peer, tag, bytes)
            })
        }
        other => Err(syntax(
            line,
            format!("expected send, recv or calc, found `{}`", echo(other)),
        )),
    }
}

/// Reads `field <int>` pairs in the given order (each optional); returns the tag (0 if absent).
fn optional_fields(p: &mut Parser, allowed: &[&str]) -> Result<u64, GoalError> {
    let mut tag = 0;
    let mut next_allowed = 0;
    while let Tok::Word(w) = p.peek()? {
        let line = p.line()?;
        let Some(k) = allowed[next_allowed..].iter().position(|a| *a == w) else {
            return Err(syntax(line, format!("unexpected `{}`", echo(w))));
        };
        p.next()?;
        let v = p.int(w)?;
        if w == "tag" {
            tag = v;
        }
        next_allowed += k + 1;
    }
    Ok(tag)
}

/// Writes a schedule as GOAL, in Schedgen's style: labels `l1, l2, …` per rank, one statement
/// per line, sizes of contiguous bytes, calc times rounded to whole units of `seconds_per_unit`
/// seconds. LogGOPSim's `txt2bin` reads the text ([`write_goal_to`] writes it to a file or
/// any other writer without holding it in memory).
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Broadcast, Problem};
/// use commcost::sim::{ToSchedule, parse_goal, write_goal};
/// use commcost::Message;
///
/// let s = Broadcast::Binomial.schedule(&Problem::new(4, Message::contiguous(8)))?;
/// let text = write_goal(&s, 1e-9);
/// assert!(text.starts_with("num_ranks 4\n"));
/// assert_eq!(parse_goal(&text, 1e-9)?.len(), s.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_goal(schedule: &Schedule, seconds_per_unit: f64) -> String {
    let mut out = Vec::new();
    // writing to a Vec cannot fail
    let _ = write_goal_to(schedule, seconds_per_unit, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// [`write_goal`] to a writer (buffered here: pass the file itself), statement by statement;
/// besides the writer's buffer it holds two `u32` per operation (the operations in rank
/// order and their labels).
///
/// # Errors
///
/// The writer's.
///
/// # Examples
///
/// ```
/// use commcost::sim::{SchedgenPattern, write_goal, write_goal_to};
///
/// let s = SchedgenPattern::Dissemination.schedule(8, 1)?;
/// let mut out = Vec::new();
/// write_goal_to(&s, 1e-9, &mut out)?;
/// assert_eq!(String::from_utf8(out)?, write_goal(&s, 1e-9));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_goal_to<W: std::io::Write>(
    schedule: &Schedule,
    seconds_per_unit: f64,
    out: W,
) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    let n = schedule.len();
    let ranks = schedule.ranks() as usize;
    let rank_of = |i: usize| schedule.rank(OpId(i as u32)).unwrap_or(0) as usize;
    // the operations in rank order (a counting sort), and each one's label within its rank
    let mut start = vec![0u32; ranks + 1];
    for i in 0..n {
        start[rank_of(i) + 1] += 1;
    }
    for r in 0..ranks {
        start[r + 1] += start[r];
    }
    let mut order = vec![0u32; n];
    let mut label = vec![0u32; n];
    {
        let mut next = start.clone();
        for (i, l) in label.iter_mut().enumerate() {
            let r = rank_of(i);
            let at = next[r] as usize;
            order[at] = i as u32;
            *l = next[r] - start[r] + 1;
            next[r] += 1;
        }
    }
    writeln!(out, "num_ranks {}", schedule.ranks())?;
    for r in 0..ranks {
        writeln!(out, "\nrank {r} {{")?;
        let ops = &order[start[r] as usize..start[r + 1] as usize];
        for &i in ops {
            let op = OpId(i);
            let l = label[i as usize];
            match schedule.kind(op) {
                Some(kind @ (OpKind::Send | OpKind::Recv)) => {
                    let send = kind == OpKind::Send;
                    writeln!(
                        out,
                        "l{l}: {} {}b {} {} tag {}",
                        if send { "send" } else { "recv" },
                        schedule.message(op).map_or(0, |m| m.bytes()),
                        if send { "to" } else { "from" },
                        schedule.peer(op).unwrap_or(0),
                        schedule.tag(op).unwrap_or(0)
                    )?;
                }
                _ => {
                    let units = if seconds_per_unit > 0.0 {
                        (schedule.calc_seconds(op).unwrap_or(0.0) / seconds_per_unit).round()
                    } else {
                        0.0
                    };
                    writeln!(out, "l{l}: calc {}", units as u64)?;
                }
            }
        }
        for &i in ops {
            for (d, kind) in schedule.dependents(OpId(i)) {
                let word = match kind {
                    super::Dependency::Requires => "requires",
                    super::Dependency::Irequires => "irequires",
                };
                writeln!(out, "l{} {word} l{}", label[d.index()], label[i as usize])?;
            }
        }
        writeln!(out, "}}")?;
    }
    out.flush()
}
