//! The forced runs in a selection sweep's CSV (`scripts/selection_sweep.sh`): the OSU
//! collective tests run with each of Open MPI's algorithms forced, read as [`ForcedRun`]s.

use super::collectives::{FORCED_RUN_SECONDS, ForcedRun, MAX_FORCED_RUNS};
use crate::calibrate::CalibrationError;
use crate::collectives::{Collective, Family};

/// Reads the rows `config = forced:<ID>:<segment>` of a sweep CSV whose header (`header`, the
/// fields of the first non-comment line) has the columns `collective`, `procs`, `config`,
/// `bytes` and `avg_us`; `lines` are the remaining lines, numbered from 0.
///
/// OSU's size is the problem's message as [`ForcedRun::bytes`] means it (the buffer of bcast,
/// reduce and allreduce, the whole vector of reduce_scatter, one rank's block of allgather,
/// alltoall, gather and scatter; barrier rows have 0); the time is OSU's average latency over
/// the ranks (`avg_us`, microseconds). OSU reduces `float`s, so reductions of fewer than 4
/// bytes carry no element and are skipped; so are Open MPI's default and the rules-file rows.
/// A row that repeats another's configuration, repeat and size (a duplicate, or a conflicting
/// second measurement) is an error naming both lines.
pub(super) fn parse_sweep<'a>(
    header: &[&str],
    lines: impl Iterator<Item = (usize, &'a str)>,
) -> Result<Vec<ForcedRun>, CalibrationError> {
    let parse_err = |line: usize, message: String| CalibrationError::Parse { line, message };
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| parse_err(1, format!("no column `{name}`")))
    };
    let (c_coll, c_procs, c_config, c_bytes, c_avg) = (
        col("collective")?,
        col("procs")?,
        col("config")?,
        col("bytes")?,
        col("avg_us")?,
    );
    let c_repeat = header.iter().position(|h| *h == "repeat");
    let mut seen: std::collections::HashMap<[String; 5], usize> = std::collections::HashMap::new();
    let mut runs = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let field = |c: usize, name: &str| {
            f.get(c)
                .copied()
                .ok_or_else(|| parse_err(n, format!("no `{name}` field")))
        };
        let Some(forced) = field(c_config, "config")?.strip_prefix("forced:") else {
            continue;
        };
        if runs.len() >= MAX_FORCED_RUNS {
            return Err(parse_err(
                n,
                format!("more than {MAX_FORCED_RUNS} forced rows"),
            ));
        }
        let (id, segment) = forced.split_once(':').ok_or_else(|| {
            parse_err(
                n,
                format!("`config` forced:{forced}: not forced:ID:SEGMENT"),
            )
        })?;
        let number = |text: &str, name: &str| -> Result<u64, CalibrationError> {
            text.parse::<u64>()
                .map_err(|e| parse_err(n, format!("`{name}` `{text}`: {e}")))
        };
        let name = field(c_coll, "collective")?;
        let collective: Collective = name
            .parse()
            .map_err(|_| parse_err(n, format!("unknown collective `{name}`")))?;
        if !collective.is_priced_by(Family::Ompi) {
            return Err(parse_err(
                n,
                format!("{collective}: the crate has no Open MPI algorithms to price it with"),
            ));
        }
        let key = [
            collective.to_string(),
            field(c_procs, "procs")?.to_string(),
            forced.to_string(),
            field(c_bytes, "bytes")?.to_string(),
            c_repeat.map_or(Ok(""), |c| field(c, "repeat"))?.to_string(),
        ];
        if let Some(first) = seen.insert(key, n) {
            return Err(parse_err(
                n,
                format!(
                    "the same run as line {first} (collective, procs, config, repeat and bytes): \
                     a duplicate row"
                ),
            ));
        }
        let algorithm = u32::try_from(number(id, "config")?).unwrap_or(u32::MAX);
        if algorithm == 0 || algorithm > collective.ompi_max_algorithm_id() {
            return Err(parse_err(
                n,
                format!(
                    "`config` algorithm {id}: {collective} has 1..={}",
                    collective.ompi_max_algorithm_id()
                ),
            ));
        }
        let processes = number(field(c_procs, "procs")?, "procs")?;
        if processes == 0 {
            return Err(parse_err(n, "`procs` is 0".into()));
        }
        let bytes = number(field(c_bytes, "bytes")?, "bytes")?;
        if collective.reduces() && bytes < 4 {
            continue;
        }
        let text = field(c_avg, "avg_us")?;
        let micro: f64 = text
            .parse()
            .map_err(|e| parse_err(n, format!("`avg_us` `{text}`: {e}")))?;
        // a division by the exact 10^6 rounds once: `5.0` µs is the nearest double to 5e-6 s
        let seconds = micro / 1e6;
        if !FORCED_RUN_SECONDS.contains(&seconds) {
            return Err(parse_err(
                n,
                format!("`avg_us` = {micro:e} µs must be between 1e-6 and 1e12"),
            ));
        }
        runs.push(ForcedRun {
            collective,
            algorithm,
            segment: number(segment, "config")?,
            processes,
            bytes: if collective == Collective::Barrier {
                0
            } else {
                bytes
            },
            seconds,
        });
    }
    Ok(runs)
}
