//! Open MPI's algorithms as a forced run executes them: from the collective, Open MPI's ID and
//! the segment size (see [`forced_cost`]).

use super::{OmpiAlgorithm, OmpiVisitor, visit};
use crate::CommModel;
use crate::collectives::{Collective, FamilyAlgorithm};
use crate::collectives::{CollectiveError, Problem};

/// The algorithm Open MPI 4.1.4 runs under `coll_tuned_use_dynamic_rules 1`,
/// `coll_tuned_<collective>_algorithm id` and `coll_tuned_<collective>_algorithm_segmentsize
/// segment` (its default chain and tree fan-out 4 and k-nomial radix 4), priced for `problem`
/// by `model`: the algorithm's name and its cost in seconds (with `problem`'s operator and
/// local work, call costs included).
///
/// A segment size is applied where the algorithm takes one and ignored elsewhere, as Open MPI
/// does.
///
/// # Errors
///
/// [`CollectiveError::UnknownAlgorithm`] for an ID the collective does not have; the errors of
/// [`Algorithm::cost`](crate::collectives::Algorithm::cost).
///
/// # Examples
///
/// ```
/// use commcost::collectives::Collective;
/// use commcost::collectives::ompi::forced_cost;
/// use commcost::collectives::Problem;
/// use commcost::{LogGP, Message};
///
/// let model = LogGP::new(5e-6, 1e-6, 3e-6, 1e-9)?;
/// let problem = Problem::new(8, Message::contiguous(1 << 20));
/// let (name, chain) = forced_cost(Collective::Bcast, 2, 65536, &model, &problem)?;
/// assert_eq!(name, "chain:segment=65536,fanout=4");
/// let (_, linear) = forced_cost(Collective::Bcast, 1, 0, &model, &problem)?;
/// assert!(chain < linear);
/// assert!(forced_cost(Collective::Gather, 4, 0, &model, &problem).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn forced_cost(
    collective: Collective,
    id: u32,
    segment: u64,
    model: &dyn CommModel,
    problem: &Problem,
) -> Result<(String, f64), CollectiveError> {
    struct Forced<'a> {
        id: u32,
        segment: u64,
        model: &'a dyn CommModel,
        problem: &'a Problem,
    }
    impl OmpiVisitor for Forced<'_> {
        type Output = Result<(String, f64), CollectiveError>;
        fn visit<A: OmpiAlgorithm + FamilyAlgorithm>(self) -> Self::Output {
            price::<A>(self.id, self.segment, self.model, self.problem)
        }
    }
    let forced = Forced {
        id,
        segment,
        model,
        problem,
    };
    visit(collective, forced)?
}

fn price<A: OmpiAlgorithm>(
    id: u32,
    segment: u64,
    model: &dyn CommModel,
    problem: &Problem,
) -> Result<(String, f64), CollectiveError> {
    let plain: A = id.to_string().parse()?;
    // the segment only where the algorithm has one (`id:segment=S` parses for those)
    let algorithm = if segment > 0 {
        format!("{id}:segment={segment}").parse().unwrap_or(plain)
    } else {
        plain
    };
    let cost = algorithm.cost(model, problem)?;
    Ok((algorithm.to_string(), cost))
}
