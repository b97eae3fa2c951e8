//! Presets, model files with provenance, and `predict`.

use std::path::{Path, PathBuf};

use commcost::collectives::{LocalWork, Operator};
use commcost::{CommModel, Message, ModelSpec, presets};
use serde::{Deserialize, Serialize};

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

/// Where a parameter's value came from and what it stands for in the model.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// What was measured or imported, in words.
    pub measured: String,
    /// The method that turned it into parameters.
    pub method: String,
    /// When (UTC, ISO 8601).
    pub date: String,
    /// Which machine (host name) ran the tool.
    pub host: String,
    /// Input files, if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    /// Parameter name → its role in the model.
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// How well the model reproduces the measurements.
    pub accuracy: serde_json::Map<String, serde_json::Value>,
    /// Every fitted value the model does not use as fitted, and what it uses instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adjustments: Vec<String>,
    /// The tool and its version.
    pub tool: String,
}

/// A model file as `commcost calibrate` writes it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    /// Format version (1).
    pub commcost_model_file: u32,
    pub provenance: Provenance,
    pub spec: ModelSpec,
    /// What collectives spend besides messages (`commcost calibrate local`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<LocalSection>,
}

/// The local-work section of a model file: copy and temporary-buffer prices, the reduction
/// operator, and how they were measured.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalSection {
    pub work: LocalWork,
    pub operator: Operator,
    pub provenance: Provenance,
    /// How the per-call costs in `work.calls` were fitted (`commcost calibrate collectives`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_provenance: Option<Provenance>,
}

/// A loaded model with its name for reports, and the local-work prices of its file (free
/// where the file has none).
pub struct Loaded {
    pub name: String,
    pub spec: ModelSpec,
    pub local: LocalWork,
    pub operator: Operator,
}

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

/// The model `mpi_calibrate`-style files (a map of names to models) without a `preferred`
/// entry load by default, in this order: LogGP with protocol ranges, then pLogP, then log_3 P.
pub const DEFAULT_PREFERENCE: [&str; 3] = ["loggp_mpi", "plogp_mpi", "log3p_mpi"];

/// Splits `FILE#name` into the file and the model name; a path that exists as given (even with
/// a `#` in it) is a file.
fn split_selector(path: &Path) -> (PathBuf, Option<String>) {
    if path.exists() {
        return (path.to_path_buf(), None);
    }
    let text = path.to_string_lossy();
    match text.rsplit_once('#') {
        Some((file, name)) if !file.is_empty() && !name.is_empty() => {
            (PathBuf::from(file), Some(name.to_string()))
        }
        _ => (path.to_path_buf(), None),
    }
}

/// Loads a model file: a `ModelSpec`, a file written by `commcost calibrate`, or a file of
/// several named models — a JSON object mapping names to `ModelSpec`s (as the `mpi_calibrate`
/// example writes), optionally with a `"preferred": "name"` entry, or `{"preferred": ...,
/// "models": {...}}`. `FILE#name` picks a named model; `FILE` alone the preferred one (without
/// a mark: the only one, or the first of [`DEFAULT_PREFERENCE`] present).
pub fn load_file(path: &Path) -> Result<Loaded, Failure> {
    let (file, selector) = split_selector(path);
    let shown = file.display();
    let text = commcost::limits::read_text_file(
        &file,
        "model file",
        commcost::limits::MAX_MODEL_FILE_BYTES,
    )?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| Failure(format!("{shown}: not JSON: {e}")))?;
    // a key given twice would be taken silently (the last one), as no other reader does
    serde_json::from_str::<commcost::models::spec::UniqueKeys>(&text)
        .map_err(|e| Failure(format!("{shown}: {e}")))?;
    let single = |name: &Option<String>| -> Result<(), Failure> {
        match name {
            Some(n) => fail(format!(
                "{shown}: holds one model, not several: drop `#{n}` from --model"
            )),
            None => Ok(()),
        }
    };
    let stem = file
        .file_stem()
        .map_or_else(|| shown.to_string(), |s| s.to_string_lossy().into_owned());
    let mut local = (LocalWork::FREE, Operator::FREE);
    let (spec, name) = if value.get("commcost_model_file").is_some() {
        single(&selector)?;
        let parsed: ModelFile = serde_json::from_value(value)
            .map_err(|e| Failure(format!("{shown}: invalid model file: {e}")))?;
        if parsed.commcost_model_file != 1 {
            return fail(format!(
                "{shown}: commcost_model_file: format version {} is not supported (this commcost \
                 reads version 1)",
                parsed.commcost_model_file
            ));
        }
        if let Some(section) = parsed.local {
            local = (section.work, section.operator);
        }
        (parsed.spec, stem)
    } else if value.get("model").is_some() {
        single(&selector)?;
        let spec = serde_json::from_value::<ModelSpec>(value)
            .map_err(|e| Failure(format!("{shown}: invalid model: {e}")))?;
        (spec, stem)
    } else if let serde_json::Value::Object(mut map) = value {
        let preferred = match map.remove("preferred") {
            None => None,
            Some(serde_json::Value::String(p)) => Some(p),
            Some(other) => {
                return fail(format!(
                    "{shown}: `preferred` must name a model, found {other}"
                ));
            }
        };
        let models = match map.remove("models") {
            Some(serde_json::Value::Object(inner)) if map.is_empty() => inner,
            Some(_) => {
                return fail(format!(
                    "{shown}: `models` must be the only entry besides `preferred`, an object of \
                     named models"
                ));
            }
            None => map,
        };
        let names: Vec<&str> = models.keys().map(String::as_str).collect();
        if names.is_empty() {
            return fail(format!("{shown}: no model in the file"));
        }
        let chosen = match (&selector, &preferred) {
            (Some(n), _) | (None, Some(n)) => n.clone(),
            (None, None) if names.len() == 1 => names[0].to_string(),
            (None, None) => match DEFAULT_PREFERENCE.iter().find(|n| models.contains_key(**n)) {
                Some(n) => (*n).to_string(),
                None => {
                    return fail(format!(
                        "{shown}: several models ({}) and none marked `preferred`: pick one \
                         with --model {shown}#NAME",
                        names.join(", ")
                    ));
                }
            },
        };
        let Some(entry) = models.get(&chosen) else {
            return fail(format!(
                "{shown}: no model named `{chosen}`; the file has {}",
                names.join(", ")
            ));
        };
        let spec = serde_json::from_value::<ModelSpec>(entry.clone())
            .map_err(|e| Failure(format!("{shown}#{chosen}: invalid model: {e}")))?;
        (spec, format!("{stem}#{chosen}"))
    } else {
        return fail(format!(
            "{shown}: not a model file (a JSON object is expected)"
        ));
    };
    for warning in spec.unit_warnings() {
        eprintln!("commcost: warning: {shown}: {warning}");
    }
    Ok(Loaded {
        name,
        spec,
        local: local.0,
        operator: local.1,
    })
}

pub fn write_file(path: &PathBuf, file: &ModelFile) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(file)?;
    std::fs::write(path, text + "\n")
        .map_err(|e| Failure(format!("{}: cannot write: {e}", path.display())))
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
