//! The safe core behind the C ABI (and the Python package): model loading, collective families,
//! algorithm records and decision tables. No `unsafe` here; [`crate::ffi`] only converts
//! pointers and catches panics.

use std::path::Path;

use commcost::collectives::{
    self as coll, AlgorithmVisitor, CollectiveError, DecisionTable, FamilyAlgorithm, Problem,
};
pub use commcost::collectives::{Choice, Collective, Family};
use commcost::sim::{DEFAULT_MAX_MEMORY, Schedule, SimError};
use commcost::{CommModel, Message, ModelFileError, ModelSpec, presets};

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

/// A model from JSON text, read as a model file is (`commcost::model_file::parse_model_text`):
/// a bare `ModelSpec` (`{"model": "loggp", ...}`), a model file as `commcost calibrate` writes
/// it (`{"commcost_model_file": 1, "spec": {...}, ...}`) or several named models (the preferred
/// one). `origin` names the text in errors (a path, `json`).
///
/// # Errors
///
/// [`CoreError::Parse`] naming `origin` and the field path of the problem.
pub fn model_from_json(text: &str, origin: &str) -> Result<ModelSpec, CoreError> {
    commcost::model_file::parse_model_text(text, origin, None)
        .map(|loaded| loaded.spec)
        .map_err(model_file_error)
}

/// A model from a file, `FILE` or `FILE#NAME`, read by the library's model-file loader
/// (`commcost::model_file::load_model_file`): the files `commcost calibrate` writes, a regular
/// file of at most `commcost::limits::MAX_MODEL_FILE_BYTES` bytes.
///
/// # Errors
///
/// [`CoreError::Io`] or [`CoreError::Parse`], naming the path.
pub fn model_from_file(path: &Path) -> Result<ModelSpec, CoreError> {
    commcost::model_file::load_model_file(path)
        .map(|loaded| loaded.spec)
        .map_err(model_file_error)
}

/// A file that cannot be read is `Io`, one that does not load `Parse`.
fn model_file_error(e: ModelFileError) -> CoreError {
    match e {
        ModelFileError::File(_) => CoreError::Io(e.to_string()),
        e => CoreError::Parse(e.to_string()),
    }
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

/// The C codes of the families (`CC_FAMILY_*`): index = code. Open MPI's is 0, the default.
pub const FAMILY_CODES: [Family; 3] = [Family::Ompi, Family::Textbook, Family::Mpich];

/// The C codes of the collectives (`CC_BCAST` = 0 ...): index = code. The order is the C ABI's
/// and never changes; new collectives are appended.
pub const COLLECTIVE_CODES: [Collective; 10] = [
    Collective::Bcast,
    Collective::Allreduce,
    Collective::Reduce,
    Collective::Allgather,
    Collective::Alltoall,
    Collective::Barrier,
    Collective::ReduceScatter,
    Collective::Gather,
    Collective::Scatter,
    Collective::Scan,
];

/// The family for its C code.
///
/// # Errors
///
/// [`CoreError::InvalidArgument`] for any other code.
pub fn family_from_code(code: i32) -> Result<Family, CoreError> {
    usize::try_from(code)
        .ok()
        .and_then(|i| FAMILY_CODES.get(i).copied())
        .ok_or_else(|| {
            CoreError::InvalidArgument(format!(
                "family: {code} is not a family (0 Open MPI, 1 textbook, 2 MPICH)"
            ))
        })
}

/// The collective for its C code.
///
/// # Errors
///
/// [`CoreError::InvalidArgument`].
pub fn collective_from_code(code: i32) -> Result<Collective, CoreError> {
    usize::try_from(code)
        .ok()
        .and_then(|i| COLLECTIVE_CODES.get(i).copied())
        .ok_or_else(|| {
            CoreError::InvalidArgument(format!(
                "collective: {code} is not a collective (0..={})",
                COLLECTIVE_CODES.len() - 1
            ))
        })
}

/// The family by name (`ompi`, `textbook`, `mpich`; the library's `FromStr`).
///
/// # Errors
///
/// [`CoreError::InvalidArgument`].
pub fn family_from_name(name: &str) -> Result<Family, CoreError> {
    name.parse()
        .map_err(|e| CoreError::InvalidArgument(format!("family: {e}")))
}

/// The collective by name (`bcast`, `reduce_scatter`, `reduce-scatter`; the library's
/// `FromStr`).
///
/// # Errors
///
/// [`CoreError::InvalidArgument`] listing the names.
pub fn collective_from_name(name: &str) -> Result<Collective, CoreError> {
    name.parse()
        .map_err(|e| CoreError::InvalidArgument(format!("collective: {e}")))
}

fn collective_error(e: CollectiveError) -> CoreError {
    match e {
        CollectiveError::NotPriced { .. } => CoreError::Unsupported(format!("collective: {e}")),
        CollectiveError::UnknownAlgorithm(e) => CoreError::UnknownName(format!("algorithm: {e}")),
        e => CoreError::Collective(format!("collective: {e}")),
    }
}

/// Every candidate algorithm of the collective with its cost, cheapest first
/// (`commcost::collectives::rank_in`), for a contiguous message of `bytes` on `processes`.
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
    coll::rank_in(model, family, collective, &problem).map_err(collective_error)
}

/// The cheapest candidate (`commcost::collectives::best_in`).
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
    coll::best_in(model, family, collective, &problem).map_err(collective_error)
}

/// The cost of one algorithm given by its name in the family (`binomial`,
/// `chain:segment=8192,fanout=4`; in the Open MPI family also Open MPI's name or ID,
/// `split_binary_tree`, `4`; in MPICH's, MPICH's name).
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
    coll::cost_in(model, family, collective, name, &problem).map_err(collective_error)
}

/// The message schedule of the algorithm `name` (`commcost::sim::schedule_in`), for
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
    commcost::sim::schedule_in(family, collective, name, &problem, DEFAULT_MAX_MEMORY).map_err(
        |e| match e {
            SimError::Collective(e) => collective_error(e),
            e => CoreError::Collective(format!("schedule: {e}")),
        },
    )
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

struct BuildTable<'a> {
    model: &'a dyn CommModel,
    processes: &'a [u64],
    sizes: &'a [u64],
}

impl AlgorithmVisitor for BuildTable<'_> {
    type Output = Result<Vec<Choice>, CoreError>;
    fn visit<A: FamilyAlgorithm>(self) -> Self::Output {
        let template = Problem::new(1, Message::contiguous(0));
        let table = DecisionTable::<A>::build(self.model, self.processes, self.sizes, &template)
            .map_err(|e| CoreError::InvalidArgument(format!("table: {e}")))?;
        table
            .cells()
            .map(|(p, s, a)| {
                let cost = a
                    .cost(self.model, &Problem::new(p, Message::contiguous(s)))
                    .map_err(collective_error)?;
                Ok(Choice::new(&a, cost))
            })
            .collect()
    }
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
        let build = BuildTable {
            model,
            processes,
            sizes,
        };
        let cells = family
            .visit(collective, build)
            .map_err(collective_error)??;
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
        let lib = DecisionTable::<commcost::collectives::ompi::Bcast>::build(
            &model, &procs, &sizes, &template,
        )
        .unwrap();
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
        // a problem of the whole text names no empty path
        let e = model_from_json(r#"{"model": "no-such-model"}"#, "z.json").unwrap_err();
        assert!(!e.to_string().contains("``"), "{e}");
        assert!(e.to_string().starts_with("z.json: invalid model"), "{e}");
        // a key given twice is refused, naming it and where
        let e = model_from_json(
            r#"{"model": "pram", "unit_cost": 1e-6, "unit_cost": 1}"#,
            "d.json",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("duplicate key `unit_cost`") && e.to_string().contains("line 1"),
            "{e}"
        );
    }
}
