//! `Display` / `FromStr` of the textbook algorithms and their MPICH names.
//!
//! Names are kebab-case (`recursive-doubling`); parsing also accepts spaces and underscores
//! (`recursive doubling`, `recursive_doubling`). The pipelined broadcast carries its segment:
//! `pipelined:segment=8192`.

use std::fmt;
use std::str::FromStr;

use super::{Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Reduce, Scan, Scatter};
use crate::collectives::Algorithm;
use crate::collectives::parse::ParsedName;
use crate::collectives::{AlgorithmParseError, Collective};

/// A collective algorithm as MPICH names it: the `MPIR_CVAR_<COLL>_INTRA_ALGORITHM` value and
/// the `algorithm=MPIR_<Coll>_intra_<name>` leaf of MPICH's collective selection JSON
/// (`MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE`).
///
/// MPICH's names, where MPICH runs the same algorithm (Thakur, Rabenseifner & Gropp, IJHPCA
/// 19(1), 2005, describe MPICH's):
///
/// | crate | MPICH |
/// |---|---|
/// | `Bcast::Binomial` | `binomial` |
/// | `Bcast::ScatterAllgather` | `scatter_ring_allgather` |
/// | `Allreduce::RecursiveDoubling` / `Ring` / `Rabenseifner` | `recursive_doubling` / `ring` / `reduce_scatter_allgather` |
/// | `Allgather::Ring` / `RecursiveDoubling` / `Bruck` | `ring` / `recursive_doubling` / `brucks` |
/// | `Alltoall::PairwiseExchange` / `Bruck` | `pairwise` / `brucks` |
/// | `Reduce::Binomial`, `Gather::Binomial`, `Scatter::Binomial` | `binomial` |
/// | `Barrier::Dissemination` | `k_dissemination` (with `k = 2`) |
/// | `Scan::RecursiveDoubling` | `recursive_doubling` |
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Allreduce, MpichAlgorithm};
/// assert_eq!(Allreduce::Rabenseifner.mpich_name(), Some("reduce_scatter_allgather"));
/// assert_eq!(
///     Allreduce::Ring.mpich_function().as_deref(),
///     Some("MPIR_Allreduce_intra_ring")
/// );
/// ```
pub trait MpichAlgorithm: Algorithm {
    /// MPICH's collective name in the selection JSON (`collective=<name>`).
    const MPICH_COLLECTIVE: &'static str;
    /// The collective in MPICH's function names (`MPIR_<prefix>_intra_...`).
    const MPICH_PREFIX: &'static str;

    /// MPICH's name of the algorithm, `None` where MPICH has no such algorithm.
    fn mpich_name(&self) -> Option<&'static str>;

    /// MPICH's function for the algorithm, `MPIR_<Coll>_intra_<name>`.
    fn mpich_function(&self) -> Option<String> {
        self.mpich_name()
            .map(|n| format!("MPIR_{}_intra_{n}", Self::MPICH_PREFIX))
    }

    /// The algorithms of the collective that MPICH runs, or a list that contains them (empty
    /// where the type does not enumerate them): what [`from_mpich_name`](Self::from_mpich_name)
    /// searches.
    fn mpich_algorithms() -> Vec<Self>
    where
        Self: Sized,
    {
        Vec::new()
    }

    /// The algorithm MPICH calls `name` (`recursive_doubling`, any case, `-` for `_`).
    fn from_mpich_name(name: &str) -> Option<Self>
    where
        Self: Sized,
    {
        let wanted = crate::collectives::parse::normalise(name);
        Self::mpich_algorithms().into_iter().find(|a| {
            a.mpich_name()
                .is_some_and(|n| crate::collectives::parse::normalise(n) == wanted)
        })
    }

    /// MPICH's names of [`mpich_algorithms`](Self::mpich_algorithms).
    fn mpich_names() -> Vec<&'static str>
    where
        Self: Sized,
    {
        Self::mpich_algorithms()
            .iter()
            .filter_map(MpichAlgorithm::mpich_name)
            .collect()
    }
}

/// `Display`, `FromStr` and the MPICH names of a collective whose algorithms have no
/// parameters.
macro_rules! plain_names {
    ($ty:ident, $collective:ident, $mpich_coll:literal,
     [$($variant:ident => $name:literal, $mpich:expr);* $(;)?]) => {
        impl $ty {
            pub(crate) const NAMES: &'static [&'static str] = &[$($name),*];

            /// The algorithm's name (`Display` without parameters; the names table above).
            pub(crate) const fn table_name(&self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }
        }

        impl MpichAlgorithm for $ty {
            const MPICH_COLLECTIVE: &'static str = Collective::$collective.name();
            const MPICH_PREFIX: &'static str = $mpich_coll;

            fn mpich_name(&self) -> Option<&'static str> {
                match self {
                    $(Self::$variant => $mpich,)*
                }
            }

            fn mpich_algorithms() -> Vec<Self> {
                $ty::ALL.to_vec()
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.table_name())
            }
        }

        impl FromStr for $ty {
            type Err = AlgorithmParseError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let p = ParsedName::parse(s)?;
                let a = match p.name.as_str() {
                    $($name => Self::$variant,)*
                    _ => return Err(p.unknown(Collective::$collective.name(), Self::NAMES)),
                };
                p.finish()?;
                Ok(a)
            }
        }
    };
}

plain_names!(Scan, Scan, "Scan", [
    LinearChain => "linear-chain", None;
    RecursiveDoubling => "recursive-doubling", Some("recursive_doubling");
]);
plain_names!(Reduce, Reduce, "Reduce", [
    Binomial => "binomial", Some("binomial");
]);
plain_names!(Allreduce, Allreduce, "Allreduce", [
    RecursiveDoubling => "recursive-doubling", Some("recursive_doubling");
    Ring => "ring", Some("ring");
    Rabenseifner => "rabenseifner", Some("reduce_scatter_allgather");
]);
plain_names!(Allgather, Allgather, "Allgather", [
    Ring => "ring", Some("ring");
    RecursiveDoubling => "recursive-doubling", Some("recursive_doubling");
    Bruck => "bruck", Some("brucks");
]);
plain_names!(Gather, Gather, "Gather", [
    Linear => "linear", None;
    Binomial => "binomial", Some("binomial");
]);
plain_names!(Scatter, Scatter, "Scatter", [
    Linear => "linear", None;
    Binomial => "binomial", Some("binomial");
]);
plain_names!(Barrier, Barrier, "Barrier", [
    Dissemination => "dissemination", Some("k_dissemination");
]);
plain_names!(Alltoall, Alltoall, "Alltoall", [
    PairwiseExchange => "pairwise-exchange", Some("pairwise");
    Bruck => "bruck", Some("brucks");
]);

impl Bcast {
    pub(crate) const NAMES: &'static [&'static str] =
        &["linear", "binomial", "scatter-allgather", "pipelined"];

    /// The algorithm's name without its parameters.
    pub(crate) const fn table_name(&self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::Binomial => "binomial",
            Self::ScatterAllgather => "scatter-allgather",
            Self::Pipelined { .. } => "pipelined",
        }
    }
}

/// `binomial`, `scatter_ring_allgather` (van de Geijn's scatter and ring allgather); MPICH has
/// no flat linear broadcast and its `pipelined_tree` is not a plain chain.
impl MpichAlgorithm for Bcast {
    const MPICH_COLLECTIVE: &'static str = Collective::Bcast.name();
    const MPICH_PREFIX: &'static str = "Bcast";

    fn mpich_name(&self) -> Option<&'static str> {
        match self {
            Self::Binomial => Some("binomial"),
            Self::ScatterAllgather => Some("scatter_ring_allgather"),
            Self::Linear | Self::Pipelined { .. } => None,
        }
    }

    fn mpich_algorithms() -> Vec<Self> {
        vec![Self::Binomial, Self::ScatterAllgather]
    }
}

impl fmt::Display for Bcast {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Pipelined { segment } => write!(f, "pipelined:segment={segment}"),
            _ => f.write_str(self.table_name()),
        }
    }
}

impl FromStr for Bcast {
    type Err = AlgorithmParseError;

    /// `pipelined` needs its segment (`pipelined:segment=8192`, at least 1 byte).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut p = ParsedName::parse(s)?;
        let a = match p.name.as_str() {
            "linear" => Self::Linear,
            "binomial" => Self::Binomial,
            "scatter-allgather" => Self::ScatterAllgather,
            "pipelined" => {
                let segment = p.require("segment")?;
                if segment == 0 {
                    return Err(AlgorithmParseError::Parameter {
                        algorithm: s.to_string(),
                        detail: "segment must be at least 1 byte".into(),
                    });
                }
                Self::Pipelined { segment }
            }
            _ => return Err(p.unknown(Collective::Bcast.name(), Self::NAMES)),
        };
        p.finish()?;
        Ok(a)
    }
}
