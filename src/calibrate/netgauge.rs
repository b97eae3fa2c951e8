//! Reading the files Netgauge's LogGP pattern writes (`ptrn_loggp.c`, `-o FILE`; SPEC §11).

use super::prtt::PrttSample;
use crate::error::CalibrationError;
use crate::{LogGP, Protocols};

const MICROSECOND: f64 = 1e-6;

/// One data line of a Netgauge LogGP file (times converted from µs to seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NetgaugeRow {
    /// 1-based line number in the file.
    pub line: usize,
    /// Message size, bytes.
    pub size: u64,
    /// `n` of the PRTT series (Netgauge uses 10).
    pub n: u32,
    /// `PRTT(1, 0, s)`.
    pub prtt_single: f64,
    /// `PRTT(n, 0, s)`.
    pub prtt_burst: f64,
    /// `PRTT(n, d, s)` with `d = PRTT(1, 0, s)`.
    pub prtt_delayed: f64,
    /// Netgauge's `L = PRTT(1, 0, s_min) / 2`.
    pub latency: f64,
    /// Netgauge's `o_s` at this size.
    pub send_overhead: f64,
    /// Netgauge's `o_r` at this size (measured at the server).
    pub recv_overhead: f64,
    /// The current range's `g` in Netgauge's fit `g + G s` (`None` while it has too few points:
    /// Netgauge writes `-nan`).
    pub gap: Option<f64>,
    /// The current range's `G` (seconds per byte).
    pub gap_per_byte: Option<f64>,
    /// The fit's `lsqu` (seconds).
    pub lsqu: Option<f64>,
}

/// A parsed Netgauge LogGP file.
#[derive(Debug, Clone, PartialEq)]
pub struct NetgaugeRun {
    /// Every data line, in file order (a size where Netgauge detected a change appears twice:
    /// first with the closed range's fit, then with the new range's).
    pub rows: Vec<NetgaugeRow>,
}

fn parse_number(line: usize, column: &str, field: &str) -> Result<f64, CalibrationError> {
    field.parse::<f64>().map_err(|_| CalibrationError::Parse {
        line,
        message: format!("column `{column}`: `{field}` is not a number"),
    })
}

fn optional(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

/// Parses the output file of Netgauge's LogGP pattern.
///
/// # Format
///
/// As written by `ptrn_loggp.c` (SPEC §11): lines starting with `#` are comments (Netgauge
/// writes three header lines); every other non-empty line has eleven whitespace-separated
/// columns, times in µs, sizes in bytes:
///
/// ```text
/// size  n  PRTT(1,0,s)  PRTT(n,0,s)  PRTT(n,d,s)  L  o_s  o_r  g  G  lsqu
/// ```
///
/// `g`, `G` and `lsqu` may be `-nan` / `nan` / `inf` (too few points for a fit).
///
/// # Errors
///
/// [`CalibrationError::Parse`] with the 1-based line number for a wrong column count, a
/// field that is not a number, a size or `n` that is not a whole number, `n < 2`, a
/// non-finite or negative time in the PRTT columns; [`CalibrationError::TooFew`] for a file
/// without data lines.
///
/// # Examples
///
/// ```
/// use commcost::calibrate::parse_netgauge;
///
/// let header = "# size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G)";
/// let row = "1 10 30.800000 77.060000 390.040000 15.400000 4.720000 4.600000 -nan -nan -nan";
/// let file = format!("{header}\n{row}\n");
/// let run = parse_netgauge(&file)?;
/// assert_eq!(run.rows[0].size, 1);
/// assert!((run.rows[0].prtt_single - 30.8e-6).abs() < 1e-15);
/// assert_eq!(run.rows[0].gap, None);
/// # Ok::<(), commcost::CalibrationError>(())
/// ```
pub fn parse_netgauge(text: &str) -> Result<NetgaugeRun, CalibrationError> {
    const COLUMNS: [&str; 11] = [
        "size",
        "n",
        "PRTT(1,0,s)",
        "PRTT(n,0,s)",
        "PRTT(n,d,s)",
        "L",
        "o_s",
        "o_r",
        "g",
        "G",
        "lsqu",
    ];
    let mut rows = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = trimmed.split_whitespace().collect();
        if fields.len() != COLUMNS.len() {
            return Err(CalibrationError::Parse {
                line,
                message: format!("expected 11 columns, found {}", fields.len()),
            });
        }
        let size = fields[0]
            .parse::<u64>()
            .map_err(|_| CalibrationError::Parse {
                line,
                message: format!(
                    "column `size`: `{}` is not a whole number of bytes",
                    fields[0]
                ),
            })?;
        let n = fields[1]
            .parse::<u32>()
            .map_err(|_| CalibrationError::Parse {
                line,
                message: format!("column `n`: `{}` is not a whole number", fields[1]),
            })?;
        if n < 2 {
            return Err(CalibrationError::Parse {
                line,
                message: format!("column `n`: {n} < 2"),
            });
        }
        let mut values = [0.0; 9];
        for (k, value) in values.iter_mut().enumerate() {
            *value = parse_number(line, COLUMNS[k + 2], fields[k + 2])?;
        }
        for (k, value) in values.iter().take(3).enumerate() {
            if !(*value > 0.0 && value.is_finite()) {
                return Err(CalibrationError::Parse {
                    line,
                    message: format!(
                        "column `{}`: {value} is not a positive time",
                        COLUMNS[k + 2]
                    ),
                });
            }
        }
        let us = |v: f64| v * MICROSECOND;
        rows.push(NetgaugeRow {
            line,
            size,
            n,
            prtt_single: us(values[0]),
            prtt_burst: us(values[1]),
            prtt_delayed: us(values[2]),
            latency: us(values[3]),
            send_overhead: us(values[4]),
            recv_overhead: us(values[5]),
            gap: optional(values[6]).map(us),
            gap_per_byte: optional(values[7]).map(us),
            lsqu: optional(values[8]).map(us),
        });
    }
    if rows.is_empty() {
        return Err(CalibrationError::TooFew {
            what: "data lines in the Netgauge file",
            needed: 1,
            got: 0,
        });
    }
    Ok(NetgaugeRun { rows })
}

impl NetgaugeRun {
    /// The PRTT samples of the run, one triple per size (`d = PRTT(1, 0, s)`, as Netgauge
    /// measures), for [`super::assess_loggp`] (use [`super::AssessmentConfig::netgauge`] or
    /// the default with `n` set to the file's).
    pub fn samples(&self) -> Vec<PrttSample> {
        let mut seen = std::collections::HashSet::new();
        let mut samples = Vec::with_capacity(3 * self.rows.len());
        for row in &self.rows {
            if !seen.insert(row.size) {
                continue;
            }
            samples.push(PrttSample {
                n: 1,
                delay: 0.0,
                size: row.size,
                time: row.prtt_single,
            });
            samples.push(PrttSample {
                n: row.n,
                delay: 0.0,
                size: row.size,
                time: row.prtt_burst,
            });
            samples.push(PrttSample {
                n: row.n,
                delay: row.prtt_single,
                size: row.size,
                time: row.prtt_delayed,
            });
        }
        samples
    }

    /// The parameters Netgauge reported, as a model: one range per protocol it detected.
    ///
    /// A size written twice marks a change: the first of the two lines closes the old range,
    /// whose last reported fit it holds. Netgauge declares the change 5 sizes back (its
    /// look-ahead) and starts the new range at the point after it, 3 sizes before the doubled
    /// line; that size starts the model's new range. Each range takes `g` and `G` of its last
    /// line (Netgauge's `g` is the paper's `g - G`, converted back: `g + G`), `o` = `o_s` of that
    /// line and Netgauge's `L`.
    ///
    /// # Errors
    ///
    /// [`CalibrationError::MissingMeasurement`] when a range never got a fit (`-nan`);
    /// [`CalibrationError::Parameters`] for negative reported values.
    pub fn reported_model(&self) -> Result<Protocols<LogGP>, CalibrationError> {
        // distinct sizes in order, and the indices of the lines that close a range
        let mut distinct: Vec<u64> = Vec::new();
        let mut ranges: Vec<(u64, &NetgaugeRow)> = Vec::new();
        let mut start = 0u64;
        for (k, row) in self.rows.iter().enumerate() {
            let doubled_next = self.rows.get(k + 1).is_some_and(|r| r.size == row.size);
            if distinct.last() != Some(&row.size) {
                distinct.push(row.size);
            }
            if doubled_next {
                ranges.push((start, row));
                let idx = distinct.len() - 1;
                start = distinct[idx.saturating_sub(3)];
            }
        }
        let last = &self.rows[self.rows.len() - 1];
        ranges.push((start, last));
        let mut starts = Vec::with_capacity(ranges.len());
        for (k, (first, row)) in ranges.into_iter().enumerate() {
            let (Some(g), Some(big_g)) = (row.gap, row.gap_per_byte) else {
                return Err(CalibrationError::MissingMeasurement {
                    size: row.size,
                    what: "a (g, G) fit for this range in the Netgauge file",
                });
            };
            let model = LogGP::new(row.latency, row.send_overhead, g + big_g, big_g, 2)?;
            starts.push((if k == 0 { 0 } else { first }, model));
        }
        Ok(Protocols::from_starts(starts)?)
    }
}
