//! [`Collective`]: which MPI collective operation — its MPI name, Open MPI's rules-file ID and
//! lookup size, and the algorithm families that price it.

use std::fmt;
use std::str::FromStr;

use super::family::{Family, FamilyAlgorithm};
use super::ompi::{self, OmpiAlgorithm, OmpiVisitor};
use super::parse::normalise;
use crate::collectives::AlgorithmParseError;

/// An MPI collective operation: the one name every part of the crate uses for "which
/// collective" — the algorithm families ([`Family`]), the exporters, the probes that time real
/// runs and the calibration that reads them.
///
/// It prints as a kebab-case name (`reduce-scatter`) and parses from that, from MPI's
/// lower-case name (`reduce_scatter`), from `broadcast` for `bcast`, and from Open MPI's
/// collective ID (`12`).
///
/// | collective | MPI | Open MPI ID | rules-file size | families |
/// |---|---|---|---|---|
/// | `Allgather` | `MPI_Allgather` | 0 | `m P` | textbook, Open MPI, MPICH |
/// | `Allreduce` | `MPI_Allreduce` | 2 | `m` | textbook, Open MPI, MPICH |
/// | `Alltoall` | `MPI_Alltoall` | 3 | `m P` | textbook, Open MPI, MPICH |
/// | `Barrier` | `MPI_Barrier` | 6 | 0 | textbook, Open MPI, MPICH |
/// | `Bcast` | `MPI_Bcast` | 7 | `m` | textbook, Open MPI, MPICH |
/// | `Gather` | `MPI_Gather` | 9 | `m P` | textbook, Open MPI, MPICH |
/// | `Reduce` | `MPI_Reduce` | 11 | `m` | textbook, Open MPI, MPICH |
/// | `ReduceScatter` | `MPI_Reduce_scatter` | 12 | `m` | Open MPI |
/// | `ReduceScatterBlock` | `MPI_Reduce_scatter_block` | 13 | `m P` | none (timed only) |
/// | `Scan` | `MPI_Scan` | 14 | `m` | textbook, MPICH |
/// | `Scatter` | `MPI_Scatter` | 15 | `m P` | textbook, Open MPI, MPICH |
///
/// `m` is the problem message of the [collectives module](super) (the broadcast buffer, each
/// process's block of an allgather, gather or scatter, each pairwise block of an all-to-all,
/// the whole vector of a reduce-scatter); the IDs are `COLLTYPE_T` of Open MPI 4.1's
/// `coll_base_functions.h`.
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Collective, Family};
///
/// let c: Collective = "reduce_scatter".parse()?;
/// assert_eq!((c, c.ompi_id(), c.name()), (Collective::ReduceScatter, 12, "reduce_scatter"));
/// assert_eq!(c.to_string(), "reduce-scatter");
/// assert_eq!(c.families(), &[Family::Ompi]);
/// assert_eq!("broadcast".parse::<Collective>()?, Collective::Bcast);
/// assert_eq!(Collective::Allgather.ompi_rules_size(1024, 8), 8192);
/// # Ok::<(), commcost::collectives::AlgorithmParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Collective {
    /// `MPI_Allgather`.
    Allgather,
    /// `MPI_Allreduce`.
    Allreduce,
    /// `MPI_Alltoall`.
    Alltoall,
    /// `MPI_Barrier`.
    Barrier,
    /// `MPI_Bcast`.
    Bcast,
    /// `MPI_Gather`.
    Gather,
    /// `MPI_Reduce`.
    Reduce,
    /// `MPI_Reduce_scatter`.
    ReduceScatter,
    /// `MPI_Reduce_scatter_block` (timed by the probes; no family prices it).
    ReduceScatterBlock,
    /// `MPI_Scan`.
    Scan,
    /// `MPI_Scatter`.
    Scatter,
}

impl Collective {
    /// Every collective, in the order of Open MPI's IDs.
    pub const ALL: [Collective; 11] = [
        Self::Allgather,
        Self::Allreduce,
        Self::Alltoall,
        Self::Barrier,
        Self::Bcast,
        Self::Gather,
        Self::Reduce,
        Self::ReduceScatter,
        Self::ReduceScatterBlock,
        Self::Scan,
        Self::Scatter,
    ];

    /// MPI's name in lower case, as Open MPI's MCA parameters and rules files spell it
    /// (`bcast`, `reduce_scatter_block`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Allgather => "allgather",
            Self::Allreduce => "allreduce",
            Self::Alltoall => "alltoall",
            Self::Barrier => "barrier",
            Self::Bcast => "bcast",
            Self::Gather => "gather",
            Self::Reduce => "reduce",
            Self::ReduceScatter => "reduce_scatter",
            Self::ReduceScatterBlock => "reduce_scatter_block",
            Self::Scan => "scan",
            Self::Scatter => "scatter",
        }
    }

    /// The collective's ID in Open MPI's rules file (`COLLTYPE_T` in `coll_base_functions.h`).
    ///
    /// ```
    /// use commcost::collectives::Collective;
    /// assert_eq!(Collective::Bcast.ompi_id(), 7);
    /// assert_eq!(Collective::ReduceScatterBlock.ompi_id(), 13);
    /// ```
    pub const fn ompi_id(self) -> u32 {
        match self {
            Self::Allgather => 0,
            Self::Allreduce => 2,
            Self::Alltoall => 3,
            Self::Barrier => 6,
            Self::Bcast => 7,
            Self::Gather => 9,
            Self::Reduce => 11,
            Self::ReduceScatter => 12,
            Self::ReduceScatterBlock => 13,
            Self::Scan => 14,
            Self::Scatter => 15,
        }
    }

    /// The largest algorithm ID Open MPI 4.1.4's tuned component accepts for the collective
    /// (`coll_tuned_<coll>_algorithm`; IDs start at 1, 0 means "use the fixed decision").
    pub const fn ompi_max_algorithm_id(self) -> u32 {
        match self {
            Self::Allgather | Self::Allreduce | Self::Barrier => 6,
            Self::Alltoall => 5,
            Self::Bcast => 9,
            Self::Reduce => 7,
            Self::ReduceScatter | Self::ReduceScatterBlock => 4,
            Self::Gather | Self::Scatter => 3,
            Self::Scan => 2,
        }
    }

    /// The algorithm families that price the collective, in [`Family::ALL`]'s order.
    pub const fn families(self) -> &'static [Family] {
        match self {
            Self::ReduceScatter => &[Family::Ompi],
            Self::ReduceScatterBlock => &[],
            Self::Scan => &[Family::Textbook, Family::Mpich],
            _ => &[Family::Textbook, Family::Ompi, Family::Mpich],
        }
    }

    /// Whether the collective applies a reduction operator (allreduce, reduce, reduce_scatter,
    /// reduce_scatter_block, scan).
    pub const fn reduces(self) -> bool {
        matches!(
            self,
            Self::Allreduce
                | Self::Reduce
                | Self::ReduceScatter
                | Self::ReduceScatterBlock
                | Self::Scan
        )
    }

    /// Whether a size of the collective counts one block per process (its buffers hold `P`
    /// blocks: allgather, alltoall, gather, scatter, reduce_scatter_block) rather than the whole
    /// buffer.
    pub const fn per_block(self) -> bool {
        matches!(
            self,
            Self::Allgather
                | Self::Alltoall
                | Self::Gather
                | Self::Scatter
                | Self::ReduceScatterBlock
        )
    }

    /// The message size Open MPI looks the collective up by in the rules file, for a problem
    /// message of `bytes` bytes on `processes` processes: `m P` for the
    /// [per-block](Self::per_block) collectives, 0 for barrier, else `m` (saturating).
    ///
    /// ```
    /// use commcost::collectives::Collective;
    /// assert_eq!(Collective::Allgather.ompi_rules_size(1024, 8), 8192);
    /// assert_eq!(Collective::Bcast.ompi_rules_size(1024, 8), 1024);
    /// assert_eq!(Collective::Barrier.ompi_rules_size(1024, 8), 0);
    /// ```
    pub const fn ompi_rules_size(self, bytes: u64, processes: u64) -> u64 {
        if matches!(self, Self::Barrier) {
            0
        } else if self.per_block() {
            bytes.saturating_mul(processes)
        } else {
            bytes
        }
    }

    /// The problem message (bytes) that a rules-file message size stands for on `processes`
    /// processes: the inverse of [`ompi_rules_size`](Self::ompi_rules_size), rounded down
    /// (`⌊S / P⌋` for the per-block collectives; `P = 0` is taken as 1).
    ///
    /// ```
    /// use commcost::collectives::Collective;
    /// assert_eq!(Collective::Alltoall.ompi_problem_bytes(8192, 8), 1024);
    /// assert_eq!(Collective::Allreduce.ompi_problem_bytes(8192, 8), 8192);
    /// ```
    pub const fn ompi_problem_bytes(self, rules_size: u64, processes: u64) -> u64 {
        let p = if processes == 0 { 1 } else { processes };
        if matches!(self, Self::Barrier) {
            0
        } else if self.per_block() {
            rules_size / p
        } else {
            rules_size
        }
    }

    /// The Open MPI algorithm the crate prices a run of algorithm `id` of this collective as
    /// (forced with `coll_tuned_<coll>_algorithm id`): the same for the collectives of Open
    /// MPI's family (`None` for an ID outside `1..=`[`ompi_max_algorithm_id`](Self::ompi_max_algorithm_id));
    /// reduce_scatter_block's basic linear (1), recursive halving (3) and butterfly (4) as
    /// reduce_scatter's non-overlapping (1), recursive halving (2) and butterfly (4) on the whole
    /// vector (`P` blocks; Open MPI 4.1's `coll_base_reduce_scatter_block.c` runs the same
    /// patterns); `None` for its recursive doubling (2), which reduce_scatter lacks, and for
    /// scan.
    ///
    /// ```
    /// use commcost::collectives::Collective;
    /// let rsb = Collective::ReduceScatterBlock;
    /// assert_eq!(rsb.ompi_priced_as(3), Some((Collective::ReduceScatter, 2)));
    /// assert_eq!(rsb.ompi_priced_as(2), None);
    /// assert_eq!(Collective::Bcast.ompi_priced_as(6), Some((Collective::Bcast, 6)));
    /// assert_eq!(Collective::Bcast.ompi_priced_as(10), None);
    /// ```
    pub const fn ompi_priced_as(self, id: u32) -> Option<(Collective, u32)> {
        if id == 0 || id > self.ompi_max_algorithm_id() {
            return None;
        }
        match self {
            Self::ReduceScatterBlock => match id {
                1 => Some((Self::ReduceScatter, 1)),
                3 => Some((Self::ReduceScatter, 2)),
                4 => Some((Self::ReduceScatter, 4)),
                _ => None,
            },
            Self::Scan => None,
            _ => Some((self, id)),
        }
    }

    /// Open MPI 4.1.4's name of the collective's algorithm `id` (`ompi_info --param coll tuned
    /// --level 9`: `split_binary_tree`, `in-order_binary`), `None` for an ID Open MPI does not
    /// accept.
    ///
    /// ```
    /// use commcost::collectives::Collective;
    /// assert_eq!(Collective::Bcast.ompi_algorithm_name(4), Some("split_binary_tree"));
    /// assert_eq!(Collective::ReduceScatterBlock.ompi_algorithm_name(2), Some("recursive_doubling"));
    /// assert_eq!(Collective::Gather.ompi_algorithm_name(4), None);
    /// ```
    #[inline]
    pub fn ompi_algorithm_name(self, id: u32) -> Option<&'static str> {
        struct NameOf(u32);
        impl OmpiVisitor for NameOf {
            type Output = Option<&'static str>;
            fn visit<A: OmpiAlgorithm + FamilyAlgorithm>(self) -> Self::Output {
                let a: A = self.0.to_string().parse().ok()?;
                Some(a.ompi_name())
            }
        }
        // the collectives without algorithms in the crate: Open MPI's own lists
        // (coll_tuned_reduce_scatter_block_decision.c, coll_tuned_scan_decision.c)
        let listed: &[&'static str] = match self {
            Self::ReduceScatterBlock => &[
                "basic_linear",
                "recursive_doubling",
                "recursive_halving",
                "butterfly",
            ],
            Self::Scan => &["linear", "recursive_doubling"],
            _ => return ompi::visit(self, NameOf(id)).ok().flatten(),
        };
        let index = usize::try_from(id).ok()?.checked_sub(1)?;
        listed.get(index).copied()
    }

    /// Whether `family` prices the collective.
    pub fn is_priced_by(self, family: Family) -> bool {
        self.families().contains(&family)
    }
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name().replace('_', "-"))
    }
}

impl FromStr for Collective {
    type Err = AlgorithmParseError;

    /// Kebab-case or MPI's names (`reduce-scatter`, `reduce_scatter`, `Reduce_scatter`),
    /// `broadcast` for `bcast`, or Open MPI's ID.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = normalise(s);
        let wanted = if wanted == "broadcast" {
            "bcast".to_string()
        } else {
            wanted
                .strip_prefix("mpi-")
                .map_or(wanted.clone(), str::to_string)
        };
        Self::ALL
            .iter()
            .copied()
            .find(|c| c.to_string() == wanted || c.ompi_id().to_string() == wanted)
            .ok_or_else(|| AlgorithmParseError::Unknown {
                collective: "collective",
                name: s.to_string(),
                known: Self::ALL
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every collective reads back from its name, its kebab-case name and its ID; the IDs are
    /// Open MPI 4.1's `COLLTYPE_T` values (allgather 0 ... scatter 15, `coll_base_functions.h`).
    #[test]
    fn names_and_ids_read_back() {
        let ids: Vec<u32> = Collective::ALL.iter().map(|c| c.ompi_id()).collect();
        assert_eq!(ids, [0, 2, 3, 6, 7, 9, 11, 12, 13, 14, 15]);
        for c in Collective::ALL {
            assert_eq!(c.name().parse::<Collective>().unwrap(), c);
            assert_eq!(c.to_string().parse::<Collective>().unwrap(), c);
            assert_eq!(c.ompi_id().to_string().parse::<Collective>().unwrap(), c);
        }
        assert_eq!(
            "MPI_Bcast".parse::<Collective>().unwrap(),
            Collective::Bcast
        );
        assert!("allgatherv".parse::<Collective>().is_err());
        assert!("1".parse::<Collective>().is_err());
    }
}
