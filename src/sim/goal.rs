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
//! defined twice in one block is a syntax error. The `cpu` and `nic` fields are read and
//! ignored: the simulator gives each rank one CPU and one NIC. `calc` times are integers in
//! LogGOPSim's time unit; the caller gives its length in seconds.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::schedule::{OpId, OpKind, Schedule, ScheduleBuilder};
use crate::error::GoalError;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Int(u64),
    MinusOne,
    Colon,
    Open,
    Close,
    /// End of a statement (a newline or `;`).
    End,
}

fn syntax(line: usize, message: impl Into<String>) -> GoalError {
    GoalError::Syntax {
        line,
        message: message.into(),
    }
}

/// Splits the text into tokens, each with its 1-based line.
fn lex(text: &str) -> Result<Vec<(Tok, usize)>, GoalError> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut line = 1usize;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\n' => {
                out.push((Tok::End, line));
                line += 1;
                i += 1;
            }
            b';' => {
                out.push((Tok::End, line));
                i += 1;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let open = line;
                i += 2;
                loop {
                    if i + 1 >= bytes.len() {
                        return Err(syntax(open, "unterminated /* comment"));
                    }
                    if bytes[i] == b'*' && bytes[i + 1] == b'/' {
                        i += 2;
                        break;
                    }
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
            b':' => {
                out.push((Tok::Colon, line));
                i += 1;
            }
            b'{' => {
                out.push((Tok::Open, line));
                i += 1;
            }
            b'}' => {
                out.push((Tok::Close, line));
                i += 1;
            }
            b'-' if bytes.get(i + 1) == Some(&b'1')
                && !bytes.get(i + 2).is_some_and(u8::is_ascii_alphanumeric) =>
            {
                out.push((Tok::MinusOne, line));
                i += 2;
            }
            b'0'..=b'9' => {
                let start = i;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                let digits = &text[start..i];
                let v = digits
                    .parse::<u64>()
                    .map_err(|_| syntax(line, format!("number `{digits}` does not fit in u64")))?;
                out.push((Tok::Int(v), line));
            }
            c if c.is_ascii_alphabetic() => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                out.push((Tok::Word(text[start..i].to_string()), line));
            }
            _ => {
                let ch = text[i..].chars().next().unwrap_or('?');
                return Err(syntax(line, format!("unexpected character `{ch}`")));
            }
        }
    }
    out.push((Tok::End, line));
    Ok(out)
}

/// A pending dependency of a rank block: `(op label, on label, irequires, line)`.
type PendingDep = (String, String, bool, usize);

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        self.toks.get(self.pos).map_or(&Tok::End, |t| &t.0)
    }
    fn line(&self) -> usize {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(1, |t| t.1)
    }
    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        self.pos += 1;
        t
    }
    fn int(&mut self, what: &str) -> Result<u64, GoalError> {
        let line = self.line();
        match self.next() {
            Tok::Int(v) => Ok(v),
            Tok::MinusOne => Err(GoalError::Unsupported {
                line,
                message: format!("wildcard {what} -1"),
            }),
            other => Err(syntax(
                line,
                format!("expected {what} (an integer), found {other:?}"),
            )),
        }
    }
    fn word(&mut self, expected: &str) -> Result<(), GoalError> {
        let line = self.line();
        match self.next() {
            Tok::Word(w) if w == expected => Ok(()),
            other => Err(syntax(
                line,
                format!("expected `{expected}`, found {other:?}"),
            )),
        }
    }
    fn end(&mut self) -> Result<(), GoalError> {
        let line = self.line();
        match self.peek() {
            Tok::End => {
                self.pos += 1;
                Ok(())
            }
            // a `}` may close the block right after a statement
            Tok::Close => Ok(()),
            other => Err(syntax(
                line,
                format!("expected end of line, found {other:?}"),
            )),
        }
    }
    fn skip_ends(&mut self) {
        while *self.peek() == Tok::End && self.pos < self.toks.len() {
            self.pos += 1;
        }
    }
}

/// Reads a GOAL schedule; `seconds_per_unit` is the length of one `calc` time unit in seconds
/// (1e-9 when the GOAL file counts nanoseconds).
///
/// # Errors
///
/// [`GoalError::Syntax`] and [`GoalError::Unsupported`] name the line;
/// [`GoalError::Schedule`] when the parsed schedule fails validation (an unmatched send, a
/// cycle, a peer out of range).
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
    if !(seconds_per_unit >= 0.0 && seconds_per_unit.is_finite()) {
        return Err(crate::SimError::InvalidTime {
            name: "seconds_per_unit",
            value: seconds_per_unit,
        }
        .into());
    }
    let mut p = Parser {
        toks: lex(text)?,
        pos: 0,
    };
    p.skip_ends();
    let line = p.line();
    p.word("num_ranks")
        .map_err(|_| syntax(line, "a GOAL file starts with `num_ranks <N>`"))?;
    let ranks = p.int("number of ranks")?;
    if ranks == 0 {
        return Err(syntax(line, "num_ranks must be at least 1"));
    }
    p.end()?;
    let mut b = ScheduleBuilder::new(ranks);
    loop {
        p.skip_ends();
        if p.pos >= p.toks.len() {
            break;
        }
        let line = p.line();
        p.word("rank")?;
        let rank = p.int("rank")?;
        if rank >= ranks {
            return Err(syntax(line, format!("rank {rank} >= num_ranks {ranks}")));
        }
        if p.next() != Tok::Open {
            return Err(syntax(line, "expected `{` after the rank"));
        }
        rank_block(&mut p, &mut b, rank, ranks, seconds_per_unit)?;
    }
    Ok(b.build()?)
}

fn rank_block(
    p: &mut Parser,
    b: &mut ScheduleBuilder,
    rank: u64,
    ranks: u64,
    seconds_per_unit: f64,
) -> Result<(), GoalError> {
    let mut labels: HashMap<String, OpId> = HashMap::new();
    let mut deps: Vec<PendingDep> = Vec::new();
    loop {
        p.skip_ends();
        let line = p.line();
        if p.pos >= p.toks.len() {
            return Err(syntax(line, format!("rank {rank}: missing `}}`")));
        }
        let mut label = None;
        match p.next() {
            Tok::Close => break,
            Tok::Word(w) if p.peek() == &Tok::Colon => {
                p.pos += 1;
                label = Some(w);
            }
            Tok::Word(w) if matches!(p.peek(), Tok::Word(x) if x == "requires" || x == "irequires") =>
            {
                let start = p.next() == Tok::Word("irequires".to_string());
                let on = match p.next() {
                    Tok::Word(on) => on,
                    other => {
                        return Err(syntax(line, format!("expected a label, found {other:?}")));
                    }
                };
                deps.push((w, on, start, line));
                p.end()?;
                continue;
            }
            Tok::Word(w) => {
                // an unlabelled operation: step back and read it below
                p.pos -= 1;
                let _ = w;
            }
            other => return Err(syntax(line, format!("unexpected {other:?}"))),
        }
        let op = operation(p, b, rank, ranks, seconds_per_unit, line)?;
        if let Some(l) = label
            && labels.insert(l.clone(), op).is_some()
        {
            return Err(syntax(
                line,
                format!("label `{l}` defined twice in rank {rank}"),
            ));
        }
        p.end()?;
    }
    for (op, on, start, line) in deps {
        let find = |l: &str| {
            labels
                .get(l)
                .copied()
                .ok_or_else(|| syntax(line, format!("undefined label `{l}` in rank {rank}")))
        };
        let (a, c) = (find(&op)?, find(&on)?);
        if start {
            b.irequires(a, c);
        } else {
            b.requires(a, c);
        }
    }
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
    let kind = match p.next() {
        Tok::Word(w) => w,
        other => {
            return Err(syntax(
                line,
                format!("expected send, recv or calc, found {other:?}"),
            ));
        }
    };
    match kind.as_str() {
        "calc" => {
            let units = p.int("calc time")?;
            optional_fields(p, &["cpu"])?;
            Ok(b.calc(rank, units as f64 * seconds_per_unit))
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
            format!("expected send, recv or calc, found `{other}`"),
        )),
    }
}

/// Reads `field <int>` pairs in the given order (each optional); returns the tag (0 if absent).
fn optional_fields(p: &mut Parser, allowed: &[&str]) -> Result<u64, GoalError> {
    let mut tag = 0;
    let mut next_allowed = 0;
    while let Tok::Word(w) = p.peek().clone() {
        let line = p.line();
        let Some(k) = allowed[next_allowed..].iter().position(|a| *a == w) else {
            return Err(syntax(line, format!("unexpected `{w}`")));
        };
        p.pos += 1;
        let v = p.int(&w)?;
        if w == "tag" {
            tag = v;
        }
        next_allowed += k + 1;
    }
    Ok(tag)
}

/// Writes a schedule as GOAL, in Schedgen's style: labels `l1, l2, …` per rank, one statement
/// per line, sizes of contiguous bytes, calc times rounded to whole units of `seconds_per_unit`
/// seconds.
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
    let mut out = String::new();
    let _ = writeln!(out, "num_ranks {}", schedule.ranks());
    let n = schedule.len();
    let mut by_rank: Vec<Vec<usize>> = vec![Vec::new(); schedule.ranks() as usize];
    for i in 0..n {
        by_rank[schedule.rank(OpId(i as u32)).unwrap_or(0) as usize].push(i);
    }
    let mut label = vec![0usize; n];
    for (r, ops) in by_rank.iter().enumerate() {
        let _ = writeln!(out, "\nrank {r} {{");
        for (j, &i) in ops.iter().enumerate() {
            label[i] = j + 1;
            let op = OpId(i as u32);
            match schedule.kind(op) {
                Some(OpKind::Send) | Some(OpKind::Recv) => {
                    let send = schedule.kind(op) == Some(OpKind::Send);
                    let _ = writeln!(
                        out,
                        "l{}: {} {}b {} {} tag {}",
                        j + 1,
                        if send { "send" } else { "recv" },
                        schedule.message(op).map_or(0, |m| m.bytes()),
                        if send { "to" } else { "from" },
                        schedule.peer(op).unwrap_or(0),
                        schedule.tag(op).unwrap_or(0)
                    );
                }
                _ => {
                    let units = if seconds_per_unit > 0.0 {
                        (schedule.calc_seconds(op).unwrap_or(0.0) / seconds_per_unit).round()
                    } else {
                        0.0
                    };
                    let _ = writeln!(out, "l{}: calc {}", j + 1, units as u64);
                }
            }
        }
        for &i in ops {
            for (d, kind) in schedule.dependents(OpId(i as u32)) {
                let word = match kind {
                    super::Dependency::Requires => "requires",
                    super::Dependency::Irequires => "irequires",
                };
                let _ = writeln!(out, "l{} {word} l{}", label[d.index()], label[i]);
            }
        }
        let _ = writeln!(out, "}}");
    }
    out
}
