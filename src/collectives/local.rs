//! Local work of collectives: copies and temporary buffers besides the messages (see
//! [`LocalWork`]).

use super::CallCosts;
use crate::collectives::CollectiveError;

/// The most size classes of a [`CopyCost`].
pub const MAX_COPY_CLASSES: usize = 4;

/// The cost of one local memory copy by size class (see [`LocalWork`] for the formula).
///
/// With the `serde` feature it (de)serialises as
/// `{"per_call": c0, "classes": [[from_bytes, seconds_per_byte], ...]}`; loading goes through
/// [`CopyCost::new`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(try_from = "RawCopyCost", into = "RawCopyCost")
)]
pub struct CopyCost {
    per_call: f64,
    classes: [(u64, f64); MAX_COPY_CLASSES],
    len: usize,
}

/// Private fields, no public form: loading re-runs [`CopyCost::new`]'s validation.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct RawCopyCost {
    per_call: f64,
    classes: Vec<(u64, f64)>,
}

#[cfg(feature = "serde")]
impl TryFrom<RawCopyCost> for CopyCost {
    type Error = CollectiveError;

    fn try_from(raw: RawCopyCost) -> Result<Self, Self::Error> {
        Self::new(raw.per_call, &raw.classes)
    }
}

#[cfg(feature = "serde")]
impl From<CopyCost> for RawCopyCost {
    fn from(c: CopyCost) -> Self {
        Self {
            per_call: c.per_call,
            classes: c.classes().to_vec(),
        }
    }
}

impl CopyCost {
    /// Copies that cost nothing.
    pub const FREE: Self = Self {
        per_call: 0.0,
        classes: [(0, 0.0); MAX_COPY_CLASSES],
        len: 1,
    };

    /// A copy cost of `per_call` seconds per copy plus, for a copy of `b` bytes, `b` times the
    /// rate of the last class `(from_bytes, seconds_per_byte)` with `from_bytes <= b`.
    ///
    /// # Errors
    ///
    /// [`CollectiveError::InvalidLocalWork`] for a negative or non-finite cost, no class or more
    /// than [`MAX_COPY_CLASSES`], a first class not starting at 0 bytes, or class sizes not
    /// strictly increasing.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::CopyCost;
    ///
    /// // 0.05 ns/B while the buffers fit in a 1 MiB L2, 0.2 ns/B beyond
    /// let copy = CopyCost::new(50e-9, &[(0, 0.05e-9), (512 * 1024, 0.2e-9)])?;
    /// assert!((copy.cost(1024) - (50e-9 + 1024.0 * 0.05e-9)).abs() < 1e-18);
    /// assert!((copy.cost(1 << 20) - (50e-9 + (1 << 20) as f64 * 0.2e-9)).abs() < 1e-15);
    /// assert_eq!(copy.cost(0), 0.0);
    /// # Ok::<(), commcost::collectives::CollectiveError>(())
    /// ```
    pub fn new(per_call: f64, classes: &[(u64, f64)]) -> Result<Self, CollectiveError> {
        let bad = |detail: String| CollectiveError::InvalidLocalWork { detail };
        if !(per_call >= 0.0 && per_call.is_finite()) {
            return Err(bad(format!(
                "copy per_call = {per_call} must be finite and >= 0"
            )));
        }
        if classes.is_empty() || classes.len() > MAX_COPY_CLASSES {
            return Err(bad(format!(
                "copy classes: {} given, 1 to {MAX_COPY_CLASSES} allowed",
                classes.len()
            )));
        }
        if classes[0].0 != 0 {
            return Err(bad(format!(
                "copy classes: the first starts at {} bytes, not 0",
                classes[0].0
            )));
        }
        for (i, &(from, rate)) in classes.iter().enumerate() {
            if !(rate >= 0.0 && rate.is_finite()) {
                return Err(bad(format!(
                    "copy classes[{i}]: {rate} s/byte must be finite and >= 0"
                )));
            }
            if i > 0 && from <= classes[i - 1].0 {
                return Err(bad(format!(
                    "copy classes[{i}]: from {from} bytes is not above the previous class's {}",
                    classes[i - 1].0
                )));
            }
        }
        let mut out = [(0, 0.0); MAX_COPY_CLASSES];
        out[..classes.len()].copy_from_slice(classes);
        Ok(Self {
            per_call,
            classes: out,
            len: classes.len(),
        })
    }

    /// Seconds per copy, whatever its size.
    pub fn per_call(&self) -> f64 {
        self.per_call
    }

    /// The size classes `(from_bytes, seconds_per_byte)`, sizes increasing, the first at 0.
    pub fn classes(&self) -> &[(u64, f64)] {
        &self.classes[..self.len.min(MAX_COPY_CLASSES)]
    }

    /// Seconds per byte of a copy of `bytes` bytes.
    pub fn per_byte(&self, bytes: u64) -> f64 {
        let classes = self.classes();
        let i = classes.partition_point(|&(from, _)| from <= bytes);
        classes[i.saturating_sub(1)].1
    }

    /// `copy(b) = c0 + r(b) · b` seconds, 0 for `b = 0`.
    pub fn cost(&self, bytes: u64) -> f64 {
        if bytes == 0 {
            return 0.0;
        }
        self.per_call + self.per_byte(bytes) * bytes as f64
    }
}

/// Local work: what a process of a collective spends besides sending and receiving — memory
/// copies (`sbuf` into `rbuf`, blocks into and out of temporary buffers, Bruck's rotations) and
/// the temporary buffers an implementation allocates per call.
///
/// The operator of reductions is priced separately ([`Operator`](super::Operator)); the
/// messages by the point-to-point model. A platform's collectives are then priced by three
/// values: the [`CommModel`](crate::CommModel), the [`Operator`](super::Operator) and a
/// [`LocalWork`], which a [`Problem`](super::Problem) carries
/// ([`Problem::with_local`](super::Problem::with_local)).
///
/// # Formula
///
/// A copy of `b` bytes costs, with the size classes `(from_k, r_k)` of a [`CopyCost`] (the rate
/// of the last class with `from_k <= b`):
///
/// ```text
/// copy(b) = c0 + r(b) · b            (0 for b = 0)
/// ```
///
/// the memory logP view of a copy (K. W. Cameron, X.-H. Sun, "Quantifying locality effect in
/// data access delay: memory logP", IPDPS 2003, eq. 1: `T = s · (o(s) + l(s, d))` for a
/// contiguous copy, `d = 1`) with the size dependence of `o(s)` reduced to a few cache classes:
/// a copy whose buffers fit in the L2 or L3 cache runs at that cache's rate, a larger one at
/// memory's. An algorithm's local work on its critical path is a list of copies
/// ([`Copies`]) and a number of temporary buffers, priced as
///
/// ```text
/// local = Σ_i n_i · copy(b_i) + buffers · t_buf
/// ```
///
/// where `t_buf` ([`LocalWork::temp_buffer`]) is the cost of allocating and releasing one. An
/// Open MPI algorithm adds its measured per-call cost ([`CallCosts`],
/// [`LocalWork::with_calls`]).
///
/// # Cache state of the messages
///
/// The point-to-point model a collective is priced with should have been measured with bytes in
/// the cache state the collective sends them in. Inside a collective, a process forwards bytes
/// it has just received (tree and ring algorithms: a relay's message, a reduction's partial
/// result) or written (a temporary buffer) — the state of
/// `probe::PayloadBuffers::Echo` (feature `mpi`), the default of the MPI calibration —
/// while the first send of the user's buffer in a benchmark loop that repeats the call on
/// unchanged buffers (the OSU collective tests) is that of
/// `PayloadBuffers::Separate` (`osu_latency`). Most messages of
/// a collective are forwarded ones, so the collectives assume `Echo`: calibrate with
/// `commcost calibrate mpi` (without `--separate-buffers`). Models imported from `osu_latency` /
/// `osu_bw` carry the `Separate` state; on a network-bound platform the difference is below the
/// repeat-to-repeat spread of the measurements, over shared memory it is the copy rate of a
/// cache class (`commcost calibrate local` measures the classes of a machine).
///
/// # Serde
///
/// With the `serde` feature: `{"copy": {..}, "temp_buffer": seconds, "calls": [..]}` (`calls`
/// only where there are call costs).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(try_from = "RawLocalWork", into = "RawLocalWork")
)]
pub struct LocalWork {
    copy: CopyCost,
    temp_buffer: f64,
    calls: CallCosts,
}

/// Private fields, no public form: loading re-runs [`LocalWork::new`]'s validation.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct RawLocalWork {
    copy: CopyCost,
    temp_buffer: f64,
    #[serde(default, skip_serializing_if = "CallCosts::is_empty")]
    calls: CallCosts,
}

#[cfg(feature = "serde")]
impl TryFrom<RawLocalWork> for LocalWork {
    type Error = CollectiveError;

    fn try_from(raw: RawLocalWork) -> Result<Self, Self::Error> {
        Ok(Self::new(raw.copy, raw.temp_buffer)?.with_calls(raw.calls))
    }
}

#[cfg(feature = "serde")]
impl From<LocalWork> for RawLocalWork {
    fn from(w: LocalWork) -> Self {
        Self {
            copy: w.copy,
            temp_buffer: w.temp_buffer,
            calls: w.calls,
        }
    }
}

impl Default for LocalWork {
    fn default() -> Self {
        Self::FREE
    }
}

impl LocalWork {
    /// Local work that costs nothing: collectives priced by their messages (and operator) only.
    pub const FREE: Self = Self {
        copy: CopyCost::FREE,
        temp_buffer: 0.0,
        calls: CallCosts::NONE,
    };

    /// Copies priced by `copy`, each temporary buffer a call allocates and releases by
    /// `temp_buffer` seconds.
    ///
    /// # Errors
    ///
    /// [`CollectiveError::InvalidLocalWork`] for a negative or non-finite `temp_buffer`.
    pub fn new(copy: CopyCost, temp_buffer: f64) -> Result<Self, CollectiveError> {
        if !(temp_buffer >= 0.0 && temp_buffer.is_finite()) {
            return Err(CollectiveError::InvalidLocalWork {
                detail: format!("temp_buffer = {temp_buffer} s must be finite and >= 0"),
            });
        }
        Ok(Self {
            copy,
            temp_buffer,
            calls: CallCosts::NONE,
        })
    }

    /// The same prices with the per-call costs of Open MPI's algorithms `calls` (replacing any).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::Collective;
    /// use commcost::collectives::ompi::Bcast;
    /// use commcost::collectives::{Algorithm, CallCost, CallCosts, LocalWork, Problem};
    /// use commcost::{LogGP, Message};
    ///
    /// let model = LogGP::new(1e-6, 0.5e-6, 1e-6, 1e-10)?;
    /// let problem = Problem::new(2, Message::contiguous(8));
    /// let calls = CallCosts::new(&[CallCost { collective: Collective::Bcast, algorithm: 6, seconds: 2e-6 }])?;
    /// let priced = problem.with_local(LocalWork::FREE.with_calls(calls));
    /// let binomial = Bcast::Binomial { segment: 0 };
    /// let extra = binomial.cost(&model, &priced)? - binomial.cost(&model, &problem)?;
    /// assert!((extra - 2e-6).abs() < 1e-15);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_calls(mut self, calls: CallCosts) -> Self {
        self.calls = calls;
        self
    }

    /// The per-call costs of Open MPI's algorithms ([`CallCosts::NONE`] unless set).
    pub fn calls(&self) -> &CallCosts {
        &self.calls
    }

    /// The copy cost.
    pub fn copy(&self) -> &CopyCost {
        &self.copy
    }

    /// Seconds to allocate and release one temporary buffer.
    pub fn temp_buffer(&self) -> f64 {
        self.temp_buffer
    }

    /// Whether every price is 0 (then [`price`](Self::price) and every call cost are 0).
    pub fn is_free(&self) -> bool {
        self.temp_buffer == 0.0
            && self.copy.per_call == 0.0
            && self.copy.classes().iter().all(|&(_, r)| r == 0.0)
            && self.calls.is_zero()
    }

    /// `Σ_i n_i · copy(b_i) + buffers · t_buf`, seconds.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::{Copies, CopyCost, LocalWork};
    ///
    /// let local = LocalWork::new(CopyCost::new(0.0, &[(0, 1e-10)])?, 2e-6)?;
    /// // one copy of 1 MiB and three of 4 KiB, one temporary buffer
    /// let work = Copies::none().with(1, 1 << 20).with(3, 4096).with_buffers(1);
    /// let expected = (1 << 20) as f64 * 1e-10 + 3.0 * 4096.0 * 1e-10 + 2e-6;
    /// assert!((local.price(&work) - expected).abs() < 1e-15);
    /// # Ok::<(), commcost::collectives::CollectiveError>(())
    /// ```
    pub fn price(&self, work: &Copies) -> f64 {
        if self.is_free() {
            return 0.0;
        }
        let copies: f64 = work
            .copies()
            .iter()
            .map(|&(n, b)| n as f64 * self.copy.cost(b))
            .sum();
        copies + work.buffers as f64 * self.temp_buffer
    }
}

/// The most distinct copy sizes one [`Copies`] holds; more are merged into the largest.
const MAX_COPY_KINDS: usize = 4;

/// The local work of one algorithm on its critical path: copies (how many of how many bytes)
/// and temporary buffers allocated per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Copies {
    copies: [(u64, u64); MAX_COPY_KINDS],
    len: usize,
    buffers: u64,
}

impl Copies {
    /// No copies, no buffers.
    pub const fn none() -> Self {
        Self {
            copies: [(0, 0); MAX_COPY_KINDS],
            len: 0,
            buffers: 0,
        }
    }

    /// With `count` more copies of `bytes` bytes each (ignored when either is 0). Beyond four
    /// distinct sizes the extra copies are added to the largest entry's byte count, as one
    /// copy of their total (a cheaper per-call estimate, the same bytes).
    #[must_use]
    pub fn with(mut self, count: u64, bytes: u64) -> Self {
        if count == 0 || bytes == 0 {
            return self;
        }
        if let Some(entry) = self.copies[..self.len].iter_mut().find(|e| e.1 == bytes) {
            entry.0 = entry.0.saturating_add(count);
        } else if self.len < MAX_COPY_KINDS {
            self.copies[self.len] = (count, bytes);
            self.len += 1;
        } else {
            let last = &mut self.copies[MAX_COPY_KINDS - 1];
            last.1 = last
                .1
                .saturating_add(count.saturating_mul(bytes) / last.0.max(1));
        }
        self
    }

    /// With `n` more temporary buffers.
    #[must_use]
    pub fn with_buffers(mut self, n: u64) -> Self {
        self.buffers = self.buffers.saturating_add(n);
        self
    }

    /// `(count, bytes each)` of every copy size.
    pub fn copies(&self) -> &[(u64, u64)] {
        &self.copies[..self.len.min(MAX_COPY_KINDS)]
    }

    /// Temporary buffers allocated per call.
    pub fn buffers(&self) -> u64 {
        self.buffers
    }

    /// Bytes copied in all.
    pub fn bytes(&self) -> u64 {
        self.copies()
            .iter()
            .fold(0u64, |acc, &(n, b)| acc.saturating_add(n.saturating_mul(b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_validated() {
        assert!(CopyCost::new(0.0, &[]).is_err());
        assert!(CopyCost::new(0.0, &[(1, 1e-10)]).is_err());
        assert!(CopyCost::new(0.0, &[(0, 1e-10), (0, 2e-10)]).is_err());
        assert!(CopyCost::new(0.0, &[(0, -1e-10)]).is_err());
        assert!(CopyCost::new(f64::NAN, &[(0, 1e-10)]).is_err());
        assert!(CopyCost::new(0.0, &[(0, 0.0), (1, 0.0), (2, 0.0), (3, 0.0), (4, 0.0)]).is_err());
        assert!(LocalWork::new(CopyCost::FREE, f64::INFINITY).is_err());
    }

    #[test]
    fn rate_of_the_last_class_not_above_the_size() {
        let c = CopyCost::new(0.0, &[(0, 1.0), (100, 2.0), (1000, 3.0)]).unwrap();
        assert_eq!(c.per_byte(99).to_bits(), 1.0f64.to_bits());
        assert_eq!(c.per_byte(100).to_bits(), 2.0f64.to_bits());
        assert_eq!(c.per_byte(u64::MAX).to_bits(), 3.0f64.to_bits());
        assert_eq!(c.cost(10).to_bits(), 10.0f64.to_bits());
    }

    #[test]
    fn free_work_prices_to_exactly_zero() {
        let w = Copies::none().with(5, 1 << 30).with_buffers(3);
        assert_eq!(LocalWork::FREE.price(&w).to_bits(), 0.0f64.to_bits());
        assert_eq!(w.bytes(), 5 << 30);
    }

    #[test]
    fn more_than_four_sizes_keep_their_bytes() {
        let w = Copies::none()
            .with(1, 10)
            .with(1, 20)
            .with(1, 30)
            .with(1, 40)
            .with(2, 50);
        assert_eq!(w.copies().len(), 4);
        assert_eq!(w.bytes(), 10 + 20 + 30 + 40 + 100);
    }
}
