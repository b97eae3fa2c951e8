//! Open MPI's dynamic rules from a model ([`ompi_rules`]) and from Open MPI's own fixed
//! decisions ([`ompi_fixed_rules`]).

use super::grid::{Grid, OnTie, choose_priced};
use super::rules::{OmpiBlock, OmpiCollectiveRules, OmpiRule, OmpiRules, algorithm_name};
use super::{check_collectives, check_grid};
use crate::collectives::ompi::{self, OmpiAlgorithm};
use crate::collectives::{Collective, Family, FamilyAlgorithm};
use crate::collectives::{LocalWork, Operator, Problem};
use crate::export::ExportError;
use crate::sim::{NodeLayout, NodeMap, SimLimits, SimOptions, TwoLevel, cost_on_nodes_in};
use crate::{CommModel, Message};

/// Options of [`ompi_rules`]; the default prices communication only and never defers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OmpiRulesOptions {
    /// The reduction operator of allreduce, reduce and reduce_scatter ([`Operator::FREE`]:
    /// pure communication).
    pub operator: Operator,
    /// Rules where algorithms tie.
    pub on_tie: OnTie,
    /// The smallest predicted gain over Open MPI's own choice worth a rule, as a fraction:
    /// with `Some(g)` a rule names the model's pick only where its predicted time is below
    /// `(1 - g)` times that of the algorithm Open MPI 4.1.4's fixed decision runs
    /// ([`fixed_algorithm`](ompi::fixed_algorithm), priced by the same model); elsewhere it
    /// writes algorithm `0` (Open MPI decides). `Some(0.0)` defers wherever the fixed decision
    /// is predicted as fast as the pick; `None` (the default) never compares.
    pub min_gain: Option<f64>,
    /// The prices of copies and temporary buffers every algorithm is charged for
    /// ([`LocalWork::FREE`]: messages and operator only).
    pub local: LocalWork,
}

impl Default for OmpiRulesOptions {
    fn default() -> Self {
        Self {
            operator: Operator::FREE,
            on_tie: OnTie::FirstCandidate,
            min_gain: None,
            local: LocalWork::FREE,
        }
    }
}

/// The model's best Open MPI algorithms as a dynamic rules file.
///
/// For each collective and each communicator size `P` of `processes`, every candidate of the
/// collective's enum ([`Algorithm::candidates`](crate::collectives::Algorithm::candidates)) is
/// priced at each size `S` of `sizes`, on a contiguous message of
/// [`Collective::ompi_problem_bytes`](crate::collectives::Collective::ompi_problem_bytes)`(S, P)` bytes, with the options' reduction operator
/// (allreduce, reduce, reduce_scatter) and local work; the cheapest becomes the rule at `S` (0
/// for the first), or algorithm `0` (Open MPI's fixed decision) where the options say so
/// ([`OnTie::Defer`], [`OmpiRulesOptions::min_gain`]). Equal neighbouring rules merge, and a
/// block equal to the previous block is left out. Open MPI's `two_proc` algorithms fail on
/// more than 2 processes, and a block covers every communicator size up to the next block, so
/// they are chosen only for a block at `P = 2` followed by one at `P = 3`.
///
/// # Errors
///
/// [`ExportError::Grid`] for an empty or unsorted `processes` or `sizes`, a communicator size
/// of 0 or above [`MAX_PROCESSES`](super::MAX_PROCESSES), a collective given twice, a grid of
/// more than [`MAX_CELLS`](super::MAX_CELLS) cells or a `min_gain` outside `[0, 1)`;
/// [`ExportError::Collective`] if a candidate cannot be priced.
///
/// # Examples
///
/// ```
/// use commcost::collectives::Collective;
/// use commcost::export::{self, OmpiRulesOptions};
/// use commcost::presets;
///
/// let openib = presets::open_mpi_openib();
/// let rules = export::ompi_rules(
///     &openib,
///     &[Collective::Bcast, Collective::Allreduce],
///     &[2, 4, 8],
///     &[1, 1024, 65536, 1 << 20],
///     &OmpiRulesOptions::default(),
/// )?;
/// let text = rules.to_string();
/// assert!(text.contains("2 # collectives"));
/// // every block starts at message size 0
/// assert!(rules.collectives.iter().all(|c| c.blocks.iter().all(|b| b.rules[0].size == 0)));
/// # Ok::<(), commcost::export::ExportError>(())
/// ```
///
/// Reductions priced with an operator:
///
/// ```
/// use commcost::collectives::Operator;
/// use commcost::collectives::Collective;
/// use commcost::export::{self, OmpiRulesOptions};
/// use commcost::presets;
///
/// let openib = presets::open_mpi_openib();
/// // a sum of doubles at 1 ns per byte
/// let options = OmpiRulesOptions { operator: Operator::new(0.0, 1e-9)?, ..Default::default() };
/// let rules = export::ompi_rules(
///     &openib,
///     &[Collective::Allreduce],
///     &[4, 16],
///     &[8, 1 << 16, 1 << 22],
///     &options,
/// )?;
/// let block = &rules.collectives[0].blocks[0];
/// assert_eq!(block.processes, 4);
/// assert_eq!(block.rules[0].size, 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Deferring to Open MPI where algorithms tie:
///
/// ```
/// use commcost::collectives::Collective;
/// use commcost::export::{self, OmpiRulesOptions, OnTie};
/// use commcost::presets;
///
/// let openib = presets::open_mpi_openib();
/// let options = OmpiRulesOptions { on_tie: OnTie::Defer, ..OmpiRulesOptions::default() };
/// // on 2 processes a one-message broadcast is the same message for most algorithms
/// let rules = export::ompi_rules(
///     &openib, &[Collective::Bcast], &[2, 64], &[8, 1 << 20], &options)?;
/// assert_eq!(rules.lookup(Collective::Bcast, 2, 8).unwrap().algorithm, 0);
/// // on 64 processes the model has a preference
/// assert_ne!(rules.lookup(Collective::Bcast, 64, 8).unwrap().algorithm, 0);
/// # Ok::<(), commcost::export::ExportError>(())
/// ```
pub fn ompi_rules(
    model: &dyn CommModel,
    collectives: &[Collective],
    processes: &[u64],
    sizes: &[u64],
    options: &OmpiRulesOptions,
) -> Result<OmpiRules, ExportError> {
    rules_priced(model, collectives, processes, sizes, options, None)
}

/// Where the ranks of every communicator of an exported rules file sit, and the network
/// between their nodes ([`ompi_rules_on_nodes`]).
#[derive(Debug, Clone, Copy)]
pub struct OnNodes<'a> {
    /// The job's layout: a communicator of `P` ranks is placed as
    /// [`NodeLayout::map_for_communicator`] places it.
    pub layout: &'a NodeLayout,
    /// The model of a message between nodes.
    pub inter: &'a dyn CommModel,
    /// The network's eager limit, bytes (rendezvous above it), `None`: eager throughout.
    pub inter_rendezvous_above: Option<u64>,
    /// The simulation's options (shared cores, shaped links, the intra-node rendezvous).
    pub simulation: SimOptions,
    /// The largest schedule simulated.
    pub limits: SimLimits,
}

impl OnNodes<'_> {
    /// The node map of a communicator of `processes` ranks.
    fn map_for(&self, processes: u64) -> Result<NodeMap, ExportError> {
        Ok(self.layout.map_for_communicator(processes)?)
    }
}

/// [`ompi_rules`] with every candidate priced on nodes: simulated
/// ([`cost_on_nodes_in`](crate::sim::cost_on_nodes_in)) with `intra` between the ranks of a node,
/// `on_nodes.inter` between nodes and a node's ranks sharing its link.
///
/// A rules file is keyed by communicator size only: Open MPI applies a block to every
/// communicator of that size, whatever nodes its ranks are on. The file is right for the
/// communicators placed as [`OnNodes::layout`] places a job of their size (the job's own
/// `MPI_COMM_WORLD` among them); a sub-communicator placed otherwise (one rank of each node,
/// say) runs the rule chosen for the job's placement.
///
/// # Errors
///
/// As [`ompi_rules`]; [`ExportError::Simulation`] for a communicator size the layout cannot
/// place (not a multiple of its ranks per node) or a schedule beyond `on_nodes.limits`.
///
/// # Examples
///
/// ```
/// use commcost::collectives::Collective;
/// use commcost::export::{self, OmpiRulesOptions, OnNodes};
/// use commcost::sim::{NodeLayout, Placement, SimLimits, SimOptions};
/// use commcost::LogGP;
///
/// let shm = LogGP::new(0.3e-6, 0.3e-6, 0.2e-6, 0.1e-9)?;
/// let net = LogGP::new(20e-6, 3e-6, 8e-6, 8e-9)?;
/// let layout = NodeLayout::Uniform { ranks_per_node: 2, placement: Placement::Block };
/// let on_nodes = OnNodes { layout: &layout, inter: &net, inter_rendezvous_above: None,
///     simulation: SimOptions::default(), limits: SimLimits::default() };
/// let rules = export::ompi_rules_on_nodes(&shm, &on_nodes, &[Collective::Bcast], &[4, 8],
///     &[8, 1 << 20], &OmpiRulesOptions::default())?;
/// assert_eq!(rules.collectives[0].blocks[0].processes, 4);
/// // 5 ranks do not fill nodes of 2
/// assert!(export::ompi_rules_on_nodes(&shm, &on_nodes, &[Collective::Bcast], &[5],
///     &[8], &OmpiRulesOptions::default()).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn ompi_rules_on_nodes(
    intra: &dyn CommModel,
    on_nodes: &OnNodes<'_>,
    collectives: &[Collective],
    processes: &[u64],
    sizes: &[u64],
    options: &OmpiRulesOptions,
) -> Result<OmpiRules, ExportError> {
    rules_priced(
        intra,
        collectives,
        processes,
        sizes,
        options,
        Some(*on_nodes),
    )
}

fn rules_priced(
    model: &dyn CommModel,
    collectives: &[Collective],
    processes: &[u64],
    sizes: &[u64],
    options: &OmpiRulesOptions,
    on_nodes: Option<OnNodes<'_>>,
) -> Result<OmpiRules, ExportError> {
    check_grid("processes", processes, 1)?;
    check_grid("sizes", sizes, 0)?;
    check_collectives(collectives, processes, sizes)?;
    if let Some(g) = options.min_gain
        && !(0.0..1.0).contains(&g)
    {
        return Err(ExportError::Grid {
            what: "min_gain",
            detail: format!("{g} is not a fraction in [0, 1)"),
        });
    }
    let grid = Grid {
        model,
        processes,
        sizes,
        operator: options.operator,
        on_tie: options.on_tie,
        min_gain: options.min_gain,
        local: options.local,
        on_nodes,
    };
    let collectives = collectives
        .iter()
        .map(|&c| {
            struct Blocks<'a, 'b>(&'a Grid<'b>);
            impl ompi::OmpiVisitor for Blocks<'_, '_> {
                type Output = Result<Vec<OmpiBlock>, ExportError>;
                fn visit<A: OmpiAlgorithm + FamilyAlgorithm>(self) -> Self::Output {
                    self.0.blocks::<A>()
                }
            }
            let blocks =
                ompi::visit(c, Blocks(&grid)).map_err(|_| ExportError::Unsupported {
                    collective: c.name(),
                    target: "Open MPI rules file",
                })??;
            Ok(OmpiCollectiveRules {
                collective: c,
                blocks,
            })
        })
        .collect::<Result<Vec<_>, ExportError>>()?;
    Ok(OmpiRules { collectives })
}

/// Open MPI 4.1.4's own fixed decisions ([`ompi::fixed_decision`]) written as a rules file:
/// one block per communicator size of `processes`, commutative operators, every rule with
/// segment size and fan-out 0 (what the fixed decisions pass). Open MPI given this file runs
/// what it runs without one, at those communicator sizes — which
/// `scripts/ompi_rules_check.sh --run-with none FILE` checks against the real library; and a
/// rules file to edit by hand starts from it.
///
/// # Errors
///
/// [`ExportError::Grid`] for an empty or unsorted `processes`, a communicator size of 0 or
/// above [`MAX_PROCESSES`](super::MAX_PROCESSES), or a collective given twice.
///
/// # Examples
///
/// ```
/// use commcost::collectives::Collective;
/// use commcost::export;
///
/// let rules = export::ompi_fixed_rules(&[Collective::Allgather], &[4])?;
/// // Open MPI decides allgather on the per-process block, the file on the total: from 4
/// // processes on, recursive doubling (3) at every size
/// let rule = rules.lookup(Collective::Allgather, 4, 1 << 20).unwrap();
/// assert_eq!((rule.algorithm, rule.segment, rule.faninout), (3, 0, 0));
/// # Ok::<(), commcost::export::ExportError>(())
/// ```
pub fn ompi_fixed_rules(
    collectives: &[Collective],
    processes: &[u64],
) -> Result<OmpiRules, ExportError> {
    check_grid("processes", processes, 1)?;
    check_collectives(collectives, processes, &[0])?;
    if let Some(c) = collectives.iter().find(|c| !c.is_priced_by(Family::Ompi)) {
        return Err(ExportError::Unsupported {
            collective: c.name(),
            target: "Open MPI rules file",
        });
    }
    let collectives = collectives
        .iter()
        .map(|&c| {
            let mut blocks: Vec<OmpiBlock> = Vec::new();
            for &p in processes {
                let mut rules: Vec<OmpiRule> = Vec::new();
                for &(from, algorithm) in ompi::fixed_rules(c, p, true) {
                    let size = c.ompi_rules_size(from, p);
                    // a per-process threshold times P can saturate: drop rules that collapse
                    if rules.last().is_some_and(|r| r.size >= size) {
                        continue;
                    }
                    rules.push(OmpiRule {
                        size,
                        algorithm,
                        faninout: 0,
                        segment: 0,
                        label: format!("fixed decision: {}", algorithm_name(c, algorithm)),
                    });
                }
                if blocks.last().is_some_and(|b| b.rules == rules) {
                    continue;
                }
                blocks.push(OmpiBlock {
                    processes: p,
                    rules,
                });
            }
            OmpiCollectiveRules {
                collective: c,
                blocks,
            }
        })
        .collect();
    Ok(OmpiRules { collectives })
}

impl Grid<'_> {
    fn blocks<A: OmpiAlgorithm>(&self) -> Result<Vec<OmpiBlock>, ExportError> {
        let barrier = A::COLLECTIVE == Collective::Barrier;
        let sizes: &[u64] = if barrier { &[0] } else { self.sizes };
        let mut blocks: Vec<OmpiBlock> = Vec::new();
        for (i, &p) in self.processes.iter().enumerate() {
            let two_proc_allowed = p == 2 && self.processes.get(i + 1) == Some(&3);
            let map = self.on_nodes.map(|n| n.map_for(p)).transpose()?;
            let mut rules: Vec<OmpiRule> = Vec::new();
            for &s in sizes {
                let bytes = A::COLLECTIVE.ompi_problem_bytes(s, p);
                let problem = Problem::new(p, Message::contiguous(bytes))
                    .with_operator(self.operator)
                    .with_local(self.local);
                let previous = rules.last().map(|r| (r.algorithm, r.faninout, r.segment));
                let price = |a: &A| -> Result<f64, ExportError> {
                    match (&self.on_nodes, &map) {
                        (Some(n), Some(nodes)) => {
                            let platform = TwoLevel {
                                nodes,
                                inter: n.inter,
                                inter_rendezvous_above: n.inter_rendezvous_above,
                            };
                            Ok(cost_on_nodes_in(
                                self.model,
                                platform,
                                Family::Ompi,
                                A::COLLECTIVE,
                                &a.to_string(),
                                &problem,
                                n.limits,
                                &n.simulation,
                            )?
                            .cost)
                        }
                        _ => Ok(a.cost(self.model, &problem)?),
                    }
                };
                let (choice, tied) = choose_priced::<A, ExportError>(
                    self.model,
                    &problem,
                    |a| two_proc_allowed || !a.ompi_name().starts_with("two_proc"),
                    |a| previous == Some((a.ompi_id(), a.faninout(), a.segment_size())),
                    &price,
                )?;
                let size = if rules.is_empty() { 0 } else { s };
                // variants of one algorithm that differ only in a segment size or fan-out the
                // message does not reach are not a choice between algorithms
                let tied = tied.iter().any(|a| a.ompi_id() != choice.ompi_id());
                let small_gain = match self.min_gain {
                    Some(g) => {
                        let fixed: A = ompi::fixed_algorithm(p, bytes, true).map_err(|e| {
                            ExportError::Grid {
                                what: "fixed decision",
                                detail: e.to_string(),
                            }
                        })?;
                        let ours = price(&choice)?;
                        let theirs = price(&fixed)?;
                        ours >= (1.0 - g) * theirs
                    }
                    None => false,
                };
                let rule = if small_gain || (tied && self.on_tie == OnTie::Defer) {
                    OmpiRule {
                        size,
                        algorithm: 0,
                        faninout: 0,
                        segment: 0,
                        label: "default".into(),
                    }
                } else {
                    OmpiRule {
                        size,
                        algorithm: choice.ompi_id(),
                        faninout: choice.faninout(),
                        segment: choice.segment_size(),
                        label: choice.to_string(),
                    }
                };
                let same = rules.last().is_some_and(|r| {
                    (r.algorithm, r.faninout, r.segment)
                        == (rule.algorithm, rule.faninout, rule.segment)
                });
                if !same {
                    rules.push(rule);
                }
            }
            if blocks.last().is_some_and(|b| b.rules == rules) {
                continue;
            }
            blocks.push(OmpiBlock {
                processes: p,
                rules,
            });
        }
        Ok(blocks)
    }
}
