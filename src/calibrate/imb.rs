//! The output of the Intel MPI Benchmarks (`IMB-MPI1`: `PingPong`, `PingPing`, collectives) as
//! typed [`BenchmarkSeries`].

use super::benchmarks::{
    BenchmarkPoint, BenchmarkSeries, SeriesKind, parse_error, parse_measurement, parse_whole,
};
use crate::calibrate::CalibrationError;

const MICROSECOND: f64 = 1e-6;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Column {
    Bytes,
    Repetitions,
    Time,
    Min,
    Max,
    Avg,
    Ignored,
}

fn classify(name: &str) -> Column {
    match name {
        "#bytes" => Column::Bytes,
        "#repetitions" => Column::Repetitions,
        "t[usec]" => Column::Time,
        "t_min[usec]" => Column::Min,
        "t_max[usec]" => Column::Max,
        "t_avg[usec]" => Column::Avg,
        _ => Column::Ignored,
    }
}

fn kind_of(benchmark: &str) -> SeriesKind {
    match benchmark {
        "PingPong" => SeriesKind::Latency,
        "PingPing" => SeriesKind::ExchangeLatency,
        other => SeriesKind::Collective(other.to_ascii_lowercase()),
    }
}

struct Open {
    benchmark: String,
    processes: Option<u64>,
    columns: Option<Vec<Column>>,
    points: Vec<BenchmarkPoint>,
}

impl Open {
    fn close(self, out: &mut Vec<BenchmarkSeries>) {
        if !self.points.is_empty() {
            out.push(BenchmarkSeries {
                title: format!("IMB {}", self.benchmark),
                kind: kind_of(&self.benchmark),
                processes: self.processes,
                points: self.points,
            });
        }
    }
}

/// Parses the standard output of an Intel MPI Benchmarks run (`IMB-MPI1`, also `IMB-NBC` /
/// `IMB-P2P` tables with the same columns) into one series per benchmark and process count.
///
/// # Format
///
/// A table starts at `# Benchmarking NAME`, optionally followed by `# #processes = N`; its
/// header line names the columns:
///
/// ```text
///        #bytes #repetitions      t[usec]   Mbytes/sec                 PingPong, PingPing
///        #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]    collectives
///  #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]                 Barrier
/// ```
///
/// Each following line of numbers is one row. The series' value is `t[usec]` (`PingPong`:
/// half the round trip, so one-way time) or `t_avg[usec]`, in seconds; `t_min` / `t_max`
/// become [`min`](BenchmarkPoint::min) / [`max`](BenchmarkPoint::max). Other columns
/// (`Mbytes/sec`, `defects`) are read past. A new `# #processes` line inside a benchmark (runs
/// with `-npmin`) starts a new series. Other comment lines and blank lines are skipped. A
/// leading byte-order mark is ignored; fields may be separated by tabs.
///
/// Within a table sizes must ascend strictly (IMB prints them so): a size not above the
/// previous row's is an error naming the line, never merged. A `PingPong` or `PingPing` time of
/// 0 on a row of at least 1 byte is an error too.
///
/// # Errors
///
/// [`CalibrationError::Parse`] with the 1-based line number for a row with the wrong number of
/// fields, a field that is not a number, a size or repetition count that is not a whole number,
/// a negative or non-finite time, a header without a time column, or a row before any
/// header, a size not above the previous row's, a zero `PingPong` / `PingPing` time, or OSU
/// Micro-Benchmarks output (`# OSU ...` / `# Size ...`); [`CalibrationError::TooFew`] for
/// output without any table.
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{SeriesKind, parse_imb};
///
/// let out = "# Benchmarking PingPong\n# #processes = 2\n\
///            #bytes #repetitions      t[usec]   Mbytes/sec\n\
///                 0         1000         0.20         0.00\n\
///              1024         1000         0.31      3330.27\n";
/// let series = parse_imb(out)?;
/// assert_eq!(series[0].kind, SeriesKind::Latency);
/// assert_eq!(series[0].processes, Some(2));
/// assert!((series[0].points[1].value - 0.31e-6).abs() < 1e-18);
/// # Ok::<(), commcost::calibrate::CalibrationError>(())
/// ```
pub fn parse_imb(text: &str) -> Result<Vec<BenchmarkSeries>, CalibrationError> {
    let mut out = Vec::new();
    let mut open: Option<Open> = None;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        if open.is_none() && (trimmed.starts_with("# OSU") || trimmed.starts_with("# Size")) {
            return Err(parse_error(
                line,
                "this is OSU Micro-Benchmarks output (`# OSU ...`, `# Size ...`), not Intel MPI \
                 Benchmarks output"
                    .into(),
            ));
        }
        if let Some(name) = trimmed.strip_prefix("# Benchmarking ") {
            if let Some(previous) = open.take() {
                previous.close(&mut out);
            }
            open = Some(Open {
                benchmark: name.trim().to_string(),
                processes: None,
                columns: None,
                points: Vec::new(),
            });
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("# #processes =") {
            let processes = rest
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .ok_or_else(|| {
                    parse_error(
                        line,
                        format!("`#processes = {}` is not a count", rest.trim()),
                    )
                })?;
            if let Some(current) = open.as_mut() {
                if current.columns.is_some() || !current.points.is_empty() {
                    let benchmark = current.benchmark.clone();
                    if let Some(previous) = open.take() {
                        previous.close(&mut out);
                    }
                    open = Some(Open {
                        benchmark,
                        processes: Some(processes),
                        columns: None,
                        points: Vec::new(),
                    });
                } else {
                    current.processes = Some(processes);
                }
            }
            continue;
        }
        if trimmed.starts_with("#bytes") || trimmed.starts_with("#repetitions") {
            let Some(current) = open.as_mut() else {
                return Err(parse_error(
                    line,
                    "a table header before any `# Benchmarking` line".into(),
                ));
            };
            let columns: Vec<Column> = trimmed.split_whitespace().map(classify).collect();
            if !columns
                .iter()
                .any(|c| matches!(c, Column::Time | Column::Avg))
            {
                return Err(parse_error(
                    line,
                    format!("table header `{trimmed}` has no t[usec] or t_avg[usec] column"),
                ));
            }
            current.columns = Some(columns);
            continue;
        }
        if trimmed.starts_with('#') {
            continue;
        }
        let Some(current) = open.as_mut() else {
            continue; // launcher output before the first table
        };
        let Some(columns) = &current.columns else {
            continue;
        };
        let fields: Vec<&str> = trimmed.split_whitespace().collect();
        if fields.len() != columns.len() {
            return Err(parse_error(
                line,
                format!(
                    "{}: expected {} fields as the header names, found {}",
                    current.benchmark,
                    columns.len(),
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
        for (column, field) in columns.iter().zip(&fields) {
            let time = || parse_measurement(field, line, MICROSECOND, "time");
            let whole = || parse_whole(field, line);
            match column {
                Column::Bytes => point.bytes = whole()?,
                Column::Repetitions => point.repetitions = Some(whole()?),
                Column::Time | Column::Avg => point.value = time()?,
                Column::Min => point.min = Some(time()?),
                Column::Max => point.max = Some(time()?),
                Column::Ignored => {}
            }
        }
        if let Some(previous) = current.points.last()
            && columns.contains(&Column::Bytes)
            && point.bytes <= previous.bytes
        {
            return Err(parse_error(
                line,
                format!(
                    "{}: size {} is not above the previous row's {}: sizes must ascend",
                    current.benchmark, point.bytes, previous.bytes
                ),
            ));
        }
        if matches!(current.benchmark.as_str(), "PingPong" | "PingPing")
            && point.bytes > 0
            && point.value == 0.0
        {
            return Err(parse_error(
                line,
                format!(
                    "{}: time of 0 at {} bytes: not a measurement (below the output's \
                     resolution?)",
                    current.benchmark, point.bytes
                ),
            ));
        }
        current.points.push(point);
    }
    if let Some(last) = open.take() {
        last.close(&mut out);
    }
    if out.is_empty() {
        return Err(CalibrationError::TooFew {
            what: "IMB tables (`# Benchmarking ...` with rows)",
            needed: 1,
            got: 0,
        });
    }
    Ok(out)
}
