//! The GOAL lexer and the statement-level parser the reader drives.

use crate::sim::GoalError;

/// The most characters of the input an error message repeats.
pub(super) const ECHO: usize = 40;

/// `text`, cut to its first [`ECHO`] characters (`…` marks the cut).
pub(in crate::sim) fn echo(text: &str) -> String {
    match text.char_indices().nth(ECHO) {
        None => text.to_string(),
        Some((i, _)) => format!("{}…", &text[..i]),
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Tok<'a> {
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

pub(super) fn syntax(line: usize, message: impl Into<String>) -> GoalError {
    GoalError::Syntax {
        line,
        message: message.into(),
    }
}

/// Reads the text one token at a time, each with its 1-based line.
pub(super) struct Lexer<'a> {
    pub(super) text: &'a str,
    pub(super) i: usize,
    pub(super) line: usize,
}

impl<'a> Lexer<'a> {
    pub(super) fn next_token(&mut self) -> Result<(Tok<'a>, usize), GoalError> {
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
pub(super) type PendingDep<'a> = (&'a str, &'a str, bool, usize);

/// A parser with a lookahead of up to two tokens.
pub(super) struct Parser<'a> {
    pub(super) lexer: Lexer<'a>,
    pub(super) ahead: [Option<(Tok<'a>, usize)>; 2],
}

impl<'a> Parser<'a> {
    /// A parser of `text` from byte `start` (counting lines from 1 there).
    pub(super) fn new(text: &'a str, start: usize) -> Self {
        Parser {
            lexer: Lexer {
                text,
                i: start,
                line: 1,
            },
            ahead: [None, None],
        }
    }

    pub(super) fn fill(&mut self, k: usize) -> Result<(), GoalError> {
        for j in 0..=k {
            if self.ahead[j].is_none() {
                self.ahead[j] = Some(self.lexer.next_token()?);
            }
        }
        Ok(())
    }
    /// The token `k` (0 or 1) ahead.
    pub(super) fn peek_at(&mut self, k: usize) -> Result<Tok<'a>, GoalError> {
        self.fill(k)?;
        Ok(self.ahead[k].map_or(Tok::Eof, |t| t.0))
    }
    pub(super) fn peek(&mut self) -> Result<Tok<'a>, GoalError> {
        self.peek_at(0)
    }
    /// The line of the next token.
    pub(super) fn line(&mut self) -> Result<usize, GoalError> {
        self.fill(0)?;
        Ok(self.ahead[0].map_or(self.lexer.line, |t| t.1))
    }
    pub(super) fn next(&mut self) -> Result<Tok<'a>, GoalError> {
        let t = self.peek()?;
        self.ahead = [self.ahead[1], None];
        Ok(t)
    }
    pub(super) fn int(&mut self, what: &str) -> Result<u64, GoalError> {
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
    pub(super) fn word(&mut self, expected: &str) -> Result<(), GoalError> {
        let line = self.line()?;
        match self.next()? {
            Tok::Word(w) if w == expected => Ok(()),
            other => Err(syntax(
                line,
                format!("expected `{expected}`, found {other}"),
            )),
        }
    }
    pub(super) fn end(&mut self) -> Result<(), GoalError> {
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
    pub(super) fn skip_ends(&mut self) -> Result<(), GoalError> {
        while self.peek()? == Tok::End {
            self.next()?;
        }
        Ok(())
    }
}
