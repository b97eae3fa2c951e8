//! Reading a GOAL file: [`read_goal_file`], a large one streamed in pieces of whole rank
//! blocks.

use std::io::{Read as _, Seek as _};
use std::path::Path;

use super::lex::Parser;
use super::locate::{Locator, named_operations, with_lines};
use super::read::{header, parse_goal_within, read_blocks};
use crate::error::FileError;
use crate::limits::{MAX_GOAL_FILE_BYTES, open_regular, read_text_file};
use crate::sim::GoalError;
use crate::sim::builder::ScheduleBuilder;
use crate::sim::schedule::Schedule;

/// How a file is streamed: from which length on, in pieces of how many bytes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pieces {
    /// Files of at least this many bytes are streamed.
    pub(super) from_bytes: u64,
    /// The bytes read at a time (a piece grows to hold a rank block longer than this).
    pub(super) piece: usize,
}

impl Pieces {
    /// Files of 1 MiB or more, in pieces of 1 MiB.
    const DEFAULT: Self = Self {
        from_bytes: 1 << 20,
        piece: 1 << 20,
    };
}

/// Reads the GOAL file `path` into a schedule, as [`parse_goal_within`] reads its text, without
/// holding the text: a file of 1 MiB or more is read in pieces of about 1 MiB that end before
/// a line `rank …`, each parsed and appended to the schedule before the next is read — with
/// the `parallel` feature (off by default) by two threads, one from the start, one from a line
/// `rank …` near the middle, their schedules then appended in the order of the file; without
/// it on the calling thread. The memory budget `max_memory` counts the schedule,
/// the pieces held and the labels of the rank blocks being read — not the text, which a
/// smaller file's reading holds and counts. The file may be at most
/// [`MAX_GOAL_FILE_BYTES`] long; a leading UTF-8 byte-order mark is skipped.
///
/// Should a piece not read (a syntax error, a comment spanning a line `rank …`), the whole
/// file is read again as text by [`parse_goal_within`], whose result or error (with its line)
/// is returned: a file reads to the schedule its text does, or fails with the text's error.
/// An error of the schedule that names operations (a cycle, a message without a partner or
/// of another size) names their lines as the text's does, found by reading the file again in
/// pieces.
///
/// # Errors
///
/// [`GoalError::File`] when the file cannot be read, is not a regular file, is longer than
/// [`MAX_GOAL_FILE_BYTES`] or the budget, or is not UTF-8; else as [`parse_goal_within`].
///
/// # Examples
///
/// ```
/// use commcost::sim::{SchedgenPattern, parse_goal, read_goal_file, write_goal};
///
/// let schedule = SchedgenPattern::Dissemination.schedule(8, 64)?;
/// let text = write_goal(&schedule, 1e-9)?;
/// let path = std::env::temp_dir().join(format!("commcost-doc-{}.goal", std::process::id()));
/// std::fs::write(&path, &text)?;
/// let read = read_goal_file(&path, 1e-9, 1 << 30)?;
/// assert_eq!(write_goal(&read, 1e-9)?, write_goal(&parse_goal(&text, 1e-9)?, 1e-9)?);
/// std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_goal_file(
    path: &Path,
    seconds_per_unit: f64,
    max_memory: u64,
) -> Result<Schedule, GoalError> {
    read_in_pieces(path, seconds_per_unit, max_memory, Pieces::DEFAULT)
}

/// [`read_goal_file`] with the given streaming (tests stream small files in small pieces).
pub(super) fn read_in_pieces(
    path: &Path,
    seconds_per_unit: f64,
    max_memory: u64,
    pieces: Pieces,
) -> Result<Schedule, GoalError> {
    let limit = MAX_GOAL_FILE_BYTES.min(max_memory);
    let (file, len) = open_regular(path)?;
    if len > limit {
        return Err(FileError::TooLarge {
            path: path.display().to_string(),
            what: "GOAL file",
            limit,
        }
        .into());
    }
    if len >= pieces.from_bytes
        && (0.0..=crate::limits::MAX_SECONDS).contains(&seconds_per_unit)
        && let Some(read) = stream(path, file, len, seconds_per_unit, max_memory, pieces)
    {
        return read;
    }
    let text = read_text_file(path, "GOAL file", limit)?;
    parse_goal_within(&text, seconds_per_unit, max_memory)
}

/// The schedule of the file, read in pieces, or its error naming the lines of operations (a
/// cycle, a message unmatched: the file read again in pieces to find them); `None` when any
/// piece does not read, the schedule does not fit or fails otherwise (the caller then reads
/// the text, for the error).
fn stream(
    path: &Path,
    mut file: std::fs::File,
    len: u64,
    seconds_per_unit: f64,
    max_memory: u64,
    pieces: Pieces,
) -> Option<Result<Schedule, GoalError>> {
    // the header, from the first piece
    let mut head = vec![0u8; pieces.piece.max(64)];
    let filled = fill(&mut file, &mut head)?;
    let bom = if head[..filled].starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let valid = match std::str::from_utf8(&head[bom..filled]) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&head[bom..bom + e.valid_up_to()]).ok()?,
    };
    let mut p = Parser::new(valid, 0);
    let ranks = header(&mut p).ok()?;
    if p.ahead != [None, None] || p.lexer.i == valid.len() && (bom + valid.len()) as u64 != len {
        return None;
    }
    let body = (bom + p.lexer.i) as u64;
    drop(head);
    // the second part from the first line `rank …` at or after the middle
    let split = rank_line_after(&mut file, body + (len - body) / 2, len, pieces.piece)?;
    drop(file);
    let part = |start: u64, end: u64, budget: u64| {
        read_part(
            path,
            start..end,
            ranks,
            seconds_per_unit,
            budget,
            pieces.piece,
        )
    };
    let mut b = match split {
        Some(split) => {
            let (first, second) = crate::util::join::join(
                true,
                || part(body, split, max_memory / 2),
                || part(split, len, max_memory / 2),
            );
            let ((mut b, seen, held), (other, other_seen, other_held)) = (first?, second?);
            if seen.iter().zip(&other_seen).any(|(x, y)| x & y != 0) {
                return None;
            }
            b.append(other).ok()?;
            b.set_max_memory(max_memory);
            b.set_extra_memory(held.saturating_add(other_held)).ok()?;
            b
        }
        None => {
            let (mut b, _, held) = part(body, len, max_memory)?;
            b.set_extra_memory(held).ok()?;
            b
        }
    };
    // the arrays as adding the operations one at a time grows them, beside the pieces held
    b.fits_as_grown(0).ok()?;
    b.set_extra_memory(0).ok()?;
    match b.build() {
        Ok(schedule) => Some(Ok(schedule)),
        Err(e) => {
            // the operations the error names, counted from the start of the file (the pieces
            // read, their statements whole)
            let mut locator = Locator::new(&named_operations(&e)?);
            each_piece(
                path,
                bom as u64..len,
                pieces.piece,
                &mut locator,
                |_, bytes| (bytes <= max_memory).then_some(()),
                |locator, text, _| {
                    locator.feed(text)?;
                    Some(!locator.done())
                },
            )?;
            Some(Err(with_lines(e, Some(locator.into_found()?))))
        }
    }
}

/// The start of a line that opens a rank block: pieces and parts begin there.
const LINE: &[u8] = b"\nrank ";

/// Reads into `buf` until it is full or the file ends: the bytes read, `None` on an error.
fn fill(file: &mut impl std::io::Read, buf: &mut [u8]) -> Option<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(filled)
}

/// The offset of the first line `rank …` starting at or after `from` (at most `len`), read in
/// windows of `piece` bytes: `Some(None)` when there is none, `None` on a read error.
fn rank_line_after(
    file: &mut std::fs::File,
    from: u64,
    len: u64,
    piece: usize,
) -> Option<Option<u64>> {
    // from the byte before, so that a line starting at `from` is found
    let mut at = from.checked_sub(1)?;
    file.seek(std::io::SeekFrom::Start(at)).ok()?;
    let mut window = vec![0u8; piece.max(2 * LINE.len())];
    let mut kept = 0;
    while at < len {
        let n = fill(file, &mut window[kept..])?;
        if n == 0 {
            return Some(None);
        }
        let seen = kept + n;
        if let Some(i) = window[..seen].windows(LINE.len()).position(|w| w == LINE) {
            return Some(Some(at - kept as u64 + i as u64 + 1));
        }
        // the last bytes again at the front: a line split between two windows is found
        let keep = (LINE.len() - 1).min(seen);
        window.copy_within(seen - keep..seen, 0);
        at += n as u64;
        kept = keep;
    }
    Some(None)
}

/// The rank blocks of bytes `range` of the file read in pieces into a builder of their own
/// within `budget`: the builder, a bit for each rank read and the most bytes held besides the
/// builder (pieces and labels); `None` when anything does not read.
fn read_part(
    path: &Path,
    range: std::ops::Range<u64>,
    ranks: u64,
    seconds_per_unit: f64,
    budget: u64,
    piece: usize,
) -> Option<(ScheduleBuilder, Vec<u64>, u64)> {
    let mut b = ScheduleBuilder::new(ranks);
    b.set_max_memory(budget);
    let mut seen = vec![0u64; ranks.div_ceil(64) as usize];
    each_piece(
        path,
        range,
        piece,
        &mut b,
        |b, larger| b.set_extra_memory(larger).ok(),
        |b, text, held| {
            b.set_extra_memory(held).ok()?;
            let mut p = Parser::new(text, 0);
            read_blocks(&mut p, b, &mut seen, ranks, seconds_per_unit).ok()?;
            Some(true)
        },
    )?;
    let held = b.peak_extra_memory();
    Some((b, seen, held))
}

/// Reads bytes `range` of the file in pieces of `piece` bytes, each cut before the last line
/// `rank …` in it (the rest begins the next), and calls `each` with `state`, each piece's text
/// and the bytes held for it, in the order of the file, while it answers `Some(true)`. A piece
/// without such a line (a rank block longer than the piece) is doubled, once `grow` accepts
/// the new length. `None` when the file does not read or is shorter than the range, a piece is not
/// UTF-8, or `grow` or `each` answers `None`.
fn each_piece<S>(
    path: &Path,
    range: std::ops::Range<u64>,
    piece: usize,
    state: &mut S,
    grow: impl Fn(&mut S, u64) -> Option<()>,
    mut each: impl FnMut(&mut S, &str, u64) -> Option<bool>,
) -> Option<()> {
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(std::io::SeekFrom::Start(range.start)).ok()?;
    let mut reader = file.take(range.end - range.start);
    let mut buf = vec![0u8; piece.max(2 * LINE.len())];
    let mut filled = 0;
    let mut read = 0u64;
    loop {
        let n = fill(&mut reader, &mut buf[filled..])?;
        filled += n;
        read += n as u64;
        let end = filled < buf.len();
        let cut = if end {
            filled
        } else {
            // the piece ends before the last line `rank …` in it
            match buf[..filled].windows(LINE.len()).rposition(|w| w == LINE) {
                Some(i) => i + 1,
                None => {
                    // a rank block longer than the piece: a larger piece
                    let larger = buf.len().checked_mul(2)?;
                    grow(state, larger as u64)?;
                    let mut room = Vec::new();
                    room.try_reserve_exact(larger).ok()?;
                    room.extend_from_slice(&buf[..filled]);
                    room.resize(larger, 0);
                    buf = room;
                    continue;
                }
            }
        };
        let text = std::str::from_utf8(&buf[..cut]).ok()?;
        if !each(state, text, buf.len() as u64)? {
            return Some(());
        }
        if end {
            break;
        }
        buf.copy_within(cut..filled, 0);
        filled -= cut;
    }
    // the file as long as it was: nothing cut short
    (read == range.end - range.start).then_some(())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::{Pieces, read_in_pieces, stream};
    use crate::error::FileError;
    use crate::sim::{GoalError, SimError};
    use crate::sim::{parse_goal, parse_goal_within, write_goal};

    /// A file of its own in the temporary directory, removed when dropped.
    struct TempFile(PathBuf);

    impl TempFile {
        fn new(name: &str, bytes: &[u8]) -> Self {
            let path = std::env::temp_dir()
                .join(format!("commcost-goal-file-{}-{name}", std::process::id()));
            std::fs::write(&path, bytes).expect("temporary file");
            Self(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn streamed(path: &Path, piece: usize) -> Result<crate::sim::Schedule, GoalError> {
        read_in_pieces(
            path,
            1e-9,
            1 << 30,
            Pieces {
                from_bytes: 0,
                piece,
            },
        )
    }

    /// Schedgen's own files (written by LogGOPSim's Schedgen, see the fixtures' README), streamed
    /// in pieces from smaller than a line to larger than the file: the schedule the text
    /// reads to, every operation and dependency in the same order.
    #[test]
    fn schedgen_files_stream_to_the_schedule_of_their_text() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/loggopsim/goal");
        let mut files = 0;
        for entry in std::fs::read_dir(&dir).expect("fixtures") {
            let path = entry.expect("entry").path();
            if path.extension().is_none_or(|e| e != "goal") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("fixture");
            let expected = write_goal(&parse_goal(&text, 1e-9).expect("text"), 1e-9).unwrap();
            for piece in [12, 100, 4096, 1 << 20] {
                // streamed, not read again as text
                let (file, len) = crate::limits::open_regular(&path).expect("open");
                let pieces = Pieces {
                    from_bytes: 0,
                    piece,
                };
                let schedule = stream(&path, file, len, 1e-9, 1 << 30, pieces)
                    .expect("streamed")
                    .expect("read");
                assert!(
                    write_goal(&schedule, 1e-9).unwrap() == expected,
                    "{} in pieces of {piece} B",
                    path.display()
                );
            }
            files += 1;
        }
        assert!(files >= 10, "{files} fixtures");
    }

    /// What only the token reader reads (named labels, a dependency on a later label,
    /// comments, `;`, CRLF, a byte-order mark), and a comment that spans a line `rank …`: the
    /// pieces cut there do not read, and the file is read again as text.
    #[test]
    fn any_text_streams_to_the_schedule_of_its_text() {
        let text = "\u{feff}// a comment\r\nnum_ranks 3 // three\r\n\
                    rank 0 {\r\n  a: send 8b to 1 tag 4\r\n  b: calc 10; b requires later\r\n  \
                    later: recv 16b from 2\r\n}\r\n\
                    /* a comment over\nrank 9 {\n */\n\
                    rank 2 {\n  s: send 16b to 0\n}\n\
                    rank 1 { x: recv 8b from 0 tag 4 }\n";
        let file = TempFile::new("any.goal", text.as_bytes());
        let expected = write_goal(
            &parse_goal(text.trim_start_matches('\u{feff}'), 1e-9).expect("text"),
            1e-9,
        )
        .unwrap();
        for piece in [12, 13, 40, 1000] {
            let schedule = streamed(&file.0, piece).expect("streamed");
            assert_eq!(
                write_goal(&schedule, 1e-9).unwrap(),
                expected,
                "pieces of {piece} B"
            );
        }
    }

    /// A file that does not read fails with the error its text gives, line included.
    #[test]
    fn errors_are_those_of_the_text() {
        let cases = [
            "num_ranks 2\nrank 0 {\n l1: send 8b to 1\n}\nrank 1 {\n l1: recv 8b from 0\n l2: \
             frobnicate\n}\n",
            "num_ranks 2\nrank 0 {\n l1: send 8b to 1\n}\nrank 1 {\n l1: recv 8b from 0\n}\n\
             rank 0 {\n l1: calc 1\n}\n",
            "num_ranks 2\nrank 0 {\n l1: send 8b to 1\n l2: calc 1\n l1 requires l2\n l2 \
             requires l1\n}\nrank 1 {\n l1: recv 8b from 0\n}\n",
            "num_ranks 2\nrank 0 {\n l1: send 8b to 1\n}\nrank 1 {\n l1: recv 4b from 0\n}\n",
            "num_ranks 2\nrank 0 {\n l1: send 8b to 1\n}\nrank 1 {\n",
        ];
        for (k, text) in cases.iter().enumerate() {
            let file = TempFile::new(&format!("error{k}.goal"), text.as_bytes());
            let expected = parse_goal(text, 1e-9).expect_err("an invalid text");
            for piece in [12, 30, 1000] {
                assert_eq!(
                    streamed(&file.0, piece).expect_err("an invalid file"),
                    expected,
                    "case {k}, pieces of {piece} B"
                );
            }
        }
    }

    /// Streamed (by two parts, in pieces smaller and larger than a rank block), a message that
    /// does not match is reported at the line of its operation, as its text reports it,
    /// without reading the text: a byte-order mark before the header, a size in the second
    /// part, a tag in the first.
    #[test]
    fn streamed_errors_name_the_line_of_a_message() {
        let text = format!("\u{feff}{}", crate::sim::goal::read::tests::ring(20));
        let cases = [
            // rank 6, step 3: the send at line 391, the receive of rank 7 at line 455
            (
                text.replacen("l7: send 8b to 7", "l7: send 9b to 7", 1),
                GoalError::SizeMismatch {
                    line: 391,
                    label: "l7".into(),
                    rank: 6,
                    bytes: 9,
                    recv_line: 455,
                    recv_label: "l8".into(),
                    recv_rank: 7,
                    recv_bytes: 8,
                },
            ),
            // rank 1, step 0: another tag, which leaves rank 2's last receive unmatched
            (
                text.replacen("l1: send 8b to 2\n", "l1: send 8b to 2 tag 1\n", 1),
                GoalError::Unmatched {
                    line: 188,
                    label: "l40".into(),
                    kind: "recv",
                    rank: 2,
                    peer: 1,
                    tag: 0,
                    missing: "send",
                },
            ),
        ];
        for (k, (text, expected)) in cases.iter().enumerate() {
            let file = TempFile::new(&format!("unmatched{k}.goal"), text.as_bytes());
            assert_eq!(
                &parse_goal(text.trim_start_matches('\u{feff}'), 1e-9).unwrap_err(),
                expected
            );
            for piece in [12, 100, 1000, 1 << 20] {
                let (f, len) = crate::limits::open_regular(&file.0).expect("open");
                let pieces = Pieces {
                    from_bytes: 0,
                    piece,
                };
                let streamed = stream(&file.0, f, len, 1e-9, 1 << 30, pieces)
                    .expect("streamed")
                    .expect_err("an error");
                assert_eq!(&streamed, expected, "case {k}, pieces of {piece} B");
                assert_eq!(&self::streamed(&file.0, piece).unwrap_err(), expected);
            }
        }
    }

    #[test]
    fn files_that_cannot_be_read_are_named() {
        let dir = std::env::temp_dir();
        assert!(matches!(
            streamed(&dir, 64),
            Err(GoalError::File(FileError::NotRegular { .. }))
        ));
        let file = TempFile::new(
            "latin1.goal",
            b"num_ranks 1\nrank 0 {\n l1: calc 1\n}\n\xe9\n",
        );
        assert!(matches!(
            streamed(&file.0, 12),
            Err(GoalError::File(FileError::NotText { line: 5, .. }))
        ));
        // longer than the budget: refused before anything is read
        assert!(matches!(
            read_in_pieces(
                &file.0,
                1e-9,
                16,
                Pieces {
                    from_bytes: 0,
                    piece: 12
                }
            ),
            Err(GoalError::File(FileError::TooLarge { limit: 16, .. }))
        ));
    }

    /// Within a budget the text's reading does not fit, the streamed one fails as well when
    /// the schedule alone does not fit, with the budget named.
    #[test]
    fn the_budget_holds() {
        let mut text = String::from("num_ranks 2\n");
        for r in 0..2 {
            text.push_str(&format!("rank {r} {{\n"));
            for i in 0..2000 {
                text.push_str(&format!("l{i}: calc {i}\n"));
            }
            text.push_str("}\n");
        }
        let file = TempFile::new("budget.goal", text.as_bytes());
        let budget = 1 << 16;
        assert!(matches!(
            parse_goal_within(&text, 1e-9, budget),
            Err(GoalError::Schedule(SimError::MemoryBudget { .. }))
        ));
        let streamed = read_in_pieces(
            &file.0,
            1e-9,
            budget,
            Pieces {
                from_bytes: 0,
                piece: 4096,
            },
        );
        assert!(
            matches!(
                streamed,
                Err(GoalError::Schedule(SimError::MemoryBudget {
                    budget: 65536,
                    ..
                }))
            ),
            "{streamed:?}"
        );
    }
}
