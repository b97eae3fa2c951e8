//! The value ranges every parameter set is checked against, so that every accepted model gives
//! a finite, non-negative prediction for every valid [`Message`](crate::Message).
//!
//! A message holds at most `u64::MAX ≈ 1.8e19` bytes. With every time parameter at most
//! [`MAX_SECONDS`], every per-byte time at most [`MAX_SECONDS`] and every bandwidth at least
//! [`MIN_BANDWIDTH`], one hop of any model costs at most about `1e9 · 1.8e19 ≈ 2e28` s, and a
//! table (values at most [`MAX_TABLE_VALUE`] in magnitude, axis points at most [`MAX_AXIS`] in
//! magnitude and at least [`MIN_AXIS_STEP`] apart) extrapolates to at most about `1e57`: sums
//! over hops, protocol ranges and the rounds of a collective on `2^64` processes stay far below
//! `f64::MAX ≈ 1.8e308`.
//!
//! Files are read with a bound on their size ([`read_text_file`]: [`MAX_MODEL_FILE_BYTES`],
//! [`MAX_GOAL_FILE_BYTES`]); what never ends (`/dev/zero`, a FIFO) is refused before reading.
//!
//! Subnormal numbers (nonzero and below `f64::MIN_POSITIVE ≈ 2.2e-308`) are rejected wherever a
//! real parameter is read: they are never a measurement, and a division by one overflows.
//!
//! # Examples
//!
//! ```
//! use commcost::{LogGP, limits};
//!
//! assert!(LogGP::new(5e-6, 1e-6, 2e-6, 1e-9).is_ok());
//! // a per-byte gap above the limit, a subnormal latency: rejected
//! assert!(LogGP::new(5e-6, 1e-6, 2e-6, limits::MAX_SECONDS * 2.0).is_err());
//! assert!(LogGP::new(1e-320, 1e-6, 2e-6, 1e-9).is_err());
//! ```

/// Largest accepted time parameter, seconds (and seconds per byte, word or line): `1e9` s,
/// about 32 years.
pub const MAX_SECONDS: f64 = 1e9;

/// Smallest accepted bandwidth, bytes per second (`1e-3`: a byte every 17 minutes).
pub const MIN_BANDWIDTH: f64 = 1e-3;

/// Largest accepted bandwidth, bytes per second (`1e30`).
pub const MAX_BANDWIDTH: f64 = 1e30;

/// Largest accepted magnitude of a table value (`1e30`: seconds, seconds per byte or bytes per
/// second).
pub const MAX_TABLE_VALUE: f64 = 1e30;

/// Largest accepted magnitude of a table axis point, bytes (`1e21`, above `u64::MAX`).
pub const MAX_AXIS: f64 = 1e21;

/// Smallest accepted distance between consecutive axis points, bytes (`1e-6`).
pub const MIN_AXIS_STEP: f64 = 1e-6;

/// True for 0 and for normal numbers (not NaN, not infinite, not subnormal).
#[inline]
pub(crate) fn zero_or_normal(value: f64) -> bool {
    value == 0.0 || value.is_normal()
}

/// Largest model file read: 16 MiB (a model file is a few kilobytes; a table model with
/// thousands of points a few hundred).
pub const MAX_MODEL_FILE_BYTES: u64 = 16 << 20;

/// Largest benchmark output file read (OSU, IMB): 64 MiB (a million table rows fit many times
/// over; [`calibrate::read_benchmark_file`](crate::calibrate::read_benchmark_file)).
pub const MAX_BENCHMARK_FILE_BYTES: u64 = 64 << 20;

/// Largest GOAL file read: 1 GiB (about 30 million operations as Schedgen writes them; the
/// schedule is bounded by the simulator's memory budget as well, see
/// [`sim::DEFAULT_MAX_MEMORY`](crate::sim::DEFAULT_MAX_MEMORY)).
pub const MAX_GOAL_FILE_BYTES: u64 = 1 << 30;

/// Files of at least this many bytes are read by two threads at once ([`read_text_file`],
/// with the `parallel` feature).
const HALVES_FROM_BYTES: u64 = 16 << 20;

/// The first `len` bytes of a regular file of `len` bytes (at least [`HALVES_FROM_BYTES`], at
/// most `max_bytes`), read by two threads, each a half with positioned reads: the copying from
/// the page cache and the first touch of each page of the buffer shared between two cores.
/// `None` (nothing read) for a smaller or larger file, when no thread can be started or the
/// file became shorter meanwhile: then it is read from the start as any other.
#[cfg(unix)]
fn read_in_halves(
    file: &std::fs::File,
    len: u64,
    max_bytes: u64,
) -> std::io::Result<Option<Vec<u8>>> {
    use std::os::unix::fs::FileExt as _;

    if !crate::util::join::THREADS || !(HALVES_FROM_BYTES..=max_bytes).contains(&len) {
        return Ok(None);
    }
    let Ok(n) = usize::try_from(len) else {
        return Ok(None);
    };
    // the room is asked for first, so that too little memory is an error rather than an
    // abort; the zeroed buffer then comes from the allocator untouched
    let mut probe: Vec<u8> = Vec::new();
    probe
        .try_reserve_exact(n.saturating_add(1))
        .map_err(std::io::Error::other)?;
    drop(probe);
    let mut bytes = vec![0u8; n];
    let mid = n / 2;
    let (first, second) = bytes.split_at_mut(mid);
    let read = std::thread::scope(|s| {
        let other = std::thread::Builder::new()
            .spawn_scoped(s, || file.read_exact_at(second, mid as u64))
            .ok()?;
        let a = file.read_exact_at(first, 0);
        let b = other.join().ok()?;
        Some(a.and(b))
    });
    match read {
        Some(Ok(())) => Ok(Some(bytes)),
        Some(Err(e)) if e.kind() != std::io::ErrorKind::UnexpectedEof => Err(e),
        // no second thread, or the file shrank: read from the start
        _ => Ok(None),
    }
}

/// Elsewhere: from the start, as any other file.
#[cfg(not(unix))]
fn read_in_halves(
    _file: &std::fs::File,
    _len: u64,
    _max_bytes: u64,
) -> std::io::Result<Option<Vec<u8>>> {
    Ok(None)
}

/// Opens `path` for reading if it is a regular file (checked before opening: opening a FIFO
/// waits for a writer), with its length when opened.
pub(crate) fn open_regular(
    path: &std::path::Path,
) -> Result<(std::fs::File, u64), crate::FileError> {
    use crate::FileError;

    let shown = || path.display().to_string();
    let io = |e: std::io::Error| FileError::Io {
        path: shown(),
        message: e.to_string(),
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "a device, FIFO or socket"
        };
        return Err(FileError::NotRegular {
            path: shown(),
            kind,
        });
    }
    let file = std::fs::File::open(path).map_err(io)?;
    Ok((file, meta.len()))
}

/// Reads the text file `path` (a `what`, for the messages: `"model file"`) of at most
/// `max_bytes` bytes: anything but a regular file (a directory, `/dev/zero`, a FIFO, a socket)
/// is refused before reading, at most `max_bytes + 1` bytes are read, and a leading UTF-8
/// byte-order mark is dropped.
///
/// Threads: with the `parallel` feature (off by default), a file of 16 MiB or more is read by
/// two threads, a half each (on Unix); without it, on the calling thread.
///
/// # Errors
///
/// [`FileError`](crate::FileError), naming the file: it cannot be read, is not a regular file,
/// is larger than `max_bytes`, or is not UTF-8 (with the line).
///
/// # Examples
///
/// ```
/// use commcost::{FileError, limits};
///
/// let path = std::env::temp_dir().join(format!("commcost-doc-{}.json", std::process::id()));
/// std::fs::write(&path, "\u{feff}{\"model\": \"pram\", \"unit_cost\": 1e-6}")?;
/// let text = limits::read_text_file(&path, "model file", limits::MAX_MODEL_FILE_BYTES)?;
/// assert!(text.starts_with('{'));
/// assert!(matches!(
///     limits::read_text_file(&path, "model file", 8),
///     Err(FileError::TooLarge { limit: 8, .. })
/// ));
/// std::fs::remove_file(&path)?;
/// # #[cfg(unix)]
/// assert!(matches!(
///     limits::read_text_file("/dev/zero".as_ref(), "model file", 1 << 20),
///     Err(FileError::NotRegular { .. })
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_text_file(
    path: &std::path::Path,
    what: &'static str,
    max_bytes: u64,
) -> Result<String, crate::FileError> {
    use std::io::Read as _;

    use crate::FileError;

    let shown = || path.display().to_string();
    let io = |e: std::io::Error| FileError::Io {
        path: shown(),
        message: e.to_string(),
    };
    let (mut file, len) = open_regular(path)?;
    // a large file in two halves at once (see `read_in_halves`), else from the start
    let mut bytes = match read_in_halves(&file, len, max_bytes) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => Vec::new(),
        Err(e) => return Err(io(e)),
    };
    if bytes.is_empty() {
        // room for the size it says it has, within the bound (it may grow while it is read)
        bytes
            .try_reserve(len.min(max_bytes).saturating_add(1) as usize)
            .map_err(|e| FileError::Io {
                path: shown(),
                message: e.to_string(),
            })?;
    } else {
        // what was appended while the halves were read
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(bytes.len() as u64)).map_err(io)?;
    }
    let rest = max_bytes.saturating_add(1) - bytes.len() as u64;
    file.take(rest).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(FileError::TooLarge {
            path: shown(),
            what,
            limit: max_bytes,
        });
    }
    let start = if bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    if start > 0 {
        bytes.drain(..start);
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..valid]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        FileError::NotText {
            path: shown(),
            line,
        }
    })
}
