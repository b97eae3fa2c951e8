//! Collectives priced on a two-level platform ([`TwoLevel`]): every candidate simulated with the
//! ranks placed on their nodes.

use super::family::{SimAlgorithm, SimVisitor, visit};
use super::rank::price_with;
use super::{
    ExactClosedForm, RankedAlgorithm, SimError, SimLimits, SimOptions, Simulator, ToSchedule,
    TwoLevel,
};
use crate::CommModel;
use crate::collectives::{Algorithm, Choice, Collective, CollectiveError, Family, Problem};

/// Every candidate of algorithm type `A` on a two-level platform, cheapest first, each
/// simulated as [`rank_on_nodes_in`] simulates it (`closed_form`: the intra-node model's
/// closed form, for comparison).
///
/// # Errors
///
/// As [`rank_on_nodes_in`].
///
/// # Examples
///
/// ```
/// use commcost::collectives::{Problem, ompi::Bcast};
/// use commcost::sim::{CostSource, NodeMap, SimLimits, SimOptions, TwoLevel, rank_on_nodes};
/// use commcost::{LogGP, Message};
///
/// let shm = LogGP::new(0.3e-6, 0.3e-6, 0.2e-6, 0.1e-9)?;
/// let net = LogGP::new(20e-6, 3e-6, 8e-6, 8e-9)?;
/// let nodes = NodeMap::block(4, 2)?;
/// let platform = TwoLevel { nodes: &nodes, inter: &net, inter_rendezvous_above: None };
/// let ranked = rank_on_nodes::<Bcast>(&shm, platform, &Problem::new(8, Message::contiguous(1 << 16)),
///     SimLimits::default(), &SimOptions::default())?;
/// assert!(ranked.iter().all(|r| r.source == CostSource::Simulated));
/// assert!(ranked.windows(2).all(|w| w[0].cost <= w[1].cost));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn rank_on_nodes<A>(
    intra: &dyn CommModel,
    platform: TwoLevel<'_>,
    problem: &Problem,
    limits: SimLimits,
    options: &SimOptions,
) -> Result<Vec<RankedAlgorithm<A>>, SimError>
where
    A: Algorithm + ToSchedule + ExactClosedForm,
{
    super::rank::rank_with(intra, problem, limits, options, Some(platform))
}

/// Every candidate of `collective` in `family` on a two-level platform, cheapest first: each
/// simulated ([`Simulator::simulate_two_level`]: `intra` inside a node, `platform.inter`
/// between nodes, a node's ranks sharing its link) plus what `problem.local` adds, as
/// [`rank_simulated_in`](super::rank_simulated_in) adds it. No closed form prices a placement,
/// so a schedule beyond `limits` is an error.
///
/// # Errors
///
/// [`SimError::Collective`] for a collective outside the family; [`SimError::TooLarge`] for a
/// problem beyond `limits`; [`SimError::InvalidOption`] (`nodes`) for a node map of another
/// size than `problem.processes`.
///
/// # Examples
///
/// Open MPI's allreduce of 64 KiB on 4 nodes of 4 ranks: consecutive ranks on a node
/// (`--map-by core`) against ranks dealt round robin (`--map-by node`). The ring sends each
/// block to the next rank, which is on the same node for 3 of 4 ranks when the ranks are
/// consecutive and on another node for every rank when they are dealt round robin.
///
/// ```
/// use commcost::collectives::{Collective, Family, Problem};
/// use commcost::sim::{NodeMap, SimLimits, SimOptions, TwoLevel, rank_on_nodes_in};
/// use commcost::{LogGP, Message};
///
/// let shm = LogGP::new(0.3e-6, 0.3e-6, 0.2e-6, 0.1e-9)?;
/// let net = LogGP::new(20e-6, 3e-6, 8e-6, 8e-9)?;
/// let problem = Problem::new(16, Message::contiguous(65536));
/// let price = |nodes: &NodeMap| {
///     let platform = TwoLevel { nodes, inter: &net, inter_rendezvous_above: None };
///     rank_on_nodes_in(&shm, platform, Family::Ompi, Collective::Allreduce, &problem,
///         SimLimits::default(), &SimOptions::default())
/// };
/// let block = price(&NodeMap::block(4, 4)?)?;
/// let round_robin = price(&NodeMap::round_robin(4, 4)?)?;
/// assert!(block.windows(2).all(|w| w[0].cost <= w[1].cost));
/// let ring = |r: &[commcost::collectives::Choice]| r.iter().find(|c| c.name == "ring").unwrap().cost;
/// assert!(ring(&block) < ring(&round_robin));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn rank_on_nodes_in(
    intra: &dyn CommModel,
    platform: TwoLevel<'_>,
    family: Family,
    collective: Collective,
    problem: &Problem,
    limits: SimLimits,
    options: &SimOptions,
) -> Result<Vec<Choice>, SimError> {
    struct Ranked<'a> {
        intra: &'a dyn CommModel,
        platform: TwoLevel<'a>,
        problem: &'a Problem,
        limits: SimLimits,
        options: &'a SimOptions,
    }
    impl SimVisitor for Ranked<'_> {
        type Output = Result<Vec<Choice>, SimError>;
        fn visit<A: SimAlgorithm>(self) -> Self::Output {
            let ranked = rank_on_nodes::<A>(
                self.intra,
                self.platform,
                self.problem,
                self.limits,
                self.options,
            )?;
            Ok(ranked
                .iter()
                .map(|r| Choice::new(&r.algorithm, r.cost))
                .collect())
        }
    }
    let ranked = Ranked {
        intra,
        platform,
        problem,
        limits,
        options,
    };
    visit(family, collective, ranked)?
}

/// The algorithm named `algorithm` of `collective` in `family` priced as [`rank_on_nodes_in`]
/// prices it.
///
/// # Errors
///
/// As [`rank_on_nodes_in`]; [`SimError::Collective`] for a name that does not parse.
///
/// # Examples
///
/// Open MPI's binomial broadcast (6) of 8 bytes on 2 nodes of 2 ranks: rank 0 sends to 1, then
/// to 2; rank 1 forwards to 3. Inside a node LogGP `L = 0.5`, `o = 0.1` µs (`T_shm = 0.7`
/// µs), between nodes `L = 10`, `o = 1`, `g = 2` µs (`T_net = 12` µs). Consecutive ranks
/// (nodes 0, 1 | 2, 3): 0 to 2 leaves at `o = 0.1` µs and holds node 0's link for `g`, so 1 to
/// 3, ready at 0.7 µs, leaves at 2.1 µs and arrives at `2.1 + T_net = 14.1` µs. Round robin
/// (0, 2 | 1, 3): 0 to 1 crosses at once (12 µs), 1 to 3 stays in node 1: `12 + T_shm = 12.7`
/// µs.
///
/// ```
/// use commcost::collectives::{Collective, Family, Problem};
/// use commcost::sim::{NodeMap, SimLimits, SimOptions, TwoLevel, cost_on_nodes_in};
/// use commcost::{LogGP, Message};
///
/// let shm = LogGP::new(0.5e-6, 0.1e-6, 0.2e-6, 0.0)?;
/// let net = LogGP::new(10e-6, 1e-6, 2e-6, 0.0)?;
/// let problem = Problem::new(4, Message::contiguous(8));
/// let cost = |nodes: &NodeMap| {
///     let platform = TwoLevel { nodes, inter: &net, inter_rendezvous_above: None };
///     cost_on_nodes_in(&shm, platform, Family::Ompi, Collective::Bcast, "6", &problem,
///         SimLimits::default(), &SimOptions::default()).map(|c| c.cost)
/// };
/// assert!((cost(&NodeMap::block(2, 2)?)? - 14.1e-6).abs() < 1e-12);
/// assert!((cost(&NodeMap::round_robin(2, 2)?)? - 12.7e-6).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn cost_on_nodes_in(
    intra: &dyn CommModel,
    platform: TwoLevel<'_>,
    family: Family,
    collective: Collective,
    algorithm: &str,
    problem: &Problem,
    limits: SimLimits,
    options: &SimOptions,
) -> Result<Choice, SimError> {
    struct Named<'a> {
        name: &'a str,
        intra: &'a dyn CommModel,
        platform: TwoLevel<'a>,
        problem: &'a Problem,
        limits: SimLimits,
        options: &'a SimOptions,
    }
    impl SimVisitor for Named<'_> {
        type Output = Result<Choice, SimError>;
        fn visit<A: SimAlgorithm>(self) -> Self::Output {
            let a: A = self.name.parse().map_err(CollectiveError::from)?;
            let r = price_with(
                a,
                &mut Simulator::new(),
                self.intra,
                self.problem,
                self.limits,
                self.options,
                Some(self.platform),
            )?;
            Ok(Choice::new(&r.algorithm, r.cost))
        }
    }
    let named = Named {
        name: algorithm,
        intra,
        platform,
        problem,
        limits,
        options,
    };
    visit(family, collective, named)?
}
