//! The algorithm families as the simulator sees them: [`visit`] runs a computation that needs an
//! algorithm's schedule ([`SimAlgorithm`]) for the type of a (family, collective) pair, and
//! [`schedule_in`] writes the schedule of an algorithm named by text; [`rank_simulated_in`] and
//! [`cost_simulated_in`] rank and price by name with the simulator.

use crate::CommModel;
#[cfg(test)]
use crate::collectives::AlgorithmVisitor;
use crate::collectives::{
    Choice, Collective, CollectiveError, Family, FamilyAlgorithm, Mpich, Problem,
};
use crate::sim::{ExactClosedForm, Schedule, SimError, SimLimits, SimOptions, ToSchedule};

/// An algorithm of a [`Family`] that the simulator can run: priced, named, with its schedule
/// and the knowledge of where its closed form is exact. Every algorithm type of every family
/// is one.
pub trait SimAlgorithm: FamilyAlgorithm + ToSchedule + ExactClosedForm {}

impl<A: FamilyAlgorithm + ToSchedule + ExactClosedForm> SimAlgorithm for A {}

/// A computation generic over an algorithm type that the simulator can run, run by [`visit`].
pub trait SimVisitor {
    /// What the computation returns.
    type Output;
    /// Runs the computation for algorithm type `A`.
    fn visit<A: SimAlgorithm>(self) -> Self::Output;
}

/// Calls `visitor.visit::<A>()` with `A` the algorithm type of `collective` in `family`, as
/// [`Family::visit`] does, for a computation that also needs the schedule.
///
/// # Errors
///
/// [`CollectiveError::NotPriced`] for a collective the family does not price.
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Collective, Family, Problem};
/// use commcost::sim::{SimAlgorithm, SimVisitor, visit};
/// use commcost::Message;
///
/// /// The operations of the family's binomial broadcast on 8 processes.
/// struct Binomial;
/// impl SimVisitor for Binomial {
///     type Output = Option<usize>;
///     fn visit<A: SimAlgorithm>(self) -> Option<usize> {
///         let a: A = "binomial".parse().ok()?;
///         let schedule = a.schedule(&Problem::new(8, Message::contiguous(64))).ok()?;
///         Some(schedule.len())
///     }
/// }
/// // 7 sends and 7 receives, in every family
/// for family in Family::ALL {
///     assert_eq!(visit(family, Collective::Bcast, Binomial)?, Some(14));
/// }
/// assert!(visit(Family::Ompi, Collective::Scan, Binomial).is_err());
/// # Ok::<(), commcost::collectives::CollectiveError>(())
/// ```
pub fn visit<V: SimVisitor>(
    family: Family,
    collective: Collective,
    visitor: V,
) -> Result<V::Output, CollectiveError> {
    use crate::collectives::ompi;
    use Collective as C;
    Ok(match (family, collective) {
        (Family::Ompi, C::Allgather) => visitor.visit::<ompi::Allgather>(),
        (Family::Ompi, C::Allreduce) => visitor.visit::<ompi::Allreduce>(),
        (Family::Ompi, C::Alltoall) => visitor.visit::<ompi::Alltoall>(),
        (Family::Ompi, C::Barrier) => visitor.visit::<ompi::Barrier>(),
        (Family::Ompi, C::Bcast) => visitor.visit::<ompi::Bcast>(),
        (Family::Ompi, C::Gather) => visitor.visit::<ompi::Gather>(),
        (Family::Ompi, C::Reduce) => visitor.visit::<ompi::Reduce>(),
        (Family::Ompi, C::ReduceScatter) => visitor.visit::<ompi::ReduceScatter>(),
        (Family::Ompi, C::Scatter) => visitor.visit::<ompi::Scatter>(),
        (Family::Textbook, c) => textbook_visit(c, Plain(visitor))?,
        (Family::Mpich, c) => textbook_visit(c, AsMpich(visitor))?,
        (family, collective) => return Err(CollectiveError::NotPriced { family, collective }),
    })
}

/// The textbook types, for a visitor of either textbook family.
fn textbook_visit<V: TextbookVisitor>(
    collective: Collective,
    visitor: V,
) -> Result<V::Output, CollectiveError> {
    use crate::collectives as t;
    use Collective as C;
    Ok(match collective {
        C::Allgather => visitor.visit::<t::Allgather>(),
        C::Allreduce => visitor.visit::<t::Allreduce>(),
        C::Alltoall => visitor.visit::<t::Alltoall>(),
        C::Barrier => visitor.visit::<t::Barrier>(),
        C::Bcast => visitor.visit::<t::Bcast>(),
        C::Gather => visitor.visit::<t::Gather>(),
        C::Reduce => visitor.visit::<t::Reduce>(),
        C::Scan => visitor.visit::<t::Scan>(),
        C::Scatter => visitor.visit::<t::Scatter>(),
        C::ReduceScatter | C::ReduceScatterBlock => {
            return Err(CollectiveError::NotPriced {
                family: V::FAMILY,
                collective,
            });
        }
    })
}

trait TextbookVisitor {
    const FAMILY: Family;
    type Output;
    fn visit<A: SimAlgorithm>(self) -> Self::Output;
}

struct Plain<V>(V);

impl<V: SimVisitor> TextbookVisitor for Plain<V> {
    const FAMILY: Family = Family::Textbook;
    type Output = V::Output;
    fn visit<A: SimAlgorithm>(self) -> V::Output {
        self.0.visit::<A>()
    }
}

struct AsMpich<V>(V);

impl<V: SimVisitor> TextbookVisitor for AsMpich<V> {
    const FAMILY: Family = Family::Mpich;
    type Output = V::Output;
    fn visit<A: SimAlgorithm>(self) -> V::Output {
        self.0.visit::<Mpich<A>>()
    }
}

impl<A: ToSchedule> ToSchedule for Mpich<A> {
    fn schedule(&self, problem: &Problem) -> Result<Schedule, SimError> {
        self.0.schedule(problem)
    }
}

impl<A: ExactClosedForm> ExactClosedForm for Mpich<A> {
    fn closed_form_exact(&self, model: &dyn CommModel, problem: &Problem) -> bool {
        self.0.closed_form_exact(model, problem)
    }
}

/// The schedule of the algorithm named `algorithm` of `collective` in `family` (any name the
/// family's `FromStr` reads), within a memory budget of `max_memory` bytes
/// ([`ToSchedule::schedule_within`]).
///
/// # Errors
///
/// [`SimError::Collective`] for a collective outside the family or a name that does not
/// parse; the errors of [`ToSchedule::schedule_within`].
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Collective, Family, Problem};
/// use commcost::sim::{DEFAULT_MAX_MEMORY, schedule_in};
/// use commcost::Message;
///
/// let problem = Problem::new(8, Message::contiguous(64));
/// let s = schedule_in(Family::Ompi, Collective::Bcast, "6", &problem, DEFAULT_MAX_MEMORY)?;
/// assert_eq!(s.len(), 14); // Open MPI's binomial tree (6): 7 sends, 7 receives
/// # Ok::<(), commcost::sim::SimError>(())
/// ```
#[inline]
pub fn schedule_in(
    family: Family,
    collective: Collective,
    algorithm: &str,
    problem: &Problem,
    max_memory: u64,
) -> Result<Schedule, SimError> {
    struct Named<'a> {
        name: &'a str,
        problem: &'a Problem,
        max_memory: u64,
    }
    impl SimVisitor for Named<'_> {
        type Output = Result<Schedule, SimError>;
        fn visit<A: SimAlgorithm>(self) -> Self::Output {
            let a: A = self.name.parse().map_err(CollectiveError::from)?;
            a.schedule_within(self.problem, self.max_memory)
        }
    }
    let named = Named {
        name: algorithm,
        problem,
        max_memory,
    };
    visit(family, collective, named)?
}

/// [`rank_simulated_on`](super::rank_simulated_on) for `collective` in `family`, by name:
/// every candidate, cheapest first, priced by its closed form where that is exact and the
/// options add nothing, else by simulating its schedule on `options` within `limits`.
///
/// # Errors
///
/// [`SimError::Collective`] for a collective outside the family; as
/// [`rank_simulated_on`](super::rank_simulated_on).
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Collective, Family, Problem};
/// use commcost::sim::{SimLimits, SimOptions, rank_simulated_in};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(2e-6, 8e-6, 5e-6, 40e-9)?;
/// let problem = Problem::new(4, Message::contiguous(1 << 20));
/// let shaped = SimOptions { link_burst: Some(9000), ..SimOptions::default() };
/// let ranked = rank_simulated_in(&model, Family::Ompi, Collective::Bcast, &problem,
///     SimLimits::default(), &shaped)?;
/// assert!(ranked.windows(2).all(|w| w[0].cost <= w[1].cost));
/// assert!(ranked.iter().all(|c| c.ompi.is_some()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[inline]
pub fn rank_simulated_in(
    model: &dyn CommModel,
    family: Family,
    collective: Collective,
    problem: &Problem,
    limits: SimLimits,
    options: &SimOptions,
) -> Result<Vec<Choice>, SimError> {
    struct Ranked<'a> {
        model: &'a dyn CommModel,
        problem: &'a Problem,
        limits: SimLimits,
        options: &'a SimOptions,
    }
    impl SimVisitor for Ranked<'_> {
        type Output = Result<Vec<Choice>, SimError>;
        fn visit<A: SimAlgorithm>(self) -> Self::Output {
            let ranked =
                super::rank_simulated_on::<A>(self.model, self.problem, self.limits, self.options)?;
            Ok(ranked
                .iter()
                .map(|r| Choice::new(&r.algorithm, r.cost))
                .collect())
        }
    }
    let ranked = Ranked {
        model,
        problem,
        limits,
        options,
    };
    visit(family, collective, ranked)?
}

/// The algorithm named `algorithm` of `collective` in `family` priced as
/// [`rank_simulated_in`] prices it.
///
/// # Errors
///
/// As [`rank_simulated_in`]; [`SimError::Collective`] for a name that does not parse.
///
/// # Examples
///
/// Open MPI's binomial gather (2) on 4 processes, LogGP with `L = 3`, `o = 1`, `g = 4` µs,
/// `G = 0`, 1 byte: simulated, rank 2 receives rank 3's byte at 5 µs and forwards both to the
/// root at 10 µs (its closed form, 14 µs, charges a gap the schedule does not have).
///
/// ```
/// use commcost::collectives::{Collective, Family, Problem};
/// use commcost::sim::{SimLimits, SimOptions, cost_simulated_in};
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(3e-6, 1e-6, 4e-6, 0.0)?;
/// let problem = Problem::new(4, Message::contiguous(1));
/// let binomial = cost_simulated_in(&model, Family::Ompi, Collective::Gather, "2", &problem,
///     SimLimits::default(), &SimOptions::default())?;
/// assert!((binomial.cost - 10e-6).abs() < 1e-15);
/// assert!(cost_simulated_in(&model, Family::Ompi, Collective::Gather, "9", &problem,
///     SimLimits::default(), &SimOptions::default()).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[inline]
pub fn cost_simulated_in(
    model: &dyn CommModel,
    family: Family,
    collective: Collective,
    algorithm: &str,
    problem: &Problem,
    limits: SimLimits,
    options: &SimOptions,
) -> Result<Choice, SimError> {
    struct Named<'a> {
        name: &'a str,
        model: &'a dyn CommModel,
        problem: &'a Problem,
        limits: SimLimits,
        options: &'a SimOptions,
    }
    impl SimVisitor for Named<'_> {
        type Output = Result<Choice, SimError>;
        fn visit<A: SimAlgorithm>(self) -> Self::Output {
            let a: A = self.name.parse().map_err(CollectiveError::from)?;
            let r =
                super::price_simulated_on(a, self.model, self.problem, self.limits, self.options)?;
            Ok(Choice::new(&r.algorithm, r.cost))
        }
    }
    let named = Named {
        name: algorithm,
        model,
        problem,
        limits,
        options,
    };
    visit(family, collective, named)?
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The simulator's table maps every (family, collective) pair to the same collective and
    /// the same algorithm names as the collectives' table, and refuses the same pairs.
    #[test]
    fn same_pairs_as_the_collectives_table() {
        struct Names;
        impl SimVisitor for Names {
            type Output = (Collective, &'static [&'static str], String);
            fn visit<A: SimAlgorithm>(self) -> Self::Output {
                (A::COLLECTIVE, A::NAMES, std::any::type_name::<A>().into())
            }
        }
        impl AlgorithmVisitor for Names {
            type Output = (Collective, &'static [&'static str], String);
            fn visit<A: FamilyAlgorithm>(self) -> Self::Output {
                (A::COLLECTIVE, A::NAMES, std::any::type_name::<A>().into())
            }
        }
        for family in Family::ALL {
            for c in Collective::ALL {
                assert_eq!(
                    visit(family, c, Names),
                    family.visit(c, Names),
                    "{family} {c}"
                );
            }
        }
    }
}
