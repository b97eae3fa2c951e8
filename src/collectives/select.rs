//! Algorithm selection: ranking, crossover sizes and decision tables.

use std::ops::RangeInclusive;

use super::{Algorithm, Problem};
use crate::CommModel;
use crate::collectives::CollectiveError;

/// Every candidate algorithm of a collective with its cost, cheapest first (ties keep the
/// candidates' order).
///
/// # Errors
///
/// As [`Algorithm::cost`].
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Bcast, Problem, rank};
/// use commcost::{Message, presets};
///
/// let openib = presets::open_mpi_openib();
/// let ranking = rank::<Bcast>(&openib, &Problem::new(64, Message::contiguous(8)))?;
/// assert_eq!(ranking[0].0, Bcast::Binomial); // small messages: the tree wins
/// # Ok::<(), commcost::collectives::CollectiveError>(())
/// ```
pub fn rank<A: Algorithm>(
    model: &dyn CommModel,
    problem: &Problem,
) -> Result<Vec<(A, f64)>, CollectiveError> {
    let mut ranked = A::candidates(model, problem)
        .into_iter()
        .map(|a| a.cost(model, problem).map(|c| (a, c)))
        .collect::<Result<Vec<_>, _>>()?;
    ranked.sort_by(|x, y| x.1.total_cmp(&y.1));
    Ok(ranked)
}

/// The cheapest candidate and its cost.
///
/// # Errors
///
/// As [`Algorithm::cost`].
pub fn best<A: Algorithm>(
    model: &dyn CommModel,
    problem: &Problem,
) -> Result<(A, f64), CollectiveError> {
    let mut best: Option<(A, f64)> = None;
    for a in A::candidates(model, problem) {
        let c = a.cost(model, problem)?;
        if best.is_none_or(|(_, b)| c < b) {
            best = Some((a, c));
        }
    }
    // every collective has at least one candidate
    best.ok_or(CollectiveError::EmptyRange {
        what: "candidates",
        detail: "the collective has no algorithm".into(),
    })
}

/// Probes per doubling of the message size in the crossover search.
const PROBES_PER_OCTAVE: f64 = 32.0;

/// The smallest message size in `sizes` at which the ranking of algorithms `a` and `b` differs
/// from their ranking at the start of the range (`None` if it never does there).
///
/// # Method
///
/// `a` is "faster" at a size when its cost is strictly below `b`'s. The search probes the range
/// on a geometric grid (32 probes per doubling) plus, for each of the model's
/// [`size_breakpoints`](crate::PiecewiseCost::size_breakpoints) `b` and each factor `f` by which the
/// collective scales its internal messages ([`Algorithm::size_factors`]), the sizes around `b / f`
/// — where a protocol switch inside the collective makes the costs jump. The first probe whose
/// ranking differs brackets the change; bisection over whole bytes then finds the exact size.
/// The result is exact whenever the ranking changes at most once between adjacent probes.
///
/// # Errors
///
/// [`CollectiveError::EmptyRange`] for an inverted range; as [`Algorithm::cost`].
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Bcast, Problem, crossover};
/// use commcost::{CommModel, LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// let problem = Problem::new(64, Message::contiguous(1));
/// let at = crossover(&model, Bcast::Binomial, Bcast::ScatterAllgather, &problem, 1..=1 << 24)?
///     .expect("the large-message algorithm wins eventually");
/// // the ranking really differs on either side
/// let cost = |a: Bcast, s: u64| a.cost(&model, &problem.with_bytes(s)).unwrap();
/// use commcost::collectives::Algorithm;
/// assert!(cost(Bcast::Binomial, at - 1) <= cost(Bcast::ScatterAllgather, at - 1));
/// assert!(cost(Bcast::Binomial, at) > cost(Bcast::ScatterAllgather, at));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn crossover<A: Algorithm>(
    model: &dyn CommModel,
    a: A,
    b: A,
    problem: &Problem,
    sizes: RangeInclusive<u64>,
) -> Result<Option<u64>, CollectiveError> {
    let (start, end) = (*sizes.start(), *sizes.end());
    if start > end {
        return Err(CollectiveError::EmptyRange {
            what: "sizes",
            detail: format!("start {start} > end {end}"),
        });
    }
    let faster = |bytes: u64| -> Result<bool, CollectiveError> {
        let p = problem.with_bytes(bytes);
        Ok(a.cost(model, &p)? < b.cost(model, &p)?)
    };
    let initial = faster(start)?;
    let probes = probe_sizes::<A>(model, problem, start, end);
    let mut below = start;
    for probe in probes {
        if faster(probe)? != initial {
            // bisect (below, probe]: ranking at `below` is the initial one, at `probe` it is not
            let (mut lo, mut hi) = (below, probe);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if faster(mid)? == initial {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            return Ok(Some(hi));
        }
        below = probe;
    }
    Ok(None)
}

/// The probe sizes of [`crossover`] in `(start, end]`, ascending.
fn probe_sizes<A: Algorithm>(
    model: &dyn CommModel,
    problem: &Problem,
    start: u64,
    end: u64,
) -> Vec<u64> {
    let mut probes = Vec::new();
    let ratio = 2f64.powf(1.0 / PROBES_PER_OCTAVE);
    let mut x = start.max(1) as f64;
    while x < end as f64 {
        probes.push(x as u64);
        x = (x * ratio).max(x + 1.0);
    }
    probes.push(end);
    let breakpoints = model.size_breakpoints();
    if !breakpoints.is_empty() {
        for f in A::size_factors(problem) {
            for &bp in &breakpoints {
                let centre = (bp as f64 / f).round();
                if centre.is_finite() && centre >= 0.0 && centre <= end as f64 {
                    let c = centre as u64;
                    probes.extend([c.saturating_sub(1), c, c.saturating_add(1)]);
                }
            }
        }
    }
    probes.retain(|&s| s > start && s <= end);
    probes.sort_unstable();
    probes.dedup();
    probes
}

/// Best algorithms on a grid of communicator sizes × message sizes, for `O(log n)` queries.
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Allreduce, DecisionTable, Problem};
/// use commcost::{Message, presets};
///
/// let openib = presets::open_mpi_openib();
/// let table = DecisionTable::<Allreduce>::build(
///     &openib,
///     &[4, 64, 1024],
///     &[8, 1024, 65536, 1 << 22],
///     &Problem::new(1, Message::contiguous(1)),
/// )?;
/// // 100 processes, 2 MiB: the entry at (64, 64 KiB), the grid point at or below both
/// assert_eq!(table.lookup(100, 2 << 20), table.lookup(64, 65536));
/// # Ok::<(), commcost::collectives::CollectiveError>(())
/// ```
///
/// With the `serde` feature the table (de)serialises as `{"processes": [..], "sizes": [..],
/// "best": [..]}` (`best` row-major, one row per communicator size); loading checks that the
/// axes are non-empty and strictly increasing and that `best` has one entry per cell.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(
        try_from = "RawDecisionTable<A>",
        bound(deserialize = "A: serde::Deserialize<'de>")
    )
)]
pub struct DecisionTable<A> {
    processes: Vec<u64>,
    sizes: Vec<u64>,
    /// Row-major: `best[i * sizes.len() + j]` for `processes[i]`, `sizes[j]`.
    best: Vec<A>,
}

impl<A: Algorithm> DecisionTable<A> {
    /// Ranks every candidate at every grid point. `template` supplies the layout and the
    /// operator; its process count and size are replaced by the grid's.
    ///
    /// # Errors
    ///
    /// [`CollectiveError::EmptyRange`] for an empty grid or axes not strictly increasing;
    /// [`CollectiveError::NoProcesses`] for a 0 in `processes`.
    pub fn build(
        model: &dyn CommModel,
        processes: &[u64],
        sizes: &[u64],
        template: &Problem,
    ) -> Result<Self, CollectiveError> {
        for (what, axis) in [("processes", processes), ("sizes", sizes)] {
            if axis.is_empty() || axis.windows(2).any(|w| w[1] <= w[0]) {
                return Err(CollectiveError::EmptyRange {
                    what,
                    detail: "must be non-empty and strictly increasing".into(),
                });
            }
        }
        let mut best_algorithms = Vec::with_capacity(processes.len() * sizes.len());
        for &p in processes {
            for &s in sizes {
                let problem = Problem {
                    processes: p,
                    ..template.with_bytes(s)
                };
                best_algorithms.push(best::<A>(model, &problem)?.0);
            }
        }
        Ok(Self {
            processes: processes.to_vec(),
            sizes: sizes.to_vec(),
            best: best_algorithms,
        })
    }

    /// The best algorithm at the grid point at or below `(processes, bytes)` (the first grid
    /// point below the grid): two binary searches.
    pub fn lookup(&self, processes: u64, bytes: u64) -> A {
        let i = self
            .processes
            .partition_point(|&p| p <= processes)
            .saturating_sub(1);
        let j = self
            .sizes
            .partition_point(|&s| s <= bytes)
            .saturating_sub(1);
        self.best[i * self.sizes.len() + j]
    }

    /// The communicator sizes of the grid.
    pub fn processes(&self) -> &[u64] {
        &self.processes
    }

    /// The message sizes of the grid.
    pub fn sizes(&self) -> &[u64] {
        &self.sizes
    }

    /// Every cell as `(processes, size, best algorithm)`, row by row (communicator sizes
    /// ascending, message sizes ascending within a row).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::{Allreduce, DecisionTable, Problem};
    /// use commcost::{Message, presets};
    ///
    /// let openib = presets::open_mpi_openib();
    /// let template = Problem::new(1, Message::contiguous(1));
    /// let table = DecisionTable::<Allreduce>::build(&openib, &[4, 64], &[8, 1 << 22], &template)?;
    /// let cells: Vec<_> = table.cells().collect();
    /// assert_eq!(cells.len(), 4);
    /// assert_eq!((cells[1].0, cells[1].1), (4, 1 << 22));
    /// assert_eq!(cells[1].2, table.lookup(4, 1 << 22));
    /// # Ok::<(), commcost::collectives::CollectiveError>(())
    /// ```
    pub fn cells(&self) -> impl Iterator<Item = (u64, u64, A)> + '_ {
        self.processes.iter().enumerate().flat_map(move |(i, &p)| {
            self.sizes
                .iter()
                .enumerate()
                .map(move |(j, &s)| (p, s, self.best[i * self.sizes.len() + j]))
        })
    }

    /// The sizes at which the best algorithm changes along each row: for every communicator
    /// size, each grid size whose best algorithm differs from the previous grid size's, with
    /// both algorithms. A row with one algorithm throughout has none.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::{Allreduce, DecisionTable, Problem};
    /// use commcost::{Message, presets};
    ///
    /// let openib = presets::open_mpi_openib();
    /// let sizes: Vec<u64> = (0..24).map(|k| 1u64 << k).collect();
    /// let template = Problem::new(1, Message::contiguous(1));
    /// let table = DecisionTable::<Allreduce>::build(&openib, &[64], &sizes, &template)?;
    /// let switches = table.switch_points();
    /// assert!(!switches.is_empty());
    /// for s in &switches {
    ///     assert_eq!(table.lookup(s.processes, s.size), s.to);
    ///     assert_ne!(s.from, s.to);
    /// }
    /// # Ok::<(), commcost::collectives::CollectiveError>(())
    /// ```
    pub fn switch_points(&self) -> Vec<SwitchPoint<A>> {
        let n = self.sizes.len();
        let mut out = Vec::new();
        for (i, &processes) in self.processes.iter().enumerate() {
            let row = &self.best[i * n..(i + 1) * n];
            for j in 1..n {
                if row[j] != row[j - 1] {
                    out.push(SwitchPoint {
                        processes,
                        size: self.sizes[j],
                        from: row[j - 1],
                        to: row[j],
                    });
                }
            }
        }
        out
    }
}

/// A grid size at which a [`DecisionTable`] row changes its best algorithm.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct SwitchPoint<A> {
    /// The communicator size of the row.
    pub processes: u64,
    /// The first grid size of the new algorithm.
    pub size: u64,
    /// The best algorithm at the grid size before.
    pub from: A,
    /// The best algorithm from `size` on.
    pub to: A,
}

/// Private fields, no public form: loading checks the axes and cells a ranked table has.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDecisionTable<A> {
    processes: Vec<u64>,
    sizes: Vec<u64>,
    best: Vec<A>,
}

#[cfg(feature = "serde")]
impl<A> TryFrom<RawDecisionTable<A>> for DecisionTable<A> {
    type Error = CollectiveError;

    fn try_from(raw: RawDecisionTable<A>) -> Result<Self, Self::Error> {
        for (what, axis) in [("processes", &raw.processes), ("sizes", &raw.sizes)] {
            if axis.is_empty() || axis.windows(2).any(|w| w[1] <= w[0]) {
                return Err(CollectiveError::EmptyRange {
                    what,
                    detail: "must be non-empty and strictly increasing".into(),
                });
            }
        }
        if raw.processes.contains(&0) {
            return Err(CollectiveError::NoProcesses);
        }
        let cells = raw.processes.len().checked_mul(raw.sizes.len());
        if cells != Some(raw.best.len()) {
            return Err(CollectiveError::EmptyRange {
                what: "best",
                detail: format!(
                    "{} entries for {} x {} cells",
                    raw.best.len(),
                    raw.processes.len(),
                    raw.sizes.len()
                ),
            });
        }
        Ok(Self {
            processes: raw.processes,
            sizes: raw.sizes,
            best: raw.best,
        })
    }
}
