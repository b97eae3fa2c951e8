//! Reading GOAL: [`parse_goal`], [`parse_goal_within`].

use std::collections::hash_map::Entry;

use super::LABEL_BYTES;
use super::fast::{Fast, fast_statement};
use super::labels::{LabelMap, Labels, NONE_OP, numbered};
use super::lex::{Lexer, Parser, PendingDep, Tok, echo, syntax};
use super::locate::{located, named_operations};
use crate::sim::builder::ScheduleBuilder;
use crate::sim::op::OpId;
use crate::sim::schedule::Schedule;
use crate::sim::{GoalError, SimError};

/// Reads a GOAL schedule; `seconds_per_unit` is the length of one `calc` time unit in seconds
/// (1e-9 when the GOAL file counts nanoseconds). The memory budget is
/// [`DEFAULT_MAX_MEMORY`](crate::sim::DEFAULT_MAX_MEMORY) ([`parse_goal_within`] sets another).
///
/// Threads: with the `parallel` feature (off by default), a text of 16 MiB or more is parsed in
/// two halves by two threads, and a schedule of 2^16 operations or more is frozen by two
/// (the same schedule and errors); without it, on the calling thread.
///
/// # Errors
///
/// [`GoalError::Syntax`] and [`GoalError::Unsupported`] name the line;
/// [`GoalError::Cycle`] names the label and line of an operation on a cycle of dependencies,
/// [`GoalError::Unmatched`] those of a send or receive without a partner,
/// [`GoalError::SizeMismatch`] those of a send and the receive of another size it matched;
/// [`GoalError::Schedule`] when the parsed schedule fails validation otherwise
/// ([`SimError::MemoryBudget`], [`SimError::TooLarge`]).
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
    parse_goal_within(
        text,
        seconds_per_unit,
        crate::sim::memory::DEFAULT_MAX_MEMORY,
    )
}

/// [`parse_goal`] within a memory budget of `max_memory` bytes: the text, the schedule, its
/// simulation ([`stored_schedule_memory`](crate::sim::stored_schedule_memory)) and the labels of
/// the rank block being read ([`LABEL_BYTES`] each) must fit, else [`SimError::MemoryBudget`] before the
/// arrays grow beyond it. Threads as for [`parse_goal`].
///
/// # Errors
///
/// As [`parse_goal`].
///
/// # Examples
///
/// ```
/// use commcost::sim::parse_goal_within;
/// use commcost::sim::GoalError;
/// use commcost::sim::SimError;
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
    let mut p = Parser::new(text, 0);
    let ranks = header(&mut p)?;
    // a large text in two halves at once, when they read without an error (else, and for
    // the errors, from the start)
    if text.len() >= HALVES_FROM_BYTES
        && p.ahead == [None, None]
        && let Some(read) = parse_halves(text, p.lexer.i, ranks, seconds_per_unit, max_memory)
    {
        return read;
    }
    let mut b = ScheduleBuilder::new(ranks);
    b.set_max_memory(max_memory);
    // the text and the ranks within the budget, before anything per rank is allocated
    b.set_extra_memory(text.len() as u64)?;
    let mut seen = vec![0u64; ranks.div_ceil(64) as usize];
    read_blocks(&mut p, &mut b, &mut seen, ranks, seconds_per_unit)?;
    drop(seen);
    b.build().map_err(|e| located(text, e))
}

/// The header `num_ranks <N>`: the number of ranks.
pub(super) fn header(p: &mut Parser) -> Result<u64, GoalError> {
    p.skip_ends()?;
    let line = p.line()?;
    p.word("num_ranks")
        .map_err(|_| syntax(line, "a GOAL file starts with `num_ranks <N>`"))?;
    let ranks = p.int("number of ranks")?;
    if ranks == 0 {
        return Err(syntax(line, "num_ranks must be at least 1"));
    }
    p.end()?;
    if ranks > crate::sim::MAX_RANKS {
        return Err(SimError::TooLarge {
            what: "ranks",
            count: ranks,
            limit: crate::sim::MAX_RANKS,
        }
        .into());
    }
    Ok(ranks)
}

/// Texts of at least this many bytes are read in two halves at once ([`parse_halves`]).
const HALVES_FROM_BYTES: usize = 16 << 20;

/// The rank blocks from the parser's position to the end of its text, into `b`; `seen` has a
/// bit for each rank whose block was read.
pub(super) fn read_blocks<'a>(
    p: &mut Parser<'a>,
    b: &mut ScheduleBuilder,
    seen: &mut [u64],
    ranks: u64,
    seconds_per_unit: f64,
) -> Result<(), GoalError> {
    let text = p.lexer.text;
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
        rank_block(p, b, &mut labels, rank, ranks, seconds_per_unit)?;
    }
    Ok(())
}

/// The rank blocks after the header (from byte `body`) read in two halves by two threads, each
/// into a builder of its own within half the budget, split before a line `rank …` near the
/// middle; the second builder's operations then appended to the first's, which gives the
/// schedule the reading from the start gives, or its error naming the lines of operations
/// (a cycle, a message unmatched). `None` when the halves do not read: no such line, any
/// error in either (a split inside a comment is one: the first half then ends inside it), a
/// rank in both, a schedule whose reading from the start might not have fit the budget, any
/// other error of the schedule. The caller then reads from the start, with its errors.
fn parse_halves(
    text: &str,
    body: usize,
    ranks: u64,
    seconds_per_unit: f64,
    max_memory: u64,
) -> Option<Result<Schedule, GoalError>> {
    let bytes = text.as_bytes();
    let mid = body + (text.len() - body) / 2;
    let split = mid + 1 + bytes[mid..].windows(6).position(|w| w == b"\nrank ")?;
    // `split` follows a newline: a character boundary
    let halves = [(text.get(..split)?, body), (text.get(split..)?, 0)];
    let half = |(part, start): (&str, usize)| {
        let mut p = Parser::new(part, start);
        let mut b = ScheduleBuilder::new(ranks);
        b.set_max_memory(max_memory / 2);
        b.set_extra_memory(part.len() as u64).ok()?;
        let mut seen = vec![0u64; ranks.div_ceil(64) as usize];
        read_blocks(&mut p, &mut b, &mut seen, ranks, seconds_per_unit).ok()?;
        Some((b, seen))
    };
    let (first, second) = crate::util::join::join(true, || half(halves[0]), || half(halves[1]));
    let ((mut b, seen), (other, other_seen)) = (first?, second?);
    if seen.iter().zip(&other_seen).any(|(x, y)| x & y != 0) {
        return None;
    }
    drop((seen, other_seen));
    // the labels' peaks, beyond each half's text (read from the start, a block's labels
    // find the room the other half's left)
    let labels = (b
        .peak_extra_memory()
        .saturating_sub(halves[0].0.len() as u64))
    .saturating_add(
        other
            .peak_extra_memory()
            .saturating_sub(halves[1].0.len() as u64),
    );
    b.append(other).ok()?;
    b.set_max_memory(max_memory);
    b.set_extra_memory(text.len() as u64).ok()?;
    // read from the start, the builder's arrays would have grown (doubling) to at most the
    // next powers of two of their lengths, with the labels of a block beside them
    b.fits_as_grown(labels).ok()?;
    match b.build() {
        Ok(schedule) => Some(Ok(schedule)),
        // the schedule is the one read from the start: so is its error
        Err(e) if named_operations(&e).is_some() => Some(Err(located(text, e))),
        Err(_) => None,
    }
}

/// The line of the first `rank <rank> {` of the text: read again, only for the error about a
/// second block.
pub(super) fn block_line(text: &str, rank: u64) -> Option<usize> {
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

pub(super) fn rank_block<'a>(
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
pub(super) fn define_numbered<'a>(
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
                limit: crate::sim::MAX_OPERATIONS,
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

pub(super) fn operation(
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
pub(super) fn optional_fields(p: &mut Parser, allowed: &[&str]) -> Result<u64, GoalError> {
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

#[cfg(test)]
pub(super) mod tests {
    use super::{Parser, header, parse_halves};
    use crate::sim::GoalError;

    /// Eight ranks in a ring, each sending 8 bytes to the next (`l<2k+1>`) and receiving from
    /// the one before (`l<2k+2>`), `steps` times, with `x: calc 1` before the first send:
    /// rank `r`'s block starts at line `2 + r * (3 * steps + 3)`, its step `k`'s send at the
    /// line 2 after that plus `3 * k`.
    pub(in crate::sim::goal) fn ring(steps: u64) -> String {
        let mut text = String::from("num_ranks 8\n");
        for r in 0..8u64 {
            text += &format!("rank {r} {{\nx: calc 1\n");
            for k in 0..steps {
                let (next, prev) = ((r + 1) % 8, (r + 7) % 8);
                text += &format!("l{}: send 8b to {next}\n", 2 * k + 1);
                text += &format!("l{}: recv 8b from {prev}\n", 2 * k + 2);
                text += &format!("l{} requires l{}\n", 2 * k + 1, 2 * k + 2);
            }
            text += "}\n";
        }
        text
    }

    /// Read in two halves, a message that does not match is reported at the line of its
    /// operation, in either half.
    #[test]
    fn halves_name_the_line_of_a_message() {
        let text = ring(20);
        let body = {
            let mut p = Parser::new(&text, 0);
            header(&mut p).unwrap();
            p.lexer.i
        };
        let halves = |text: &str| parse_halves(text, body, 8, 1e-9, 1 << 30);
        assert!(matches!(halves(&text), Some(Ok(_))));
        // rank 6 (second half), step 3: its send of 9 bytes at line 2 + 6 * 63 + 2 + 9
        let line = 2 + 6 * 63 + 2 + 9;
        let sizes = text.replacen("l7: send 8b to 7", "l7: send 9b to 7", 1);
        assert_eq!(
            halves(&sizes).map(|read| read.err()),
            Some(Some(GoalError::SizeMismatch {
                line,
                label: "l7".into(),
                rank: 6,
                bytes: 9,
                recv_line: 2 + 7 * 63 + 2 + 10,
                recv_label: "l8".into(),
                recv_rank: 7,
                recv_bytes: 8,
            }))
        );
        // rank 1 (first half), step 0: a tag its receiver does not expect, which leaves rank
        // 2's last receive (step 19, `l40`) without a partner
        let tags = text.replacen("l1: send 8b to 2\n", "l1: send 8b to 2 tag 1\n", 1);
        let e = halves(&tags).unwrap().unwrap_err();
        assert_eq!(
            e,
            GoalError::Unmatched {
                line: 2 + 2 * 63 + 2 + 57 + 1,
                label: "l40".into(),
                kind: "recv",
                rank: 2,
                peer: 1,
                tag: 0,
                missing: "send",
            }
        );
        assert_eq!(super::parse_goal(&tags, 1e-9).unwrap_err(), e);
    }
}
