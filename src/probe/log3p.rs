//! The measurement grid of the log_3 P protocol (lognp §4.1), shared by every transport.

use super::ProbeError;
use crate::Message;
use crate::calibrate::Log3PMeasurements;

/// Which half round trips the log_3 P protocol measures, and how they become
/// [`Log3PMeasurements`]: messages of `element`-byte elements of each size, contiguous and at
/// each stride, sent to the process itself and to a peer.
#[derive(Debug, Clone, PartialEq)]
pub struct Log3PPlan {
    /// Message sizes, bytes (multiples of `element`), increasing.
    pub sizes: Vec<u64>,
    /// Strides, bytes (multiples of `element`, above it), increasing.
    pub strides: Vec<u64>,
    /// Element size, bytes: the unit stride.
    pub element: u64,
}

/// What [`Log3PPlan::measurements`] had to adjust in real data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Log3PCleaning {
    /// Strided sends to self faster than the contiguous one, set to it (`l_mw = 0` there).
    pub strided_faster: usize,
    /// Sizes whose memcpy took longer than the contiguous send to self: `T_mem` set to the send
    /// to self (`o_mw = 0`: the middleware adds nothing to one copy).
    pub copy_slower: usize,
    /// Sizes whose remote contiguous transfer was faster than the middleware overhead the send
    /// to self measured (`T01(s) < T00(s) - T_mem(s)`, timing noise between two ranks of one
    /// node): `T01` set to it (`o_net = 0`).
    pub remote_faster: usize,
}

impl Log3PPlan {
    /// The message of `size` bytes at `stride` (contiguous for `stride = element`).
    fn message(&self, size: u64, stride: u64) -> Result<Message, ProbeError> {
        if stride == self.element {
            return Ok(Message::contiguous(size));
        }
        Message::vector(size / self.element, self.element, stride)
            .map_err(|e| ProbeError::InvalidPlan(e.to_string()))
    }

    /// The half round trips to measure, `(message, to_self)`: per size, contiguous to self
    /// (`T00(s)`) and to the peer (`T01(s)`), then per stride strided to self (`T00(s, d)`) and
    /// to the peer (`T01(s, d)`, for validation only).
    ///
    /// # Errors
    ///
    /// [`ProbeError::InvalidPlan`] for an empty grid or sizes / strides that are not multiples
    /// of the element.
    pub fn layouts(&self) -> Result<Vec<(Message, bool)>, ProbeError> {
        self.validate()?;
        let e = self.element;
        let mut layouts = Vec::new();
        for &s in &self.sizes {
            for stride in std::iter::once(e).chain(self.strides.iter().copied()) {
                let m = self.message(s, stride)?;
                layouts.push((m, true));
                layouts.push((m, false));
            }
        }
        Ok(layouts)
    }

    /// Checks the grid: a nonzero element, sizes and strides present, multiples of the element,
    /// strides above it; returns the number of times a measurement of the plan holds.
    fn validate(&self) -> Result<usize, ProbeError> {
        let e = self.element;
        if e == 0 || self.sizes.is_empty() || self.strides.is_empty() {
            return Err(ProbeError::InvalidPlan("empty log_3 P grid".into()));
        }
        if self.sizes.iter().any(|s| *s == 0 || s % e != 0)
            || self.strides.iter().any(|d| *d <= e || d % e != 0)
        {
            return Err(ProbeError::InvalidPlan(format!(
                "sizes and strides must be multiples of the element ({e} bytes)"
            )));
        }
        self.strides
            .len()
            .checked_add(1)
            .and_then(|n| n.checked_mul(2))
            .and_then(|n| n.checked_mul(self.sizes.len()))
            .ok_or_else(|| ProbeError::InvalidPlan("the grid has more points than usize".into()))
    }

    /// The largest span of the layouts, bytes (for sizing a prober's buffers).
    pub fn span(&self) -> u64 {
        self.layouts()
            .map(|l| l.iter().map(|(m, _)| m.extent()).max().unwrap_or(0))
            .unwrap_or(0)
    }

    fn time(&self, times: &[f64], size: usize, stride: usize, to_self: bool) -> f64 {
        // per size: 2 entries per stride, the contiguous pair first
        let per_size = 2 * (self.strides.len() + 1);
        times[size * per_size + 2 * stride + usize::from(!to_self)]
    }

    /// Assembles the measurements from `times` (one per [`layouts`](Self::layouts) entry, in
    /// order) and memcpy times (one per size), with the three adjustments real data needs
    /// ([`Log3PCleaning`]).
    ///
    /// # Errors
    ///
    /// [`ProbeError::InvalidPlan`] for an invalid plan (as [`layouts`](Self::layouts)) or when
    /// the lengths do not match the plan.
    pub fn measurements(
        &self,
        times: &[f64],
        memory_copy: &[f64],
    ) -> Result<(Log3PMeasurements, Log3PCleaning), ProbeError> {
        let expected = self.validate()?;
        if times.len() != expected || memory_copy.len() != self.sizes.len() {
            return Err(ProbeError::InvalidPlan(format!(
                "{} times and {} copy times for a plan of {expected} and {}",
                times.len(),
                memory_copy.len(),
                self.sizes.len()
            )));
        }
        let mut cleaning = Log3PCleaning::default();
        let sizes = 0..self.sizes.len();
        let self_contiguous: Vec<f64> = sizes
            .clone()
            .map(|i| self.time(times, i, 0, true))
            .collect();
        let memory_copy: Vec<f64> = memory_copy
            .iter()
            .zip(&self_contiguous)
            .map(|(&copy, &self_send)| {
                if copy > self_send {
                    cleaning.copy_slower += 1;
                    self_send
                } else {
                    copy
                }
            })
            .collect();
        let remote_contiguous = sizes
            .clone()
            .map(|i| {
                let t = self.time(times, i, 0, false);
                let middleware = self_contiguous[i] - memory_copy[i];
                if t < middleware {
                    cleaning.remote_faster += 1;
                    middleware
                } else {
                    t
                }
            })
            .collect();
        let self_strided = sizes
            .clone()
            .map(|i| {
                (1..=self.strides.len())
                    .map(|j| {
                        let t = self.time(times, i, j, true);
                        if t < self_contiguous[i] {
                            cleaning.strided_faster += 1;
                            self_contiguous[i]
                        } else {
                            t
                        }
                    })
                    .collect()
            })
            .collect();
        let measurements = Log3PMeasurements {
            sizes: self.sizes.clone(),
            remote_contiguous,
            self_contiguous,
            memory_copy,
            strides: self.strides.clone(),
            self_strided,
            unit_stride: self.element,
        };
        Ok((measurements, cleaning))
    }

    /// The measured remote strided half round trips `T01(s, d)` — what log_3 P is validated
    /// against — as `(message, seconds)`.
    ///
    /// # Errors
    ///
    /// [`ProbeError::InvalidPlan`] for an invalid plan (as [`layouts`](Self::layouts)) or a
    /// number of times that does not match it.
    pub fn remote_strided(&self, times: &[f64]) -> Result<Vec<(Message, f64)>, ProbeError> {
        let expected = self.validate()?;
        if times.len() != expected {
            return Err(ProbeError::InvalidPlan(format!(
                "{} times for a plan of {expected}",
                times.len()
            )));
        }
        let mut out = Vec::new();
        for (i, &s) in self.sizes.iter().enumerate() {
            for (j, &d) in self.strides.iter().enumerate() {
                out.push((self.message(s, d)?, self.time(times, i, j + 1, false)));
            }
        }
        Ok(out)
    }
}
