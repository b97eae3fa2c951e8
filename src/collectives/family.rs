//! [`Family`]: which algorithm set prices a [`Collective`] — the textbook algorithms, Open MPI's
//! tuned component, MPICH's — and the one place that maps a (family, collective) pair to its
//! algorithm type ([`Family::visit`]), with type-erased ranking on top ([`rank_in`],
//! [`best_in`], [`cost_in`]).

use std::fmt;
use std::str::FromStr;

use super::parse::normalise;
use super::{Algorithm, AlgorithmParseError, Collective, CollectiveError, MpichAlgorithm, Problem};
use crate::CommModel;
use crate::collectives::ompi::{self, OmpiAlgorithm};

/// An algorithm family: the set of algorithms a library runs for each collective.
///
/// | family | algorithms | names |
/// |---|---|---|
/// | `Ompi` (the default) | Open MPI 4.1's `coll_tuned` ([`ompi`]) | the crate's (`split-binary-tree:segment=8192`), Open MPI's ID and name (`4`, `split_binary_tree`) |
/// | `Textbook` | Thakur, Rabenseifner & Gropp, IJHPCA 19(1), 2005 ([`Bcast`](super::Bcast), …) | the crate's (`recursive-doubling`) |
/// | `Mpich` | the textbook algorithms MPICH runs ([`Mpich`]) | MPICH's (`MPIR_CVAR_<COLL>_INTRA_ALGORITHM`: `recursive_doubling`) |
///
/// [`Family::DEFAULT`] is what the command-line tool, the C ABI and the Python package use
/// when no family is given. [`Collective::families`] says which families price a collective.
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Collective, Family};
///
/// assert_eq!(Family::DEFAULT, Family::Ompi);
/// assert_eq!("textbook".parse::<Family>()?, Family::Textbook);
/// assert_eq!(Family::Mpich.to_string(), "mpich");
/// assert!(Family::Ompi.collectives().contains(&Collective::ReduceScatter));
/// assert!(!Family::Ompi.collectives().contains(&Collective::Scan));
/// # Ok::<(), commcost::collectives::AlgorithmParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Family {
    /// The textbook algorithms of Thakur, Rabenseifner & Gropp (2005).
    Textbook,
    /// Open MPI 4.1's tuned component, with Open MPI's IDs, segment sizes and fan-outs.
    Ompi,
    /// The textbook algorithms MPICH runs, under MPICH's names.
    Mpich,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 3] = [Self::Textbook, Self::Ompi, Self::Mpich];

    /// The family used where none is given: Open MPI's, whose choices a rules file can apply.
    pub const DEFAULT: Family = Self::Ompi;

    /// The family's name (`textbook`, `ompi`, `mpich`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Textbook => "textbook",
            Self::Ompi => "ompi",
            Self::Mpich => "mpich",
        }
    }

    /// The collectives the family prices, in [`Collective::ALL`]'s order.
    pub fn collectives(self) -> Vec<Collective> {
        Collective::ALL
            .into_iter()
            .filter(|c| c.is_priced_by(self))
            .collect()
    }

    /// Calls `visitor.visit::<A>()` with `A` the algorithm type of `collective` in this family.
    ///
    /// # Errors
    ///
    /// [`CollectiveError::NotPriced`] for a collective the family does not price.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::{AlgorithmVisitor, Collective, Family, FamilyAlgorithm};
    ///
    /// struct Count;
    /// impl AlgorithmVisitor for Count {
    ///     type Output = usize;
    ///     fn visit<A: FamilyAlgorithm>(self) -> usize {
    ///         A::NAMES.len()
    ///     }
    /// }
    /// assert_eq!(Family::Ompi.visit(Collective::Bcast, Count)?, 9);
    /// assert!(Family::Ompi.visit(Collective::Scan, Count).is_err());
    /// # Ok::<(), commcost::collectives::CollectiveError>(())
    /// ```
    pub fn visit<V: AlgorithmVisitor>(
        self,
        collective: Collective,
        visitor: V,
    ) -> Result<V::Output, CollectiveError> {
        match self {
            Self::Ompi => ompi::visit(collective, ViaOmpi(visitor)),
            Self::Textbook => super::textbook::visit(collective, visitor),
            Self::Mpich => super::textbook::visit(collective, ViaMpich(visitor)),
        }
        .map_err(|e| match e {
            CollectiveError::NotPriced { collective, .. } => CollectiveError::NotPriced {
                family: self,
                collective,
            },
            e => e,
        })
    }
}

/// Runs a family visitor on Open MPI's algorithm types.
struct ViaOmpi<V>(V);

impl<V: AlgorithmVisitor> ompi::OmpiVisitor for ViaOmpi<V> {
    type Output = V::Output;
    fn visit<A: OmpiAlgorithm + FamilyAlgorithm>(self) -> V::Output {
        self.0.visit::<A>()
    }
}

/// Runs a family visitor on the textbook types as MPICH runs them ([`Mpich`]).
struct ViaMpich<V>(V);

impl<V: AlgorithmVisitor> AlgorithmVisitor for ViaMpich<V> {
    type Output = V::Output;
    fn visit<A: FamilyAlgorithm>(self) -> V::Output {
        self.0.visit::<Mpich<A>>()
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Family {
    type Err = AlgorithmParseError;

    /// `textbook`, `ompi` (also `open-mpi`, `openmpi`) or `mpich`, any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match normalise(s).as_str() {
            "textbook" => Ok(Self::Textbook),
            "ompi" | "open-mpi" | "openmpi" => Ok(Self::Ompi),
            "mpich" => Ok(Self::Mpich),
            _ => Err(AlgorithmParseError::Unknown {
                collective: "family",
                name: s.to_string(),
                known: "textbook, ompi, mpich".into(),
            }),
        }
    }
}

/// What the visitor of [`Family::visit`] may use of an algorithm type: pricing and ranking
/// ([`Algorithm`]), its names (`Display` / `FromStr`, [`NAMES`](Self::NAMES)), MPICH's name
/// and, in Open MPI's family, the rules file's fields ([`ompi_rule`](Self::ompi_rule)).
pub trait FamilyAlgorithm:
    Algorithm + fmt::Display + FromStr<Err = AlgorithmParseError> + MpichAlgorithm
{
    /// The collective the type's algorithms run.
    const COLLECTIVE: Collective;
    /// The names the type's `FromStr` reads (without parameters).
    const NAMES: &'static [&'static str];

    /// Open MPI's rule for the algorithm (ID, name, segment size, fan-out); `None` outside
    /// Open MPI's family.
    fn ompi_rule(&self) -> Option<OmpiSetting> {
        None
    }
}

/// How Open MPI is told to run an algorithm: its ID and name, segment size and fan-out (the
/// `coll_tuned_<coll>_algorithm`, `_segmentsize` and `_chain_fanout` MCA parameters, and the
/// fields of a rules-file line `msg_size ID fanout segsize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OmpiSetting {
    /// Open MPI's algorithm ID (`coll_tuned_<coll>_algorithm`).
    pub id: u32,
    /// Open MPI's name (`split_binary_tree`).
    pub name: &'static str,
    /// The segment size, bytes (0 = unsegmented).
    pub segment: u64,
    /// The chain fan-out, 0 where the algorithm has none.
    pub fanout: u64,
}

/// A computation generic over an algorithm type, run by [`Family::visit`] for the type of a
/// (family, collective) pair.
pub trait AlgorithmVisitor {
    /// What the computation returns.
    type Output;
    /// Runs the computation for algorithm type `A`.
    fn visit<A: FamilyAlgorithm>(self) -> Self::Output;
}

macro_rules! family_algorithm {
    (ompi: $($ty:ident),*) => {$(
        impl FamilyAlgorithm for ompi::$ty {
            const COLLECTIVE: Collective = <Self as OmpiAlgorithm>::COLLECTIVE;
            const NAMES: &'static [&'static str] = ompi::$ty::NAMES;
            fn ompi_rule(&self) -> Option<OmpiSetting> {
                Some(OmpiSetting {
                    id: self.ompi_id(),
                    name: self.ompi_name(),
                    segment: self.segment_size(),
                    fanout: self.faninout(),
                })
            }
        }
    )*};
    (textbook: $($ty:ident => $c:ident),*) => {$(
        impl FamilyAlgorithm for super::textbook::$ty {
            const COLLECTIVE: Collective = Collective::$c;
            const NAMES: &'static [&'static str] = super::textbook::$ty::NAMES;
        }
    )*};
}
family_algorithm!(ompi: Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Reduce, ReduceScatter, Scatter);
family_algorithm!(textbook: Allgather => Allgather, Allreduce => Allreduce, Alltoall => Alltoall,
    Barrier => Barrier, Bcast => Bcast, Gather => Gather, Reduce => Reduce, Scan => Scan,
    Scatter => Scatter);

/// A textbook algorithm as MPICH runs it: the candidates are the algorithms MPICH has
/// ([`MpichAlgorithm::mpich_name`] is `Some`), and the name printed and read is MPICH's
/// (`recursive_doubling`; the crate's name parses too).
///
/// ```
/// use commcost::collectives::{Algorithm, Allreduce, Mpich, Problem};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// let problem = Problem::new(8, Message::contiguous(1 << 20));
/// let names: Vec<String> = Mpich::<Allreduce>::candidates(&model, &problem)
///     .iter().map(ToString::to_string).collect();
/// assert_eq!(names, ["recursive_doubling", "ring", "reduce_scatter_allgather"]);
/// assert_eq!("ring".parse::<Mpich<Allreduce>>()?, Mpich(Allreduce::Ring));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mpich<A>(pub A);

impl<A: FamilyAlgorithm> Algorithm for Mpich<A> {
    fn name(&self) -> &'static str {
        self.0.mpich_name().unwrap_or(self.0.name())
    }

    fn cost(&self, model: &dyn CommModel, problem: &Problem) -> Result<f64, CollectiveError> {
        self.0.cost(model, problem)
    }

    fn candidates(model: &dyn CommModel, problem: &Problem) -> Vec<Self> {
        A::candidates(model, problem)
            .into_iter()
            .filter(|a| a.mpich_name().is_some())
            .map(Mpich)
            .collect()
    }

    fn size_factors(problem: &Problem) -> Vec<f64> {
        A::size_factors(problem)
    }
}

impl<A: FamilyAlgorithm> MpichAlgorithm for Mpich<A> {
    const MPICH_COLLECTIVE: &'static str = A::MPICH_COLLECTIVE;
    const MPICH_PREFIX: &'static str = A::MPICH_PREFIX;

    fn mpich_name(&self) -> Option<&'static str> {
        self.0.mpich_name()
    }
}

impl<A: FamilyAlgorithm> fmt::Display for Mpich<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.mpich_name() {
            Some(name) => f.write_str(name),
            None => fmt::Display::fmt(&self.0, f),
        }
    }
}

impl<A: FamilyAlgorithm> FromStr for Mpich<A> {
    type Err = AlgorithmParseError;

    /// MPICH's name of one of the collective's algorithms, or the crate's name of one that
    /// MPICH runs.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let unknown = || AlgorithmParseError::Unknown {
            collective: "MPICH algorithm",
            name: s.to_string(),
            known: A::mpich_names().join(", "),
        };
        let algorithm = match A::from_mpich_name(s) {
            Some(a) => a,
            None => A::from_str(s).map_err(|_| unknown())?,
        };
        if algorithm.mpich_name().is_none() {
            return Err(unknown());
        }
        Ok(Mpich(algorithm))
    }
}

impl<A: FamilyAlgorithm> FamilyAlgorithm for Mpich<A> {
    const COLLECTIVE: Collective = A::COLLECTIVE;
    const NAMES: &'static [&'static str] = A::NAMES;
}

/// One algorithm of a collective with its names in the crate, Open MPI and MPICH, and its
/// cost: what [`rank_in`], [`best_in`] and [`cost_in`] return.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The name in the family, with parameters (`Display`, which `FromStr` reads back):
    /// `chain:segment=8192,fanout=4`, MPICH's `recursive_doubling` in MPICH's family.
    pub name: String,
    /// Open MPI's rule for the algorithm, in Open MPI's family.
    pub ompi: Option<OmpiSetting>,
    /// MPICH's name, `None` where MPICH runs no such algorithm.
    pub mpich_name: Option<&'static str>,
    /// Predicted time, seconds.
    pub cost: f64,
}

impl Choice {
    /// The choice of algorithm `a` at `cost` seconds.
    pub fn new<A: FamilyAlgorithm>(a: &A, cost: f64) -> Self {
        Self {
            name: a.to_string(),
            ompi: a.ompi_rule(),
            mpich_name: a.mpich_name(),
            cost,
        }
    }
}

struct Rank<'a> {
    model: &'a dyn CommModel,
    problem: &'a Problem,
}

impl AlgorithmVisitor for Rank<'_> {
    type Output = Result<Vec<Choice>, CollectiveError>;
    fn visit<A: FamilyAlgorithm>(self) -> Self::Output {
        Ok(super::rank::<A>(self.model, self.problem)?
            .iter()
            .map(|(a, c)| Choice::new(a, *c))
            .collect())
    }
}

/// Every candidate algorithm of `collective` in `family` with its cost, cheapest first
/// ([`rank`](super::rank) for the family's algorithm type).
///
/// # Errors
///
/// [`CollectiveError::NotPriced`] for a collective outside the family; the errors of
/// [`rank`](super::rank).
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Collective, Family, Problem, rank_in};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9)?;
/// let problem = Problem::new(16, Message::contiguous(1 << 20));
/// let ranked = rank_in(&model, Family::Ompi, Collective::Bcast, &problem)?;
/// let best = &ranked[0];
/// assert!(ranked.iter().all(|c| c.cost >= best.cost));
/// assert!(best.ompi.is_some_and(|r| (1..=9).contains(&r.id)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
// `#[inline]` here and on the other type-erased entry points: their bodies instantiate every
// family's algorithms, so they are compiled in the crates that call them, not in every build
// of this library (about 3 s of a release build).
#[inline]
pub fn rank_in(
    model: &dyn CommModel,
    family: Family,
    collective: Collective,
    problem: &Problem,
) -> Result<Vec<Choice>, CollectiveError> {
    family.visit(collective, Rank { model, problem })?
}

/// The cheapest candidate of `collective` in `family` ([`best`](super::best)).
///
/// # Errors
///
/// As [`rank_in`].
#[inline]
pub fn best_in(
    model: &dyn CommModel,
    family: Family,
    collective: Collective,
    problem: &Problem,
) -> Result<Choice, CollectiveError> {
    struct Best<'a>(Rank<'a>);
    impl AlgorithmVisitor for Best<'_> {
        type Output = Result<Choice, CollectiveError>;
        fn visit<A: FamilyAlgorithm>(self) -> Self::Output {
            let (a, c) = super::best::<A>(self.0.model, self.0.problem)?;
            Ok(Choice::new(&a, c))
        }
    }
    family.visit(collective, Best(Rank { model, problem }))?
}

/// The cost of the algorithm named `algorithm` of `collective` in `family` (any name its
/// `FromStr` reads: the crate's, Open MPI's name or ID in Open MPI's family, MPICH's in
/// MPICH's).
///
/// # Errors
///
/// As [`rank_in`]; [`CollectiveError::UnknownAlgorithm`] for a name that does not parse.
#[inline]
pub fn cost_in(
    model: &dyn CommModel,
    family: Family,
    collective: Collective,
    algorithm: &str,
    problem: &Problem,
) -> Result<Choice, CollectiveError> {
    struct Named<'a>(Rank<'a>, &'a str);
    impl AlgorithmVisitor for Named<'_> {
        type Output = Result<Choice, CollectiveError>;
        fn visit<A: FamilyAlgorithm>(self) -> Self::Output {
            let a: A = self.1.parse()?;
            let c = a.cost(self.0.model, self.0.problem)?;
            Ok(Choice::new(&a, c))
        }
    }
    family.visit(collective, Named(Rank { model, problem }, algorithm))?
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LogGP, Message};

    /// Every (family, collective) pair the collective lists is priced, every other is
    /// `NotPriced`; the visited type belongs to the collective asked for.
    #[test]
    fn visit_covers_exactly_the_listed_pairs() {
        struct Which;
        impl AlgorithmVisitor for Which {
            type Output = Collective;
            fn visit<A: FamilyAlgorithm>(self) -> Collective {
                A::COLLECTIVE
            }
        }
        for family in Family::ALL {
            for c in Collective::ALL {
                match family.visit(c, Which) {
                    Ok(visited) => {
                        assert!(c.is_priced_by(family), "{family} {c}");
                        assert_eq!(visited, c);
                    }
                    Err(e) => {
                        assert!(!c.is_priced_by(family), "{family} {c}");
                        assert_eq!(
                            e,
                            CollectiveError::NotPriced {
                                family,
                                collective: c
                            }
                        );
                    }
                }
            }
        }
    }

    /// MPICH's family ranks the textbook algorithms MPICH has, at the textbook costs: the
    /// linear and pipelined broadcasts (which MPICH does not run) are left out.
    #[test]
    fn mpich_family_is_the_textbook_algorithms_mpich_runs() {
        let model = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9).unwrap();
        let problem = Problem::new(16, Message::contiguous(1 << 16));
        let textbook = rank_in(&model, Family::Textbook, Collective::Bcast, &problem).unwrap();
        let mpich = rank_in(&model, Family::Mpich, Collective::Bcast, &problem).unwrap();
        let names: Vec<&str> = mpich.iter().map(|c| c.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, ["binomial", "scatter_ring_allgather"]);
        for c in &mpich {
            let t = textbook
                .iter()
                .find(|t| t.mpich_name == Some(c.name.as_str()))
                .unwrap();
            assert_eq!(t.cost.to_bits(), c.cost.to_bits());
        }
        assert!(cost_in(&model, Family::Mpich, Collective::Bcast, "linear", &problem).is_err());
        assert!(
            cost_in(
                &model,
                Family::Mpich,
                Collective::Bcast,
                "binomial",
                &problem
            )
            .is_ok()
        );
    }
}
