//! MPICH's collective selection JSON: the model's decisions for what it prices, MPICH's own
//! default decisions for everything else ([`mpich_json`] documents the file).

use std::fmt;
use std::str::FromStr;

use super::grid::{Grid, OnTie, choose};
use super::{check_collectives, check_grid};
use crate::collectives::Collective;
use crate::collectives::{self, MpichAlgorithm, Operator, Problem};
use crate::export::ExportError;
use crate::{CommModel, Message};

/// An MPICH release series whose algorithm names and default table the exporter knows.
///
/// # Examples
///
/// ```
/// use commcost::export::MpichVersion;
///
/// assert_eq!("4.0.2".parse::<MpichVersion>()?, MpichVersion::V4_0);
/// assert_eq!("4.2".parse::<MpichVersion>()?.to_string(), "4.2");
/// assert_eq!("4.1rc1".parse::<MpichVersion>()?, MpichVersion::V4_1);
/// assert!("3.4.3".parse::<MpichVersion>().is_err());
/// assert!("4.0.2; x".parse::<MpichVersion>().is_err());
/// # Ok::<(), commcost::export::ExportError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MpichVersion {
    /// MPICH 4.0.x (Debian 12's `mpich` package is 4.0.2).
    V4_0,
    /// MPICH 4.1.x.
    V4_1,
    /// MPICH 4.2.x (the default table and the algorithm names used here are 4.1's).
    V4_2,
}

impl MpichVersion {
    /// Every supported version, oldest first.
    pub const ALL: [Self; 3] = [Self::V4_0, Self::V4_1, Self::V4_2];

    /// The oldest supported version, the default where none is known.
    pub const OLDEST: Self = Self::V4_0;

    /// MPICH's own default selection table of the version (`maint/tuning/coll/mpir/generic.json`).
    pub fn default_table(self) -> &'static str {
        match self {
            Self::V4_0 => include_str!("mpich-4.0-generic.json"),
            Self::V4_1 | Self::V4_2 => include_str!("mpich-4.1-generic.json"),
        }
    }

    /// The algorithm (MPICH's function) the version's default table chooses for a call of `c`
    /// on `processes` ranks with `bytes` (as [`mpich_decide`] reads the table: the timing's
    /// call on a flat communicator).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::collectives::Collective;
    /// use commcost::export::MpichVersion;
    ///
    /// // `maint/tuning/coll/mpir/generic.json` of MPICH 4.0.2: alltoall on fewer than 8 ranks
    /// // runs `scattered` up to 32 KiB per pair, `pairwise` above
    /// let v = MpichVersion::V4_0;
    /// assert_eq!(v.default_algorithm(Collective::Alltoall, 4, 32768).as_deref(), Some("MPIR_Alltoall_intra_scattered"));
    /// assert_eq!(v.default_algorithm(Collective::Alltoall, 4, 65536).as_deref(), Some("MPIR_Alltoall_intra_pairwise"));
    /// ```
    pub fn default_algorithm(self, c: Collective, processes: u64, bytes: u64) -> Option<String> {
        mpich_decide(self.default_table(), c, processes, bytes)
    }

    /// The version in the output of MPICH's `mpichversion` (`MPICH Version:  4.0.2`), `None`
    /// without such a line or for a release series this crate does not support.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::export::MpichVersion;
    ///
    /// let out = "MPICH Version:    \t4.0.2\nMPICH Release date:\tThu Apr  7 2022\n";
    /// assert_eq!(MpichVersion::from_mpichversion(out), Some(MpichVersion::V4_0));
    /// assert_eq!(MpichVersion::from_mpichversion("MPICH Version: 3.3\n"), None);
    /// ```
    pub fn from_mpichversion(output: &str) -> Option<Self> {
        output
            .lines()
            .take(1000)
            .find_map(|l| l.trim().strip_prefix("MPICH Version:"))
            .and_then(|v| v.trim().parse().ok())
    }

    fn barrier(self) -> (&'static str, Option<&'static str>) {
        match self {
            Self::V4_0 => ("MPIR_Barrier_intra_dissemination", None),
            Self::V4_1 | Self::V4_2 => ("MPIR_Barrier_intra_k_dissemination", Some("k=2")),
        }
    }

    /// Whether the version has MPICH's function `MPIR_<Coll>_intra_<name>`, for the names the
    /// crate's algorithms map to ([`MpichAlgorithm::mpich_name`]).
    pub(crate) fn has(self, function: &str) -> bool {
        match function {
            "MPIR_Allreduce_intra_ring" => self >= Self::V4_1,
            _ => true,
        }
    }
}

impl fmt::Display for MpichVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::V4_0 => "4.0",
            Self::V4_1 => "4.1",
            Self::V4_2 => "4.2",
        })
    }
}

/// `4.0`, `4.1`, `4.2`, or a release of them (`4.0.2`, `4.1rc1`).
impl FromStr for MpichVersion {
    type Err = ExportError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        // `4.0`, `4.0.2`, `4.1rc1`, `4.1.3b2`: the series, a patch number, a pre-release tag
        let release = |rest: &str| {
            let rest = match rest.strip_prefix('.') {
                Some(r) => r.trim_start_matches(|c: char| c.is_ascii_digit()),
                None => rest,
            };
            let tag = ["a", "b", "rc"]
                .iter()
                .find_map(|p| rest.strip_prefix(p))
                .unwrap_or(rest);
            tag.bytes().all(|c| c.is_ascii_digit()) && (tag.is_empty() || tag != rest)
        };
        let series = |v: &str| t.strip_prefix(v).is_some_and(release);
        Self::ALL
            .into_iter()
            .find(|v| series(&v.to_string()))
            .ok_or_else(|| ExportError::Grid {
                what: "MPICH version",
                detail: format!(
                    "`{}` is not one of the supported series 4.0, 4.1, 4.2",
                    super::echo(s)
                ),
            })
    }
}

/// Options of [`mpich_json`]; the default is MPICH 4.0 ([`MpichVersion::OLDEST`]), operators
/// free.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MpichJsonOptions {
    /// The MPICH version whose algorithm names and default table the file uses.
    pub version: MpichVersion,
    /// The reduction operator allreduce and reduce are priced with.
    pub operator: Operator,
}

impl Default for MpichJsonOptions {
    fn default() -> Self {
        Self {
            version: MpichVersion::OLDEST,
            operator: Operator::FREE,
        }
    }
}

/// A JSON object whose values are objects, keys in file order (MPICH tries them in order).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Node(Vec<(String, Node)>);

impl Node {
    fn leaf(function: &str, param: Option<&str>) -> Self {
        let params = param.map(|p| vec![(p.to_string(), Node::default())]);
        Node(vec![(
            format!("algorithm={function}"),
            Node(params.unwrap_or_default()),
        )])
    }

    /// Appends the message sizes at which a `<key><=N` (N + 1) or `<key><N` (N) condition in
    /// this subtree changes, unsorted.
    fn size_bounds(&self, key: &str, out: &mut Vec<u64>, depth: usize) {
        if key.is_empty() || depth > 64 {
            return;
        }
        for (k, child) in &self.0 {
            if let Some(rest) = k.strip_prefix(key) {
                if let Some(n) = rest.strip_prefix("<=").and_then(|n| n.parse::<u64>().ok()) {
                    out.push(n.saturating_add(1));
                } else if let Some(n) = rest.strip_prefix('<').and_then(|n| n.parse::<u64>().ok()) {
                    out.push(n);
                }
            }
            child.size_bounds(key, out, depth + 1);
        }
    }

    fn get(&self, key: &str) -> Option<&Node> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn write(&self, out: &mut String, depth: usize) {
        if self.0.is_empty() {
            out.push_str("{}");
            return;
        }
        out.push_str("{\n");
        for (i, (k, v)) in self.0.iter().enumerate() {
            out.push_str(&"  ".repeat(depth + 1));
            out.push('"');
            out.push_str(k);
            out.push_str("\": ");
            v.write(out, depth + 1);
            out.push_str(if i + 1 < self.0.len() { ",\n" } else { "\n" });
        }
        out.push_str(&"  ".repeat(depth));
        out.push('}');
    }

    /// Parses MPICH's table: objects of objects, keys without escapes. Depth and size are those
    /// of the embedded files; a malformed text is an error, never a panic.
    fn parse(text: &str) -> Result<Self, String> {
        let bytes = text.as_bytes();
        let mut pos = 0;
        let node = Self::parse_object(bytes, &mut pos, 0)?;
        skip_ws(bytes, &mut pos);
        if pos != bytes.len() {
            return Err(format!("text after the table at byte {pos}"));
        }
        Ok(node)
    }

    fn parse_object(b: &[u8], pos: &mut usize, depth: usize) -> Result<Self, String> {
        if depth > 64 {
            return Err("nested too deeply".into());
        }
        skip_ws(b, pos);
        if b.get(*pos) != Some(&b'{') {
            return Err(format!("expected `{{` at byte {pos}"));
        }
        *pos += 1;
        let mut entries = Vec::new();
        skip_ws(b, pos);
        if b.get(*pos) == Some(&b'}') {
            *pos += 1;
            return Ok(Node(entries));
        }
        loop {
            skip_ws(b, pos);
            if b.get(*pos) != Some(&b'"') {
                return Err(format!("expected a key at byte {pos}"));
            }
            let start = *pos + 1;
            let len = b[start..]
                .iter()
                .position(|&c| c == b'"')
                .ok_or("unterminated key")?;
            let key = std::str::from_utf8(&b[start..start + len])
                .map_err(|_| "a key is not UTF-8".to_string())?;
            if key.contains('\\') {
                return Err(format!("escape in key `{key}`"));
            }
            *pos = start + len + 1;
            skip_ws(b, pos);
            if b.get(*pos) != Some(&b':') {
                return Err(format!("expected `:` at byte {pos}"));
            }
            *pos += 1;
            let value = Self::parse_object(b, pos, depth + 1)?;
            entries.push((key.to_string(), value));
            skip_ws(b, pos);
            match b.get(*pos) {
                Some(b',') => *pos += 1,
                Some(b'}') => {
                    *pos += 1;
                    return Ok(Node(entries));
                }
                _ => return Err(format!("expected `,` or `}}` at byte {pos}")),
            }
        }
    }
}

fn skip_ws(b: &[u8], pos: &mut usize) {
    while b.get(*pos).is_some_and(u8::is_ascii_whitespace) {
        *pos += 1;
    }
}

/// The collectives [`mpich_json`] writes decisions for: those with algorithms in MPICH's
/// family and a subtree in MPICH's selection JSON (every one of
/// [`Family::Mpich`](crate::collectives::Family::Mpich)'s but scan).
pub fn mpich_json_collectives() -> Vec<Collective> {
    Collective::ALL
        .into_iter()
        .filter(|&c| mpich_collective(c).is_some())
        .collect()
}

/// MPICH's name of a collective this crate prices for MPICH (its MPI name), and the
/// message-size key of its subtree in MPICH's selection JSON.
fn mpich_collective(c: Collective) -> Option<(&'static str, &'static str)> {
    let size_key = match c {
        Collective::Bcast | Collective::Allreduce | Collective::Reduce | Collective::Alltoall => {
            "avg_msg_size"
        }
        Collective::Allgather | Collective::Gather | Collective::Scatter => "total_msg_size",
        Collective::Barrier => "",
        Collective::ReduceScatter | Collective::ReduceScatterBlock | Collective::Scan => {
            return None;
        }
    };
    Some((c.name(), size_key))
}

/// MPICH's collective selection JSON (`MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE`) for
/// `options.version`: MPICH's default table of that version with, for each collective of
/// `collectives`, the intra-communicator subtree replaced by the model's best MPICH algorithm
/// per grid cell.
///
/// MPICH reads the file named by `MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE` in `MPI_Init`
/// and uses it *instead of* its built-in table, for every collective: a collective (or a communicator kind, a message size)
/// the file does not cover makes MPICH fail an assertion when it is called, and a leaf naming an
/// algorithm the version does not have aborts `MPI_Init`. So the file written here is complete:
/// it starts from MPICH's own default table of the target version and replaces, for each
/// collective the model prices, the intra-communicator subtree with the model's.
///
/// The file is a tree of JSON objects whose keys are conditions MPICH tries in order
/// (`src/mpi/coll/src/csel.c`) — `collective=bcast`, `comm_type=intra`, `comm_size<=N` /
/// `comm_size=any`, `avg_msg_size<=N` or `total_msg_size<=N` / `..=any` — with leaves
/// `algorithm=MPIR_<Coll>_intra_<name>` holding the algorithm's parameters. A range
/// `[S_j, S_{j+1})` is written `<= S_{j+1} - 1`, the last one `=any`; MPICH reads the bounds
/// with `atoi`, so message-size bounds above `2^31 - 1` fold into `=any`.
///
/// Candidates are the algorithms MPICH runs ([`MpichAlgorithm::mpich_name`]) that the version
/// has: bcast from [`collectives::Bcast`], allreduce from [`collectives::Allreduce`],
/// reduce, allgather, alltoall, gather, scatter and barrier from the same-named enums.
///
/// # MPICH's default tables
///
/// Embedded unchanged (Copyright (C) by Argonne National Laboratory, MPICH's BSD-style licence,
/// see `COPYRIGHT` in MPICH's source): `maint/tuning/coll/mpir/generic.json` of the MPICH
/// releases, the table MPICH compiles into `src/mpi/coll/src/csel_json_autogen.c`:
///
/// | [`MpichVersion`] | file of | identical in |
/// |---|---|---|
/// | `4.0` | MPICH 4.0.2 | 4.0, 4.0.1, 4.0.2, 4.0.3 |
/// | `4.1`, `4.2` | MPICH 4.1.3 | 4.1, 4.1.1, 4.1.2, 4.1.3, 4.2.0 – 4.2.3 |
///
/// # Preconditions encoded
///
/// MPICH asserts (`MPIR_Assert`) inside an algorithm whose preconditions a call breaks; the
/// file never selects an algorithm outside them (from the algorithms' sources in
/// `src/mpi/coll/<collective>/` of each version):
///
/// * allgather `recursive_doubling` needs a power-of-two communicator
///   (`allgather_intra_recursive_doubling.c`): a leaf choosing it is
///   `{"comm_size=pow2": recursive_doubling, "comm_size=any": <the model's best other>}`, and
///   it is not a candidate on a grid size that is not a power of two;
/// * allreduce `reduce_scatter_allgather` needs a built-in operator and `count >= pof2`
///   (`allreduce_intra_reduce_scatter_allgather.c`): the collective's tree starts with
///   `is_op_built_in=no` → `recursive_doubling`, and a leaf choosing it is
///   `{"count<pow2": recursive_doubling, "count=any": reduce_scatter_allgather}`;
///   allreduce `ring` (4.1 and later; MPICH 4.0 has none) reduces blocks in a rotating order,
///   so it stays below `is_op_built_in=yes` (MPICH's built-in reduction operators commute);
/// * alltoall `brucks`, `pairwise` and `scattered` refuse `MPI_IN_PLACE`
///   (`alltoall_intra_*.c`): the collective's tree starts with `is_sendbuf_inplace=yes` →
///   `pairwise_sendrecv_replace`, as MPICH's own table does;
/// * barrier: 4.0 has `MPIR_Barrier_intra_dissemination`, 4.1 and later
///   `MPIR_Barrier_intra_k_dissemination` (written with `k=2`, the same pattern).
///
/// Communicators smaller than the first grid size keep MPICH's default decision: each priced
/// collective's tree starts with `comm_size<P₁` holding MPICH's own intra-communicator subtree.
///
/// # Device collectives
///
/// With MPICH's default `MPIR_CVAR_DEVICE_COLLECTIVES=percoll`, the `ch4` device first applies
/// its own table (`maint/tuning/coll/ch4/generic.json`, "compositions"): for bcast, reduce,
/// allreduce and barrier these are node-aware and run the MPIR-level algorithms this file
/// selects on node and node-roots sub-communicators, not on the application's communicator.
/// Run with `MPIR_CVAR_DEVICE_COLLECTIVES=none` for the file to decide every call on the
/// communicator it is made on (`scripts/mpich_check.sh` checks under that setting).
///
/// # Message sizes
///
/// MPICH's keys: `avg_msg_size` is the buffer of bcast, reduce, allreduce and the per-pair
/// block of alltoall, in bytes; `total_msg_size` of allgather is `m P` bytes; for gather and
/// scatter MPICH 4.0 – 4.2 compute `total_msg_size` as the element count times `P` (the type
/// size is overwritten in `csel.c`), which is bytes for `MPI_BYTE` and `MPI_CHAR` only. The
/// crate prices MPICH's binomial gather and scatter only, so their trees have one leaf.
///
/// # Errors
///
/// [`ExportError::Grid`] as for [`ompi_rules`](super::ompi_rules) (a communicator size above
/// `2^31 - 1`, a collective given twice, a grid of more than [`MAX_CELLS`](super::MAX_CELLS)
/// cells); [`ExportError::Unsupported`] for reduce_scatter (the crate prices no MPICH
/// reduce-scatter).
///
/// # Examples
///
/// ```
/// use commcost::collectives::Collective;
/// use commcost::export::{self, MpichJsonOptions};
/// use commcost::presets;
///
/// let openib = presets::open_mpi_openib();
/// let json = export::mpich_json(
///     &openib,
///     &[Collective::Allreduce],
///     &[4, 64],
///     &[8, 1 << 20],
///     &MpichJsonOptions::default(),
/// )?;
/// assert!(json.contains("\"collective=allreduce\""));
/// assert!(json.contains("\"algorithm=MPIR_Allreduce_intra_"));
/// // complete: MPICH's own decisions for what the model does not price
/// assert!(json.contains("\"collective=allgatherv\""));
/// # Ok::<(), commcost::export::ExportError>(())
/// ```
///
/// For a later MPICH version:
///
/// ```
/// use commcost::collectives::Collective;
/// use commcost::export::{self, MpichJsonOptions, MpichVersion};
/// use commcost::presets;
///
/// let openib = presets::open_mpi_openib();
/// let options = MpichJsonOptions { version: MpichVersion::V4_1, ..Default::default() };
/// let json = export::mpich_json(
///     &openib, &[Collective::Barrier], &[2, 64], &[1], &options)?;
/// assert!(json.contains("\"algorithm=MPIR_Barrier_intra_k_dissemination\": {\n"));
/// # Ok::<(), commcost::export::ExportError>(())
/// ```
pub fn mpich_json(
    model: &dyn CommModel,
    collectives: &[Collective],
    processes: &[u64],
    sizes: &[u64],
    options: &MpichJsonOptions,
) -> Result<String, ExportError> {
    check_grid("processes", processes, 1)?;
    check_grid("sizes", sizes, 0)?;
    check_collectives(collectives, processes, sizes)?;
    let version = options.version;
    let mut table = Node::parse(version.default_table()).map_err(|detail| ExportError::Grid {
        what: "MPICH default table",
        detail,
    })?;
    let grid = Grid {
        model,
        processes,
        sizes,
        operator: options.operator,
        on_tie: OnTie::FirstCandidate,
        min_gain: None,
        local: crate::collectives::LocalWork::FREE,
        on_nodes: None,
    };
    for &c in collectives {
        let unsupported = ExportError::Unsupported {
            collective: c.name(),
            target: "MPICH selection JSON",
        };
        let (_, size_key) = mpich_collective(c).ok_or(unsupported.clone())?;
        let blocks = match c {
            Collective::Bcast => grid.mpich_blocks::<collectives::Bcast>(c, version)?,
            Collective::Allreduce => grid.mpich_blocks::<collectives::Allreduce>(c, version)?,
            Collective::Reduce => grid.mpich_blocks::<collectives::Reduce>(c, version)?,
            Collective::Alltoall => grid.mpich_blocks::<collectives::Alltoall>(c, version)?,
            Collective::Allgather => grid.mpich_blocks::<collectives::Allgather>(c, version)?,
            Collective::Gather => grid.mpich_blocks::<collectives::Gather>(c, version)?,
            Collective::Scatter => grid.mpich_blocks::<collectives::Scatter>(c, version)?,
            Collective::Barrier => grid.mpich_blocks::<collectives::Barrier>(c, version)?,
            Collective::ReduceScatter | Collective::ReduceScatterBlock | Collective::Scan => {
                return Err(unsupported);
            }
        };
        put_collective(&mut table, c, size_key, &blocks, processes.first().copied())?;
    }
    let mut out = String::new();
    table.write(&mut out, 0);
    out.push('\n');
    Ok(out)
}

/// One decision of [`mpich_json_decided`]: on communicators of `processes` ranks (up to the
/// next decision's communicator size of the same collective), from message size `size` on (up
/// to the next decision's), MPICH runs `function`, or its own default decision (`None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpichDecision {
    /// The collective.
    pub collective: Collective,
    /// The communicator size, at least 1.
    pub processes: u64,
    /// MPICH's message-size key of the collective ([`mpich_size_key`]): the first size the
    /// decision covers.
    pub size: u64,
    /// MPICH's function (`MPIR_Bcast_intra_binomial`), `None` for MPICH's own decision.
    pub function: Option<String>,
}

/// The value MPICH's selection compares for a call of `c` on `processes` ranks whose buffer
/// (bcast, reduce, allreduce) or per-rank block (the others) is `bytes` bytes of
/// `element_bytes`-byte elements: `avg_msg_size` (the buffer; alltoall's per-pair block) or
/// `total_msg_size` (allgather: `bytes × P`; gather and scatter: the element count `× P`, as
/// MPICH 4.0 – 4.2 compute it). `None` for a collective without a subtree
/// ([`mpich_json_collectives`]) or an overflow.
///
/// # Examples
///
/// ```
/// use commcost::collectives::Collective;
/// use commcost::export::mpich_size_key;
///
/// assert_eq!(mpich_size_key(Collective::Bcast, 8, 4096, 8), Some(("avg_msg_size", 4096)));
/// assert_eq!(mpich_size_key(Collective::Allgather, 8, 4096, 8), Some(("total_msg_size", 32768)));
/// assert_eq!(mpich_size_key(Collective::Gather, 8, 4096, 8), Some(("total_msg_size", 4096)));
/// ```
pub fn mpich_size_key(
    c: Collective,
    processes: u64,
    bytes: u64,
    element_bytes: u64,
) -> Option<(&'static str, u64)> {
    let (_, key) = mpich_collective(c)?;
    let value = match c {
        Collective::Allgather => bytes.checked_mul(processes)?,
        Collective::Gather | Collective::Scatter => {
            (bytes / element_bytes.max(1)).checked_mul(processes)?
        }
        _ => bytes,
    };
    Some((key, value))
}

/// MPICH's name prefix of `c`'s functions (`MPIR_<prefix>_intra_…`).
fn mpich_prefix(c: Collective) -> Option<&'static str> {
    use crate::collectives::MpichAlgorithm as M;
    Some(match c {
        Collective::Bcast => <collectives::Bcast as M>::MPICH_PREFIX,
        Collective::Allreduce => <collectives::Allreduce as M>::MPICH_PREFIX,
        Collective::Reduce => <collectives::Reduce as M>::MPICH_PREFIX,
        Collective::Alltoall => <collectives::Alltoall as M>::MPICH_PREFIX,
        Collective::Allgather => <collectives::Allgather as M>::MPICH_PREFIX,
        Collective::Gather => <collectives::Gather as M>::MPICH_PREFIX,
        Collective::Scatter => <collectives::Scatter as M>::MPICH_PREFIX,
        Collective::Barrier => <collectives::Barrier as M>::MPICH_PREFIX,
        Collective::ReduceScatter | Collective::ReduceScatterBlock | Collective::Scan => {
            return None;
        }
    })
}

/// MPICH's function for `c`'s algorithm MPICH calls `name` (`binomial`), if the crate prices
/// it and `version` has it.
pub(crate) fn mpich_function_of(
    c: Collective,
    name: &str,
    version: MpichVersion,
) -> Option<String> {
    let f = format!("MPIR_{}_intra_{name}", mpich_prefix(c)?);
    let known = known_functions(c, version);
    if c == Collective::Barrier {
        // one barrier algorithm, named by the version
        return known.into_iter().next();
    }
    known.contains(&f).then_some(f)
}

/// MPICH's functions for `c` that the crate prices and `version` has.
fn known_functions(c: Collective, version: MpichVersion) -> Vec<String> {
    fn of<A: MpichAlgorithm>() -> Vec<String> {
        A::mpich_algorithms()
            .iter()
            .filter_map(MpichAlgorithm::mpich_function)
            .collect()
    }
    let all = match c {
        Collective::Bcast => of::<collectives::Bcast>(),
        Collective::Allreduce => of::<collectives::Allreduce>(),
        Collective::Reduce => of::<collectives::Reduce>(),
        Collective::Alltoall => of::<collectives::Alltoall>(),
        Collective::Allgather => of::<collectives::Allgather>(),
        Collective::Gather => of::<collectives::Gather>(),
        Collective::Scatter => of::<collectives::Scatter>(),
        Collective::Barrier => of::<collectives::Barrier>(),
        Collective::ReduceScatter | Collective::ReduceScatterBlock | Collective::Scan => Vec::new(),
    };
    all.into_iter()
        .filter(|f| version.has(f))
        // the version's barrier (4.0's `dissemination`, `k_dissemination` with k = 2 later)
        .map(|f| {
            if c == Collective::Barrier {
                version.barrier().0.to_string()
            } else {
                f
            }
        })
        .collect()
}

/// MPICH's collective selection JSON for `version` from decisions made elsewhere (measured, as
/// [`TuneReport::mpich_json`](crate::tune::TuneReport::mpich_json) does): MPICH's default
/// table of that version with, for each collective the decisions name, the
/// intra-communicator subtree replaced. A decision holds on communicators of exactly its
/// `processes` ranks, from its message size up to the next decision's: the decision's
/// function (guarded by MPICH's preconditions as in [`mpich_json`]), or for `function: None`
/// the function MPICH's own table runs there (split where the table's own message-size
/// ranges change). Every other communicator size keeps MPICH's own intra-communicator subtree,
/// placed where MPICH evaluates it as in its own table (under communicator-size keys only).
///
/// MPICH's own decision in a `None` range is read as [`mpich_decide`] reads the table (a flat
/// communicator); the two differ only for zero-byte calls on a communicator whose ranks share
/// a node (MPICH's `smp` algorithms run there, the flat choice here).
///
/// `decisions` lists each collective's decisions together, communicator sizes increasing and,
/// within one, message sizes increasing (the first is taken from 0). Equal neighbouring
/// decisions merge.
///
/// # Errors
///
/// [`ExportError::Grid`] for decisions out of that order, a communicator size of 0 or above
/// `2^31 - 1`, or a function that is not one of the collective's MPICH algorithms the crate
/// prices and `version` has (such a leaf would abort `MPI_Init`);
/// [`ExportError::Unsupported`] for a collective without a subtree in MPICH's table.
///
/// # Examples
///
/// ```
/// use commcost::collectives::Collective;
/// use commcost::export::{MpichDecision, MpichVersion, mpich_decide, mpich_json_decided};
///
/// let decide = |size, function: Option<&str>| MpichDecision {
///     collective: Collective::Bcast,
///     processes: 4,
///     size,
///     function: function.map(String::from),
/// };
/// let json = mpich_json_decided(
///     MpichVersion::V4_0,
///     &[decide(0, None), decide(65536, Some("MPIR_Bcast_intra_scatter_ring_allgather"))],
/// )?;
/// let v = MpichVersion::V4_0;
/// assert_eq!(mpich_decide(&json, Collective::Bcast, 4, 1 << 20).as_deref(), Some("MPIR_Bcast_intra_scatter_ring_allgather"));
/// // below 64 KiB, and on 5 ranks, MPICH's own decision
/// assert_eq!(mpich_decide(&json, Collective::Bcast, 4, 8), v.default_algorithm(Collective::Bcast, 4, 8));
/// assert_eq!(mpich_decide(&json, Collective::Bcast, 5, 1 << 20), v.default_algorithm(Collective::Bcast, 5, 1 << 20));
/// # Ok::<(), commcost::export::ExportError>(())
/// ```
pub fn mpich_json_decided(
    version: MpichVersion,
    decisions: &[MpichDecision],
) -> Result<String, ExportError> {
    let grid = |detail: String| ExportError::Grid {
        what: "decisions",
        detail,
    };
    let mut table = Node::parse(version.default_table()).map_err(|detail| ExportError::Grid {
        what: "MPICH default table",
        detail,
    })?;
    let mut done: Vec<Collective> = Vec::new();
    let mut i = 0;
    while i < decisions.len() {
        let c = decisions[i].collective;
        if done.contains(&c) {
            return Err(grid(format!("{c}'s decisions are not listed together")));
        }
        done.push(c);
        let unsupported = ExportError::Unsupported {
            collective: c.name(),
            target: "MPICH selection JSON",
        };
        let (_, size_key) = mpich_collective(c).ok_or(unsupported.clone())?;
        let prefix = mpich_prefix(c).unwrap_or_default();
        let known = known_functions(c, version);
        let key = format!("collective={}", c.name());
        let default_intra = table
            .get(&key)
            .and_then(|b| b.get("comm_type=intra"))
            .cloned()
            .ok_or(unsupported)?;
        // the default table's own message-size bounds: where its decision may change
        let mut bounds: Vec<u64> = Vec::new();
        default_intra.size_bounds(size_key, &mut bounds, 0);
        bounds.sort_unstable();
        bounds.dedup();
        let end = decisions[i..]
            .iter()
            .position(|d| d.collective != c)
            .map_or(decisions.len(), |k| i + k);
        // per communicator size: [(first message size, leaf)]
        let mut blocks: Vec<MpichBlock> = Vec::new();
        let mut last: Option<(u64, u64)> = None;
        for (k, d) in decisions[i..end].iter().enumerate() {
            if d.processes == 0 || d.processes > super::MAX_PROCESSES {
                return Err(grid(format!(
                    "{c}: communicator size {} is not in 1 ..= {}",
                    d.processes,
                    super::MAX_PROCESSES
                )));
            }
            if last.is_some_and(|(p, s)| (d.processes, d.size) <= (p, s)) {
                return Err(grid(format!(
                    "{c}: decisions must go by communicator size, then message size, increasing \
                     ({} ranks, {} bytes comes after {last:?})",
                    d.processes, d.size
                )));
            }
            last = Some((d.processes, d.size));
            if let Some(f) = &d.function
                && (!f.starts_with(&format!("MPIR_{prefix}_intra_")) || !known.contains(f))
            {
                return Err(grid(format!(
                    "{c}: `{}` is not one of MPICH {version}'s {c} algorithms the crate prices \
                     ({})",
                    super::echo(f),
                    known.join(", ")
                )));
            }
            if blocks.last().is_none_or(|(p, _)| *p != d.processes) {
                blocks.push((d.processes, Vec::new()));
            }
            let from = if blocks.last().is_some_and(|(_, r)| r.is_empty()) {
                0
            } else {
                d.size
            };
            // up to the next decision of this communicator size
            let to = decisions[i..end]
                .get(k + 1)
                .filter(|n| n.processes == d.processes)
                .map_or(u64::MAX, |n| n.size);
            let Some((_, rules)) = blocks.last_mut() else {
                continue;
            };
            let mut push = |at: u64, leaf: Node| {
                if rules.last().is_none_or(|(_, l)| *l != leaf) {
                    rules.push((at, leaf));
                }
            };
            match &d.function {
                Some(f) => push(
                    from,
                    guarded_leaf(f, version, || Ok(default_intra.clone()))?,
                ),
                None if size_key.is_empty() => push(from, default_intra.clone()),
                None => {
                    let starts = std::iter::once(from)
                        .chain(bounds.iter().copied().filter(|&b| b > from && b < to));
                    for at in starts {
                        let function = decide_in(&default_intra, c, d.processes, at)
                            .ok_or_else(|| {
                                grid(format!(
                                    "{c}: MPICH {version}'s table decides nothing on {} ranks at {at} bytes",
                                    d.processes
                                ))
                            })?;
                        push(
                            at,
                            guarded_leaf(&function, version, || Ok(default_intra.clone()))?,
                        );
                    }
                }
            }
        }
        put_exact(&mut table, c, size_key, &blocks, &default_intra);
        i = end;
    }
    let mut out = String::new();
    table.write(&mut out, 0);
    out.push('\n');
    Ok(out)
}

/// `c`'s intra-communicator subtree in `table` made of `blocks`, each on exactly its
/// communicator size, with `default` (MPICH's own subtree) on every other size, behind the
/// preconditions MPICH asserts. Only communicator-size keys stand above a `default`, so MPICH
/// evaluates it as in its own table.
fn put_exact(
    table: &mut Node,
    c: Collective,
    size_key: &str,
    blocks: &[MpichBlock],
    default: &Node,
) {
    let mut sizes: Vec<(String, Node)> = Vec::new();
    let mut below = 1;
    for (p, rules) in blocks {
        if *p > below {
            sizes.push((format!("comm_size<={}", p - 1), default.clone()));
        }
        let inner = if size_key.is_empty() {
            rules.first().map(|(_, l)| l.clone()).unwrap_or_default()
        } else {
            Node(ranges(rules, size_key, Node::clone))
        };
        sizes.push((format!("comm_size<={p}"), inner));
        below = p.saturating_add(1);
    }
    sizes.push(("comm_size=any".into(), default.clone()));
    let intra = guarded_by_preconditions(c, sizes);
    let key = format!("collective={}", c.name());
    if let Some((_, body)) = table.0.iter_mut().find(|(k, _)| *k == key) {
        match body.0.iter_mut().find(|(k, _)| k == "comm_type=intra") {
            Some((_, v)) => *v = Node(intra),
            None => body.0.insert(0, ("comm_type=intra".into(), Node(intra))),
        }
    }
}

/// The algorithm (MPICH's function, `MPIR_Bcast_intra_binomial`) a selection JSON in MPICH's
/// format chooses for a call of `c` on an intra-communicator of `processes` ranks, `bytes` as
/// the collective takes them (the buffer of bcast, reduce and allreduce, one rank's block of
/// the others), walking the tree as MPICH's `csel.c` does: at each level the first key whose
/// condition holds. The call is the one `commcost`'s collective timing makes: 8-byte elements
/// (`MPI_DOUBLE`), `MPI_SUM` (built in, commutative), separate send and receive buffers, on a
/// communicator without a node hierarchy (every rank on one node, or one rank per node: MPICH
/// then marks it flat only in the second case: on one node `comm_hierarchy=parent` holds, which
/// changes MPICH 4.0's choice for barrier and zero-byte calls). `count<pow2` compares the
/// element count with the largest power of two not above the communicator size. As in MPICH
/// 4.0 – 4.2, `comm_size<N` is `comm_size<=N` below the first key that is not about the
/// communicator (MPICH decides those keys when it creates the communicator, the others
/// while searching, where its parser reads `<` as `<=`).
///
/// `None` where the text is not such a tree, the collective has no subtree, a condition is one
/// this walk does not know, or no key holds.
///
/// # Examples
///
/// ```
/// use commcost::collectives::Collective;
/// use commcost::export::{MpichVersion, mpich_decide};
///
/// // MPICH 4.0's own table (`maint/tuning/coll/mpir/generic.json`): bcast on 8 ranks (a
/// // power of two) with 16 KiB, above the 12 KiB of its binomial range
/// let table = MpichVersion::V4_0.default_table();
/// assert_eq!(
///     mpich_decide(table, Collective::Bcast, 8, 16384).as_deref(),
///     Some("MPIR_Bcast_intra_scatter_recursive_doubling_allgather")
/// );
/// ```
pub fn mpich_decide(json: &str, c: Collective, processes: u64, bytes: u64) -> Option<String> {
    let table = Node::parse(json).ok()?;
    let (_, size) = mpich_size_key(c, processes, bytes, 8)?;
    decide_in(
        table.get(&format!("collective={}", c.name()))?,
        c,
        processes,
        size,
    )
}

/// [`mpich_decide`] in a collective's subtree, the message size as MPICH's key of `c`
/// ([`mpich_size_key`]).
fn decide_in(node: &Node, c: Collective, processes: u64, size: u64) -> Option<String> {
    let (_, size_key) = mpich_collective(c)?;
    let count = match c {
        Collective::Allgather => size / processes.max(1) / 8,
        Collective::Gather | Collective::Scatter => size / processes.max(1),
        _ => size / 8,
    };
    let pof2 = if processes == 0 {
        0
    } else {
        1u64 << (63 - processes.leading_zeros())
    };
    let facts = CallFacts {
        processes,
        size_key,
        size,
        count,
        pof2,
    };
    // MPICH decides the communicator's keys once, when the communicator is created (csel.c's
    // pruning), as long as only such keys were met; below the first other key it evaluates
    // while searching, where MPICH 4.0 - 4.2 read `comm_size<N` as `<=`
    let mut pruning = true;
    let mut node = node;
    // every level is a key deeper; the parser bounds the depth
    for _ in 0..=64 {
        let mut next = None;
        for (key, child) in &node.0 {
            if let Some(function) = key.strip_prefix("algorithm=") {
                return Some(function.to_string());
            }
            pruning = pruning
                && [
                    "comm_type=",
                    "comm_size",
                    "comm_hierarchy=",
                    "is_node_consecutive=",
                ]
                .iter()
                .any(|k| key.starts_with(k));
            if facts.holds(key, pruning)? {
                next = Some(child);
                break;
            }
        }
        node = next?;
    }
    None
}

/// What [`mpich_decide`] knows about the call.
struct CallFacts {
    processes: u64,
    size_key: &'static str,
    size: u64,
    count: u64,
    pof2: u64,
}

impl CallFacts {
    /// Whether the condition `key` holds (`pruning`: evaluated when the communicator is
    /// created), `None` for a condition not known here.
    fn holds(&self, key: &str, pruning: bool) -> Option<bool> {
        let (name, op, value) = ["<=", ">=", "<", ">", "="].iter().find_map(|op| {
            let at = key.find(op)?;
            Some((&key[..at], *op, &key[at + op.len()..]))
        })?;
        if value == "any" && op == "=" {
            return Some(true);
        }
        let compare = |x: u64, limit: u64| match op {
            "<=" => x <= limit,
            ">=" => x >= limit,
            "<" => x < limit,
            ">" => x > limit,
            _ => x == limit,
        };
        let yes = |v: bool| match value {
            "yes" => Some(v),
            "no" => Some(!v),
            _ => None,
        };
        match name {
            "comm_type" => Some(value == "intra"),
            "comm_hierarchy" => Some(value == "flat"),
            "comm_size" if value == "pow2" => Some(self.processes.is_power_of_two()),
            "comm_size" if op == "<" && !pruning => Some(self.processes <= value.parse().ok()?),
            "comm_size" => Some(compare(self.processes, value.parse().ok()?)),
            "count" if value == "pow2" => Some(compare(self.count, self.pof2)),
            "count" => Some(compare(self.count, value.parse().ok()?)),
            "avg_msg_size" | "total_msg_size" if name == self.size_key => {
                Some(compare(self.size, value.parse().ok()?))
            }
            "is_op_built_in" | "is_commutative" | "is_block_regular" => yes(true),
            "is_sendbuf_inplace" | "is_node_consecutive" => yes(false),
            _ => None,
        }
    }
}

/// The leaf that runs `function`, guarded where MPICH asserts a precondition: allgather's
/// recursive doubling on power-of-two communicators only (`otherwise` elsewhere),
/// allreduce's reduce-scatter-allgather from `count >= pof2` on (recursive doubling below),
/// barrier under the version's name.
fn guarded_leaf(
    function: &str,
    version: MpichVersion,
    otherwise: impl FnOnce() -> Result<Node, ExportError>,
) -> Result<Node, ExportError> {
    Ok(match function {
        "MPIR_Allgather_intra_recursive_doubling" => Node(vec![
            ("comm_size=pow2".into(), Node::leaf(function, None)),
            ("comm_size=any".into(), otherwise()?),
        ]),
        "MPIR_Allreduce_intra_reduce_scatter_allgather" => Node(vec![
            (
                "count<pow2".into(),
                Node::leaf("MPIR_Allreduce_intra_recursive_doubling", None),
            ),
            ("count=any".into(), Node::leaf(function, None)),
        ]),
        _ if function.starts_with("MPIR_Barrier_intra_") => {
            let (name, param) = version.barrier();
            Node::leaf(name, param)
        }
        _ => Node::leaf(function, None),
    })
}

/// Replaces `c`'s intra-communicator subtree in `table` by `blocks` (communicator sizes from
/// `first` on; below it MPICH's own subtree), with the preconditions MPICH asserts in front.
fn put_collective(
    table: &mut Node,
    c: Collective,
    size_key: &str,
    blocks: &[MpichBlock],
    first: Option<u64>,
) -> Result<(), ExportError> {
    let unsupported = ExportError::Unsupported {
        collective: c.name(),
        target: "MPICH selection JSON",
    };
    let key = format!("collective={}", c.name());
    let Some((_, body)) = table.0.iter_mut().find(|(k, _)| *k == key) else {
        return Err(unsupported);
    };
    let default_intra = body.get("comm_type=intra").cloned();
    // the ranges: communicator sizes, then message sizes (barrier: one leaf per block)
    let ranges = Node(ranges(blocks, "comm_size", |rules| {
        if size_key.is_empty() {
            rules
                .first()
                .map(|(_, leaf)| leaf.clone())
                .unwrap_or_default()
        } else {
            Node(ranges(rules, size_key, Node::clone))
        }
    }));
    let mut intra: Vec<(String, Node)> = Vec::new();
    // communicators below the grid: MPICH's own decision
    if let (Some(default), Some(first)) = (default_intra, first)
        && first > 1
    {
        intra.push((format!("comm_size<{first}"), default));
    }
    intra.extend(guarded_by_preconditions(c, ranges.0));
    let new_intra = Node(intra);
    match body.0.iter_mut().find(|(k, _)| k == "comm_type=intra") {
        Some((_, v)) => *v = new_intra,
        None => body.0.insert(0, ("comm_type=intra".into(), new_intra)),
    }
    Ok(())
}

/// `decisions` behind what MPICH asserts of a whole collective: allreduce's user-defined
/// operators to recursive doubling, alltoall's `MPI_IN_PLACE` to the in-place pairwise exchange.
fn guarded_by_preconditions(c: Collective, decisions: Vec<(String, Node)>) -> Vec<(String, Node)> {
    match c {
        Collective::Allreduce => vec![
            (
                "is_op_built_in=no".into(),
                Node::leaf("MPIR_Allreduce_intra_recursive_doubling", None),
            ),
            ("is_op_built_in=yes".into(), Node(decisions)),
        ],
        Collective::Alltoall => vec![
            (
                "is_sendbuf_inplace=yes".into(),
                Node::leaf("MPIR_Alltoall_intra_pairwise_sendrecv_replace", None),
            ),
            ("is_sendbuf_inplace=no".into(), Node(decisions)),
        ],
        _ => decisions,
    }
}

/// `"<key><=<next - 1>": { … }` for each range but the last, `"<key>=any": { … }` for it (and
/// for a range whose bound does not fit MPICH's `atoi`).
fn ranges<T>(
    ranges: &[(u64, T)],
    key: &str,
    mut inner: impl FnMut(&T) -> Node,
) -> Vec<(String, Node)> {
    let mut out = Vec::new();
    for (i, (_, value)) in ranges.iter().enumerate() {
        let bound = ranges
            .get(i + 1)
            .map(|(next, _)| next.saturating_sub(1))
            .filter(|&b| b <= i32::MAX as u64);
        let condition = match bound {
            Some(b) => format!("{key}<={b}"),
            None => format!("{key}=any"),
        };
        out.push((condition, inner(value)));
        if bound.is_none() {
            break;
        }
    }
    out
}

/// `(communicator size, [(first message size, leaf)])`.
type MpichBlock = (u64, Vec<(u64, Node)>);

impl Grid<'_> {
    /// The blocks of one collective, merged as [`ompi_rules`](super::ompi_rules) merges.
    fn mpich_blocks<A: MpichAlgorithm>(
        &self,
        c: Collective,
        version: MpichVersion,
    ) -> Result<Vec<MpichBlock>, ExportError> {
        let barrier = c == Collective::Barrier;
        let sizes: &[u64] = if barrier { &[0] } else { self.sizes };
        let mut blocks: Vec<MpichBlock> = Vec::new();
        for &p in self.processes {
            let mut rules: Vec<(u64, Node)> = Vec::new();
            let mut previous: Option<String> = None;
            for &s in sizes {
                let bytes = match c {
                    Collective::Allgather | Collective::Gather | Collective::Scatter => {
                        c.ompi_problem_bytes(s, p)
                    }
                    _ => s,
                };
                let problem =
                    Problem::new(p, Message::contiguous(bytes)).with_operator(self.operator);
                let runs = |a: &A, p: u64| {
                    a.mpich_function().is_some_and(|f| {
                        version.has(&f)
                            && (f != "MPIR_Allgather_intra_recursive_doubling"
                                || p.is_power_of_two())
                    })
                };
                let (choice, _) = choose::<A>(
                    self.model,
                    &problem,
                    |a| runs(a, p),
                    |a| a.mpich_function() == previous,
                )?;
                let function = choice.mpich_function().unwrap_or_default();
                let leaf = guarded_leaf(&function, version, || {
                    // the best algorithm MPICH runs on any communicator size
                    let (other, _) = choose::<A>(self.model, &problem, |a| runs(a, 3), |_| false)?;
                    Ok(Node::leaf(
                        &other.mpich_function().unwrap_or_default(),
                        None,
                    ))
                })?;
                previous = Some(function);
                if rules.last().is_none_or(|(_, l)| *l != leaf) {
                    rules.push((if rules.is_empty() { 0 } else { s }, leaf));
                }
            }
            if blocks.last().is_some_and(|(_, r)| *r == rules) {
                continue;
            }
            blocks.push((p, rules));
        }
        Ok(blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_tables_parse_and_write_back_as_parsed() {
        for v in MpichVersion::ALL {
            let node = Node::parse(v.default_table()).unwrap();
            assert!(node.get("collective=bcast").is_some(), "{v}");
            let mut out = String::new();
            node.write(&mut out, 0);
            assert_eq!(Node::parse(&out).unwrap(), node);
        }
    }

    #[test]
    fn malformed_tables_are_errors() {
        for bad in [
            "",
            "{",
            "{\"a\":}",
            "{\"a\":{}}x",
            "{\"a\" {}}",
            "{\"a\":{},}",
            "[]",
        ] {
            assert!(Node::parse(bad).is_err(), "{bad}");
        }
        let deep = "{\"a\":".repeat(100);
        assert!(Node::parse(&deep).is_err());
    }
}
