//! Which algorithms are worth measuring: [`plan_tuning`].

use super::{Library, TuneConfig, TuneError};
use crate::collectives::ompi::fixed_decision;
use crate::collectives::{Choice, Collective, Problem, cost_in, rank_in};
use crate::export::{mpich_function_of, mpich_size_key};
use crate::sim::{
    SimError, SimLimits, SimOptions, TwoLevel, cost_on_nodes_in, cost_simulated_in,
    rank_on_nodes_in, rank_simulated_in,
};
use crate::{CommModel, Message};

/// `price` on `config`'s nodes, placed for `problem`'s communicator (`None` without nodes).
fn on_nodes<T>(
    config: &TuneConfig,
    problem: &Problem,
    price: impl FnOnce(TwoLevel<'_>, &SimOptions) -> Result<T, SimError>,
) -> Option<Result<T, TuneError>> {
    let nodes = config.nodes.as_ref()?;
    let model_error = |e: SimError| TuneError::Model(e.to_string());
    let map = match nodes.layout.map_for_communicator(problem.processes) {
        Ok(map) => map,
        Err(e) => return Some(Err(model_error(e))),
    };
    let platform = TwoLevel {
        nodes: &map,
        inter: nodes.inter.as_ref(),
        inter_rendezvous_above: nodes.inter_rendezvous_above,
    };
    let options = config.simulation.unwrap_or_default();
    Some(price(platform, &options).map_err(model_error))
}

/// `c`'s algorithms in the tuned library's family for `problem`, cheapest first, as `config`
/// prices them.
pub(super) fn ranked(
    model: &dyn CommModel,
    config: &TuneConfig,
    c: Collective,
    problem: &Problem,
) -> Result<Vec<Choice>, TuneError> {
    if let Some(priced) = on_nodes(config, problem, |platform, options| {
        rank_on_nodes_in(
            model,
            platform,
            config.library.family(),
            c,
            problem,
            SimLimits::default(),
            options,
        )
    }) {
        return priced;
    }
    match &config.simulation {
        None => rank_in(model, config.library.family(), c, problem)
            .map_err(|e| TuneError::Model(e.to_string())),
        Some(options) => rank_simulated_in(
            model,
            config.library.family(),
            c,
            problem,
            SimLimits::default(),
            options,
        )
        .map_err(|e| TuneError::Model(e.to_string())),
    }
}

/// The price of `c`'s algorithm `name` (in the tuned library's family) for `problem`, as
/// `config` prices it.
pub(super) fn priced(
    model: &dyn CommModel,
    config: &TuneConfig,
    c: Collective,
    name: &str,
    problem: &Problem,
) -> Result<f64, TuneError> {
    if let Some(priced) = on_nodes(config, problem, |platform, options| {
        cost_on_nodes_in(
            model,
            platform,
            config.library.family(),
            c,
            name,
            problem,
            SimLimits::default(),
            options,
        )
        .map(|choice| choice.cost)
    }) {
        return priced;
    }
    let choice = match &config.simulation {
        None => cost_in(model, config.library.family(), c, name, problem)
            .map_err(|e| TuneError::Model(e.to_string())),
        Some(options) => cost_simulated_in(
            model,
            config.library.family(),
            c,
            name,
            problem,
            SimLimits::default(),
            options,
        )
        .map_err(|e| TuneError::Model(e.to_string())),
    }?;
    Ok(choice.cost)
}

/// An algorithm forced through Open MPI's MCA parameters (`coll_tuned_<coll>_algorithm`,
/// `..._segmentsize`, `..._tree_fanout` / `..._chain_fanout`) and written so in a rules file,
/// or, tuning MPICH, through a selection JSON naming its function.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Forced {
    /// Open MPI's algorithm ID (1-based; 0 tuning MPICH).
    pub id: u32,
    /// The segment size, bytes (0: unsegmented).
    pub segment: u64,
    /// The fan-out (chains), else 0.
    pub faninout: u64,
    /// The crate's name with its parameters (`chain:segment=8192,fanout=4`; MPICH's name
    /// tuning MPICH).
    pub name: String,
    /// MPICH's function (`MPIR_Bcast_intra_binomial`) tuning MPICH, else `None`.
    pub mpich: Option<String>,
}

/// One measurement a [`Runner`](super::Runner) makes: `collective` on `processes` processes,
/// `algorithm` forced (`None`: Open MPI's default), each of `sizes` timed once.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The collective.
    pub collective: Collective,
    /// The communicator size.
    pub processes: u64,
    /// The forced algorithm; `None` for Open MPI's own decision.
    pub algorithm: Option<Forced>,
    /// Message sizes in the rules file's convention ([`Collective::ompi_rules_size`]).
    pub sizes: Vec<u64>,
    /// The same sizes as the collective takes them (the problem's bytes: one rank's buffer or
    /// block), what a harness passes to the MPI call.
    pub bytes: Vec<u64>,
    /// The model's price of each size (seconds; for the default, of the algorithm Open MPI
    /// 4.1.4's fixed decision or MPICH's table runs; NaN where the model does not price it).
    pub predicted: Vec<f64>,
}

/// One cell: a collective, a communicator size and a message size, with the default's and the
/// candidates' predicted times.
#[derive(Debug, Clone, PartialEq)]
pub struct CellPlan {
    /// The collective.
    pub collective: Collective,
    /// The communicator size.
    pub processes: u64,
    /// The message size (the written file's convention, as [`Run::sizes`]).
    pub size: u64,
    /// The problem's bytes ([`TuneConfig::sizes`]).
    pub bytes: u64,
    /// The algorithm ID Open MPI 4.1.4's fixed decision runs here (0 tuning MPICH).
    pub default_id: u32,
    /// The default's algorithm as the library names it (Open MPI's name of `default_id`,
    /// MPICH's function); empty where unknown.
    pub default_name: String,
    /// Its predicted time, seconds.
    pub default_predicted: f64,
    /// The candidates, cheapest predicted first, with their predicted times.
    pub candidates: Vec<(Forced, f64)>,
    /// How many algorithm variants the model priced here (what an exhaustive sweep measures).
    pub priced: usize,
}

/// The cells to decide and the runs that measure them.
#[derive(Debug, Clone, PartialEq)]
pub struct TunePlan {
    /// Every cell, by collective, communicator size and message size.
    pub cells: Vec<CellPlan>,
    /// Per collective and communicator size, the default's run and one per candidate
    /// algorithm (covering the sizes where it is a candidate).
    pub runs: Vec<Run>,
    /// The library tuned ([`TuneConfig::library`]).
    pub library: Library,
}

/// Ranks Open MPI's algorithms of every cell with `model` and keeps the candidates worth
/// measuring: those predicted within `1 + margin` of the cheapest, at most `max_candidates`
/// (Open MPI's `two_proc` algorithms only on 2 processes followed by a block at 3: a rules
/// block covers the communicator sizes up to the next).
///
/// # Errors
///
/// [`TuneError::Config`] for an invalid `config`; [`TuneError::Model`] if the model cannot
/// price a candidate.
pub fn plan_tuning(model: &dyn CommModel, config: &TuneConfig) -> Result<TunePlan, TuneError> {
    config.validate()?;
    let mut cells = Vec::new();
    let mut runs = Vec::new();
    for &c in &config.collectives {
        let sizes: &[u64] = if c == Collective::Barrier {
            &[0]
        } else {
            &config.sizes
        };
        for (i, &p) in config.processes.iter().enumerate() {
            let two_proc_allowed = p == 2 && config.processes.get(i + 1) == Some(&3);
            let first_cell = cells.len();
            for &bytes in sizes {
                let s = match config.library {
                    Library::OpenMpi => c.ompi_rules_size(bytes, p),
                    Library::Mpich(_) => mpich_size_key(c, p, bytes, 8).map_or(0, |(_, v)| v),
                };
                let problem = Problem::new(p, Message::contiguous(bytes))
                    .with_operator(config.operator)
                    .with_local(config.local);
                let ranked = ranked(model, config, c, &problem)?;
                let best = ranked.first().map_or(f64::INFINITY, |r| r.cost);
                let (default_id, default_name, default_predicted) = match config.library {
                    Library::OpenMpi => {
                        let id = fixed_decision(c, p, bytes, true);
                        let predicted =
                            priced(model, config, c, &id.to_string(), &problem).unwrap_or(f64::NAN);
                        let name = c.ompi_algorithm_name(id).unwrap_or_default().to_string();
                        (id, name, predicted)
                    }
                    Library::Mpich(version) => {
                        let function = version.default_algorithm(c, p, bytes).unwrap_or_default();
                        let predicted = ranked
                            .iter()
                            .find(|r| mpich_function(r, c, p, version).as_ref() == Some(&function))
                            .map_or(f64::NAN, |r| r.cost);
                        (0, function, predicted)
                    }
                };
                let mut candidates: Vec<(Forced, f64)> = Vec::new();
                for choice in &ranked {
                    let forced = match config.library {
                        Library::OpenMpi => {
                            let Some(ompi) = choice.ompi else { continue };
                            if ompi.name.starts_with("two_proc") && !two_proc_allowed {
                                continue;
                            }
                            Forced {
                                id: ompi.id,
                                segment: ompi.segment,
                                faninout: ompi.fanout,
                                name: choice.name.clone(),
                                mpich: None,
                            }
                        }
                        Library::Mpich(version) => {
                            let Some(function) = mpich_function(choice, c, p, version) else {
                                continue;
                            };
                            // the default's own run measures it
                            if function == default_name {
                                continue;
                            }
                            Forced {
                                id: 0,
                                segment: 0,
                                faninout: 0,
                                name: choice.name.clone(),
                                mpich: Some(function),
                            }
                        }
                    };
                    if choice.cost > (1.0 + config.margin) * best
                        || candidates.len() >= config.max_candidates
                    {
                        break;
                    }
                    if !candidates.iter().any(|(f, _)| *f == forced) {
                        candidates.push((forced, choice.cost));
                    }
                }
                cells.push(CellPlan {
                    collective: c,
                    processes: p,
                    size: s,
                    bytes,
                    default_id,
                    default_name,
                    default_predicted,
                    candidates,
                    priced: ranked.len(),
                });
            }
            let group = &cells[first_cell..];
            runs.push(Run {
                collective: c,
                processes: p,
                algorithm: None,
                sizes: group.iter().map(|cell| cell.size).collect(),
                bytes: group.iter().map(|cell| cell.bytes).collect(),
                predicted: group.iter().map(|cell| cell.default_predicted).collect(),
            });
            // one run per algorithm, over the sizes where it is a candidate
            let mut forced: Vec<Forced> = Vec::new();
            for cell in group {
                for (f, _) in &cell.candidates {
                    if !forced.contains(f) {
                        forced.push(f.clone());
                    }
                }
            }
            for f in forced {
                let cells: Vec<(&CellPlan, f64)> = group
                    .iter()
                    .filter_map(|cell| {
                        let (_, t) = cell.candidates.iter().find(|(g, _)| *g == f)?;
                        Some((cell, *t))
                    })
                    .collect();
                runs.push(Run {
                    collective: c,
                    processes: p,
                    algorithm: Some(f),
                    sizes: cells.iter().map(|(cell, _)| cell.size).collect(),
                    bytes: cells.iter().map(|(cell, _)| cell.bytes).collect(),
                    predicted: cells.iter().map(|(_, t)| *t).collect(),
                });
            }
        }
    }
    Ok(TunePlan {
        cells,
        runs,
        library: config.library,
    })
}

/// MPICH's function for a choice of MPICH's family that MPICH `version` runs on `p` ranks
/// (recursive-doubling allgather on powers of two only), else `None`.
fn mpich_function(
    choice: &Choice,
    c: Collective,
    p: u64,
    version: crate::export::MpichVersion,
) -> Option<String> {
    let f = mpich_function_of(c, choice.mpich_name?, version)?;
    (f != "MPIR_Allgather_intra_recursive_doubling" || p.is_power_of_two()).then_some(f)
}
