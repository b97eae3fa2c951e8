//! The lines of operations named by an error of the schedule read from a GOAL text: the text
//! (or the file, piece by piece) read again, only when such an error is reported.

use super::lex::{Lexer, Tok};
use crate::sim::{GoalError, SimError};

/// Where an operation is in the text.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Located {
    /// 1-based line of its statement.
    pub(super) line: usize,
    /// Its label (empty if it has none).
    pub(super) label: String,
    /// The rank of its block.
    pub(super) rank: u64,
}

/// Finds operations by their index (counted in the order of the text) in a text read in one
/// piece or in several: each piece whole statements that follow those of the pieces before.
pub(super) struct Locator {
    /// The operations looked for.
    ops: Vec<u64>,
    /// Where each was found.
    found: Vec<Option<Located>>,
    /// The operations counted so far.
    count: u64,
    /// The rank of the block being read.
    rank: u64,
    /// The lines of the pieces read so far.
    lines: usize,
}

impl Locator {
    /// Looks for the operations `ops`.
    pub(super) fn new(ops: &[u64]) -> Self {
        Self {
            ops: ops.to_vec(),
            found: vec![None; ops.len()],
            count: 0,
            rank: 0,
            lines: 0,
        }
    }

    /// Whether every operation looked for was found.
    pub(super) fn done(&self) -> bool {
        self.found.iter().all(Option::is_some)
    }

    /// Reads the next piece of the text; `None` when it does not lex. A statement is an
    /// operation when it is `<label>: <kind> …` or `<kind> …` (not `<kind> requires …`), as
    /// the reader reads it.
    pub(super) fn feed(&mut self, text: &str) -> Option<()> {
        let mut lexer = Lexer {
            text,
            i: 0,
            line: self.lines + 1,
        };
        // the first three tokens of the statement being read
        let mut first: Vec<(Tok, usize)> = Vec::with_capacity(3);
        while !self.done() {
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
                [(Tok::Word("rank"), _), (Tok::Int(rank), _)] if tok == Tok::Open => {
                    self.rank = *rank;
                    None
                }
                [(Tok::Word(label), _), (Tok::Colon, _), (kind, line), ..] if is_kind(kind) => {
                    Some((*line, *label))
                }
                [(Tok::Word(_), _), (Tok::Colon, _), ..] => None,
                [
                    (Tok::Word(_), _),
                    (Tok::Word("requires" | "irequires"), _),
                    ..,
                ] => None,
                [(kind, line), ..] if is_kind(kind) => Some((*line, "")),
                _ => None,
            };
            if let Some((line, label)) = found {
                for (op, at) in self.ops.iter().zip(&mut self.found) {
                    if *op == self.count {
                        *at = Some(Located {
                            line,
                            label: label.to_string(),
                            rank: self.rank,
                        });
                    }
                }
                self.count += 1;
            }
            // skip to the end of the statement
            let mut end = tok;
            while !matches!(end, Tok::End | Tok::Open | Tok::Close | Tok::Eof) {
                end = lexer.next_token().ok()?.0;
            }
            if end == Tok::Eof {
                break;
            }
            first.clear();
        }
        self.lines += text.bytes().filter(|&b| b == b'\n').count();
        Some(())
    }

    /// Where the operations were found, in the order they were asked for; `None` unless all
    /// were.
    pub(super) fn into_found(self) -> Option<Vec<Located>> {
        self.found.into_iter().collect()
    }
}

/// The operations an error of building the schedule names, whose lines the error of the text
/// gives: a cycle's operation, an unmatched message, a send and the receive of another size.
pub(super) fn named_operations(e: &SimError) -> Option<Vec<u64>> {
    match *e {
        SimError::Cycle { op, .. } | SimError::Unmatched { op, .. } => Some(vec![op]),
        SimError::SizeMismatch { send, recv, .. } => Some(vec![send, recv]),
        _ => None,
    }
}

/// The error of the text for an error `e` of building its schedule, given where the operations
/// [`named_operations`] lists are (in its order); `e` itself when they were not all found.
pub(super) fn with_lines(e: SimError, at: Option<Vec<Located>>) -> GoalError {
    let Some(at) = at else {
        return GoalError::Schedule(e);
    };
    match (e, at.as_slice()) {
        (SimError::Cycle { rank, .. }, [op]) => GoalError::Cycle {
            rank,
            line: op.line,
            label: op.label.clone(),
        },
        (
            SimError::Unmatched {
                kind,
                rank,
                peer,
                tag,
                missing,
                ..
            },
            [op],
        ) => GoalError::Unmatched {
            line: op.line,
            label: op.label.clone(),
            kind,
            rank,
            peer,
            tag,
            missing,
        },
        (
            SimError::SizeMismatch {
                send_bytes,
                recv_bytes,
                ..
            },
            [send, recv],
        ) => GoalError::SizeMismatch {
            line: send.line,
            label: send.label.clone(),
            rank: send.rank,
            bytes: send_bytes,
            recv_line: recv.line,
            recv_label: recv.label.clone(),
            recv_rank: recv.rank,
            recv_bytes,
        },
        (e, _) => GoalError::Schedule(e),
    }
}

/// [`with_lines`] for a text held whole: the error of building the schedule read from `text`.
pub(super) fn located(text: &str, e: SimError) -> GoalError {
    let at = named_operations(&e).and_then(|ops| {
        let mut locator = Locator::new(&ops);
        locator.feed(text)?;
        locator.into_found()
    });
    with_lines(e, at)
}
