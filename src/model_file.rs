//! Model files: the JSON documents `commcost calibrate` writes, read by one loader
//! ([`load_model_file`], [`parse_model_text`]) that the command-line tool, the C ABI and the
//! Python package all use, so that a file means the same model everywhere.
//!
//! Three shapes are read:
//!
//! - a bare [`ModelSpec`]: `{"model": "loggp", "latency": 5e-6, ...}`;
//! - a [`ModelFile`] as `commcost calibrate` writes it: `{"commcost_model_file": 1,
//!   "provenance": {...}, "spec": {...}, "local": {...}, "platform": {...}}` (`local`
//!   optional: the measured copies, operator and per-call costs of collectives; `platform`
//!   optional: what the machine adds to a simulation, [`Platform`]; `nodes` optional: nodes of
//!   several ranks, [`NodesSection`]);
//! - several named models: `{"name": spec, ...}` (as the `mpi_calibrate` harness writes),
//!   optionally with `"preferred": "name"`, or `{"preferred": "name", "models": {...}}`.
//!   `FILE#NAME` picks a model by name; `FILE` alone the preferred one (without a mark: the
//!   only one, or the first of [`DEFAULT_PREFERENCE`] present).
//!
//! Every file is read within [`limits::MAX_MODEL_FILE_BYTES`](crate::limits::MAX_MODEL_FILE_BYTES),
//! from a regular file only (a FIFO or `/dev/zero` is refused before reading), a UTF-8
//! byte-order mark dropped; a key given twice anywhere is refused (JSON readers differ on
//! which one wins); every section is validated as the constructors validate, and an error
//! names the file, the model and the field path (`spec.ranges[1].model.gap`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::ModelSpec;
use crate::collectives::{LocalWork, Operator};
use crate::error::ModelFileError;
use crate::limits::{MAX_MODEL_FILE_BYTES, read_text_file};
use crate::models::spec::{UniqueKeys, deserialize_with_path};
use crate::sim::{NodeLayout, Platform};

/// The format version of [`ModelFile`] this crate writes and reads.
pub const MODEL_FILE_VERSION: u32 = 1;

/// The models a file of several named models without a `preferred` entry loads, in this order:
/// LogGP with protocol ranges, then pLogP, then log_3 P (the names the `mpi_calibrate`
/// harness writes).
pub const DEFAULT_PREFERENCE: [&str; 3] = ["loggp_mpi", "plogp_mpi", "log3p_mpi"];

/// Where a parameter's value came from and what it stands for in the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
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

/// A model file as `commcost calibrate` writes it: the model, how it was made, and optionally
/// what collectives spend besides messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    /// Format version ([`MODEL_FILE_VERSION`]).
    pub commcost_model_file: u32,
    /// How the model was made.
    pub provenance: Provenance,
    /// The model.
    pub spec: ModelSpec,
    /// What collectives spend besides messages (`commcost calibrate local`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<LocalSection>,
    /// What the machine adds to a simulation of the model (`commcost calibrate mpi --model
    /// shaped` writes the link's burst).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    /// Nodes of several ranks: the file's model (`spec`) is then the model inside a node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<NodesSection>,
}

/// A two-level platform in a model file: where the ranks run, the model of a message between
/// nodes and what the network adds to its simulation. The file's own `spec` and `platform`
/// are the model and platform inside a node.
///
/// ```json
/// "nodes": {"layout": {"ranks_per_node": 2, "placement": "block"},
///           "inter": {"model": "loggp", ...}, "inter_platform": {"link_burst": 9100}}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodesSection {
    /// Where the ranks run ([`NodeLayout`]).
    pub layout: NodeLayout,
    /// The model of a message between nodes.
    pub inter: ModelSpec,
    /// What the network adds to a simulation (its eager limit, its shaped link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inter_platform: Option<Platform>,
}

/// The local-work section of a model file: copy and temporary-buffer prices, the reduction
/// operator, and how they were measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalSection {
    /// Copies, temporary buffers and per-call costs.
    pub work: LocalWork,
    /// The reduction operator's price.
    pub operator: Operator,
    /// How `work` and `operator` were measured.
    pub provenance: Provenance,
    /// How the per-call costs in `work.calls` were fitted (`commcost calibrate collectives`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_provenance: Option<Provenance>,
}

/// A model loaded from a file: its name for reports (the file's stem, `stem#NAME` for a named
/// model), the model, and its file's local-work prices (free where the file has none).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedModel {
    /// The file's stem, or `stem#NAME` for one of several named models.
    pub name: String,
    /// The model.
    pub spec: ModelSpec,
    /// The file's local work ([`LocalWork::FREE`] without a `local` section).
    pub local: LocalWork,
    /// The file's operator ([`Operator::FREE`] without a `local` section).
    pub operator: Operator,
    /// The file's platform ([`Platform::PLAIN`] without a `platform` section).
    pub platform: Platform,
    /// The file's nodes of several ranks, if it has a `nodes` section.
    pub nodes: Option<NodesSection>,
}

impl ModelFile {
    /// Reads a file in the format `commcost calibrate` writes (not a bare spec, not several
    /// models): for a tool that adds a section to it and writes it back.
    ///
    /// # Errors
    ///
    /// [`ModelFileError`] naming the file: unreadable, not JSON, a duplicate key, another
    /// shape or version, or an invalid field (with its path).
    pub fn read(path: &Path) -> Result<Self, ModelFileError> {
        let text = read_text_file(path, "model file", MAX_MODEL_FILE_BYTES)?;
        let origin = path.display().to_string();
        let value = parse_json(&text, &origin)?;
        if value.get("commcost_model_file").is_none() {
            return Err(ModelFileError::Selection {
                origin,
                message: "not a file written by `commcost calibrate` (no `commcost_model_file`)"
                    .into(),
            });
        }
        model_file(&text, &value, &origin)
    }

    /// The file as pretty-printed JSON with a final newline, as `commcost calibrate` writes it.
    ///
    /// # Errors
    ///
    /// Never for a file of this crate's types; the serialiser's error otherwise.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self).map(|t| t + "\n")
    }
}

/// Splits `FILE#NAME` into the file and the model name; a path that exists as given (even with
/// a `#` in it) is a file.
pub fn split_selector(path: &Path) -> (PathBuf, Option<String>) {
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

/// Loads the model of a model file, `FILE` or `FILE#NAME` (see the [module](self) for the
/// shapes and the checks).
///
/// # Errors
///
/// [`ModelFileError`] naming the file (and the model and field path where there is one).
///
/// # Examples
///
/// ```
/// use commcost::model_file::load_model_file;
/// use commcost::{CommModel, Message};
///
/// let dir = std::env::temp_dir().join(format!("commcost-mf-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("two.json");
/// std::fs::write(&path, r#"{"preferred": "b", "models": {
///     "a": {"model": "pram", "unit_cost": 1e-6},
///     "b": {"model": "pram", "unit_cost": 2e-6}}}"#)?;
/// let b = load_model_file(&path)?;
/// assert_eq!((b.name.as_str(), b.spec.p2p(&Message::contiguous(8))), ("two#b", 2e-6));
/// let a = load_model_file(&dir.join("two.json#a"))?;
/// assert_eq!(a.spec.p2p(&Message::contiguous(8)), 1e-6);
/// let missing = load_model_file(&dir.join("two.json#c")).unwrap_err();
/// assert!(missing.to_string().contains("no model named `c`; the file has a, b"));
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_model_file(path: &Path) -> Result<LoadedModel, ModelFileError> {
    let (file, selector) = split_selector(path);
    let text = read_text_file(&file, "model file", MAX_MODEL_FILE_BYTES)?;
    let stem = file.file_stem().map_or_else(
        || file.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    load(
        &text,
        &file.display().to_string(),
        &stem,
        selector.as_deref(),
    )
}

/// Loads the model of a model file's text; `origin` names the text in errors and in the
/// loaded model's name, `name` picks one of several named models (like `FILE#NAME`).
///
/// # Errors
///
/// As [`load_model_file`], naming `origin`.
///
/// # Examples
///
/// ```
/// use commcost::model_file::parse_model_text;
///
/// let file = r#"{"commcost_model_file": 1, "provenance": {"measured": "", "method": "",
///     "date": "", "host": "", "parameters": {}, "accuracy": {}, "tool": ""},
///     "spec": {"model": "loggp", "latency": 5e-6, "overhead": 1e-6, "gap": -2e-6,
///              "gap_per_byte": 1e-9, "processors": 2}}"#;
/// let error = parse_model_text(file, "m.json", None).unwrap_err();
/// assert!(error.to_string().starts_with("m.json: invalid model file at `spec`"), "{error}");
/// assert!(error.to_string().contains("gap"));
/// let twice = r#"{"model": "pram", "unit_cost": 1e-6, "unit_cost": 2e-6}"#;
/// let error = parse_model_text(twice, "json", None).unwrap_err();
/// assert!(error.to_string().contains("duplicate key `unit_cost`"));
/// ```
pub fn parse_model_text(
    text: &str,
    origin: &str,
    name: Option<&str>,
) -> Result<LoadedModel, ModelFileError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    load(text, origin, origin, name)
}

/// The loader behind both entry points: `origin` names the file in errors, `stem` the model.
fn load(
    text: &str,
    origin: &str,
    stem: &str,
    selector: Option<&str>,
) -> Result<LoadedModel, ModelFileError> {
    let value = parse_json(text, origin)?;
    let selection = |message: String| ModelFileError::Selection {
        origin: origin.to_string(),
        message,
    };
    let single = || match selector {
        Some(n) => Err(selection(format!(
            "holds one model, not several: drop `#{n}`"
        ))),
        None => Ok(()),
    };
    let loaded = |name: String, spec: ModelSpec| LoadedModel {
        name,
        spec,
        local: LocalWork::FREE,
        operator: Operator::FREE,
        platform: Platform::PLAIN,
        nodes: None,
    };
    if value.get("commcost_model_file").is_some() {
        single()?;
        let file = model_file(text, &value, origin)?;
        let (local, operator) = file
            .local
            .map_or((LocalWork::FREE, Operator::FREE), |l| (l.work, l.operator));
        return Ok(LoadedModel {
            local,
            operator,
            platform: file.platform.unwrap_or_default(),
            nodes: file.nodes,
            ..loaded(stem.to_string(), file.spec)
        });
    }
    if value.get("model").is_some() {
        single()?;
        let spec =
            deserialize_with_path::<ModelSpec, _>(&mut serde_json::Deserializer::from_str(text))
                .map_err(|e| invalid(origin, "model", "", e))?;
        return Ok(loaded(stem.to_string(), spec));
    }
    let serde_json::Value::Object(mut map) = value else {
        return Err(selection(
            "not a model file (a JSON object is expected)".into(),
        ));
    };
    let preferred = match map.remove("preferred") {
        None => None,
        Some(serde_json::Value::String(p)) => Some(p),
        Some(other) => {
            return Err(selection(format!(
                "`preferred` must name a model, found {other}"
            )));
        }
    };
    let (models, prefix) = match map.remove("models") {
        Some(serde_json::Value::Object(inner)) if map.is_empty() => (inner, "models."),
        Some(_) => {
            return Err(selection(
                "`models` must be the only entry besides `preferred`, an object of named models"
                    .into(),
            ));
        }
        None => (map, ""),
    };
    let names: Vec<&str> = models.keys().map(String::as_str).collect();
    if names.is_empty() {
        return Err(selection("no model in the file".into()));
    }
    let chosen = match (selector, preferred.as_deref()) {
        (Some(n), _) | (None, Some(n)) => n.to_string(),
        (None, None) if names.len() == 1 => names[0].to_string(),
        (None, None) => match DEFAULT_PREFERENCE.iter().find(|n| models.contains_key(**n)) {
            Some(n) => (*n).to_string(),
            None => {
                return Err(selection(format!(
                    "several models ({}) and none marked `preferred`: pick one with \
                     {origin}#NAME",
                    names.join(", ")
                )));
            }
        },
    };
    let Some(entry) = models.get(&chosen) else {
        return Err(selection(format!(
            "no model named `{chosen}`; the file has {}",
            names.join(", ")
        )));
    };
    let spec = deserialize_with_path::<ModelSpec, _>(entry)
        .map_err(|e| invalid(origin, "model", &format!("{prefix}{chosen}."), e))?;
    Ok(loaded(format!("{stem}#{chosen}"), spec))
}

/// The text as JSON, every object's keys unique.
fn parse_json(text: &str, origin: &str) -> Result<serde_json::Value, ModelFileError> {
    let syntax = |e: serde_json::Error| ModelFileError::Syntax {
        origin: origin.to_string(),
        message: e.to_string(),
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(syntax)?;
    serde_json::from_str::<UniqueKeys>(text).map_err(syntax)?;
    Ok(value)
}

/// A [`ModelFile`] of a supported version from its text (`value` is the same text parsed).
fn model_file(
    text: &str,
    value: &serde_json::Value,
    origin: &str,
) -> Result<ModelFile, ModelFileError> {
    let version = &value["commcost_model_file"];
    if version.as_u64() != Some(u64::from(MODEL_FILE_VERSION)) {
        return Err(ModelFileError::Version {
            origin: origin.to_string(),
            found: version.to_string(),
        });
    }
    deserialize_with_path::<ModelFile, _>(&mut serde_json::Deserializer::from_str(text))
        .map_err(|e| invalid(origin, "model file", "", e))
}

/// A load error at `prefix` + its path.
fn invalid(origin: &str, what: &'static str, prefix: &str, e: crate::LoadError) -> ModelFileError {
    let path = if e.path.is_empty() || e.path == "." {
        prefix.trim_end_matches('.').to_string()
    } else {
        format!("{prefix}{}", e.path)
    };
    ModelFileError::Invalid {
        origin: origin.to_string(),
        what,
        path,
        message: e.message,
    }
}
