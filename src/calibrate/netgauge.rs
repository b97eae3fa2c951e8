//! Reading the files Netgauge's LogGP pattern writes (`ptrn_loggp.c`, `-o FILE`; T. Hoefler
//! et al., Netgauge, and Hoefler, Lichei, Rehm, IPDPS 2007).

use super::prtt::{PrttSample, split_end_to_end};
use super::{Adjustment, Parameter, Refit};
use crate::calibrate::CalibrationError;
use crate::{LogGP, Protocols};

const MICROSECOND: f64 = 1e-6;
/// Times (µs) beyond this are not measurements of a message (11.6 days): rejected, so that no
/// prediction built from a file overflows.
const LARGEST_TIME_US: f64 = 1e12;
/// Round trips (µs) below this (1 femtosecond) are not measurements either (subnormal or
/// zero-like values).
const SMALLEST_PRTT_US: f64 = 1e-9;

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
/// As written by `ptrn_loggp.c`: lines starting with `#` are comments (Netgauge
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
/// field that is not a number, a size or `n` that is not a whole number, `n < 2`, a PRTT
/// outside `1e-9 ..= 1e12` µs (zero, subnormal, negative, infinite or absurd), a non-finite
/// `L`, `o_s` or `o_r`, or any time beyond `1e12` µs; [`CalibrationError::TooFew`] for a file
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
/// # Ok::<(), commcost::calibrate::CalibrationError>(())
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
            if !(*value >= SMALLEST_PRTT_US && *value <= LARGEST_TIME_US) {
                return Err(CalibrationError::Parse {
                    line,
                    message: format!(
                        "column `{}`: {value} µs is not a plausible round trip (1e-9 ..= 1e12 µs)",
                        COLUMNS[k + 2]
                    ),
                });
            }
        }
        for (k, value) in values.iter().enumerate().skip(3) {
            if value.is_finite() && value.abs() > LARGEST_TIME_US {
                return Err(CalibrationError::Parse {
                    line,
                    message: format!(
                        "column `{}`: {value} is beyond 1e12 µs, not a measured time",
                        COLUMNS[k + 2]
                    ),
                });
            }
        }
        if !(values[3].is_finite() && values[4].is_finite() && values[5].is_finite()) {
            return Err(CalibrationError::Parse {
                line,
                message: "columns `L`, `o_s`, `o_r` must be numbers (not nan or inf)".to_string(),
            });
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
    /// line (Netgauge's `g` is the paper's `g - G`, converted back: `g + G`) and `o` = `o_s` of
    /// that line. `L` and the first range's `o` come from the end-to-end time of the smallest
    /// message, `PRTT(1, 0, s_min) / 2`, by [`split_end_to_end`], so the model's `p2p(s_min)` is
    /// the measured time (Netgauge's own `L` column is that end-to-end time).
    ///
    /// Netgauge fits without constraints, and on real TCP runs `g` or `G` comes out negative.
    /// Conversion, per range (`s_a ..= s_b` its sizes), each reported by
    /// [`reported_model_with_adjustments`](Self::reported_model_with_adjustments):
    ///
    /// ```text
    /// G < 0:          G = 0, g = max(0, G_all((s_a + s_b) / 2))   the line's mean over the range
    /// g < 0 <= G:     g = 0, G = G_all(s_b) / (s_b - 1)            through 0, same value at s_b
    /// o_s < 0:        o = 0
    /// ```
    ///
    /// # Errors
    ///
    /// [`CalibrationError::TooFew`] for a run without rows;
    /// [`CalibrationError::MissingMeasurement`] when a range never got a fit (`-nan`);
    /// [`CalibrationError::Parameters`] for values no conversion makes valid.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::calibrate::{NetgaugeRun, parse_netgauge};
    /// use commcost::{CommModel, Message};
    ///
    /// assert!(NetgaugeRun { rows: vec![] }.reported_model().is_err());
    /// // PRTT(1, 0, 1) = 30.8 µs: p2p(1 B) = 15.4 µs, whatever o_s is
    /// let text = "1 10 30.8 77.06 390.04 15.4 4.72 4.6 5.0 -0.001 0.1\n";
    /// let model = parse_netgauge(text)?.reported_model()?;
    /// assert!((model.p2p(&Message::contiguous(1)) - 15.4e-6).abs() < 1e-12);
    /// # Ok::<(), commcost::calibrate::CalibrationError>(())
    /// ```
    pub fn reported_model(&self) -> Result<Protocols<LogGP>, CalibrationError> {
        self.reported_model_with_adjustments()
            .map(|(model, _)| model)
    }

    /// [`reported_model`](Self::reported_model) and every conversion it made.
    ///
    /// # Errors
    ///
    /// As [`reported_model`](Self::reported_model).
    pub fn reported_model_with_adjustments(
        &self,
    ) -> Result<(Protocols<LogGP>, Vec<Adjustment>), CalibrationError> {
        let Some(last) = self.rows.last() else {
            return Err(CalibrationError::TooFew {
                what: "data lines in the Netgauge run",
                needed: 1,
                got: 0,
            });
        };
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
        ranges.push((start, last));
        let smallest = self.rows.iter().min_by_key(|r| r.size).unwrap_or(last);
        let mut adjustments = Vec::new();
        let mut params = Vec::with_capacity(ranges.len());
        for (k, &(first, row)) in ranges.iter().enumerate() {
            let (Some(g), Some(big_g)) = (row.gap, row.gap_per_byte) else {
                return Err(CalibrationError::MissingMeasurement {
                    size: row.size,
                    what: "a (g, G) fit for this range in the Netgauge file",
                });
            };
            let (mut g, mut big_g) = (g + big_g, big_g);
            let s_a = first.max(1) as f64;
            let s_b = (row.size.max(first).max(1)) as f64;
            let mut adjust = |parameter: Parameter, fitted: f64, used: f64, how: Refit| {
                adjustments.push(Adjustment {
                    range: Some(k),
                    parameter,
                    fitted,
                    used,
                    how,
                });
            };
            if big_g < 0.0 {
                let mean = (g + big_g * ((s_a + s_b) / 2.0 - 1.0)).max(0.0);
                adjust(
                    Parameter::GapPerByte,
                    big_g,
                    0.0,
                    Refit::NetgaugeNegativeGapPerByte,
                );
                adjust(Parameter::Gap, g, mean, Refit::NetgaugeGapMean);
                g = mean;
                big_g = 0.0;
            } else if g < 0.0 {
                let at_last = g + big_g * (s_b - 1.0);
                let slope = if s_b > 1.0 {
                    (at_last / (s_b - 1.0)).max(0.0)
                } else {
                    0.0
                };
                adjust(Parameter::Gap, g, 0.0, Refit::NetgaugeNegativeGap);
                adjust(
                    Parameter::GapPerByte,
                    big_g,
                    slope,
                    Refit::NetgaugeSlopeThroughOrigin,
                );
                g = 0.0;
                big_g = slope;
            }
            let mut overhead = row.send_overhead;
            if overhead.is_nan() || overhead < 0.0 {
                adjust(
                    Parameter::Overhead,
                    overhead,
                    0.0,
                    Refit::NetgaugeNegativeOverhead,
                );
                overhead = 0.0;
            }
            params.push((if k == 0 { 0 } else { first }, overhead, g, big_g));
        }
        let end_to_end = smallest.prtt_single / 2.0;
        let split = split_end_to_end(end_to_end, params[0].1)?;
        if split.overlap > 0.0 {
            adjustments.push(Adjustment {
                range: None,
                parameter: Parameter::Latency,
                fitted: end_to_end - 2.0 * params[0].1,
                used: 0.0,
                how: Refit::NetgaugeOverheadOverlaps,
            });
            adjustments.push(Adjustment {
                range: Some(0),
                parameter: Parameter::Overhead,
                fitted: params[0].1,
                used: split.overhead,
                how: Refit::OverheadQuarterOfEndToEnd,
            });
            params[0].1 = split.overhead;
        }
        let mut starts = Vec::with_capacity(params.len());
        for (first, overhead, g, big_g) in params {
            starts.push((
                first,
                LogGP::new(split.latency, overhead, g, big_g).and_then(|m| m.with_processors(2))?,
            ));
        }
        Ok((Protocols::from_starts(starts)?, adjustments))
    }
}
