//! Netgauge's protocol-change detection (`ptrn_loggp.c`), reproduced with its weaknesses for
//! the Netgauge-compatible assessment.

use super::{Segment, validate};
use crate::calibrate::CalibrationError;

/// Netgauge's detection (`ptrn_loggp.c`), for the "Netgauge-compatible" assessment.
///
/// After each new point (`elems` points so far): only when `lastchange + x + 2 <= elems`, the
/// candidate is `c = elems - x`; `base` is `lsqu` of the ordinary least-squares line over
/// `[lastchange, c)`, with `lsqu = sqrt(Σ r² / (count - 2))`; the change is rejected if for any
/// `ix` in `c+1 ..= c+4` the fit over `[lastchange, ix)` has `lsqu < pfact · base`, if `base` is
/// NaN, or if `base < 0.15 µs`. On a change the closed range is `[lastchange, c)` and
/// `lastchange = c + 1`: point `c` belongs to no range. Points of the current range more than
/// `2 lsqu` above its line are dropped when `lsqu > 100 µs`. Values are seconds (the floors are
/// Netgauge's µs converted). `x = 5`, `pfact = 2`.
///
/// Known weaknesses, reproduced on purpose: the 0.15 µs floor hides real switches on fast
/// transports; noisy transports produce false changes.
///
/// # Errors
///
/// As [`detect_changes`](super::detect_changes).
pub fn detect_changes_netgauge(
    sizes: &[f64],
    values: &[f64],
) -> Result<Vec<Segment>, CalibrationError> {
    validate(sizes, values)?;
    const X: usize = 5;
    const PFACT: f64 = 2.0;
    const FLOOR: f64 = 0.15e-6;
    const OUTLIER_LSQU: f64 = 100e-6;
    let n = values.len();
    let fit = |points: &[usize]| -> (f64, f64, f64) {
        let count = points.len() as f64;
        let mx = points.iter().map(|&i| sizes[i]).sum::<f64>() / count;
        let my = points.iter().map(|&i| values[i]).sum::<f64>() / count;
        let (mut h, mut j) = (0.0, 0.0);
        for &i in points {
            h += (sizes[i] - mx) * (values[i] - my);
            j += (sizes[i] - mx) * (sizes[i] - mx);
        }
        let a = h / j;
        let b = my - a * mx;
        let sse: f64 = points
            .iter()
            .map(|&i| (a * sizes[i] + b - values[i]).powi(2))
            .sum();
        (b, a, (sse / (count - 2.0)).sqrt())
    };
    // the points seen so far (indices into the series), with dropped outliers removed
    let mut kept: Vec<usize> = Vec::with_capacity(n);
    let mut lastchange = 0usize; // position in `kept`
    let mut segments = Vec::new();
    let mut dropped: Vec<usize> = Vec::new();
    for i in 0..n {
        kept.push(i);
        // outlier removal against the current range's line
        if kept.len() - lastchange >= 3 {
            let (b, a, lsqu) = fit(&kept[lastchange..]);
            if lsqu > OUTLIER_LSQU {
                let before = kept.len();
                let mut k = lastchange;
                while k < kept.len() {
                    let p = kept[k];
                    if values[p] > a * sizes[p] + b + 2.0 * lsqu {
                        dropped.push(p);
                        kept.remove(k);
                    } else {
                        k += 1;
                    }
                }
                if kept.len() != before && kept.len() <= lastchange {
                    continue;
                }
            }
        }
        let elems = kept.len();
        if lastchange + X + 2 > elems {
            continue;
        }
        let c = elems - X;
        let (_, _, base) = fit(&kept[lastchange..c]);
        let mut flag = !(base.is_nan() || base < FLOOR);
        for ix in c + 1..c + X {
            let (_, _, l) = fit(&kept[lastchange..ix]);
            if l < PFACT * base {
                flag = false;
            }
        }
        if flag {
            let (b, a, _) = fit(&kept[lastchange..c]);
            segments.push(netgauge_segment(&kept[lastchange..c], &dropped, a, b));
            lastchange = c + 1;
        }
    }
    if lastchange < kept.len() {
        let points = &kept[lastchange..];
        let (b, a, _) = if points.len() >= 2 {
            fit(points)
        } else {
            (values[points[0]], 0.0, f64::NAN)
        };
        segments.push(netgauge_segment(points, &dropped, a, b));
    }
    Ok(segments)
}

fn netgauge_segment(points: &[usize], dropped: &[usize], slope: f64, intercept: f64) -> Segment {
    let (start, end) = (points[0], points[points.len() - 1] + 1);
    Segment {
        start,
        end,
        outliers: dropped
            .iter()
            .copied()
            .filter(|&d| d >= start && d < end)
            .collect(),
        intercept,
        slope,
    }
}
