//! Local-work prices from measurements: a [`CopyCost`] by cache class from timed copies, the
//! temporary-buffer price and a sum [`Operator`] from [`measure_local`](crate::probe::measure_local)'s
//! samples.

use crate::calibrate::CalibrationError;
use crate::collectives::{CopyCost, LocalWork, Operator};

/// Fits the local-work prices of a platform.
///
/// # Method
///
/// * copies: `copies` are `(bytes, seconds)` of contiguous copies. The per-copy cost `c0` is
///   the time of the smallest copy measured (at 64 bytes or less a copy is its fixed cost);
///   each class `[from_k, from_{k+1})` of `class_starts` (first 0; cache sizes, see below) gets
///   the median of `(t - c0) / b` over its samples (clamped at 0), a class without samples
///   the rate of the class before it. With `class_starts = [0, L2/2, L3/2]` a copy whose
///   source and destination fit in the L2 (L3) cache is priced at that cache's measured rate
///   — memory logP's `o(s)` (Cameron & Sun, IPDPS 2003, eq. 1) by cache class.
/// * temporary buffer: the median of `temp_buffers`' times (allocation and release; the
///   sizes a collective allocates vary, and below the allocator's mmap threshold the cost does
///   not depend on the size).
/// * operator: `op(b) = per_call + per_byte · b` by least squares through `operator`'s
///   `(bytes, seconds)`, both clamped at 0.
///
/// # Errors
///
/// [`CalibrationError::TooFew`] without copies, temporary-buffer or operator samples (the
/// operator needs two sizes); [`CalibrationError::InvalidValue`] for a time that is not
/// positive and finite; [`CalibrationError::Collective`] for prices the model rejects
/// (class starts not increasing from 0, more than four classes).
///
/// # Examples
///
/// ```
/// use commcost::calibrate::fit_local_work;
///
/// // copies at 0.05 ns/B below 1 MiB, 0.2 ns/B above, 20 ns each; buffers 100 ns; a sum at
/// // 0.25 ns/B
/// let copies: Vec<(u64, f64)> = [64u64, 4096, 262144, 4 << 20, 16 << 20]
///     .iter()
///     .map(|&b| (b, 20e-9 + b as f64 * if b < 1 << 20 { 0.05e-9 } else { 0.2e-9 }))
///     .collect();
/// let ops = [(4096, 1e-6 + 4096.0 * 0.25e-9), (1 << 20, 1e-6 + (1 << 20) as f64 * 0.25e-9)];
/// let (local, op) = fit_local_work(&copies, &[0, 1 << 20], &[(65536, 100e-9)], &ops)?;
/// // the rate above the smallest copy's time: (b - 64) / b of 0.05 ns/B, within 1 %
/// assert!((local.copy().per_byte(4096) / 0.05e-9 - 1.0).abs() < 0.01);
/// assert!((local.copy().per_byte(8 << 20) - 0.2e-9).abs() < 1e-13);
/// assert!((local.temp_buffer() - 100e-9).abs() < 1e-15);
/// assert!((op.cost(1 << 16) - (1e-6 + 65536.0 * 0.25e-9)).abs() < 1e-12);
/// # Ok::<(), commcost::calibrate::CalibrationError>(())
/// ```
pub fn fit_local_work(
    copies: &[(u64, f64)],
    class_starts: &[u64],
    temp_buffers: &[(u64, f64)],
    operator: &[(u64, f64)],
) -> Result<(LocalWork, Operator), CalibrationError> {
    for (what, samples) in [
        ("copy times", copies),
        ("temporary-buffer times", temp_buffers),
        ("operator times", operator),
    ] {
        if let Some((index, &(_, t))) = samples
            .iter()
            .enumerate()
            .find(|(_, (_, t))| !(*t > 0.0 && t.is_finite()))
        {
            return Err(CalibrationError::InvalidValue {
                what,
                index,
                value: t,
            });
        }
    }
    let too_few = |what, needed, got| CalibrationError::TooFew { what, needed, got };
    let smallest = copies
        .iter()
        .min_by_key(|(b, _)| *b)
        .ok_or(too_few("copy samples", 1, 0))?;
    let c0 = smallest.1;
    let mut classes: Vec<(u64, f64)> = Vec::with_capacity(class_starts.len());
    for (k, &from) in class_starts.iter().enumerate() {
        let to = class_starts.get(k + 1).copied().unwrap_or(u64::MAX);
        let mut rates: Vec<f64> = copies
            .iter()
            .filter(|&&(b, _)| b >= from && b < to && b > smallest.0)
            .map(|&(b, t)| ((t - c0) / b as f64).max(0.0))
            .collect();
        let rate = match median(&mut rates) {
            Some(r) => r,
            None => classes.last().map_or(0.0, |&(_, r)| r),
        };
        classes.push((from, rate));
    }
    // a first class that has only the smallest copy takes the next measured rate
    if classes.len() > 1 && classes[0].1 == 0.0 {
        classes[0].1 = classes[1].1;
    }
    let copy = CopyCost::new(c0, &classes)?;
    let mut buffers: Vec<f64> = temp_buffers.iter().map(|&(_, t)| t).collect();
    let temp_buffer = median(&mut buffers).ok_or(too_few("temporary-buffer samples", 1, 0))?;
    let local = LocalWork::new(copy, temp_buffer)?;
    if operator.len() < 2 {
        return Err(too_few("operator samples", 2, operator.len()));
    }
    let n = operator.len() as f64;
    let mean_b = operator.iter().map(|&(b, _)| b as f64).sum::<f64>() / n;
    let mean_t = operator.iter().map(|&(_, t)| t).sum::<f64>() / n;
    let sxx: f64 = operator
        .iter()
        .map(|&(b, _)| (b as f64 - mean_b).powi(2))
        .sum();
    let sxy: f64 = operator
        .iter()
        .map(|&(b, t)| (b as f64 - mean_b) * (t - mean_t))
        .sum();
    let per_byte = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
    let per_call = (mean_t - per_byte * mean_b).max(0.0);
    Ok((local, Operator::new(per_call, per_byte)?))
}

/// The shared median (`util::stats`), `None` for no values.
fn median(values: &mut [f64]) -> Option<f64> {
    (!values.is_empty()).then(|| crate::util::stats::median(values))
}
