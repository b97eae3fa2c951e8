//! `--ranks-per-node`, `--map-by`, `--inter-model` / `--inter-preset`, or a model file's `nodes`
//! section: a two-level platform (`commcost::sim::TwoLevel`) for the commands that price
//! collectives by simulation.

use commcost::CommModel;
use commcost::sim::{Finish, NodeLayout, NodeMap, Placement, SimOptions, TwoLevel};

use crate::model::{self, Loaded};
use crate::{Failure, fail};

/// How the ranks are placed on the nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum MapBy {
    /// Consecutive ranks on one node (Open MPI's `--map-by core` / `--map-by slot`, MPICH's
    /// default).
    #[default]
    Core,
    /// Ranks dealt to the nodes in turn (`--map-by node`).
    Node,
}

/// Which completion a price on nodes is (`commcost::sim::Finish`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FinishArg {
    /// The last rank's completion (the makespan): what a job whose next step waits for every
    /// rank pays; OSU's "Max Latency".
    #[default]
    Last,
    /// The mean over the ranks of their completions: OSU's "Avg Latency" (its default output).
    Mean,
}

impl From<FinishArg> for Finish {
    fn from(f: FinishArg) -> Self {
        match f {
            FinishArg::Last => Finish::Last,
            FinishArg::Mean => Finish::Mean,
        }
    }
}

/// The two-level platform's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct NodesArgs {
    /// Ranks per node: price on nodes of this many ranks (the model inside a node, the inter
    /// model between nodes, a node's ranks sharing its link in each direction); every
    /// algorithm is simulated. The process count must be a multiple.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub ranks_per_node: Option<u32>,
    /// How ranks are placed on the nodes (with --ranks-per-node).
    #[arg(long, value_enum, default_value_t, requires = "ranks_per_node")]
    pub map_by: MapBy,
    /// The model of a message between nodes: a model file (`FILE#NAME`), whose platform gives
    /// the network's eager limit and shaped link (with --ranks-per-node).
    #[arg(
        long,
        value_name = "FILE",
        requires = "ranks_per_node",
        conflicts_with = "inter_preset"
    )]
    pub inter_model: Option<std::path::PathBuf>,
    /// An embedded parameter set as the model between nodes (with --ranks-per-node).
    #[arg(long, value_name = "NAME", requires = "ranks_per_node")]
    pub inter_preset: Option<String>,
    /// Which completion a price on nodes is: the last rank's or the mean over ranks (needs a
    /// platform: --ranks-per-node or a model file's `nodes` section; `simulate` prints both).
    #[arg(long, value_enum, default_value_t)]
    pub finish: FinishArg,
}

/// A resolved two-level platform: the node map and the inter-node model.
pub struct Nodes {
    pub map: NodeMap,
    pub inter: Loaded,
    /// How the map was made, for reports (`4 ranks per node, map by core`).
    pub layout: String,
    /// Which completion a price is (--finish).
    pub finish: Finish,
}

impl Nodes {
    /// The platform for the simulator (the inter-node model's eager limit from its file's
    /// platform, else its own threshold).
    pub fn platform(&self) -> TwoLevel<'_> {
        TwoLevel {
            nodes: &self.map,
            inter: &self.inter.spec,
            inter_rendezvous_above: self
                .inter
                .platform
                .rendezvous_above
                .or_else(|| self.inter.spec.rendezvous_above()),
        }
    }

    /// `options` with the inter-node file's shaped link, unless the flags gave one, and the
    /// completion --finish names.
    pub fn options(&self, options: SimOptions) -> SimOptions {
        with_platform(options, &self.inter, self.finish)
    }

    /// `N nodes (K ranks per node, map by core), between nodes model M`.
    pub fn describe(&self) -> String {
        format!(
            "{} nodes ({}), between nodes model {}",
            self.map.nodes(),
            self.layout,
            self.inter.name
        )
    }
}

/// A resolved layout for every job size: where ranks sit and the inter-node model.
pub struct Layout {
    pub layout: NodeLayout,
    pub inter: Loaded,
    /// For reports (`4 ranks per node, map by core`).
    pub describe: String,
    /// Whether the layout came from the flags (errors then name `--ranks-per-node`).
    from_flags: bool,
    /// Which completion a price is (--finish).
    pub finish: Finish,
}

/// `options` with `inter`'s shaped link (unless `options` has one) and `finish`.
fn with_platform(options: SimOptions, inter: &Loaded, finish: Finish) -> SimOptions {
    SimOptions {
        link_burst: options.link_burst.or(inter.platform.link_burst),
        finish,
        ..options
    }
}

impl Layout {
    /// `options` with the inter-node file's shaped link, unless the flags gave one, and the
    /// completion --finish names.
    pub fn options(&self, options: SimOptions) -> SimOptions {
        with_platform(options, &self.inter, self.finish)
    }

    /// The inter-node model's eager limit: its file's platform, else its own threshold.
    pub fn inter_rendezvous_above(&self) -> Option<u64> {
        self.inter
            .platform
            .rendezvous_above
            .or_else(|| self.inter.spec.rendezvous_above())
    }

    /// The platform of a job of `procs` ranks.
    pub fn nodes(self, procs: u64) -> Result<Nodes, Failure> {
        let map = self.layout.map_for(procs).map_err(|e| {
            if self.from_flags {
                Failure(format!("--ranks-per-node: {procs} processes: {e}"))
            } else {
                Failure(format!(
                    "--procs {procs}: the model file's `nodes.layout`: {e}"
                ))
            }
        })?;
        Ok(Nodes {
            map,
            inter: self.inter,
            layout: self.describe,
            finish: self.finish,
        })
    }
}

impl NodesArgs {
    /// The platform for `procs` processes: the flags', else the `nodes` section of the model
    /// file `model` came from, else `None`.
    pub fn resolve(&self, procs: u64, model: &Loaded) -> Result<Option<Nodes>, Failure> {
        if let Some(k) = self.ranks_per_node
            && !procs.is_multiple_of(u64::from(k))
        {
            return fail(format!(
                "--ranks-per-node: {procs} processes are not a multiple of {k}"
            ));
        }
        self.layout(model)?.map(|l| l.nodes(procs)).transpose()
    }

    /// The layout for jobs of any size: the flags', else the `nodes` section of the model
    /// file `model` came from, else `None`.
    pub fn layout(&self, model: &Loaded) -> Result<Option<Layout>, Failure> {
        let Some(k) = self.ranks_per_node else {
            let Some(section) = &model.nodes else {
                if self.finish == FinishArg::Mean {
                    return fail(
                        "--finish mean: prices on nodes only (give --ranks-per-node, or a model file with a `nodes` section)",
                    );
                }
                return Ok(None);
            };
            let describe = match &section.layout {
                NodeLayout::Uniform {
                    ranks_per_node,
                    placement,
                } => format!(
                    "{ranks_per_node} ranks per node, {}",
                    match placement {
                        Placement::Block => "consecutive",
                        Placement::RoundRobin => "round robin",
                    }
                ),
                NodeLayout::Map(_) => "the file's map".into(),
            };
            return Ok(Some(Layout {
                layout: section.layout.clone(),
                inter: Loaded {
                    name: format!("{}'s inter", model.name),
                    spec: section.inter.clone(),
                    local: commcost::collectives::LocalWork::FREE,
                    operator: commcost::collectives::Operator::FREE,
                    platform: section.inter_platform.unwrap_or_default(),
                    nodes: None,
                },
                describe,
                from_flags: false,
                finish: self.finish.into(),
            }));
        };
        let inter = match (&self.inter_model, &self.inter_preset) {
            (Some(path), _) => model::load_file(path)
                .map_err(|e| Failure(format!("--inter-model {}: {}", path.display(), e.0)))?,
            (None, Some(name)) => {
                model::preset(name).map_err(|e| Failure(format!("--inter-preset: {}", e.0)))?
            }
            (None, None) => {
                return fail(
                    "--ranks-per-node: give the model between nodes (--inter-model FILE or --inter-preset NAME)",
                );
            }
        };
        let placement = match self.map_by {
            MapBy::Core => Placement::Block,
            MapBy::Node => Placement::RoundRobin,
        };
        let describe = format!(
            "{k} ranks per node, map by {}",
            match self.map_by {
                MapBy::Core => "core",
                MapBy::Node => "node",
            }
        );
        Ok(Some(Layout {
            layout: NodeLayout::Uniform {
                ranks_per_node: k,
                placement,
            },
            inter,
            describe,
            from_flags: true,
            finish: self.finish.into(),
        }))
    }
}
