//! A transport as a sequence of size ranges, each with its own model (eager / rendezvous, ...).

use crate::error::ParameterError;
use crate::{CommModel, Message, PiecewiseCost};

/// One size range `[start, end)` of a [`Protocols`] model and the model used inside it.
///
/// `end = None` means unbounded (only the last range may be).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct ProtocolRange<M> {
    start: u64,
    end: Option<u64>,
    model: M,
}

impl<M> ProtocolRange<M> {
    /// The range of sizes `start <= bytes < end` (`end = None`: no upper bound) using `model`.
    /// Checked when assembled into [`Protocols::new`].
    pub fn new(start: u64, end: Option<u64>, model: M) -> Self {
        Self { start, end, model }
    }

    /// First message size (bytes) of the range.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Exclusive end (bytes), `None` when unbounded.
    pub fn end(&self) -> Option<u64> {
        self.end
    }

    /// The model used for sizes in the range.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// True when `bytes` lies in the range.
    pub fn contains(&self, bytes: u64) -> bool {
        bytes >= self.start && self.end.is_none_or(|end| bytes < end)
    }
}

/// A size-ranged multi-protocol model: a real transport is a sequence of size intervals, each
/// with its own parameter set (Hoefler, Lichei & Rehm 2007, Table 2).
///
/// # Formula
///
/// ```text
/// T(msg) = M_i(msg)   for the range i with start_i <= bytes(msg) < end_i
/// ```
///
/// A 0-byte message uses the first range even when it starts at 1 byte. Every [`CommModel`]
/// method is forwarded to the selected range's model. The result is monotone in size only within
/// each range: at a switch a transport may become faster.
///
/// # Examples
///
/// ```
/// use commcost::{CommModel, LogGP, Message, Protocols};
///
/// // Open MPI / openib (Hoefler et al. 2007, Table 2): switch at 12289 bytes
/// let eager = LogGP::new(5.96e-6, 4.72e-6, 5.14e-6, 0.00073e-6)?;
/// let rendezvous = LogGP::new(5.96e-6, 4.72e-6, 21.39e-6, 0.00103e-6)?;
/// let openib = Protocols::from_starts(vec![(1, eager), (12289, rendezvous)])?;
/// assert_eq!(openib.range_index(12288), 0);
/// assert_eq!(openib.range_index(12289), 1);
/// // 12289 B: 2 * 4.72 + 5.96 + 12288 * 0.00103 = 28.05664 µs
/// assert!((openib.p2p(&Message::contiguous(12289)) - 28.05664e-6).abs() < 1e-12);
/// # Ok::<(), commcost::ParameterError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(
        try_from = "ProtocolsFields<M>",
        bound(
            serialize = "M: serde::Serialize",
            deserialize = "M: serde::Deserialize<'de>"
        )
    )
)]
pub struct Protocols<M> {
    ranges: Vec<ProtocolRange<M>>,
    /// Messages larger than this use the transport's rendezvous protocol
    /// ([`CommModel::rendezvous_above`]), if known.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    rendezvous_above: Option<u64>,
}

/// Private fields, no public form: loading re-runs [`Protocols::new`]'s validation.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ProtocolsFields<M> {
    ranges: Vec<ProtocolRange<M>>,
    #[serde(default)]
    rendezvous_above: Option<u64>,
}

#[cfg(feature = "serde")]
impl<M> TryFrom<ProtocolsFields<M>> for Protocols<M> {
    type Error = ParameterError;
    fn try_from(f: ProtocolsFields<M>) -> Result<Self, Self::Error> {
        let protocols = Protocols::new(f.ranges)?;
        Ok(match f.rendezvous_above {
            Some(bytes) => protocols.with_rendezvous_above(bytes),
            None => protocols,
        })
    }
}

impl<M> Protocols<M> {
    /// Assembles ranges into a protocol list.
    ///
    /// # Errors
    ///
    /// * [`ParameterError::NoProtocolRanges`] for an empty list;
    /// * [`ParameterError::FirstRangeStart`] unless the first range starts at 0 or 1;
    /// * [`ParameterError::EmptyRange`] for `end <= start`;
    /// * [`ParameterError::RangesNotContiguous`] when a range does not start exactly where the
    ///   previous one ends (overlap, gap or wrong order);
    /// * [`ParameterError::UnboundedRangeNotLast`] / [`ParameterError::LastRangeBounded`] unless
    ///   exactly the last range is unbounded.
    pub fn new(ranges: Vec<ProtocolRange<M>>) -> Result<Self, ParameterError> {
        let first = ranges.first().ok_or(ParameterError::NoProtocolRanges)?;
        if first.start > 1 {
            return Err(ParameterError::FirstRangeStart { start: first.start });
        }
        let last = ranges.len() - 1;
        for (index, range) in ranges.iter().enumerate() {
            match range.end {
                Some(end) if end <= range.start => {
                    return Err(ParameterError::EmptyRange {
                        index,
                        start: range.start,
                        end,
                    });
                }
                Some(end) if index == last => return Err(ParameterError::LastRangeBounded { end }),
                None if index != last => {
                    return Err(ParameterError::UnboundedRangeNotLast { index });
                }
                _ => {}
            }
            if index > 0 {
                // every range before the last is bounded, checked above
                let previous = &ranges[index - 1];
                let previous_end = previous.end.unwrap_or(u64::MAX);
                if range.start != previous_end {
                    let problem = if range.start < previous.start {
                        "unsorted"
                    } else if range.start < previous_end {
                        "overlap"
                    } else {
                        "gap"
                    };
                    return Err(ParameterError::RangesNotContiguous {
                        index,
                        start: range.start,
                        previous_end,
                        problem,
                    });
                }
            }
        }
        Ok(Self {
            ranges,
            rendezvous_above: None,
        })
    }

    /// States which sizes use the transport's rendezvous protocol: those above `bytes`
    /// ([`CommModel::rendezvous_above`]; the simulator then lets such a message leave only once
    /// its receive is posted). The ranges say where the costs change, not which protocol each
    /// is; a range boundary is where one usually starts (Open MPI/openib: rendezvous from
    /// 12289 bytes, Hoefler, Lichei & Rehm, IPDPS 2007, Sec. 5).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::{CommModel, Pram, Protocols};
    /// let two = Protocols::from_starts(vec![(1, Pram::new(1e-6)?), (4097, Pram::new(5e-6)?)])?;
    /// assert_eq!(two.rendezvous_above(), None);
    /// assert_eq!(two.with_rendezvous_above(4096).rendezvous_above(), Some(4096));
    /// # Ok::<(), commcost::ParameterError>(())
    /// ```
    #[must_use]
    pub fn with_rendezvous_above(mut self, bytes: u64) -> Self {
        self.rendezvous_above = Some(bytes);
        self
    }

    /// Builds contiguous ranges from `(start, model)` pairs: each range ends where the next
    /// starts, the last is unbounded.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new): starts must be strictly increasing and the first 0 or 1.
    pub fn from_starts(starts: Vec<(u64, M)>) -> Result<Self, ParameterError> {
        Self::new(Self::from_trusted_starts(starts).ranges)
    }

    /// As [`from_starts`](Self::from_starts) for start lists the crate knows to be valid
    /// (embedded presets); a unit test re-validates every use.
    pub(crate) fn from_trusted_starts(starts: Vec<(u64, M)>) -> Self {
        let ends: Vec<Option<u64>> = starts
            .iter()
            .skip(1)
            .map(|(start, _)| Some(*start))
            .chain(std::iter::once(None))
            .collect();
        Self {
            ranges: starts
                .into_iter()
                .zip(ends)
                .map(|((start, model), end)| ProtocolRange::new(start, end, model))
                .collect(),
            rendezvous_above: None,
        }
    }

    /// A single range covering every size.
    pub fn single(model: M) -> Self {
        Self {
            ranges: vec![ProtocolRange::new(0, None, model)],
            rendezvous_above: None,
        }
    }

    /// The ranges, in increasing size order.
    pub fn ranges(&self) -> &[ProtocolRange<M>] {
        &self.ranges
    }

    /// The sizes (bytes) at which a new protocol starts: every range start but the first.
    pub fn switch_points(&self) -> impl Iterator<Item = u64> + '_ {
        self.ranges.iter().skip(1).map(|r| r.start)
    }

    /// Index of the range that holds `bytes` (sizes below the first start use range 0).
    ///
    /// `O(log r)` for `r` ranges.
    pub fn range_index(&self, bytes: u64) -> usize {
        self.ranges
            .partition_point(|r| r.start <= bytes)
            .saturating_sub(1)
    }

    /// The model used for a message of `bytes` bytes.
    pub fn model_for(&self, bytes: u64) -> &M {
        &self.ranges[self.range_index(bytes)].model
    }
}

impl<M: CommModel> CommModel for Protocols<M> {
    fn p2p(&self, msg: &Message) -> f64 {
        self.model_for(msg.bytes()).p2p(msg)
    }

    fn send_overhead(&self, msg: &Message) -> f64 {
        self.model_for(msg.bytes()).send_overhead(msg)
    }

    fn recv_overhead(&self, msg: &Message) -> f64 {
        self.model_for(msg.bytes()).recv_overhead(msg)
    }

    fn send_interval(&self, msg: &Message) -> f64 {
        self.model_for(msg.bytes()).send_interval(msg)
    }

    fn gap(&self, msg: &Message) -> f64 {
        self.model_for(msg.bytes()).gap(msg)
    }

    /// One range lookup for all five quantities.
    fn quantities(&self, msg: &Message) -> crate::Quantities {
        self.model_for(msg.bytes()).quantities(msg)
    }

    /// As stated with [`with_rendezvous_above`](Protocols::with_rendezvous_above).
    fn rendezvous_above(&self) -> Option<u64> {
        self.rendezvous_above
    }

    fn piecewise(&self) -> Option<&dyn PiecewiseCost> {
        Some(self)
    }
}

impl<M: CommModel> PiecewiseCost for Protocols<M> {
    /// Every range's model keeps pace.
    fn sender_keeps_pace(&self) -> bool {
        self.ranges.iter().all(|range| {
            range
                .model
                .piecewise()
                .is_some_and(PiecewiseCost::sender_keeps_pace)
        })
    }

    /// Every switch point, and the breakpoints of each range's model inside its range.
    fn size_breakpoints(&self) -> Vec<u64> {
        let mut points: Vec<u64> = self.switch_points().collect();
        for range in &self.ranges {
            points.extend(
                range
                    .model
                    .piecewise()
                    .map(PiecewiseCost::size_breakpoints)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|&b| range.contains(b)),
            );
        }
        points.sort_unstable();
        points.dedup();
        points
    }

    /// The range's model's affine piece, cut to the range (the first range also holds the
    /// sizes below its start).
    #[inline]
    fn p2p_affine(&self, bytes: u64) -> Option<crate::AffineCost> {
        let (model, first, last) = self.sizes_around(bytes);
        model.piecewise()?.p2p_affine(bytes)?.within(first, last)
    }

    /// The range's model's lag line, cut to the range (as [`p2p_affine`](Self::p2p_affine)):
    /// inside one range all five quantities are that model's.
    #[inline]
    fn send_lag_affine(&self, bytes: u64) -> Option<crate::AffineCost> {
        let (model, first, last) = self.sizes_around(bytes);
        model
            .piecewise()?
            .send_lag_affine(bytes)?
            .within(first, last)
    }
}

impl<M> Protocols<M> {
    /// The model that prices `bytes` and the sizes it prices, `first..=last` (the first range
    /// also holds the sizes below its start).
    #[inline]
    fn sizes_around(&self, bytes: u64) -> (&M, u64, u64) {
        let index = self.range_index(bytes);
        let range = &self.ranges[index];
        let first = if index == 0 { 0 } else { range.start };
        let last = range.end.map_or(u64::MAX, |end| end - 1);
        (&range.model, first, last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Pram;

    fn pram(c: f64) -> Pram {
        Pram::new(c).unwrap()
    }

    #[test]
    fn validation_names_each_problem() {
        assert_eq!(
            Protocols::<Pram>::new(vec![]),
            Err(ParameterError::NoProtocolRanges)
        );
        assert_eq!(
            Protocols::from_starts(vec![(2, pram(1.0))]),
            Err(ParameterError::FirstRangeStart { start: 2 })
        );
        assert_eq!(
            Protocols::new(vec![
                ProtocolRange::new(0, None, pram(1.0)),
                ProtocolRange::new(10, None, pram(2.0)),
            ]),
            Err(ParameterError::UnboundedRangeNotLast { index: 0 })
        );
        assert_eq!(
            Protocols::new(vec![ProtocolRange::new(0, Some(10), pram(1.0))]),
            Err(ParameterError::LastRangeBounded { end: 10 })
        );
        assert_eq!(
            Protocols::new(vec![
                ProtocolRange::new(1, Some(1), pram(1.0)),
                ProtocolRange::new(1, None, pram(2.0)),
            ]),
            Err(ParameterError::EmptyRange {
                index: 0,
                start: 1,
                end: 1
            })
        );
        let gap = Protocols::new(vec![
            ProtocolRange::new(1, Some(10), pram(1.0)),
            ProtocolRange::new(11, None, pram(2.0)),
        ]);
        assert!(matches!(
            gap,
            Err(ParameterError::RangesNotContiguous {
                problem: "gap",
                index: 1,
                ..
            })
        ));
        let overlap = Protocols::new(vec![
            ProtocolRange::new(1, Some(10), pram(1.0)),
            ProtocolRange::new(5, None, pram(2.0)),
        ]);
        assert!(matches!(
            overlap,
            Err(ParameterError::RangesNotContiguous {
                problem: "overlap",
                ..
            })
        ));
    }

    #[test]
    fn lookup_picks_the_containing_range() {
        let p = Protocols::from_starts(vec![(1, pram(1.0)), (100, pram(2.0)), (1000, pram(3.0))])
            .unwrap();
        let picks: Vec<usize> = [0, 1, 99, 100, 999, 1000, u64::MAX]
            .iter()
            .map(|&b| p.range_index(b))
            .collect();
        assert_eq!(picks, vec![0, 0, 0, 1, 1, 2, 2]);
        assert_eq!(p.switch_points().collect::<Vec<_>>(), vec![100, 1000]);
        assert_eq!(p.p2p(&Message::contiguous(500)).to_bits(), 2.0f64.to_bits());
    }
}
