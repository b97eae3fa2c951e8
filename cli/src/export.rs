//! `export`: MPI tuning files from a model (Open MPI dynamic rules, MPICH selection JSON).

use std::path::PathBuf;

use commcost::collectives::ompi::OmpiCollective;
use commcost::export::{OmpiRulesOptions, OnTie, mpich_json, ompi_rules_with_options};

use crate::units::{self, List};
use crate::{Failure, ModelSource, model};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    commcost export ompi-rules --preset open-mpi-openib --procs 2..1024 -o rules.conf\n  \
    mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename rules.conf ...\n  \
    commcost export mpich-json --model mine.json --procs 2..256 --collectives bcast,allreduce -o tuning.json\n  \
    MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=tuning.json mpiexec ...\n  \
    commcost export simgrid --model mine.json --procs 16 -o platform.xml\n  \
    smpirun -platform platform.xml -np 16 ./app")]
pub struct ExportArgs {
    /// The tuning file format.
    format: Format,
    #[command(flatten)]
    source: ModelSource,
    /// Communicator sizes of the blocks: a list (4,16,64) or a doubling range (2..1024).
    #[arg(long, value_parser = units::parse_list, value_name = "LIST")]
    procs: List,
    /// Message sizes of the rules, in each file's own convention (the buffer, or `m P` for
    /// allgather, alltoall, gather, scatter): a doubling range or a list.
    #[arg(long, value_parser = units::parse_list, value_name = "RANGE", default_value = "1..4M")]
    bytes: List,
    /// Collectives to write (Open MPI names, comma-separated); default all the format supports.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    collectives: Vec<String>,
    /// Open MPI rules where several algorithms cost the same: `defer` writes algorithm 0
    /// (Open MPI keeps its own fixed decision there), `first` names the first tied algorithm.
    #[arg(long, value_enum, default_value = "defer", value_name = "POLICY")]
    on_tie: TiePolicy,
    /// The file to write (standard output without it).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
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
    /// MPICH's collective selection JSON.
    MpichJson,
    /// A SimGrid platform file for SMPI: `smpi/os`, `smpi/or`, `smpi/ois`, the latency and
    /// bandwidth factors, and a cluster of the largest `--procs` hosts (`smpirun -platform`).
    Simgrid,
}

pub fn run(args: ExportArgs) -> Result<(), Failure> {
    let loaded = model::load(&args.source)?;
    let collectives: Vec<OmpiCollective> = if args.collectives.is_empty() {
        OmpiCollective::ALL
            .iter()
            .copied()
            .filter(|c| args.format == Format::OmpiRules || *c != OmpiCollective::ReduceScatter)
            .collect()
    } else {
        args.collectives
            .iter()
            .map(|name| {
                name.parse::<OmpiCollective>()
                    .map_err(|e| Failure(format!("--collectives: {e}")))
            })
            .collect::<Result<_, _>>()?
    };
    let text = match args.format {
        Format::OmpiRules => {
            let options = OmpiRulesOptions {
                on_tie: match args.on_tie {
                    TiePolicy::Defer => OnTie::Defer,
                    TiePolicy::First => OnTie::FirstCandidate,
                },
                ..OmpiRulesOptions::default()
            };
            ompi_rules_with_options(
                &loaded.spec,
                &collectives,
                &args.procs.0,
                &args.bytes.0,
                &options,
            )?
            .to_string()
        }
        Format::MpichJson => mpich_json(&loaded.spec, &collectives, &args.procs.0, &args.bytes.0)?,
        Format::Simgrid => {
            let options = commcost::simgrid::SmpiOptions::default();
            let config = commcost::simgrid::smpi_config(&loaded.spec, &options)?;
            let hosts = args.procs.0.iter().copied().max().unwrap_or(2);
            config.platform_xml(hosts)
        }
    };
    match &args.output {
        Some(path) => {
            std::fs::write(path, &text)
                .map_err(|e| Failure(format!("{}: cannot write: {e}", path.display())))?;
            outln!(
                "wrote {} for {} collectives, model {}",
                path.display(),
                collectives.len(),
                loaded.name
            );
        }
        None => out!("{text}"),
    }
    Ok(())
}
