//! Model-guided tuning: the model decides what is worth measuring, measurements decide the
//! rules.
//!
//! Exhaustive tuning measures every algorithm of every collective at every size and
//! communicator size; a model alone is fast but loses where it is wrong. [`plan_tuning`] ranks
//! Open MPI's algorithms with the model and keeps, per cell (collective, communicator size,
//! message size), those predicted within the model's measured error of the cheapest
//! ([`TuneConfig::margin`]); [`tune`] measures them beside Open MPI's default through a
//! [`Runner`] (an `mpirun` per forced algorithm in the command-line tool, any timing harness of
//! your own elsewhere), interleaved, in rounds, group by group (collective and communicator
//! size, where the model expects the most gain first), until each cell is decided or the
//! budget is spent; [`TuneReport::rules`] writes an Open MPI rules file that leaves the default wherever
//! no candidate is faster with confidence, and [`TuneReport::rules_filled`] places each switch
//! between two measured sizes where the model, corrected by the measured ratios, crosses over.
//!
//! The test: in each round the default and every candidate of a cell are timed once, in an
//! order that alternates between rounds; a candidate replaces the default when it is faster in
//! so many of the rounds that a one-sided sign test rejects "no faster" at level
//! [`TuneConfig::alpha`] divided by the cell's number of candidates (Bonferroni), after at least
//! [`TuneConfig::min_rounds`] rounds, and when the median of its per-round time ratios to the
//! default is at most `1 - min_gain`. A candidate that fails (the runner's error, a time that
//! is not a positive number) is never chosen. A candidate stops being timed in a cell once no
//! outcome of the remaining rounds could make it pass there, and a cell once it is decided
//! either way.
//!
//! # Examples
//!
//! ```
//! use commcost::collectives::Collective;
//! use commcost::presets;
//! use commcost::tune::{Run, Runner, TuneConfig, plan_tuning, tune};
//!
//! // a machine where every forced algorithm takes the model's time, and the default 1.5 times
//! // the model's cheapest: every measured cell switches away from the default
//! struct Machine;
//! impl Runner for Machine {
//!     fn time(&mut self, run: &Run) -> Result<Vec<f64>, String> {
//!         Ok(run.predicted.iter().map(|&t| if run.algorithm.is_none() { 1.5 * t } else { t }).collect())
//!     }
//! }
//! let model = presets::mpich2_tcp();
//! let config = TuneConfig::new(vec![Collective::Bcast], vec![8], vec![8, 65536, 1 << 20]);
//! let plan = plan_tuning(&model, &config)?;
//! let report = tune(plan, &mut Machine, &config, std::time::Duration::from_secs(60), &mut |_| {});
//! let rules = report.rules();
//! assert!(rules.lookup(Collective::Bcast, 8, 1 << 20).is_some_and(|r| r.algorithm != 0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod fill;
mod measure;
mod mpich_file;
mod plan;
mod sign_test;

pub use measure::{CellResult, GIVE_UP_AFTER, Measurement, Runner, TuneReport, Verdict, tune};
pub use plan::{CellPlan, Forced, Run, TunePlan, plan_tuning};
pub use sign_test::sign_test_p;

use crate::CommModel;
use crate::collectives::{Collective, Family, LocalWork, Operator};
use crate::export::MpichVersion;
use crate::sim::{NodeLayout, SimOptions};

/// Nodes of several ranks for [`TuneConfig::nodes`]: where each communicator's ranks sit and
/// the network between the nodes.
#[derive(Debug, Clone)]
pub struct TuneNodes {
    /// The job's layout; a communicator of `P` ranks sits as
    /// [`NodeLayout::map_for_communicator`] places it.
    pub layout: NodeLayout,
    /// The model of a message between nodes (the tuned model is the one inside a node).
    pub inter: std::sync::Arc<dyn CommModel>,
    /// The network's eager limit, bytes (rendezvous above it; `None`: eager throughout).
    pub inter_rendezvous_above: Option<u64>,
}

/// Equal layouts, eager limits and the same inter-node model object.
impl PartialEq for TuneNodes {
    fn eq(&self, other: &Self) -> bool {
        self.layout == other.layout
            && std::sync::Arc::ptr_eq(&self.inter, &other.inter)
            && self.inter_rendezvous_above == other.inter_rendezvous_above
    }
}

/// The MPI library a tuning measures and writes its file for.
///
/// # Examples
///
/// ```
/// use commcost::collectives::Family;
/// use commcost::export::MpichVersion;
/// use commcost::tune::Library;
///
/// assert_eq!(Library::default(), Library::OpenMpi);
/// assert_eq!(Library::Mpich(MpichVersion::V4_0).family(), Family::Mpich);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Library {
    /// Open MPI 4.1's tuned component: algorithms by ID, forced through its MCA parameters;
    /// the default is Open MPI 4.1.4's fixed decision; the decisions make a rules file
    /// ([`TuneReport::rules`], [`TuneReport::rules_filled`]).
    #[default]
    OpenMpi,
    /// MPICH of this release series: algorithms by function (`MPIR_Bcast_intra_binomial`),
    /// forced through a selection JSON file (with `MPIR_CVAR_DEVICE_COLLECTIVES=none`, as the
    /// written file is used); the default is the series' own table
    /// ([`MpichVersion::default_algorithm`]); the decisions make a selection JSON
    /// ([`TuneReport::mpich_json`]).
    Mpich(MpichVersion),
}

impl Library {
    /// The family whose algorithms are ranked and priced.
    pub const fn family(self) -> Family {
        match self {
            Self::OpenMpi => Family::Ompi,
            Self::Mpich(_) => Family::Mpich,
        }
    }
}

/// What [`plan_tuning`] and [`tune`] tune, and how sure a switch must be.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneConfig {
    /// The collectives (each once; Open MPI's family must price it).
    pub collectives: Vec<Collective>,
    /// Communicator sizes, increasing, each at least 2.
    pub processes: Vec<u64>,
    /// Message sizes as the collectives take them ([`Problem`](crate::collectives::Problem)
    /// bytes: the whole buffer of bcast, reduce and allreduce, one rank's block of the others),
    /// increasing; the rules file keys them by [`Collective::ompi_rules_size`], MPICH's file
    /// by [`mpich_size_key`](crate::export::mpich_size_key).
    pub sizes: Vec<u64>,
    /// Candidates: algorithms predicted at most `1 + margin` times the cheapest (the model's
    /// measured error; 0.25 by default).
    pub margin: f64,
    /// At most this many candidates per cell besides the default (the cheapest predicted).
    pub max_candidates: usize,
    /// Rounds before a switch can be decided (5 by default: the sign test's smallest p with
    /// one candidate is then 1/32).
    pub min_rounds: u32,
    /// Rounds after which an undecided cell keeps the default.
    pub max_rounds: u32,
    /// The sign test's level (0.05 by default), shared by the candidates of a cell.
    pub alpha: f64,
    /// The smallest median gain worth a switch, as a fraction (0.03 by default).
    pub min_gain: f64,
    /// The reduction operator the model prices reductions with.
    pub operator: Operator,
    /// The local work the model charges every algorithm.
    pub local: LocalWork,
    /// How candidates are ranked and priced: `None` by their closed forms
    /// ([`rank_in`](crate::collectives::rank_in)), `Some(options)` by simulating each schedule
    /// on that platform where the closed form is not exact
    /// ([`rank_simulated_in`](crate::sim::rank_simulated_in), within [`SimLimits`](crate::sim::SimLimits)'s default).
    pub simulation: Option<SimOptions>,
    /// The library tuned (Open MPI by default).
    pub library: Library,
    /// Nodes of several ranks: every candidate simulated on the two-level platform
    /// ([`rank_on_nodes_in`](crate::sim::rank_on_nodes_in), with `simulation`'s options or the
    /// default ones) with the tuned model inside a node; `None` (the default): a flat network.
    pub nodes: Option<TuneNodes>,
}

impl TuneConfig {
    /// The defaults for these collectives, communicator sizes and message sizes.
    pub fn new(collectives: Vec<Collective>, processes: Vec<u64>, sizes: Vec<u64>) -> Self {
        Self {
            collectives,
            processes,
            sizes,
            margin: 0.25,
            max_candidates: 4,
            min_rounds: 5,
            max_rounds: 10,
            alpha: 0.05,
            min_gain: 0.03,
            operator: Operator::FREE,
            local: LocalWork::FREE,
            simulation: None,
            library: Library::OpenMpi,
            nodes: None,
        }
    }

    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`TuneError::Config`] naming the field.
    pub fn validate(&self) -> Result<(), TuneError> {
        let bad = |field: &'static str, detail: String| Err(TuneError::Config { field, detail });
        let increasing = |v: &[u64]| !v.is_empty() && v.windows(2).all(|w| w[0] < w[1]);
        if self.collectives.is_empty() {
            return bad("collectives", "none given".into());
        }
        for (i, c) in self.collectives.iter().enumerate() {
            if self.collectives[..i].contains(c) {
                return bad("collectives", format!("{c} given twice"));
            }
            let family = self.library.family();
            if !c.is_priced_by(family) {
                return bad(
                    "collectives",
                    format!("the {family} family does not price {c}"),
                );
            }
            if matches!(self.library, Library::Mpich(_))
                && !crate::export::mpich_json_collectives().contains(c)
            {
                return bad(
                    "collectives",
                    format!("MPICH's selection JSON has no subtree for {c}"),
                );
            }
        }
        if !increasing(&self.processes) || self.processes[0] < 2 {
            return bad(
                "processes",
                "communicator sizes must be increasing and at least 2".into(),
            );
        }
        if self
            .processes
            .last()
            .is_some_and(|&p| p > MAX_TUNED_PROCESSES)
        {
            return bad(
                "processes",
                format!("at most {MAX_TUNED_PROCESSES} processes are measured"),
            );
        }
        if !increasing(&self.sizes) {
            return bad("sizes", "message sizes must be increasing".into());
        }
        let cells = (self.collectives.len() as u128)
            * (self.processes.len() as u128)
            * (self.sizes.len() as u128);
        if cells > MAX_TUNED_CELLS as u128 {
            return bad(
                "sizes",
                format!("{cells} cells, more than the {MAX_TUNED_CELLS} a tuning measures"),
            );
        }
        if !(self.margin.is_finite() && self.margin >= 0.0 && self.margin <= 10.0) {
            return bad("margin", format!("{} is not in [0, 10]", self.margin));
        }
        if !(1..=16).contains(&self.max_candidates) {
            return bad(
                "max_candidates",
                format!("{} is not in 1..=16", self.max_candidates),
            );
        }
        if self.min_rounds < 1 || self.max_rounds < self.min_rounds || self.max_rounds > 64 {
            return bad(
                "rounds",
                format!(
                    "min_rounds {} and max_rounds {}: 1 <= min <= max <= 64",
                    self.min_rounds, self.max_rounds
                ),
            );
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return bad("alpha", format!("{} is not in (0, 1)", self.alpha));
        }
        if !(self.min_gain >= 0.0 && self.min_gain < 1.0) {
            return bad("min_gain", format!("{} is not in [0, 1)", self.min_gain));
        }
        if let Some(nodes) = &self.nodes {
            for &p in &self.processes {
                if let Err(e) = nodes.layout.map_for_communicator(p) {
                    return bad("nodes", format!("{p} processes: {e}"));
                }
            }
        }
        Ok(())
    }
}

/// The largest communicator size tuned (the simulator's and the rules files' bound).
pub const MAX_TUNED_PROCESSES: u64 = 1 << 20;

/// The most cells (collective × communicator size × message size) one tuning plans.
pub const MAX_TUNED_CELLS: usize = 100_000;

/// A tuning that cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TuneError {
    /// A field of [`TuneConfig`] out of its range.
    #[error("{field}: {detail}")]
    Config {
        /// The field.
        field: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The model cannot price a candidate.
    #[error("{0}")]
    Model(String),
    /// The measured decisions do not make a rules file.
    #[error("rules file: {0}")]
    Rules(String),
}
