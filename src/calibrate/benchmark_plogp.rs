//! pLogP from the output of the standard MPI benchmarks (`osu_latency` + `osu_bw`, IMB
//! `PingPong`).

use super::benchmarks::{BenchmarkSeries, sorted_latency};
use super::{Adjustment, GapSource, Parameter, Refit};
use crate::calibrate::CalibrationError;
use crate::error::ParameterError;
use crate::table::Table1D;
use crate::{CommModel, Message, PLogP};

/// The result of [`fit_plogp_from_benchmarks`].
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkPLogPFit {
    /// The fitted model.
    pub model: PLogP,
    /// Where `g(m)` came from.
    pub gap_source: GapSource,
    /// Values used instead of what the data gave (a negative `L`).
    pub adjustments: Vec<Adjustment>,
    /// Median and 90th percentile of `|p2p - measured| / measured` over the latency series.
    pub latency_error: (f64, f64),
    /// The same for the bandwidth series' message intervals, when one was given.
    pub bandwidth_error: Option<(f64, f64)>,
}

/// Fits pLogP (Kielmann, Bal & Verstoep, "Fast measurement of LogP parameters for message
/// passing platforms", IPDPS 2000 Workshops, §2: `T(m) = L + g(m)`) to a one-way latency
/// series and, optionally, a streaming-bandwidth series.
///
/// # Method
///
/// * `g(m)`: the message interval of the bandwidth series, `m / bandwidth(m)` (`osu_bw`'s
///   window of back-to-back sends measures the gap between consecutive messages), as a table
///   over its sizes;
/// * `L`: from the one-way time of the smallest latency size `m₁` (1 byte for OSU and IMB),
///   `L = T(m₁) - g(m₁)` — the benchmarks measure the sum `L + g(m₁)`; a negative
///   difference is clamped to 0 and reported;
/// * `o_s(m)`, `o_r(m)`: a ping-pong and a bandwidth stream do not determine them (they
///   overlap with `g(m)` and `L`); they are 0 tables — the model's overheads are not
///   measurements.
///
/// Without a bandwidth series `g(m)` is the one-way time itself and `L = 0` (the split of
/// `T(m)` into `L` and `g(m)` is then not determined either).
///
/// # Errors
///
/// As [`fit_loggp_from_benchmarks`](super::fit_loggp_from_benchmarks) for the latency
/// series; [`CalibrationError::TooFew`] for a bandwidth series with no point of at least 1
/// byte; [`CalibrationError::Parameters`] for `processors` 0.
///
/// # Examples
///
/// ```
/// use commcost::CommModel;
/// use commcost::calibrate::{fit_plogp_from_benchmarks, parse_osu};
/// let latency = parse_osu("# OSU MPI Latency Test v5.3\n# Size          Latency (us)\n\
///     1 2.0\n1024 3.0\n")?;
/// let bw = parse_osu("# OSU MPI Bandwidth Test v5.3\n# Size      Bandwidth (MB/s)\n\
///     1 1.0\n1024 1024.0\n")?;
/// let fit = fit_plogp_from_benchmarks(&latency, Some(&bw), 2)?;
/// // g(1) = 1 B / (1 MB/s) = 1 µs, so L = 2 µs - 1 µs
/// assert!((fit.model.latency() - 1e-6).abs() < 1e-15);
/// # Ok::<(), commcost::calibrate::CalibrationError>(())
/// ```
pub fn fit_plogp_from_benchmarks(
    latency: &BenchmarkSeries,
    bandwidth: Option<&BenchmarkSeries>,
    processors: u64,
) -> Result<BenchmarkPLogPFit, CalibrationError> {
    let processors = ParameterError::at_least("processors", processors, 1)?;
    if latency.kind.is_bandwidth() || bandwidth.is_some_and(|b| !b.kind.is_bandwidth()) {
        return Err(CalibrationError::Inconsistent {
            size: 0,
            at_stride: String::new(),
            component: "series kinds",
            value: 0.0,
            explanation: "pLogP needs a latency (time) series and a bandwidth series",
        });
    }
    let lat = sorted_latency(latency)?;
    let zero = Table1D::constant(0.0)?;
    let mut adjustments = Vec::new();
    let (gap, l, gap_source, intervals) = match bandwidth {
        Some(b) => {
            let mut intervals = b.seconds_per_message();
            intervals.sort_by_key(|p| p.0);
            intervals.dedup_by_key(|p| p.0);
            if intervals.is_empty() {
                return Err(CalibrationError::TooFew {
                    what: "bandwidth points of at least 1 byte",
                    needed: 1,
                    got: 0,
                });
            }
            let gap = Table1D::new(
                intervals.iter().map(|p| p.0 as f64).collect(),
                intervals.iter().map(|p| p.1).collect(),
            )?;
            let (m1, t1) = lat[0];
            let fitted = t1 - gap.eval(m1 as f64).max(0.0);
            let l = if fitted < 0.0 {
                adjustments.push(Adjustment {
                    range: None,
                    parameter: Parameter::PlogpLatency,
                    fitted,
                    used: 0.0,
                    how: Refit::IntervalExceedsOneWay,
                });
                0.0
            } else {
                fitted
            };
            (gap, l, GapSource::Bandwidth, intervals)
        }
        None => {
            let gap = Table1D::new(
                lat.iter().map(|p| p.0 as f64).collect(),
                lat.iter().map(|p| p.1).collect(),
            )?;
            (gap, 0.0, GapSource::Latency, Vec::new())
        }
    };
    let model = PLogP::new(l, zero.clone(), zero, gap, processors)?;
    let latency_error = super::relative_errors(
        &lat.iter()
            .map(|&(s, t)| (model.p2p(&Message::contiguous(s)), t))
            .collect::<Vec<_>>(),
    )
    .unwrap_or((0.0, 0.0));
    let bandwidth_error = super::relative_errors(
        &intervals
            .iter()
            .map(|&(s, i)| (model.send_interval(&Message::contiguous(s)), i))
            .collect::<Vec<_>>(),
    );
    Ok(BenchmarkPLogPFit {
        model,
        gap_source,
        adjustments,
        latency_error,
        bandwidth_error,
    })
}
