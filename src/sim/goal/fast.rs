//! The fast path of the reader: Schedgen's statements recognised byte by byte, without the
//! lexer.

use super::labels::numbered;

/// A statement of the form Schedgen writes, read straight from the bytes (see
/// [`fast_statement`]).
pub(super) enum Fast {
    /// `l<n>: send|recv <bytes>b to|from <peer> [tag <tag>]` (`send` when true; the tag
    /// defaults to 0).
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
pub(super) fn fast_int(bytes: &[u8], i: &mut usize) -> Option<u64> {
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
pub(super) fn fast_word(bytes: &[u8], i: &mut usize, word: &[u8]) -> Option<()> {
    if bytes.get(*i..*i + word.len())? == word {
        *i += word.len();
        Some(())
    } else {
        None
    }
}

/// A label `l<n>` (as [`numbered`]) at `*i`, followed by a byte that cannot continue it.
pub(super) fn fast_label(bytes: &[u8], i: &mut usize) -> Option<u32> {
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
pub(super) fn fast_statement(bytes: &[u8], mut i: usize) -> Option<(Fast, usize)> {
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
                    // the tag defaults to 0
                    let tag = if bytes.get(*i) == Some(&b'\n') {
                        0
                    } else {
                        fast_word(bytes, i, b" tag ")?;
                        u32::try_from(fast_int(bytes, i)?).ok()?
                    };
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

#[cfg(test)]
mod tests {
    use super::{Fast, fast_statement};

    /// A message without a tag (tag 0) is read by the fast path; a field it does not know, or
    /// a `tag` without its value, is left to the token reader.
    #[test]
    fn messages_without_a_tag_are_read_straight() {
        let tag = |text: &str| match fast_statement(text.as_bytes(), 0) {
            Some((Fast::Message { tag, .. }, next)) => {
                assert_eq!(next, text.len(), "{text}");
                Some(tag)
            }
            _ => None,
        };
        assert_eq!(tag("l1: send 8b to 1\n"), Some(0));
        assert_eq!(tag("l2: recv 8b from 0\n"), Some(0));
        assert_eq!(tag("l3: recv 8b from 0 tag 5\n"), Some(5));
        assert_eq!(tag("l4: recv 8b from 0 cpu 0\n"), None);
        assert_eq!(tag("l5: send 8b to 1 tag\n"), None);
        assert_eq!(tag("l6: send 8b to 1"), None);
    }
}
