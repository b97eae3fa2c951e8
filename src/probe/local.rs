//! Local-work probes: what a collective spends besides messages on this machine — allocating
//! and releasing a temporary buffer, and applying a sum operator (`y[i] += x[i]` on `f32`, the
//! operation of `MPI_SUM` on `MPI_FLOAT` that the OSU reduction tests run). Memory copies are
//! [`measure_copies`](super::measure_copies)'s.

use std::hint::black_box;

use super::{Budget, Methodology, ProbeError, ProgressFn, measure_grid, try_filled};

/// What a [`LocalSample`] measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum LocalKind {
    /// Allocating a buffer of `bytes` bytes and releasing it, untouched.
    TempBuffer,
    /// `y[i] += x[i]` over `bytes / 4` `f32` elements, both vectors in the cache state
    /// repeated calls leave them in.
    SumF32,
}

/// One measured point of [`measure_local`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LocalSample {
    /// What was measured.
    pub kind: LocalKind,
    /// Bytes (buffer size; vector size of the operator).
    pub bytes: u64,
    /// Seconds per operation (median over passes of the minimum over samples of the mean).
    pub time: f64,
}

/// Measures each kind at each size (sizes positive multiples of 4, at most the budget's
/// bytes for the two operator vectors).
///
/// # Errors
///
/// [`ProbeError::InvalidPlan`] for an empty grid or a size that is not a positive multiple of
/// 4; [`ProbeError::OutOfMemory`] when the vectors exceed the budget;
/// [`ProbeError::Cancelled`] / [`ProbeError::OutOfTime`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use commcost::probe::{Budget, LocalKind, Methodology, measure_local};
///
/// let budget = Budget::new(Duration::from_secs(5), 1 << 20);
/// let samples = measure_local(&[4096], &[LocalKind::SumF32], &Methodology::quick(), &budget,
///     &mut |_, _, _| {})?;
/// assert!(samples[0].time > 0.0 && samples[0].time < 1e-3);
/// # Ok::<(), commcost::probe::ProbeError>(())
/// ```
pub fn measure_local(
    sizes: &[u64],
    kinds: &[LocalKind],
    methodology: &Methodology,
    budget: &Budget,
    progress: ProgressFn<'_>,
) -> Result<Vec<LocalSample>, ProbeError> {
    if sizes.is_empty() || kinds.is_empty() {
        return Err(ProbeError::InvalidPlan("no sizes or no kinds".into()));
    }
    if let Some(s) = sizes.iter().find(|&&s| s == 0 || s % 4 != 0) {
        return Err(ProbeError::InvalidPlan(format!(
            "size {s} is not a positive multiple of 4"
        )));
    }
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let points: Vec<(LocalKind, u64)> = kinds
        .iter()
        .flat_map(|&k| sizes.iter().map(move |&s| (k, s)))
        .collect();
    let elements = if kinds.contains(&LocalKind::SumF32) {
        let bytes = largest
            .checked_mul(2)
            .ok_or_else(|| ProbeError::InvalidPlan("operator vectors overflow u64".into()))?;
        budget.check_bytes("operator vectors (x and y)", bytes)?;
        usize::try_from(largest / 4)
            .map_err(|_| ProbeError::InvalidPlan("vector larger than the address space".into()))?
    } else {
        0
    };
    if kinds.contains(&LocalKind::TempBuffer) {
        budget.check_bytes("temporary buffer", largest)?;
    }
    let limit = budget.max_bytes;
    let x: Vec<f32> = try_filled("operator input", elements, limit, |i| (i % 7) as f32)?;
    let mut y: Vec<f32> = try_filled("operator output", elements, limit, |_| 0.0)?;
    let times = measure_grid(
        "local work",
        &points,
        methodology,
        budget,
        progress,
        |(kind, bytes)| {
            let n = (bytes / 4) as usize;
            Ok(match kind {
                LocalKind::TempBuffer => methodology.time(|| {
                    let mut v: Vec<u8> = Vec::new();
                    // an allocation the budget allowed; a failure is timed as what it costs
                    let _ = v.try_reserve_exact(n * 4);
                    black_box(&mut v);
                    drop(v);
                }),
                LocalKind::SumF32 => methodology.time(|| {
                    sum_into(black_box(&x[..n]), black_box(&mut y[..n]));
                }),
            })
        },
    )?;
    Ok(points
        .iter()
        .zip(times)
        .map(|(&(kind, bytes), time)| LocalSample { kind, bytes, time })
        .collect())
}

#[inline(never)]
fn sum_into(x: &[f32], y: &mut [f32]) {
    for (a, b) in y.iter_mut().zip(x) {
        *a += *b;
    }
}
