//! The safe core behind the C ABI (and the Python package): model loading, collective families,
//! algorithm records and decision tables. No `unsafe` here; [`crate::ffi`] only converts
//! pointers and catches panics.

use std::fmt::Display;
use std::path::Path;

use commcost::collectives::ompi::{self, OmpiAlgorithm};
use commcost::collectives::{self as coll, Algorithm, DecisionTable, MpichAlgorithm, Problem};
use commcost::sim::Schedule;
use commcost::{CommModel, Message, ModelSpec, presets};

/// Largest model file read (bytes): model files are a few kilobytes; this bounds the read.
pub const MAX_MODEL_FILE_BYTES: u64 = 64 << 20;

/// Largest decision-table grid (cells): bounds the allocation and the build time.
pub const MAX_TABLE_CELLS: usize = 1 << 20;

/// Everything that can go wrong, with the field or file it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreError {
    /// An argument out of its range (`what` names it).
    InvalidArgument(String),
    /// A file could not be read.
    Io(String),
    /// A model file or JSON text is not a valid model.
    Parse(String),
    /// An unknown preset or algorithm name.
    UnknownName(String),
    /// The collective has no algorithm set in the chosen family.
    Unsupported(String),
    /// The collective cost failed (0 processes, an algorithm that cannot run on `P`).
    Collective(String),
}

impl std::fmt::Display for CoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InvalidArgument(s)
            | Self::Io(s)
            | Self::Parse(s)
            | Self::UnknownName(s)
            | Self::Unsupported(s)
            | Self::Collective(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for CoreError {}

/// Builds one embedded parameter set.
pub type PresetBuilder = fn() -> ModelSpec;

/// The embedded parameter sets, under the names the command-line tool gives them
/// (`commcost presets`).
pub const PRESETS: &[(&str, PresetBuilder)] = &[
    ("mpich2-tcp", || presets::mpich2_tcp().into()),
    ("nmpi-sci", || presets::nmpi_sci().into()),
    ("open-mpi-openib", || presets::open_mpi_openib().into()),
    ("open-mpi-gm", || presets::open_mpi_gm().into()),
    ("titan-log3p", || presets::titan_log3p().into()),
];

/// The preset called `name`.
///
/// # Errors
///
/// [`CoreError::UnknownName`] listing the presets.
pub fn preset(name: &str) -> Result<ModelSpec, CoreError> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, build)| build())
        .ok_or_else(|| {
            let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
            CoreError::UnknownName(format!(
                "preset: unknown preset `{name}`; presets: {}",
                names.join(", ")
            ))
        })
}

/// A model from JSON text: a bare `ModelSpec` (`{"model": "loggp", ...}`) or a model file as
/// `commcost calibrate` writes it (`{"commcost_model_file": 1, "spec": {...}, ...}`). `origin`
/// names the text in errors (a path, `json`).
///
/// # Errors
///
/// [`CoreError::Parse`] naming `origin` and the field path of the problem.
pub fn model_from_json(text: &str, origin: &str) -> Result<ModelSpec, CoreError> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| CoreError::Parse(format!("{origin}: not JSON: {e}")))?;
    let (spec, prefix) = match value.get("commcost_model_file") {
        Some(_) => (
            value
                .get("spec")
                .ok_or_else(|| CoreError::Parse(format!("{origin}: model file without `spec`")))?,
            "spec.",
        ),
        None => (&value, ""),
    };
    ModelSpec::deserialize_with_path(spec).map_err(|e| {
        let path = if e.path.is_empty() || e.path == "." {
            prefix.trim_end_matches('.').to_string()
        } else {
            format!("{prefix}{}", e.path)
        };
        CoreError::Parse(format!(
            "{origin}: invalid model at `{path}`: {}",
            e.message
        ))
    })
}

/// A model from a file ([`model_from_json`]); at most [`MAX_MODEL_FILE_BYTES`] are read.
///
/// # Errors
///
/// [`CoreError::Io`] or [`CoreError::Parse`], naming the path.
pub fn model_from_file(path: &Path) -> Result<ModelSpec, CoreError> {
    use std::io::Read;
    let shown = path.display();
    let file = std::fs::File::open(path)
        .map_err(|e| CoreError::Io(format!("{shown}: cannot open: {e}")))?;
    let mut text = String::new();
    file.take(MAX_MODEL_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| CoreError::Io(format!("{shown}: cannot read: {e}")))?;
    if text.len() as u64 > MAX_MODEL_FILE_BYTES {
        return Err(CoreError::Io(format!(
            "{shown}: larger than {MAX_MODEL_FILE_BYTES} bytes"
        )));
    }
    model_from_json(&text, &shown.to_string())
}

/// A message: contiguous (`count <= 1`) or `count` blocks of `block_len` bytes `stride` apart.
///
/// # Errors
///
/// [`CoreError::InvalidArgument`] with the library's reason.
pub fn message(count: u64, block_len: u64, stride: u64) -> Result<Message, CoreError> {
    Message::vector(count, block_len, stride)
        .map_err(|e| CoreError::InvalidArgument(format!("message: {e}")))
}

/// The five per-message quantities, seconds, in the order `p2p`, `send_overhead`,
/// `recv_overhead`, `send_interval`, `gap`.
pub fn quantities(model: &dyn CommModel, msg: &Message) -> [f64; 5] {
    let q = model.quantities(msg);
    [
        q.p2p,
        q.send_overhead,
        q.recv_overhead,
        q.send_interval,
        q.gap,
    ]
}

/// Which algorithm set a collective is priced with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Open MPI's tuned component (`commcost::collectives::ompi`), with Open MPI's IDs.
    Ompi,
    /// The textbook families of Thakur, Rabenseifner & Gropp (`commcost::collectives`), which
    /// MPICH runs.
    Textbook,
}

impl Family {
    /// The family for its C code (0 Open MPI, 1 textbook).
    ///
    /// # Errors
    ///
    /// [`CoreError::InvalidArgument`] for any other code.
    pub fn from_code(code: i32) -> Result<Self, CoreError> {
        match code {
            0 => Ok(Self::Ompi),
            1 => Ok(Self::Textbook),
            _ => Err(CoreError::InvalidArgument(format!(
                "family: {code} is not a family (0 Open MPI, 1 textbook)"
            ))),
        }
    }

    /// The family by name (`ompi`, `textbook`).
    ///
    /// # Errors
    ///
    /// [`CoreError::InvalidArgument`].
    pub fn from_name(name: &str) -> Result<Self, CoreError> {
        match name {
            "ompi" | "open-mpi" | "openmpi" => Ok(Self::Ompi),
            "textbook" | "mpich" => Ok(Self::Textbook),
            _ => Err(CoreError::InvalidArgument(format!(
                "family: unknown family `{name}` (ompi, textbook)"
            ))),
        }
    }
}

/// The collectives, with their C codes (the order of [`Collective::ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collective {
    /// `MPI_Bcast`.
    Bcast,
    /// `MPI_Allreduce`.
    Allreduce,
    /// `MPI_Reduce`.
    Reduce,
    /// `MPI_Allgather`.
    Allgather,
    /// `MPI_Alltoall`.
    Alltoall,
    /// `MPI_Barrier`.
    Barrier,
    /// `MPI_Reduce_scatter` (Open MPI family only).
    ReduceScatter,
    /// `MPI_Gather`.
    Gather,
    /// `MPI_Scatter`.
    Scatter,
    /// `MPI_Scan` (textbook family only).
    Scan,
}

impl Collective {
    /// Every collective; the C code of each is its index.
    pub const ALL: [Self; 10] = [
        Self::Bcast,
        Self::Allreduce,
        Self::Reduce,
        Self::Allgather,
        Self::Alltoall,
        Self::Barrier,
        Self::ReduceScatter,
        Self::Gather,
        Self::Scatter,
        Self::Scan,
    ];

    /// The collective for its C code.
    ///
    /// # Errors
    ///
    /// [`CoreError::InvalidArgument`].
    pub fn from_code(code: i32) -> Result<Self, CoreError> {
        usize::try_from(code)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
            .ok_or_else(|| {
                CoreError::InvalidArgument(format!(
                    "collective: {code} is not a collective (0..={})",
                    Self::ALL.len() - 1
                ))
            })
    }

    /// The collective by its MPI name (`bcast`, `reduce_scatter`, `reduce-scatter`).
    ///
    /// # Errors
    ///
    /// [`CoreError::InvalidArgument`] listing the names.
    pub fn from_name(name: &str) -> Result<Self, CoreError> {
        let wanted = name.trim().to_ascii_lowercase().replace('-', "_");
        let wanted = if wanted == "broadcast" {
            "bcast".to_string()
        } else {
            wanted
        };
        Self::ALL
            .iter()
            .copied()
            .find(|c| c.name() == wanted)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|c| c.name()).collect();
                CoreError::InvalidArgument(format!(
                    "collective: unknown collective `{name}` ({})",
                    names.join(", ")
                ))
            })
    }

    /// The MPI name, lower case (`reduce_scatter`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bcast => "bcast",
            Self::Allreduce => "allreduce",
            Self::Reduce => "reduce",
            Self::Allgather => "allgather",
            Self::Alltoall => "alltoall",
            Self::Barrier => "barrier",
            Self::ReduceScatter => "reduce_scatter",
            Self::Gather => "gather",
            Self::Scatter => "scatter",
            Self::Scan => "scan",
        }
    }
}

/// One algorithm of a collective with its names in the crate, Open MPI and MPICH, and its cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The crate's name with parameters (`Display`, which `FromStr` reads back):
    /// `chain:segment=8192,fanout=4`.
    pub name: String,
    /// Open MPI's algorithm ID (`coll_tuned_<coll>_algorithm`), 0 in the textbook family.
    pub ompi_id: u32,
    /// Open MPI's name of the algorithm (`split_binary_tree`), empty in the textbook family.
    pub ompi_name: &'static str,
    /// Open MPI's segment size (bytes, 0 unsegmented) of the rules file; 0 in the textbook family.
    pub segment: u64,
    /// Open MPI's chain fan-out of the rules file, 0 where the algorithm has none.
    pub fanout: u64,
    /// MPICH's name (`MPIR_CVAR_<COLL>_INTRA_ALGORITHM`), `None` where MPICH runs no such
    /// algorithm.
    pub mpich_name: Option<&'static str>,
    /// Predicted time, seconds.
    pub cost: f64,
}

/// What an algorithm type contributes to a [`Choice`].
trait Describe:
    Algorithm + Display + MpichAlgorithm + std::str::FromStr + commcost::sim::ToSchedule
{
    /// `(ompi_id, ompi_name, segment, fanout)`.
    fn ompi(&self) -> (u32, &'static str, u64, u64);
}

macro_rules! ompi_describe {
    ($($ty:ty),*) => {$(
        impl Describe for $ty {
            fn ompi(&self) -> (u32, &'static str, u64, u64) {
                (self.ompi_id(), self.ompi_name(), self.segment_size(), self.faninout())
            }
        }
    )*};
}
ompi_describe!(
    ompi::Bcast,
    ompi::Allreduce,
    ompi::Reduce,
    ompi::Allgather,
    ompi::Alltoall,
    ompi::Barrier,
    ompi::ReduceScatter,
    ompi::Gather,
    ompi::Scatter
);

macro_rules! textbook_describe {
    ($($ty:ty),*) => {$(
        impl Describe for $ty {
            fn ompi(&self) -> (u32, &'static str, u64, u64) {
                (0, "", 0, 0)
            }
        }
    )*};
}
textbook_describe!(
    coll::Bcast,
    coll::Allreduce,
    coll::Reduce,
    coll::Allgather,
    coll::Alltoall,
    coll::Barrier,
    coll::Gather,
    coll::Scatter,
    coll::Scan
);

fn choice<A: Describe>(a: A, cost: f64) -> Choice {
    let (ompi_id, ompi_name, segment, fanout) = a.ompi();
    Choice {
        name: a.to_string(),
        ompi_id,
        ompi_name,
        segment,
        fanout,
        mpich_name: a.mpich_name(),
        cost,
    }
}

fn collective_error(e: commcost::collectives::CollectiveError) -> CoreError {
    CoreError::Collective(format!("collective: {e}"))
}

/// Calls `$f::<algorithm type>($args)` for a family and collective.
macro_rules! dispatch {
    ($family:expr, $coll:expr, $f:ident ( $($args:expr),* )) => {
        match ($family, $coll) {
            (Family::Ompi, Collective::Bcast) => $f::<ompi::Bcast>($($args),*),
            (Family::Ompi, Collective::Allreduce) => $f::<ompi::Allreduce>($($args),*),
            (Family::Ompi, Collective::Reduce) => $f::<ompi::Reduce>($($args),*),
            (Family::Ompi, Collective::Allgather) => $f::<ompi::Allgather>($($args),*),
            (Family::Ompi, Collective::Alltoall) => $f::<ompi::Alltoall>($($args),*),
            (Family::Ompi, Collective::Barrier) => $f::<ompi::Barrier>($($args),*),
            (Family::Ompi, Collective::ReduceScatter) => $f::<ompi::ReduceScatter>($($args),*),
            (Family::Ompi, Collective::Gather) => $f::<ompi::Gather>($($args),*),
            (Family::Ompi, Collective::Scatter) => $f::<ompi::Scatter>($($args),*),
            (Family::Textbook, Collective::Bcast) => $f::<coll::Bcast>($($args),*),
            (Family::Textbook, Collective::Allreduce) => $f::<coll::Allreduce>($($args),*),
            (Family::Textbook, Collective::Reduce) => $f::<coll::Reduce>($($args),*),
            (Family::Textbook, Collective::Allgather) => $f::<coll::Allgather>($($args),*),
            (Family::Textbook, Collective::Alltoall) => $f::<coll::Alltoall>($($args),*),
            (Family::Textbook, Collective::Barrier) => $f::<coll::Barrier>($($args),*),
            (Family::Textbook, Collective::Gather) => $f::<coll::Gather>($($args),*),
            (Family::Textbook, Collective::Scatter) => $f::<coll::Scatter>($($args),*),
            (Family::Textbook, Collective::Scan) => $f::<coll::Scan>($($args),*),
            (Family::Ompi, Collective::Scan) => Err(CoreError::Unsupported(
                "collective: Open MPI's tuned component has no scan algorithms; use the textbook family".into(),
            )),
            (Family::Textbook, Collective::ReduceScatter) => Err(CoreError::Unsupported(
                "collective: the textbook family has no reduce_scatter; use the Open MPI family".into(),
            )),
        }
    };
}

fn ranked<A: Describe>(model: &dyn CommModel, problem: &Problem) -> Result<Vec<Choice>, CoreError> {
    Ok(coll::rank::<A>(model, problem)
        .map_err(collective_error)?
        .into_iter()
        .map(|(a, c)| choice(a, c))
        .collect())
}

fn best_of<A: Describe>(model: &dyn CommModel, problem: &Problem) -> Result<Choice, CoreError> {
    let (a, c) = coll::best::<A>(model, problem).map_err(collective_error)?;
    Ok(choice(a, c))
}

fn named<A: Describe>(
    model: &dyn CommModel,
    problem: &Problem,
    name: &str,
) -> Result<Choice, CoreError>
where
    <A as std::str::FromStr>::Err: Display,
{
    let a: A = name
        .parse()
        .map_err(|e| CoreError::UnknownName(format!("algorithm: {e}")))?;
    let c = a.cost(model, problem).map_err(collective_error)?;
    Ok(choice(a, c))
}

/// Every candidate algorithm of the collective with its cost, cheapest first
/// (`commcost::collectives::rank`), for a contiguous message of `bytes` on `processes`.
///
/// # Errors
///
/// [`CoreError::Unsupported`] for a collective outside the family; [`CoreError::Collective`].
pub fn rank(
    model: &dyn CommModel,
    family: Family,
    collective: Collective,
    processes: u64,
    bytes: u64,
) -> Result<Vec<Choice>, CoreError> {
    let problem = Problem::new(processes, Message::contiguous(bytes));
    dispatch!(family, collective, ranked(model, &problem))
}

/// The cheapest candidate (`commcost::collectives::best`).
///
/// # Errors
///
/// As [`rank`].
pub fn best(
    model: &dyn CommModel,
    family: Family,
    collective: Collective,
    processes: u64,
    bytes: u64,
) -> Result<Choice, CoreError> {
    let problem = Problem::new(processes, Message::contiguous(bytes));
    dispatch!(family, collective, best_of(model, &problem))
}

/// The cost of one algorithm given by its crate name (`binomial`, `chain:segment=8192,fanout=4`;
/// in the Open MPI family also Open MPI's name or ID, `split_binary_tree`, `4`).
///
/// # Errors
///
/// [`CoreError::UnknownName`] for a name the collective does not know; as [`rank`].
pub fn algorithm(
    model: &dyn CommModel,
    family: Family,
    collective: Collective,
    name: &str,
    processes: u64,
    bytes: u64,
) -> Result<Choice, CoreError> {
    let problem = Problem::new(processes, Message::contiguous(bytes));
    dispatch!(family, collective, named(model, &problem, name))
}

fn schedule_of<A: Describe>(problem: &Problem, name: &str) -> Result<Schedule, CoreError>
where
    <A as std::str::FromStr>::Err: Display,
{
    let a: A = name
        .parse()
        .map_err(|e| CoreError::UnknownName(format!("algorithm: {e}")))?;
    a.schedule(problem)
        .map_err(|e| CoreError::Collective(format!("schedule: {e}")))
}

/// The message schedule of the algorithm `name` (`commcost::sim::ToSchedule`), for
/// `commcost::sim::simulate`.
///
/// # Errors
///
/// As [`algorithm`]; [`CoreError::Collective`] when the schedule exceeds the simulator's
/// limits.
pub fn schedule(
    family: Family,
    collective: Collective,
    name: &str,
    processes: u64,
    bytes: u64,
) -> Result<Schedule, CoreError> {
    let problem = Problem::new(processes, Message::contiguous(bytes));
    dispatch!(family, collective, schedule_of(&problem, name))
}

/// A decision table computed once: the best algorithm of a collective on a grid of process
/// counts and message sizes, looked up with two binary searches (`O(log n)`).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The collective's family.
    pub family: Family,
    /// The collective.
    pub collective: Collective,
    processes: Vec<u64>,
    sizes: Vec<u64>,
    /// Row-major: `cells[i * sizes.len() + j]`, with the cost at the grid point.
    cells: Vec<Choice>,
}

fn build_table<A: Describe>(
    model: &dyn CommModel,
    processes: &[u64],
    sizes: &[u64],
) -> Result<Vec<Choice>, CoreError> {
    let template = Problem::new(1, Message::contiguous(0));
    let table = DecisionTable::<A>::build(model, processes, sizes, &template)
        .map_err(|e| CoreError::InvalidArgument(format!("table: {e}")))?;
    table
        .cells()
        .map(|(p, s, a)| {
            let cost = a
                .cost(model, &Problem::new(p, Message::contiguous(s)))
                .map_err(collective_error)?;
            Ok(choice(a, cost))
        })
        .collect()
}

impl Table {
    /// Builds the table (`commcost::collectives::DecisionTable::build`): both axes non-empty and
    /// strictly increasing, process counts at least 1, at most [`MAX_TABLE_CELLS`] cells.
    ///
    /// # Errors
    ///
    /// [`CoreError::InvalidArgument`] naming the axis; as [`rank`].
    pub fn build(
        model: &dyn CommModel,
        family: Family,
        collective: Collective,
        processes: &[u64],
        sizes: &[u64],
    ) -> Result<Self, CoreError> {
        let cells = processes.len().checked_mul(sizes.len());
        if cells.is_none_or(|c| c > MAX_TABLE_CELLS) {
            return Err(CoreError::InvalidArgument(format!(
                "table: {} process counts x {} sizes exceed {MAX_TABLE_CELLS} cells",
                processes.len(),
                sizes.len()
            )));
        }
        if processes.contains(&0) {
            return Err(CoreError::InvalidArgument(
                "table: processes: process counts must be at least 1".into(),
            ));
        }
        let cells = dispatch!(family, collective, build_table(model, processes, sizes))?;
        Ok(Self {
            family,
            collective,
            processes: processes.to_vec(),
            sizes: sizes.to_vec(),
            cells,
        })
    }

    /// The process counts of the grid.
    pub fn processes(&self) -> &[u64] {
        &self.processes
    }

    /// The message sizes of the grid, bytes.
    pub fn sizes(&self) -> &[u64] {
        &self.sizes
    }

    /// Every cell, row-major (process count, then size).
    pub fn cells(&self) -> &[Choice] {
        &self.cells
    }

    /// The choice at the grid point at or below `(processes, bytes)` (the first grid point below
    /// the grid), as `DecisionTable::lookup`: two binary searches. Its `cost` is the cost at the
    /// grid point.
    pub fn lookup(&self, processes: u64, bytes: u64) -> &Choice {
        &self.cells[self.lookup_index(processes, bytes)]
    }

    /// The row-major index of [`lookup`](Self::lookup)'s cell in [`cells`](Self::cells).
    pub fn lookup_index(&self, processes: u64, bytes: u64) -> usize {
        let i = self
            .processes
            .partition_point(|&p| p <= processes)
            .saturating_sub(1);
        let j = self
            .sizes
            .partition_point(|&s| s <= bytes)
            .saturating_sub(1);
        // i < processes.len(), j < sizes.len(): both axes are non-empty (checked by `build`)
        i * self.sizes.len() + j
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lookup_agrees_with_the_library_decision_table() {
        let model = presets::open_mpi_openib();
        let procs = [2, 4, 16, 64];
        let sizes = [1, 64, 1024, 16384, 1 << 20];
        let table = Table::build(&model, Family::Ompi, Collective::Bcast, &procs, &sizes).unwrap();
        let template = Problem::new(1, Message::contiguous(0));
        let lib = DecisionTable::<ompi::Bcast>::build(&model, &procs, &sizes, &template).unwrap();
        for p in [0, 1, 2, 3, 5, 64, 1000] {
            for s in [0, 1, 63, 64, 5000, 1 << 30] {
                assert_eq!(table.lookup(p, s).name, lib.lookup(p, s).to_string());
            }
        }
    }

    #[test]
    fn unsupported_pairs_are_errors() {
        let model = presets::open_mpi_openib();
        assert!(matches!(
            best(&model, Family::Ompi, Collective::Scan, 4, 8),
            Err(CoreError::Unsupported(_))
        ));
        assert!(matches!(
            best(&model, Family::Textbook, Collective::ReduceScatter, 4, 8),
            Err(CoreError::Unsupported(_))
        ));
    }

    #[test]
    fn model_file_errors_name_the_field() {
        let e = model_from_json(r#"{"model": "pram", "unit_cost": -1}"#, "x.json").unwrap_err();
        assert!(e.to_string().contains("x.json"), "{e}");
        let e = model_from_json(
            r#"{"commcost_model_file": 1, "spec": {"model": "pram", "unit_cots": 1e-6}}"#,
            "y.json",
        )
        .unwrap_err();
        assert!(e.to_string().contains("unit_cots"), "{e}");
    }
}
