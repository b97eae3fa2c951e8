//! Marshalling `k` rows or `k` columns of a row-major matrix into a contiguous buffer: the
//! Mlines paper's experiment (§4), on a randomised grid of shapes.

use std::hint::black_box;

use super::{Budget, Methodology, ProbeError, ProgressFn, measure_grid};
use crate::Message;
use crate::util::rng::SplitMix64;

/// The shapes to measure: `shapes` random blocks of `1..=max_k` rows or columns of a
/// `height × width` matrix of 4-byte elements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatrixPlan {
    /// Rows of the matrix.
    pub height: u64,
    /// Columns (4-byte elements per row).
    pub width: u64,
    /// How many random shapes.
    pub shapes: usize,
    /// Largest block of rows / columns.
    pub max_k: u64,
    /// Seed of the shapes (the passes' order uses the methodology's seed).
    pub seed: u64,
}

/// One measured shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatrixSample {
    /// The block as a message (its layout in the matrix, offset within a line included).
    pub message: Message,
    /// Rows (`true`) or columns.
    pub rows: bool,
    /// How many rows or columns.
    pub k: u64,
    /// Seconds to marshal the block into a contiguous buffer.
    pub time: f64,
}

const ELEMENT: u64 = 4;

/// Measures marshalling random row and column blocks (half of each, in random order).
///
/// # Errors
///
/// [`ProbeError::InvalidPlan`] for an empty matrix, `max_k` of 0 or above the matrix, or no
/// shapes; [`ProbeError::OutOfMemory`]; [`ProbeError::Cancelled`] / [`ProbeError::OutOfTime`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use commcost::probe::{Budget, MatrixPlan, Methodology, measure_matrix_transfers};
///
/// let plan = MatrixPlan { height: 256, width: 256, shapes: 4, max_k: 4, seed: 1 };
/// let budget = Budget::new(Duration::from_secs(5), 1 << 22);
/// let samples = measure_matrix_transfers(&plan, &Methodology::quick(), &budget, &mut |_, _, _| {})?;
/// assert_eq!(samples.len(), 4);
/// assert!(samples.iter().all(|s| s.time > 0.0));
/// # Ok::<(), commcost::probe::ProbeError>(())
/// ```
pub fn measure_matrix_transfers(
    plan: &MatrixPlan,
    methodology: &Methodology,
    budget: &Budget,
    progress: ProgressFn<'_>,
) -> Result<Vec<MatrixSample>, ProbeError> {
    let (h, w) = (plan.height, plan.width);
    if h == 0 || w == 0 || plan.shapes == 0 || plan.max_k == 0 || plan.max_k > h.min(w) {
        return Err(ProbeError::InvalidPlan(format!(
            "matrix {h} x {w}, {} shapes, max_k {}",
            plan.shapes, plan.max_k
        )));
    }
    // checked: a plan whose buffers do not fit in u64 bytes is invalid, not wrapped
    let sizes = h.checked_mul(w).and_then(|elements| {
        let buffer = plan.max_k.checked_mul(h.max(w))?;
        let bytes = elements.checked_add(buffer)?.checked_mul(ELEMENT)?;
        Some((elements, buffer, bytes))
    });
    let Some((elements, buffer, bytes)) = sizes else {
        return Err(ProbeError::InvalidPlan(format!(
            "matrix {h} x {w} with max_k {}: the buffers overflow u64 bytes",
            plan.max_k
        )));
    };
    budget.check_bytes("matrix and marshalling buffer", bytes)?;
    if usize::try_from(bytes).is_err() {
        return Err(ProbeError::InvalidPlan(
            "matrix beyond the address space".into(),
        ));
    }
    let mut rng = SplitMix64(plan.seed);
    let shapes: Vec<(bool, u64, u64)> = (0..plan.shapes)
        .map(|i| {
            let rows = i % 2 == 0;
            let k = 1 + rng.next_u64() % plan.max_k;
            let span = if rows { h } else { w };
            let first = rng.next_u64() % (span - k + 1);
            (rows, k, first)
        })
        .collect();
    // both fit in usize: their byte total does (checked above)
    let limit = budget.max_bytes;
    let matrix: Vec<u32> = super::try_filled("matrix", elements as usize, limit, |i| i as u32)?;
    let mut out = super::try_filled("marshalling buffer", buffer as usize, limit, |_| 0u32)?;
    let (hu, wu) = (h as usize, w as usize);
    let times = measure_grid(
        "row and column transfers",
        &shapes,
        methodology,
        budget,
        progress,
        |(rows, k, first)| {
            let (k, first) = (k as usize, first as usize);
            Ok(methodology.time(|| {
                let m = black_box(&matrix);
                let o = black_box(&mut out);
                if rows {
                    o[..k * wu].copy_from_slice(&m[first * wu..(first + k) * wu]);
                } else {
                    for (r, chunk) in o.chunks_exact_mut(k).take(hu).enumerate() {
                        chunk.copy_from_slice(&m[r * wu + first..r * wu + first + k]);
                    }
                }
            }))
        },
    )?;
    let row_bytes = w * ELEMENT;
    // where the matrix starts inside a cache line (the calculator reduces it mod the line)
    let base = matrix.as_ptr() as u64;
    shapes
        .iter()
        .zip(times)
        .map(|(&(rows, k, first), time)| {
            let message = if rows {
                Message::contiguous(k * row_bytes).with_offset(base + first * row_bytes)
            } else {
                Message::vector(h, k * ELEMENT, row_bytes)
                    .map_err(|e| ProbeError::InvalidPlan(e.to_string()))?
                    .with_offset(base + first * ELEMENT)
            };
            Ok(MatrixSample {
                message,
                rows,
                k,
                time,
            })
        })
        .collect()
}
