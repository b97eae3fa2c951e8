//! Per-call software costs of Open MPI's collective algorithms (see [`CallCosts`]).

use crate::collectives::CollectiveError;
use crate::collectives::ompi::OmpiAlgorithm;
use crate::collectives::{Collective, Family};

/// The largest algorithm ID of any Open MPI 4.1.4 `coll_tuned` collective (bcast's 9).
const MAX_ID: usize = 9;

/// One entry of [`CallCosts`]: a collective, Open MPI's ID of one of its algorithms, and the
/// seconds one call of it spends in software besides its messages, copies and operator.
///
/// With the `serde` feature this is the file form of the entries:
/// `{"collective": "bcast", "algorithm": 6, "seconds": 1.2e-6}`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct CallCost {
    /// The collective.
    pub collective: Collective,
    /// Open MPI's ID of the algorithm (`1..=collective.ompi_max_algorithm_id()`).
    pub algorithm: u32,
    /// Seconds per call, finite and `>= 0`.
    pub seconds: f64,
}

/// Per-call costs of Open MPI's algorithms: what one call of an algorithm spends in software
/// (argument checks, request and tree set-up, the progress engine's turns for each of its
/// non-blocking operations) that neither its messages, its copies nor its operator hold.
///
/// Algorithms that send the same messages differ by up to 3× at small sizes over shared memory
/// (Open MPI 4.1.4 at 2 ranks), a difference no point-to-point parameter can express. The cost
/// is a constant per call, measured, not derived: `commcost calibrate collectives` fits it per
/// algorithm as the median excess of measured forced runs over the model's price at small
/// sizes ([`fit_call_costs`](crate::calibrate::fit_call_costs), feature `calibrate`). An
/// Open MPI algorithm priced with a [`LocalWork`](super::LocalWork) that carries call costs
/// costs
///
/// ```text
/// T = messages + operator + local + call(collective, algorithm)
/// ```
///
/// where `call` is 0 for an algorithm without an entry. Textbook algorithms have no Open MPI
/// ID and no call cost.
///
/// With the `serde` feature it (de)serialises as a list of [`CallCost`] entries; loading goes
/// through [`CallCosts::new`].
///
/// # Examples
///
/// ```
/// use commcost::collectives::Collective;
/// use commcost::collectives::{CallCost, CallCosts};
///
/// let calls = CallCosts::new(&[CallCost {
///     collective: Collective::Bcast,
///     algorithm: 6,
///     seconds: 1.5e-6,
/// }])?;
/// assert_eq!(calls.get(Collective::Bcast, 6), 1.5e-6);
/// assert_eq!(calls.get(Collective::Bcast, 5), 0.0);
/// assert!(CallCosts::new(&[CallCost { collective: Collective::Gather, algorithm: 4, seconds: 1e-6 }]).is_err());
/// # Ok::<(), commcost::collectives::CollectiveError>(())
/// ```
#[derive(Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(try_from = "Vec<CallCost>", into = "Vec<CallCost>")
)]
pub struct CallCosts {
    /// Seconds by collective (index in [`Collective::ALL`]) and algorithm ID - 1.
    seconds: [[f64; MAX_ID]; Collective::ALL.len()],
    /// Whether any entry is set (then the table is not empty, even with 0-second entries).
    set: [[bool; MAX_ID]; Collective::ALL.len()],
    /// The number of entries set: keeps `is_empty` / `is_zero`, which every Open MPI price asks
    /// through `LocalWork::is_free`, to one comparison for the usual empty table.
    len: u8,
}

/// The entries, not the table (81 slots, most of them empty).
impl std::fmt::Debug for CallCosts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.entries()).finish()
    }
}

impl Default for CallCosts {
    fn default() -> Self {
        Self::NONE
    }
}

/// The index of a collective in [`Collective::ALL`].
fn index(collective: Collective) -> usize {
    Collective::ALL
        .iter()
        .position(|&c| c == collective)
        .unwrap_or(0)
}

impl CallCosts {
    /// No call costs.
    pub const NONE: Self = Self {
        seconds: [[0.0; MAX_ID]; Collective::ALL.len()],
        set: [[false; MAX_ID]; Collective::ALL.len()],
        len: 0,
    };

    /// A table of the given entries.
    ///
    /// # Errors
    ///
    /// [`CollectiveError::InvalidLocalWork`] naming the entry for a collective without
    /// algorithms in Open MPI's family (scan, reduce_scatter_block), an algorithm ID outside
    /// `1..=collective.ompi_max_algorithm_id()`, seconds that are negative or not finite, or an
    /// entry given twice.
    pub fn new(entries: &[CallCost]) -> Result<Self, CollectiveError> {
        let mut table = Self::NONE;
        for (i, e) in entries.iter().enumerate() {
            let invalid = |what: String| CollectiveError::InvalidLocalWork {
                detail: format!("calls[{i}] ({} {}): {what}", e.collective, e.algorithm),
            };
            if !e.collective.is_priced_by(Family::Ompi) {
                return Err(invalid(format!(
                    "{} has no algorithms in Open MPI's family",
                    e.collective
                )));
            }
            if e.algorithm == 0 || e.algorithm > e.collective.ompi_max_algorithm_id() {
                return Err(invalid(format!(
                    "algorithm must be 1..={} (Open MPI 4.1.4's IDs of {})",
                    e.collective.ompi_max_algorithm_id(),
                    e.collective
                )));
            }
            if !(e.seconds >= 0.0 && e.seconds.is_finite()) {
                return Err(invalid(format!(
                    "seconds = {} must be finite and >= 0",
                    e.seconds
                )));
            }
            let (c, a) = (index(e.collective), e.algorithm as usize - 1);
            if table.set[c][a] {
                return Err(invalid("given twice".into()));
            }
            table.set[c][a] = true;
            table.seconds[c][a] = e.seconds;
            table.len += 1;
        }
        Ok(table)
    }

    /// Seconds per call of `collective`'s algorithm `algorithm` (Open MPI's ID); 0 where the
    /// table has no entry.
    #[must_use]
    pub fn get(&self, collective: Collective, algorithm: u32) -> f64 {
        let a = algorithm as usize;
        if a == 0 || a > MAX_ID {
            return 0.0;
        }
        self.seconds[index(collective)][a - 1]
    }

    /// The call cost of one algorithm value (its collective and ID).
    #[must_use]
    pub fn of<A: OmpiAlgorithm>(&self, algorithm: &A) -> f64 {
        self.get(A::COLLECTIVE, algorithm.ompi_id())
    }

    /// The entries, by collective (ID order) and algorithm ID.
    pub fn entries(&self) -> Vec<CallCost> {
        let mut out = Vec::with_capacity(usize::from(self.len));
        for (c, &collective) in Collective::ALL.iter().enumerate() {
            for a in 0..MAX_ID {
                if self.set[c][a] {
                    out.push(CallCost {
                        collective,
                        algorithm: a as u32 + 1,
                        seconds: self.seconds[c][a],
                    });
                }
            }
        }
        out
    }

    /// Whether the table has no entry.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether every entry is 0 seconds (or there is none).
    #[must_use]
    pub fn is_zero(&self) -> bool {
        self.len == 0 || self.seconds.iter().flatten().all(|&s| s == 0.0)
    }
}

impl TryFrom<Vec<CallCost>> for CallCosts {
    type Error = CollectiveError;

    fn try_from(entries: Vec<CallCost>) -> Result<Self, Self::Error> {
        Self::new(&entries)
    }
}

impl From<CallCosts> for Vec<CallCost> {
    fn from(c: CallCosts) -> Self {
        c.entries()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_in_id_order() {
        let given = [
            CallCost {
                collective: Collective::Reduce,
                algorithm: 7,
                seconds: 3e-6,
            },
            CallCost {
                collective: Collective::Allgather,
                algorithm: 2,
                seconds: 0.0,
            },
        ];
        let t = CallCosts::new(&given).unwrap();
        assert_eq!(t.entries(), vec![given[1], given[0]]);
        assert_eq!(format!("{:?}", CallCosts::NONE), "[]");
        assert!(format!("{t:?}").starts_with("[CallCost { collective: Allgather, algorithm: 2"));
        assert!(!t.is_empty());
        assert!(!t.is_zero());
        assert_eq!(t.get(Collective::Reduce, 7).to_bits(), 3e-6f64.to_bits());
        assert_eq!(t.get(Collective::Reduce, 0).to_bits(), 0.0f64.to_bits());
        assert_eq!(t.get(Collective::Reduce, 10).to_bits(), 0.0f64.to_bits());
        assert_eq!(t.get(Collective::Scatter, 1).to_bits(), 0.0f64.to_bits());
    }

    #[test]
    fn bad_entries_are_named() {
        let bad = |collective, algorithm, seconds| {
            CallCosts::new(&[CallCost {
                collective,
                algorithm,
                seconds,
            }])
            .unwrap_err()
            .to_string()
        };
        assert!(bad(Collective::Bcast, 10, 1e-6).contains("1..=9"));
        assert!(bad(Collective::Bcast, 0, 1e-6).contains("calls[0]"));
        assert!(bad(Collective::Bcast, 1, -1e-6).contains("seconds"));
        assert!(bad(Collective::Bcast, 1, f64::NAN).contains("seconds"));
        assert!(bad(Collective::Scan, 1, 1e-6).contains("no algorithms in Open MPI's family"));
        let twice = CallCost {
            collective: Collective::Bcast,
            algorithm: 1,
            seconds: 1e-6,
        };
        assert!(
            CallCosts::new(&[twice, twice])
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
    }

    #[test]
    fn max_id_covers_every_collective() {
        for c in Collective::ALL {
            assert!(c.ompi_max_algorithm_id() as usize <= MAX_ID, "{c}");
        }
    }
}
