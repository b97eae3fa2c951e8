//! Parameter derivation for log_3 P (lognp §4.1) and memory logP (memory-logp §4, §7) from
//! measured times.

use crate::calibrate::CalibrationError;
use crate::table::Table1D;
use crate::table::Table2D;
use crate::{Log3P, MemoryLogP};

/// The measurements log_3 P is derived from (lognp-log3p §4.1; all half round trips, seconds).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Log3PMeasurements {
    /// Message sizes `s`, bytes, strictly increasing.
    pub sizes: Vec<u64>,
    /// `T00(s)`: send to self, contiguous, one per size.
    pub self_contiguous: Vec<f64>,
    /// `T01(s)`: to a remote process, contiguous, one per size.
    pub remote_contiguous: Vec<f64>,
    /// `T_mem(s)`: a memory copy of `s` bytes, one per size.
    pub memory_copy: Vec<f64>,
    /// Strides `d`, bytes, strictly increasing, all above `unit_stride`.
    pub strides: Vec<u64>,
    /// `T00(s, d)`: send to self, strided; one row per size, one entry per stride.
    pub self_strided: Vec<Vec<f64>>,
    /// The element size the strided messages were built from (the unit stride), bytes.
    pub unit_stride: u64,
}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), CalibrationError> {
    if expected == got {
        Ok(())
    } else {
        Err(CalibrationError::LengthMismatch {
            what,
            expected,
            got,
        })
    }
}

fn check_times(what: &'static str, values: &[f64]) -> Result<(), CalibrationError> {
    match values.iter().position(|v| !(*v >= 0.0 && v.is_finite())) {
        Some(index) => Err(CalibrationError::InvalidValue {
            what,
            index,
            value: values[index],
        }),
        None => Ok(()),
    }
}

fn check_axis(what: &'static str, axis: &[u64]) -> Result<(), CalibrationError> {
    if axis.is_empty() {
        return Err(CalibrationError::TooFew {
            what,
            needed: 1,
            got: 0,
        });
    }
    match axis.windows(2).position(|w| w[1] <= w[0]) {
        Some(i) => Err(CalibrationError::InvalidValue {
            what,
            index: i + 1,
            value: axis[i + 1] as f64,
        }),
        None => Ok(()),
    }
}

/// Derives log_3 P from send-to-self and remote half round trips and memory-copy times.
///
/// # Formula
///
/// Cameron, Ge & Sun 2007, §4.1, per size `s` and stride `d`:
///
/// ```text
/// T00(s)    = o_mw/2 + T_mem(s) + o_mw/2          ⇒  o_mw(s)    = T00(s) - T_mem(s)
/// T01(s)    = o_mw/2 + o_net + o_mw/2             ⇒  o_net(s)   = T01(s) - o_mw(s)
/// T00(s, d) = o_mw/2 + l_mw/2 + T_mem + l_mw/2 + o_mw/2
///                                                 ⇒  l_mw(s, d) = T00(s, d) - o_mw(s) - T_mem(s)
/// ```
///
/// The model then predicts the remote strided transfer `T01(s, d) = o_mw + l_mw + o_net`.
///
/// # Errors
///
/// Shape and value errors ([`CalibrationError::LengthMismatch`],
/// [`CalibrationError::InvalidValue`], [`CalibrationError::TooFew`]); a stride at or below the
/// unit stride; and [`CalibrationError::Inconsistent`] naming the measurement when a component
/// comes out negative (e.g. a send to self faster than the memory copy it includes).
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{Log3PMeasurements, derive_log3p};
/// use commcost::{CommModel, Message};
///
/// // Titan, 16 KiB at 1 KiB stride (µs): T00 = 32, T01 = 160, T00(s, d) = 452, T_mem = 3
/// let us = 1e-6;
/// let m = derive_log3p(&Log3PMeasurements {
///     sizes: vec![16384],
///     self_contiguous: vec![32.0 * us],
///     remote_contiguous: vec![160.0 * us],
///     memory_copy: vec![3.0 * us],
///     strides: vec![1024],
///     self_strided: vec![vec![452.0 * us]],
///     unit_stride: 8,
/// })?;
/// // o_mw = 29, o_net = 131, l_mw = 420: the remote strided transfer is predicted at 580 µs
/// assert!((m.p2p(&Message::vector(2048, 8, 1024)?) - 580.0 * us).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn derive_log3p(m: &Log3PMeasurements) -> Result<Log3P, CalibrationError> {
    check_axis("sizes", &m.sizes)?;
    check_axis("strides", &m.strides)?;
    let ns = m.sizes.len();
    check_len(
        "self_contiguous (one per size)",
        ns,
        m.self_contiguous.len(),
    )?;
    check_len(
        "remote_contiguous (one per size)",
        ns,
        m.remote_contiguous.len(),
    )?;
    check_len("memory_copy (one per size)", ns, m.memory_copy.len())?;
    check_len("self_strided (one row per size)", ns, m.self_strided.len())?;
    check_times("self_contiguous", &m.self_contiguous)?;
    check_times("remote_contiguous", &m.remote_contiguous)?;
    check_times("memory_copy", &m.memory_copy)?;
    for row in &m.self_strided {
        check_len(
            "self_strided row (one per stride)",
            m.strides.len(),
            row.len(),
        )?;
        check_times("self_strided", row)?;
    }
    if let Some(index) = m.strides.iter().position(|&d| d <= m.unit_stride) {
        return Err(CalibrationError::InvalidValue {
            what: "strides (must exceed the unit stride)",
            index,
            value: m.strides[index] as f64,
        });
    }
    let mut o_mw = Vec::with_capacity(ns);
    let mut o_net = Vec::with_capacity(ns);
    let mut l_mw = Vec::with_capacity(ns);
    for (i, &size) in m.sizes.iter().enumerate() {
        let middleware = m.self_contiguous[i] - m.memory_copy[i];
        if middleware < 0.0 {
            return Err(CalibrationError::Inconsistent {
                size,
                at_stride: String::new(),
                component: "o_mw = T00(s) - T_mem(s)",
                value: middleware,
                explanation: "the contiguous send to self is faster than the memory copy it includes",
            });
        }
        let network = m.remote_contiguous[i] - middleware;
        if network < 0.0 {
            return Err(CalibrationError::Inconsistent {
                size,
                at_stride: String::new(),
                component: "o_net = T01(s) - o_mw(s)",
                value: network,
                explanation: "the remote contiguous transfer is faster than the middleware overhead measured by the send to self",
            });
        }
        let mut row = Vec::with_capacity(m.strides.len());
        for (j, &stride) in m.strides.iter().enumerate() {
            let latency = m.self_strided[i][j] - middleware - m.memory_copy[i];
            if latency < 0.0 {
                return Err(CalibrationError::Inconsistent {
                    size,
                    at_stride: format!(", stride {stride} bytes"),
                    component: "l_mw = T00(s, d) - o_mw(s) - T_mem(s)",
                    value: latency,
                    explanation: "the strided send to self is faster than the contiguous one",
                });
            }
            row.push(latency);
        }
        o_mw.push(middleware);
        o_net.push(network);
        l_mw.push(row);
    }
    let sizes: Vec<f64> = m.sizes.iter().map(|&s| s as f64).collect();
    Ok(Log3P::new(
        Table1D::new(sizes.clone(), o_mw)?,
        Table2D::new(
            sizes.clone(),
            m.strides.iter().map(|&d| d as f64).collect(),
            l_mw,
        )?,
        Table1D::new(sizes, o_net)?,
        m.unit_stride,
    )?)
}

/// Copy timings memory logP is derived from (seconds per copy of `s` bytes).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct CopyMeasurements {
    /// Bytes copied `s`, strictly increasing.
    pub sizes: Vec<u64>,
    /// Contiguous copy time of `s` bytes, one per size.
    pub contiguous: Vec<f64>,
    /// Strides `d`, bytes, strictly increasing, all above `element`.
    pub strides: Vec<u64>,
    /// Strided copy time of `s` bytes at each stride: one row per size, one entry per stride.
    pub strided: Vec<Vec<f64>>,
    /// Element (word) size, bytes: `w_m` and the unit stride.
    pub element: u64,
}

/// Derives memory logP from contiguous and strided copy timings.
///
/// # Formula
///
/// Cameron & Sun 2003, §4, §7: `o` is the per-byte cost of contiguous data and `l` the extra
/// per-byte cost of the distribution, so for `s` bytes:
///
/// ```text
/// o(s)    = T_contiguous(s) / s
/// l(s, d) = (T_strided(s, d) - T_contiguous(s)) / s
/// ```
///
/// # Errors
///
/// Shape and value errors as [`derive_log3p`]; a size of 0 bytes; and
/// [`CalibrationError::Inconsistent`] when a strided copy is faster than the contiguous one.
///
/// # Examples
///
/// ```
/// use commcost::calibrate::{CopyMeasurements, derive_memory_logp};
/// use commcost::{CommModel, Message};
///
/// // 4 KiB: 1 µs contiguous, 3 µs at stride 64 (4-byte elements)
/// let m = derive_memory_logp(&CopyMeasurements {
///     sizes: vec![4096],
///     contiguous: vec![1e-6],
///     strides: vec![64],
///     strided: vec![vec![3e-6]],
///     element: 4,
/// })?;
/// assert!((m.p2p(&Message::vector(1024, 4, 64)?) - 3e-6).abs() < 1e-18);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn derive_memory_logp(m: &CopyMeasurements) -> Result<MemoryLogP, CalibrationError> {
    check_axis("sizes", &m.sizes)?;
    check_axis("strides", &m.strides)?;
    let ns = m.sizes.len();
    check_len("contiguous (one per size)", ns, m.contiguous.len())?;
    check_len("strided (one row per size)", ns, m.strided.len())?;
    check_times("contiguous", &m.contiguous)?;
    if m.sizes[0] == 0 {
        return Err(CalibrationError::InvalidValue {
            what: "sizes (must be at least 1 byte)",
            index: 0,
            value: 0.0,
        });
    }
    if let Some(index) = m.strides.iter().position(|&d| d <= m.element) {
        return Err(CalibrationError::InvalidValue {
            what: "strides (must exceed the element size)",
            index,
            value: m.strides[index] as f64,
        });
    }
    let mut overhead = Vec::with_capacity(ns);
    let mut latency = Vec::with_capacity(ns);
    for (i, &size) in m.sizes.iter().enumerate() {
        let row = &m.strided[i];
        check_len("strided row (one per stride)", m.strides.len(), row.len())?;
        check_times("strided", row)?;
        let s = size as f64;
        overhead.push(m.contiguous[i] / s);
        let mut per_byte = Vec::with_capacity(row.len());
        for (j, &t) in row.iter().enumerate() {
            let extra = t - m.contiguous[i];
            if extra < 0.0 {
                return Err(CalibrationError::Inconsistent {
                    size,
                    at_stride: format!(", stride {} bytes", m.strides[j]),
                    component: "l = (T_strided - T_contiguous) / s",
                    value: extra / s,
                    explanation: "the strided copy is faster than the contiguous one",
                });
            }
            per_byte.push(extra / s);
        }
        latency.push(per_byte);
    }
    let sizes: Vec<f64> = m.sizes.iter().map(|&s| s as f64).collect();
    Ok(MemoryLogP::new(
        Table1D::new(sizes.clone(), overhead)?,
        Some(Table2D::new(
            sizes,
            m.strides.iter().map(|&d| d as f64).collect(),
            latency,
        )?),
        m.element,
        m.element,
    )?)
}
