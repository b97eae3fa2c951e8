//! Presets, model files with provenance, and `predict`.

use std::path::{Path, PathBuf};

use commcost::collectives::{LocalWork, Operator};
use commcost::{CommModel, Message, ModelSpec, presets};

use crate::units::{human_bytes, human_time};
use crate::{Failure, ModelSource, fail};

/// One embedded parameter set.
pub struct Preset {
    pub name: &'static str,
    pub description: &'static str,
    pub source: &'static str,
    pub build: fn() -> ModelSpec,
}

const HOEFLER_2007: &str = "Hoefler, Lichei & Rehm, \"Low-overhead LogGP parameter assessment \
    for modern interconnection networks\", IPDPS 2007, Table 2";

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "mpich2-tcp",
        description: "MPICH2 over TCP (Gigabit Ethernet), LogGP, one protocol",
        source: HOEFLER_2007,
        build: || presets::mpich2_tcp().into(),
    },
    Preset {
        name: "nmpi-sci",
        description: "NMPI over SCI, LogGP, protocol switch at 12289 bytes",
        source: HOEFLER_2007,
        build: || presets::nmpi_sci().into(),
    },
    Preset {
        name: "open-mpi-openib",
        description: "Open MPI over InfiniBand (openib), LogGP, protocol switch at 12289 bytes",
        source: HOEFLER_2007,
        build: || presets::open_mpi_openib().into(),
    },
    Preset {
        name: "open-mpi-gm",
        description: "Open MPI over Myrinet (gm), LogGP, protocol switch at 32769 bytes",
        source: HOEFLER_2007,
        build: || presets::open_mpi_gm().into(),
    },
    Preset {
        name: "titan-log3p",
        description: "Titan cluster (IA-64 + Myrinet), log_3 P, 16 KiB at 1 KiB stride",
        source: "Cameron, Ge & Sun, \"lognP and log3P: accurate analytical models of \
            point-to-point communication in distributed systems\", IEEE Trans. Computers 2007, §4.1",
        build: || presets::titan_log3p().into(),
    },
];

pub fn list_presets(json: bool) -> Result<(), Failure> {
    if json {
        let rows: Vec<serde_json::Value> = PRESETS
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.name,
                    "description": p.description,
                    "source": p.source,
                    "spec": (p.build)(),
                })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        for p in PRESETS {
            outln!("{:<16} {}", p.name, p.description);
            outln!("{:<16} source: {}", "", p.source);
        }
    }
    Ok(())
}

/// The model file types of the library (one loader for the CLI, the C ABI and Python).
pub use commcost::model_file::{LoadedModel as Loaded, LocalSection, ModelFile, Provenance};

pub fn load(source: &ModelSource) -> Result<Loaded, Failure> {
    match (&source.model, &source.preset) {
        (Some(path), _) => load_file(path),
        (None, Some(name)) => preset(name),
        (None, None) => fail("give --model FILE or --preset NAME"),
    }
}

pub fn preset(name: &str) -> Result<Loaded, Failure> {
    match PRESETS.iter().find(|p| p.name == name) {
        Some(p) => Ok(Loaded {
            name: p.name.into(),
            spec: (p.build)(),
            local: LocalWork::FREE,
            operator: Operator::FREE,
            platform: commcost::sim::Platform::PLAIN,
            nodes: None,
        }),
        None => {
            let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
            fail(format!(
                "unknown preset `{name}`; presets: {}",
                names.join(", ")
            ))
        }
    }
}

/// Loads a model file, `FILE` or `FILE#NAME` (`commcost::model_file::load_model_file`: a
/// bare spec, a file written by `commcost calibrate`, or several named models), and warns
/// about parameters whose units look wrong.
pub fn load_file(path: &Path) -> Result<Loaded, Failure> {
    let loaded = commcost::model_file::load_model_file(path)?;
    for warning in loaded.spec.unit_warnings() {
        eprintln!("commcost: warning: {}: {warning}", path.display());
    }
    Ok(loaded)
}

/// Writes a model file whole or not at all ([`write_whole`]).
pub fn write_file(path: &PathBuf, file: &ModelFile) -> Result<(), Failure> {
    write_whole(path, &file.to_json()?)
}

/// Writes `text` to `path` whole or not at all: it goes to a temporary file next to `path`,
/// which is then renamed over it (an interrupted run leaves the old file or none).
pub fn write_whole(path: &PathBuf, text: &str) -> Result<(), Failure> {
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::write(&temporary, text).and_then(|()| std::fs::rename(&temporary, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temporary);
        return fail(format!("{}: cannot write: {e}", path.display()));
    }
    Ok(())
}

pub fn predict(
    source: &ModelSource,
    bytes: Option<u64>,
    stride: Option<u64>,
    block: Option<u64>,
    count: Option<u64>,
    json: bool,
) -> Result<(), Failure> {
    let loaded = load(source)?;
    let message = match (stride, block, count) {
        (Some(stride), Some(block), Some(count)) => {
            let msg = Message::vector(count, block, stride)
                .map_err(|e| Failure(format!("--count/--block/--stride: {e}")))?;
            if let Some(b) = bytes
                && Some(b) != count.checked_mul(block)
            {
                return fail(format!(
                    "--bytes {b} disagrees with --count {count} x --block {block}"
                ));
            }
            msg
        }
        _ => match bytes {
            Some(b) => Message::contiguous(b),
            None => return fail("give --bytes N, or --count, --block and --stride"),
        },
    };
    let model = &loaded.spec;
    let q = [
        ("p2p", model.p2p(&message)),
        ("send_overhead", model.send_overhead(&message)),
        ("recv_overhead", model.recv_overhead(&message)),
        ("send_interval", model.send_interval(&message)),
        ("gap", model.gap(&message)),
    ];
    if json {
        let mut out = serde_json::Map::new();
        out.insert("model".into(), loaded.name.clone().into());
        out.insert("message".into(), serde_json::to_value(message)?);
        for (name, v) in q {
            out.insert(format!("{name}_seconds"), v.into());
        }
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        let layout = match (stride, block, count) {
            (Some(s), Some(b), Some(c)) => format!(
                "{c} blocks of {} at stride {} ({} bytes)",
                human_bytes(b),
                human_bytes(s),
                c.saturating_mul(b)
            ),
            _ => format!("{} contiguous bytes", bytes.unwrap_or(0)),
        };
        outln!("{}: {layout}", loaded.name);
        let labels = [
            "point-to-point time",
            "send overhead",
            "receive overhead",
            "interval between sends",
            "gap",
        ];
        for ((_, v), label) in q.iter().zip(labels) {
            outln!("  {label:<24} {}", human_time(*v));
        }
    }
    Ok(())
}

/// `YYYY-MM-DDTHH:MM:SSZ` of the current time (UTC), from the civil-from-days algorithm.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The host name, as the kernel reports it.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    /// Model files are read with serde_json's `float_roundtrip`: every float reads back to its
    /// exact bits, as Rust's own parser reads it (`cargo test -p commcost-cli` builds this
    /// package's features alone, without the workspace's).
    #[test]
    fn floats_read_back_exactly() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..100_000 {
            // SplitMix64: spread over every exponent and mantissa
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            let v = f64::from_bits((z ^ (z >> 31)) & !(1 << 63));
            if !v.is_finite() {
                continue;
            }
            let text = format!("{v:e}");
            let read: f64 = serde_json::from_str(&text).unwrap();
            assert_eq!(
                read.to_bits(),
                text.parse::<f64>().unwrap().to_bits(),
                "{text}"
            );
        }
    }
}
