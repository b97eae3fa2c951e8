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
    fn has(self, function: &str) -> bool {
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
    };
    for &c in collectives {
        let unsupported = ExportError::Unsupported {
            collective: c.name(),
            target: "MPICH selection JSON",
        };
        let (name, size_key) = mpich_collective(c).ok_or(unsupported.clone())?;
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
        let key = format!("collective={name}");
        let Some((_, body)) = table.0.iter_mut().find(|(k, _)| *k == key) else {
            return Err(unsupported);
        };
        let default_intra = body.get("comm_type=intra").cloned();
        // the model's ranges
        let ranges = Node(ranges(&blocks, "comm_size", |rules| {
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
        if let (Some(default), Some(&first)) = (default_intra, processes.first())
            && first > 1
        {
            intra.push((format!("comm_size<{first}"), default));
        }
        match c {
            Collective::Allreduce => {
                let rd = Node::leaf("MPIR_Allreduce_intra_recursive_doubling", None);
                intra.push(("is_op_built_in=no".into(), rd));
                intra.push(("is_op_built_in=yes".into(), ranges));
            }
            Collective::Alltoall => {
                let replace = Node::leaf("MPIR_Alltoall_intra_pairwise_sendrecv_replace", None);
                intra.push(("is_sendbuf_inplace=yes".into(), replace));
                intra.push(("is_sendbuf_inplace=no".into(), ranges));
            }
            _ => intra.extend(ranges.0),
        }
        let new_intra = Node(intra);
        match body.0.iter_mut().find(|(k, _)| k == "comm_type=intra") {
            Some((_, v)) => *v = new_intra,
            None => body.0.insert(0, ("comm_type=intra".into(), new_intra)),
        }
    }
    let mut out = String::new();
    table.write(&mut out, 0);
    out.push('\n');
    Ok(out)
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
                let leaf = match function.as_str() {
                    "MPIR_Allgather_intra_recursive_doubling" => {
                        // the best algorithm MPICH runs on any communicator size
                        let (other, _) =
                            choose::<A>(self.model, &problem, |a| runs(a, 3), |_| false)?;
                        let other = other.mpich_function().unwrap_or_default();
                        Node(vec![
                            ("comm_size=pow2".into(), Node::leaf(&function, None)),
                            ("comm_size=any".into(), Node::leaf(&other, None)),
                        ])
                    }
                    "MPIR_Allreduce_intra_reduce_scatter_allgather" => Node(vec![
                        (
                            "count<pow2".into(),
                            Node::leaf("MPIR_Allreduce_intra_recursive_doubling", None),
                        ),
                        ("count=any".into(), Node::leaf(&function, None)),
                    ]),
                    _ if barrier => {
                        let (name, param) = version.barrier();
                        Node::leaf(name, param)
                    }
                    _ => Node::leaf(&function, None),
                };
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
