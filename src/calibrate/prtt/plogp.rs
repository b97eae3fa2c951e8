//! The pLogP model (Kielmann, Bal, Verstoep 2000) of the same PRTT measurements.

use super::super::detect::Segment;
use super::SizeDiagnostics;
use super::lines::line_through;
use crate::PLogP;
use crate::calibrate::CalibrationError;
use crate::calibrate::{Adjustment, Parameter, Refit};
use crate::table::Table1D;

/// The pLogP model (Kielmann, Bal, Verstoep 2000) of PRTT measurements, on the protocol
/// ranges `segments` found by [`detect_changes`](crate::calibrate::detect_changes) (indices into `diagnostics`).
///
/// # Method
///
/// pLogP's one-message time is `L + g(m)`, its round trip `RTT(m) = 2 (L + g(m))`. Here
/// `L = PRTT(1, 0, s_min) / 2 - G_all(s_min)` (the round trip of the smallest message less the
/// sender's gap, measured by the burst), and `g(m) = PRTT(1, 0, m) / 2 - L` on the weighted
/// least-squares line of each range's `PRTT(1, 0, s) / 2` (weights `1 / value²`), tabulated at
/// the range's first and last size — at `s_min` the measured value itself, so that
/// `p2p(s_min) = PRTT(1, 0, s_min) / 2`. `o_s(m) = o_r(m)` is each range's weighted line of
/// `o(s)` (eq. (6) of Hoefler et al. 2007), tabulated the same way. A negative `L`, or a table
/// entry below 0, is set to 0 and reported in `adjustments`.
///
/// # Errors
///
/// [`CalibrationError::TooFew`] for no sizes or no segments; fit errors.
pub(super) fn plogp_from_diagnostics(
    diagnostics: &[SizeDiagnostics],
    segments: &[Segment],
    adjustments: &mut Vec<Adjustment>,
) -> Result<PLogP, CalibrationError> {
    let (Some(smallest), false) = (diagnostics.first(), segments.is_empty()) else {
        return Err(CalibrationError::TooFew {
            what: "sizes and protocol ranges for pLogP",
            needed: 1,
            got: 0,
        });
    };
    let end_to_end = smallest.prtt_single / 2.0;
    let fitted_latency = end_to_end - smallest.cumulative_gap;
    let latency = if fitted_latency >= 0.0 && fitted_latency.is_finite() {
        fitted_latency
    } else {
        adjustments.push(Adjustment {
            range: None,
            parameter: Parameter::PlogpLatency,
            fitted: fitted_latency,
            used: 0.0,
            how: Refit::BurstExceedsOneWay,
        });
        0.0
    };
    let mut table_sizes: Vec<f64> = Vec::new();
    let mut gap_values = Vec::new();
    let mut overhead_values = Vec::new();
    for (r, segment) in segments.iter().enumerate() {
        let mut inliers: Vec<usize> = segment.inliers().collect();
        if inliers.is_empty() {
            inliers = (segment.start..segment.end).collect();
        }
        let Some(&first) = inliers.first() else {
            continue;
        };
        let half: Vec<f64> = inliers
            .iter()
            .map(|&i| diagnostics[i].prtt_single / 2.0)
            .collect();
        let weights: Vec<f64> = half.iter().map(|h| h.powi(-2)).collect();
        let overheads: Vec<f64> = inliers.iter().map(|&i| diagnostics[i].overhead).collect();
        let first_size = diagnostics[segment.start].size;
        let last_size = diagnostics[segment.end - 1].size;
        let (t_first, t_slope) = line_through(diagnostics, &inliers, &half, &weights, first_size)?;
        let (o_first, o_slope) =
            line_through(diagnostics, &inliers, &overheads, &weights, first_size)?;
        let _ = first;
        let mut points = vec![first_size];
        if last_size > first_size {
            points.push(last_size);
        }
        for (k, &size) in points.iter().enumerate() {
            let dx = (size - first_size) as f64;
            let one_way = if r == 0 && k == 0 && size == smallest.size {
                end_to_end
            } else {
                t_first + t_slope * dx
            };
            let mut entry = |parameter: Parameter, value: f64| {
                if value >= 0.0 && value.is_finite() {
                    value
                } else {
                    adjustments.push(Adjustment {
                        range: Some(r),
                        parameter,
                        fitted: value,
                        used: 0.0,
                        how: Refit::TableEntryZero,
                    });
                    0.0
                }
            };
            let g = entry(Parameter::PlogpGap, one_way - latency);
            let o = entry(Parameter::PlogpOverhead, o_first + o_slope * dx);
            // sizes strictly increase: ranges are disjoint and in order
            if table_sizes.last().is_none_or(|&last| (size as f64) > last) {
                table_sizes.push(size as f64);
                gap_values.push(g);
                overhead_values.push(o);
            }
        }
    }
    let overhead = Table1D::new(table_sizes.clone(), overhead_values)?;
    let gap = Table1D::new(table_sizes, gap_values)?;
    Ok(PLogP::new(latency, overhead.clone(), overhead, gap, 2)?)
}
