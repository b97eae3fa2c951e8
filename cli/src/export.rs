//! `export`: MPI tuning files from a model (Open MPI dynamic rules, MPICH selection JSON).
//!
//! Each format is one arm of [`run`] and one function writing the text; the shared options
//! (grid, collectives, output) are checked once in [`run`].

use std::path::PathBuf;
use std::process::Command;

use commcost::collectives::{Collective, Family};
use commcost::export::ExportError;
use commcost::export::{
    MpichJsonOptions, MpichVersion, OmpiRulesOptions, OnNodes, OnTie, mpich_json, ompi_fixed_rules,
    ompi_rules, ompi_rules_on_nodes,
};
use commcost::sim::{SimLimits, SimOptions};

use crate::units::{self, List};
use crate::{Failure, ModelSource, fail, model};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    commcost export ompi-rules --preset open-mpi-openib --procs 2..1024 -o rules.conf\n  \
    commcost export ompi-rules --model shm.json --ranks-per-node 2 --inter-model net.json --procs 2,4,8 -o rules.conf\n  \
    mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename rules.conf ...\n  \
    commcost export mpich-json --model mine.json --procs 2..256 --mpich-version 4.0 -o tuning.json\n  \
    MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=$PWD/tuning.json MPIR_CVAR_DEVICE_COLLECTIVES=none mpiexec ...\n  \
    commcost export simgrid --model mine.json --procs 16 -o platform.xml\n  \
    smpirun -platform platform.xml -np 16 ./app\n\n\
    An MPICH file is complete: the model's decisions for the collectives it prices, MPICH's own\n\
    default table (of --mpich-version) for everything else. With MPICH's default\n\
    MPIR_CVAR_DEVICE_COLLECTIVES=percoll, MPICH's ch4 device applies the file to node and\n\
    node-roots sub-communicators for some collectives, not to the application's communicator;\n\
    set MPIR_CVAR_DEVICE_COLLECTIVES=none for the file to decide every call.\n\n\
    A rules file is keyed by communicator size only: with --ranks-per-node each size is priced\n\
    placed as a job of that size is (fewer ranks than a node holds: on one node); a\n\
    sub-communicator placed otherwise runs the rule of its size all the same.")]
pub struct ExportArgs {
    /// The tuning file format.
    format: Format,
    #[command(flatten)]
    source: ModelSource,
    /// Communicator sizes of the blocks: a list (4,16,64) or a doubling range (2..1024), each at
    /// most 2147483647 (an MPI `int`).
    #[arg(long, value_parser = units::parse_list, value_name = "LIST")]
    procs: List,
    /// Message sizes of the rules, in each file's own convention (the buffer, or `m P` for
    /// allgather, alltoall, gather, scatter): a doubling range or a list.
    #[arg(long, value_parser = units::parse_list, value_name = "RANGE", default_value = "1..4M")]
    bytes: List,
    /// Collectives to write (Open MPI names, comma-separated, each once); default all the
    /// format supports.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    collectives: Vec<String>,
    /// Open MPI rules where several algorithms cost the same: `defer` writes algorithm 0
    /// (Open MPI keeps its own fixed decision there), `first` names the first tied algorithm.
    #[arg(long, value_enum, default_value = "defer", value_name = "POLICY")]
    on_tie: TiePolicy,
    /// Open MPI rules: name the model's pick only where it is predicted faster than the
    /// algorithm Open MPI 4.1.4's fixed decision runs by at least this fraction (0.1 = 10 %);
    /// elsewhere write algorithm 0 (Open MPI decides). Without it the file names the model's
    /// pick wherever it has one.
    #[arg(long, value_name = "FRACTION")]
    min_gain: Option<f64>,
    /// MPICH series the mpich-json file is for (4.0, 4.1, 4.2; a release such as 4.0.2 is
    /// accepted): its algorithm names and default table. Default: the version `mpichversion`
    /// reports if it is on the PATH, else 4.0.
    #[arg(long, value_name = "VERSION")]
    mpich_version: Option<String>,
    /// The file to write (standard output without it).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// ompi-rules on nodes of several ranks (or the model file's `nodes` section): every
    /// candidate simulated with each communicator placed as a job of its size is.
    #[command(flatten)]
    nodes: crate::nodes::NodesArgs,
}

/// What a rule names where algorithms tie.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TiePolicy {
    /// Algorithm 0: Open MPI's fixed decision.
    Defer,
    /// The first tied algorithm in candidate order.
    First,
}

/// The tuning file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// Open MPI's dynamic rules file for the tuned collective component.
    OmpiRules,
    /// Open MPI 4.1.4's own fixed decisions written as a dynamic rules file (one block per
    /// `--procs` size; the model given is not used): what Open MPI runs without a file, to compare with
    /// or to start a hand-written file from.
    OmpiFixed,
    /// MPICH's collective selection JSON.
    MpichJson,
    /// A SimGrid platform file for SMPI: `smpi/os`, `smpi/or`, `smpi/ois`, the latency and
    /// bandwidth factors, and a cluster of the largest `--procs` hosts (`smpirun -platform`).
    Simgrid,
}

impl Format {
    /// The collectives written without `--collectives`.
    fn supports(self, c: Collective) -> bool {
        match self {
            Self::OmpiRules | Self::OmpiFixed => c.is_priced_by(Family::Ompi),
            Self::MpichJson => commcost::export::mpich_json_collectives().contains(&c),
            // a platform file holds no collective decisions
            Self::Simgrid => false,
        }
    }
}

pub fn run(args: ExportArgs) -> Result<(), Failure> {
    if args.format != Format::MpichJson && args.mpich_version.is_some() {
        return Err(Failure(
            "--mpich-version: applies to the mpich-json format only".into(),
        ));
    }
    if args.format != Format::OmpiRules && args.min_gain.is_some() {
        return Err(Failure(
            "--min-gain: applies to the ompi-rules format only".into(),
        ));
    }
    if args.format != Format::OmpiRules && args.nodes.ranks_per_node.is_some() {
        return fail("--ranks-per-node: applies to the ompi-rules format only");
    }
    let collectives = collectives(&args)?;
    let loaded = model::load(&args.source)?;
    let (text, note) = match args.format {
        Format::OmpiRules => (ompi(&args, &loaded, &collectives)?, String::new()),
        Format::OmpiFixed => (
            ompi_fixed_rules(&collectives, &args.procs.0)
                .map_err(option_error)?
                .to_string(),
            " (Open MPI 4.1.4's fixed decisions)".to_string(),
        ),
        Format::MpichJson => {
            let version = mpich_version(args.mpich_version.as_deref())?;
            let options = MpichJsonOptions {
                version,
                ..MpichJsonOptions::default()
            };
            let text = mpich_json(
                &loaded.spec,
                &collectives,
                &args.procs.0,
                &args.bytes.0,
                &options,
            )
            .map_err(option_error)?;
            (text, format!(", MPICH {version}"))
        }
        Format::Simgrid => {
            if !args.collectives.is_empty() {
                return fail(
                    "--collectives: a SimGrid platform file holds no collective decisions",
                );
            }
            let max = commcost::export::MAX_PROCESSES;
            if let Some(p) = args.procs.0.iter().find(|&&p| p == 0 || p > max) {
                return fail(format!(
                    "--procs: {p} hosts; a platform has 1 ..= {max} (the largest an MPI library's \
                     `int` holds)"
                ));
            }
            let options = commcost::simgrid::SmpiOptions::default();
            let config = commcost::simgrid::smpi_config(&loaded.spec, &options)?;
            let hosts = args.procs.0.iter().copied().max().unwrap_or(2);
            (config.platform_xml(hosts), String::new())
        }
    };
    match &args.output {
        Some(path) => {
            std::fs::write(path, &text)
                .map_err(|e| Failure(format!("{}: cannot write: {e}", path.display())))?;
            if args.format == Format::Simgrid {
                outln!(
                    "wrote {} (SMPI platform), model {}",
                    path.display(),
                    loaded.name
                );
            } else {
                outln!(
                    "wrote {} for {} collectives, model {}{note}",
                    path.display(),
                    collectives.len(),
                    loaded.name
                );
            }
        }
        None => out!("{text}"),
    }
    Ok(())
}

/// `--collectives` parsed, each at most once; default: all the format supports.
fn collectives(args: &ExportArgs) -> Result<Vec<Collective>, Failure> {
    if args.collectives.is_empty() {
        return Ok(Collective::ALL
            .iter()
            .copied()
            .filter(|&c| args.format.supports(c))
            .collect());
    }
    let mut out: Vec<Collective> = Vec::new();
    for name in &args.collectives {
        let c = name
            .parse::<Collective>()
            .map_err(|e| Failure(format!("--collectives: {e}")))?;
        if out.contains(&c) {
            return Err(Failure(format!(
                "--collectives: {} given twice (a tuning file holds each collective once)",
                c.name()
            )));
        }
        out.push(c);
    }
    Ok(out)
}

fn ompi(
    args: &ExportArgs,
    loaded: &crate::model::Loaded,
    collectives: &[Collective],
) -> Result<String, Failure> {
    let model = &loaded.spec;
    let options = OmpiRulesOptions {
        on_tie: match args.on_tie {
            TiePolicy::Defer => OnTie::Defer,
            TiePolicy::First => OnTie::FirstCandidate,
        },
        min_gain: args.min_gain,
        // the model file's measured local work and operator (free without a local section)
        operator: loaded.operator,
        local: loaded.local,
    };
    let Some(layout) = args.nodes.layout(loaded)? else {
        return Ok(
            ompi_rules(model, collectives, &args.procs.0, &args.bytes.0, &options)
                .map_err(option_error)?
                .to_string(),
        );
    };
    // the model file's platform inside a node, the inter-node file's shaped link
    let simulation = loaded.platform.apply(SimOptions::default());
    let on_nodes = OnNodes {
        layout: &layout.layout,
        inter: &layout.inter.spec,
        inter_rendezvous_above: layout.inter_rendezvous_above(),
        simulation: layout.options(simulation),
        limits: SimLimits::default(),
    };
    let rules = ompi_rules_on_nodes(
        model,
        &on_nodes,
        collectives,
        &args.procs.0,
        &args.bytes.0,
        &options,
    )
    .map_err(|e| match e {
        ExportError::Simulation(e) => Failure(format!(
            "--procs on {} (between nodes {}): {e}",
            layout.describe, layout.inter.name
        )),
        e => option_error(e),
    })?;
    Ok(rules.to_string())
}

/// `--mpich-version`, else what `mpichversion` reports, else the oldest supported.
pub(crate) fn mpich_version(given: Option<&str>) -> Result<MpichVersion, Failure> {
    if let Some(v) = given {
        return v
            .parse()
            .map_err(|e: ExportError| Failure(format!("--mpich-version: {}", detail(&e))));
    }
    let Ok(out) = Command::new("mpichversion").output() else {
        return Ok(MpichVersion::OLDEST);
    };
    let text = String::from_utf8_lossy(&out.stdout);
    MpichVersion::from_mpichversion(&text).ok_or_else(|| {
        let found = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("MPICH Version:"))
            .map(|v| v.trim().chars().take(40).collect::<String>())
            .unwrap_or_else(|| "no version".into());
        Failure(format!(
            "--mpich-version: `mpichversion` reports {found}, not a supported series (4.0, 4.1, 4.2); give --mpich-version"
        ))
    })
}

fn detail(e: &ExportError) -> String {
    match e {
        ExportError::Grid { detail, .. } => detail.clone(),
        other => other.to_string(),
    }
}

/// An export error, naming the option it comes from.
fn option_error(e: ExportError) -> Failure {
    let option = match &e {
        ExportError::Grid { what, .. } => match *what {
            "processes" => "--procs",
            "sizes" => "--bytes",
            "collectives" => "--collectives",
            "min_gain" => "--min-gain",
            "grid" => "--procs × --bytes × --collectives",
            _ => return Failure(e.to_string()),
        },
        _ => return Failure(e.to_string()),
    };
    Failure(format!("{option}: {}", detail(&e)))
}
