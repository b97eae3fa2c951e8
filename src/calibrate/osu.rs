//! The output of the OSU Micro-Benchmarks (`osu_latency`, `osu_bw`, `osu_bibw`,
//! `osu_allreduce`, `osu_bcast`, ...) as a typed [`BenchmarkSeries`].

use super::benchmarks::{
    BenchmarkPoint, BenchmarkSeries, SeriesKind, parse_error, parse_measurement, parse_whole,
};
use crate::calibrate::CalibrationError;

/// What one column of an OSU table holds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Column {
    Size,
    /// The main value, multiplied by the factor to SI units.
    Value(f64),
    Min(f64),
    Max(f64),
    Iterations,
    Ignored,
}

const MICROSECOND: f64 = 1e-6;
/// OSU's MB is 10^6 bytes (`size / 1e6 * iterations / seconds`).
const MEGABYTE: f64 = 1e6;

fn classify(name: &str) -> Column {
    let lower = name.to_ascii_lowercase();
    let unit = if lower.contains("mb/s") {
        MEGABYTE
    } else {
        MICROSECOND
    };
    if lower == "size" {
        Column::Size
    } else if lower.contains("tail") || lower.contains("validation") || lower.contains("transmit") {
        Column::Ignored
    } else if lower.starts_with("min") {
        Column::Min(unit)
    } else if lower.starts_with("max") {
        Column::Max(unit)
    } else if lower.starts_with("iterations") {
        Column::Iterations
    } else if lower.contains("latency") || lower.contains("bandwidth") || lower == "mb/s" {
        Column::Value(unit)
    } else {
        Column::Ignored
    }
}

/// The kind of benchmark from its title line, e.g. `OSU MPI Allreduce Latency Test v5.3`.
fn kind_from_title(title: &str) -> Option<SeriesKind> {
    let words: Vec<&str> = title
        .split_whitespace()
        .filter(|w| !w.starts_with('v') || !w[1..].starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    let body: Vec<&str> = words
        .iter()
        .copied()
        .skip_while(|w| w.starts_with("OSU") || w.starts_with("MPI") || *w == "#")
        .take_while(|w| *w != "Test")
        .collect();
    let body = body.join(" ");
    let lower = body.to_ascii_lowercase();
    Some(match lower.as_str() {
        "" => return None,
        "latency" => SeriesKind::Latency,
        "bandwidth" => SeriesKind::Bandwidth,
        "bi-directional bandwidth" => SeriesKind::BidirectionalBandwidth,
        _ => match lower.strip_suffix(" latency") {
            Some(collective) => SeriesKind::Collective(collective.to_string()),
            None => SeriesKind::Other(body),
        },
    })
}

/// Parses the standard output of one OSU Micro-Benchmarks run.
///
/// # Format
///
/// As the OSU Micro-Benchmarks (versions 5 to 7) print it: comment lines start with `#`; the
/// first of them is the title with the version (`# OSU MPI Latency Test v5.3`), others
/// (`# Datatype: MPI_CHAR.`) are skipped; the table header starts with `# Size` (or, for
/// tables without sizes such as a barrier, with `# Avg Latency(us)`) and names the columns,
/// separated by two or more spaces or by tabs:
///
/// ```text
/// # Size          Latency (us)                                   osu_latency
/// # Size      Bandwidth (MB/s)                                   osu_bw, osu_bibw
/// # Size       Avg Latency(us)                                   osu_bcast, osu_allreduce
/// # Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations    with -f
/// ```
///
/// Every following non-empty line is one row, whitespace-separated, one field per column.
/// Times (`us`) become seconds, bandwidths (`MB/s`, 10⁶ bytes per second as OSU computes
/// them) bytes per second; tail-percentile, validation and transmit-size columns are read
/// past. Lines before the title or the header that do not start with `#` (launcher messages)
/// are skipped. A leading byte-order mark is ignored; fields may be separated by tabs.
///
/// Sizes must ascend strictly, as the benchmarks print them: a size not above the previous
/// row's (two runs pasted into one file, an edited table) is an error naming the line, never
/// merged. A latency or bandwidth of 0 on a row of at least 1 byte is an error too (no
/// transfer takes no time; a printed 0 is a measurement below the output's resolution).
///
/// # Errors
///
/// [`CalibrationError::Parse`] with the 1-based line number for a row with the wrong number of
/// fields, a field that is not a number, a size that is not a whole number, a negative or
/// non-finite value, a header without a value column, a size not above the previous row's, a
/// zero latency or bandwidth, a title whose test (latency, bandwidth) disagrees with its
/// header's unit (`us`, `MB/s`), or Intel MPI Benchmarks output (`# Benchmarking`);
/// [`CalibrationError::TooFew`] for output without a table or rows.
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{SeriesKind, parse_osu};
///
/// let out = concat!(
///     "# OSU MPI Allreduce Latency Test v5.3\n",
///     "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n",
///     "4                       0.34              0.32              0.35        1000\n",
/// );
/// let series = parse_osu(out)?;
/// assert_eq!(series.kind, SeriesKind::Collective("allreduce".into()));
/// assert_eq!(series.points[0].bytes, 4);
/// assert!((series.points[0].value - 0.34e-6).abs() < 1e-18);
/// assert_eq!(series.points[0].repetitions, Some(1000));
/// # Ok::<(), commcost::calibrate::CalibrationError>(())
/// ```
pub fn parse_osu(text: &str) -> Result<BenchmarkSeries, CalibrationError> {
    let mut title: Option<String> = None;
    let mut columns: Option<Vec<Column>> = None;
    let mut header_kind: Option<SeriesKind> = None;
    let mut points = Vec::new();
    let mut lines_of = Vec::new();
    let mut title_line = 0;
    let mut header_line = 0;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with("# Benchmarking") || trimmed.contains("Intel(R) MPI Benchmarks") {
            return Err(parse_error(
                line,
                "this is Intel MPI Benchmarks output (`# Benchmarking ...`), not OSU \
                 Micro-Benchmarks output"
                    .into(),
            ));
        }
        if let Some(comment) = trimmed.strip_prefix('#') {
            let comment = comment.trim();
            let is_header = comment.starts_with("Size")
                || (columns.is_none() && comment.starts_with("Avg Latency"));
            if is_header {
                if columns.is_some() {
                    return Err(parse_error(
                        line,
                        "a second table header: one benchmark run per input".into(),
                    ));
                }
                header_line = line;
                let names: Vec<&str> = comment
                    .split(['\t'])
                    .flat_map(|part| part.split("  "))
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .collect();
                let cols: Vec<Column> = names.iter().map(|n| classify(n)).collect();
                if !cols.iter().any(|c| matches!(c, Column::Value(_))) {
                    return Err(parse_error(
                        line,
                        format!("table header `{comment}` has no latency or bandwidth column"),
                    ));
                }
                header_kind = Some(if comment.contains("MB/s") {
                    SeriesKind::Bandwidth
                } else if cols.first() == Some(&Column::Size)
                    && names.get(1) == Some(&"Latency (us)")
                {
                    SeriesKind::Latency
                } else {
                    SeriesKind::Other("OSU table".into())
                });
                columns = Some(cols);
            } else if title.is_none() && columns.is_none() && comment.starts_with("OSU") {
                title = Some(comment.to_string());
                title_line = line;
            }
            continue;
        }
        let Some(cols) = &columns else {
            continue; // launcher output before the table
        };
        let fields: Vec<&str> = trimmed.split_whitespace().collect();
        if fields.len() != cols.len() {
            return Err(parse_error(
                line,
                format!(
                    "expected {} fields as the header names, found {}",
                    cols.len(),
                    fields.len()
                ),
            ));
        }
        let mut point = BenchmarkPoint {
            bytes: 0,
            value: f64::NAN,
            min: None,
            max: None,
            repetitions: None,
        };
        for (column, field) in cols.iter().zip(&fields) {
            let number = |unit: f64| parse_measurement(field, line, unit, "measurement");
            let whole = || parse_whole(field, line);
            match *column {
                Column::Size => point.bytes = whole()?,
                Column::Value(unit) => point.value = number(unit)?,
                Column::Min(unit) => point.min = Some(number(unit)?),
                Column::Max(unit) => point.max = Some(number(unit)?),
                Column::Iterations => point.repetitions = Some(whole()?),
                Column::Ignored => {}
            }
        }
        if let Some(previous) = points.last().map(|p: &BenchmarkPoint| p.bytes)
            && cols.contains(&Column::Size)
            && point.bytes <= previous
        {
            return Err(parse_error(
                line,
                format!(
                    "size {} is not above the previous row's {previous}: sizes must ascend \
                     (one run per file)",
                    point.bytes
                ),
            ));
        }
        points.push(point);
        lines_of.push(line);
    }
    if columns.is_none() {
        return Err(CalibrationError::TooFew {
            what: "OSU table headers (`# Size ...`)",
            needed: 1,
            got: 0,
        });
    }
    if points.is_empty() {
        return Err(CalibrationError::TooFew {
            what: "OSU table rows",
            needed: 1,
            got: 0,
        });
    }
    let from_title = title.as_deref().and_then(kind_from_title);
    if let (Some(t), Some(h)) = (&from_title, &header_kind) {
        let title_bw = t.is_bandwidth();
        let title_time = matches!(t, SeriesKind::Latency | SeriesKind::Collective(_));
        if (title_bw && !h.is_bandwidth()) || (title_time && h.is_bandwidth()) {
            return Err(parse_error(
                header_line,
                format!(
                    "the title (line {title_line}) says `{}` but this header measures {}",
                    title.as_deref().unwrap_or(""),
                    if h.is_bandwidth() {
                        "bandwidth (MB/s)"
                    } else {
                        "time (us)"
                    }
                ),
            ));
        }
    }
    let kind = match (from_title, header_kind) {
        (Some(k), _) => k,
        (None, Some(k)) => k,
        (None, None) => SeriesKind::Other("OSU table".into()),
    };
    if matches!(
        kind,
        SeriesKind::Latency | SeriesKind::Bandwidth | SeriesKind::BidirectionalBandwidth
    ) && let Some(i) = points.iter().position(|p| p.bytes > 0 && p.value == 0.0)
    {
        return Err(parse_error(
            lines_of[i],
            format!(
                "{} of 0 at {} bytes: not a measurement (below the output's resolution?)",
                if kind.is_bandwidth() {
                    "bandwidth"
                } else {
                    "latency"
                },
                points[i].bytes
            ),
        ));
    }
    Ok(BenchmarkSeries {
        title: title.unwrap_or_else(|| "OSU Micro-Benchmarks (untitled)".into()),
        kind,
        processes: None,
        points,
    })
}
