//! Memory-copy probes: contiguous copy, pack, unpack and strided copy (memory logP §6).

use std::hint::black_box;

use super::{Budget, Methodology, ProbeError, ProgressFn, measure_grid};

/// What a memory probe copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CopyKind {
    /// Contiguous to contiguous (`memcpy`).
    Contiguous,
    /// Strided to contiguous: packing a derived datatype.
    Pack,
    /// Contiguous to strided: unpacking.
    Unpack,
    /// Strided to strided, same stride.
    Strided,
}

/// A grid of memory copies to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyPlan {
    /// Element size in bytes: 4 (`u32`) or 8 (`u64`).
    pub element: u64,
    /// Bytes copied, each a positive multiple of `element`.
    pub sizes: Vec<u64>,
    /// Strides in bytes, each a multiple of `element` and above it (contiguous copies ignore
    /// them).
    pub strides: Vec<u64>,
    /// Which copies.
    pub kinds: Vec<CopyKind>,
}

/// One measured point: copying `size` bytes of `element`-byte elements at `stride`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct CopySample {
    /// What was copied.
    pub kind: CopyKind,
    /// Element size, bytes.
    pub element: u64,
    /// Bytes copied.
    pub size: u64,
    /// Stride in bytes (the element size for contiguous copies).
    pub stride: u64,
    /// Seconds per copy (median over passes of the minimum over samples of the mean).
    pub time: f64,
}

/// Measures every `(kind, size, stride)` of the plan (contiguous copies once per size).
///
/// # Errors
///
/// [`ProbeError::InvalidPlan`] for an element size other than 4 or 8, an empty grid, sizes or
/// strides that are not multiples of the element; [`ProbeError::OutOfMemory`] when the largest
/// strided buffer exceeds the budget; [`ProbeError::Cancelled`] / [`ProbeError::OutOfTime`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use commcost::probe::{Budget, CopyKind, CopyPlan, Methodology, measure_copies};
///
/// let plan = CopyPlan { element: 8, sizes: vec![4096], strides: vec![64], kinds: vec![CopyKind::Pack] };
/// let budget = Budget::new(Duration::from_secs(5), 1 << 20);
/// let samples = measure_copies(&plan, &Methodology::quick(), &budget, &mut |_, _, _| {})?;
/// assert!(samples[0].time > 0.0 && samples[0].time < 1e-2);
/// # Ok::<(), commcost::probe::ProbeError>(())
/// ```
pub fn measure_copies(
    plan: &CopyPlan,
    methodology: &Methodology,
    budget: &Budget,
    progress: ProgressFn<'_>,
) -> Result<Vec<CopySample>, ProbeError> {
    let e = plan.element;
    if e != 4 && e != 8 {
        return Err(ProbeError::InvalidPlan(format!(
            "element size {e}: 4 or 8 bytes"
        )));
    }
    if plan.sizes.is_empty() || plan.kinds.is_empty() {
        return Err(ProbeError::InvalidPlan("no sizes or no kinds".into()));
    }
    if let Some(s) = plan.sizes.iter().find(|&&s| s == 0 || s % e != 0) {
        return Err(ProbeError::InvalidPlan(format!(
            "size {s} is not a positive multiple of {e}"
        )));
    }
    if let Some(d) = plan.strides.iter().find(|&&d| d <= e || d % e != 0) {
        return Err(ProbeError::InvalidPlan(format!(
            "stride {d} is not a multiple of {e} above it"
        )));
    }
    let mut points = Vec::new();
    for &kind in &plan.kinds {
        for &size in &plan.sizes {
            if kind == CopyKind::Contiguous {
                points.push((kind, size, e));
            } else {
                points.extend(plan.strides.iter().map(|&d| (kind, size, d)));
            }
        }
    }
    if points.is_empty() {
        return Err(ProbeError::InvalidPlan(
            "strided copies need strides".into(),
        ));
    }
    let extent = points
        .iter()
        // sizes are positive multiples of e (checked above), so size / e >= 1; checked: a
        // span that overflows u64 bytes is an invalid plan, not a wrapped number
        .map(|&(_, size, stride)| {
            (size / e)
                .saturating_sub(1)
                .checked_mul(stride)
                .and_then(|x| x.checked_add(e))
        })
        .try_fold(0, |max: u64, x| x.map(|x| max.max(x)));
    let Some(extent) = extent.filter(|x| x.checked_mul(2).is_some()) else {
        return Err(ProbeError::InvalidPlan(
            "a strided copy spans more than u64 bytes".into(),
        ));
    };
    budget.check_bytes("strided copy buffers (source + destination)", 2 * extent)?;
    let times = if e == 4 {
        run::<u32>(&points, e, extent, methodology, budget, progress)?
    } else {
        run::<u64>(&points, e, extent, methodology, budget, progress)?
    };
    Ok(points
        .iter()
        .zip(times)
        .map(|(&(kind, size, stride), time)| CopySample {
            kind,
            element: e,
            size,
            stride,
            time,
        })
        .collect())
}

fn run<T: Copy + Default + From<u8>>(
    points: &[(CopyKind, u64, u64)],
    element: u64,
    extent: u64,
    methodology: &Methodology,
    budget: &Budget,
    progress: ProgressFn<'_>,
) -> Result<Vec<f64>, ProbeError> {
    let len = usize::try_from(extent / element + 1)
        .map_err(|_| ProbeError::InvalidPlan("buffer larger than the address space".into()))?;
    let limit = budget.max_bytes;
    let src: Vec<T> = super::try_filled("copy source", len, limit, |i| T::from((i % 251) as u8))?;
    let mut dst: Vec<T> = super::try_filled("copy destination", len, limit, |_| T::default())?;
    measure_grid(
        "memory copies",
        points,
        methodology,
        budget,
        progress,
        |(kind, size, stride)| {
            let count = (size / element) as usize;
            let step = (stride / element) as usize;
            Ok(methodology.time(|| {
                copy(kind, black_box(&src), black_box(&mut dst), count, step);
            }))
        },
    )
}

#[inline(never)]
fn copy<T: Copy>(kind: CopyKind, src: &[T], dst: &mut [T], count: usize, step: usize) {
    match kind {
        CopyKind::Contiguous => dst[..count].copy_from_slice(&src[..count]),
        CopyKind::Pack => {
            for (i, d) in dst[..count].iter_mut().enumerate() {
                *d = src[i * step];
            }
        }
        CopyKind::Unpack => {
            for (i, s) in src[..count].iter().enumerate() {
                dst[i * step] = *s;
            }
        }
        CopyKind::Strided => {
            for i in 0..count {
                dst[i * step] = src[i * step];
            }
        }
    }
}
