//! LogGP's `L` and `o` from a measured end-to-end latency and overhead.

use crate::error::ParameterError;

/// How an end-to-end latency and a per-end overhead become LogGP's `L` and `o`
/// ([`split_end_to_end`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencySplit {
    /// The model's `L`: `L_e2e - 2o`, or 0 when the overheads overlap the wire time.
    pub latency: f64,
    /// The model's `o`: the measured `o`, or `L_e2e / 2` when `2o > L_e2e`.
    pub overhead: f64,
    /// `o - L_e2e / 2` when `2o > L_e2e`: the share of each end's measured overhead that
    /// overlaps the wire time (or the other end's overhead); 0 otherwise.
    pub overlap: f64,
}

/// Splits a measured end-to-end latency `L_e2e = PRTT(1, 0, 1) / 2` and a measured overhead
/// `o` into the `L` and `o` of LogGP's `p2p = 2o + L + (s - 1) G`, so that the model's 1-byte
/// time is the measured one.
///
/// # Formula
///
/// The paper's and Netgauge's `L` is the end-to-end time of a 1-byte message (Hoefler,
/// Lichei, Rehm 2007, §3.4); LogGP's `p2p` adds `2o` to its `L` (Alexandrov et al. 1995,
/// eq. (1) of the 2007 paper), so:
///
/// ```text
/// 2o <= L_e2e:  L = L_e2e - 2o,  o = o                       (the wire time alone)
/// 2o >  L_e2e:  L = 0,           o = L_e2e / 2,  overlap = o_measured - L_e2e / 2
/// ```
///
/// The second case happens in Table 2 of the paper (NMPI/SCI: `L = 5.48`, `o = 6.10` µs;
/// Open MPI/openib: `5.96`, `4.72` µs): the measured overhead overlaps the wire time, and a
/// model whose `p2p` is `2o + L` can only keep the end-to-end time by giving up the part of `o`
/// that overlaps. That part is returned (`overlap`), and [`assess_loggp`](super::assess_loggp)
/// reports it as an [`Adjustment`](super::Adjustment); never a silent clamp.
///
/// # Errors
///
/// [`ParameterError`] naming `end_to_end_latency` or `overhead` when negative or not finite.
///
/// # Examples
///
/// ```
/// use commcost::calibrate::split_end_to_end;
/// // MPICH2/TCP, Table 2: L = 45.74 µs end to end, o = 3.46 µs
/// let tcp = split_end_to_end(45.74e-6, 3.46e-6)?;
/// assert!((tcp.latency - 38.82e-6).abs() < 1e-12 && tcp.overlap == 0.0);
/// // Open MPI/openib: 2 · 4.72 > 5.96: o = 2.98 µs, L = 0, 1.74 µs of overlap
/// let ib = split_end_to_end(5.96e-6, 4.72e-6)?;
/// assert!((ib.overhead - 2.98e-6).abs() < 1e-12 && ib.latency == 0.0);
/// assert!((ib.overlap - 1.74e-6).abs() < 1e-12);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
pub fn split_end_to_end(
    end_to_end_latency: f64,
    overhead: f64,
) -> Result<LatencySplit, ParameterError> {
    let end_to_end = ParameterError::non_negative("end_to_end_latency", end_to_end_latency)?;
    let overhead = ParameterError::non_negative("overhead", overhead)?;
    Ok(if 2.0 * overhead <= end_to_end {
        LatencySplit {
            latency: end_to_end - 2.0 * overhead,
            overhead,
            overlap: 0.0,
        }
    } else {
        LatencySplit {
            latency: 0.0,
            overhead: end_to_end / 2.0,
            overlap: overhead - end_to_end / 2.0,
        }
    })
}
