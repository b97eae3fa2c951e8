//! Load calibrated models from a JSON file and predict with them: the file `calibrate_host`
//! writes (a map from names to `ModelSpec`s), or a single `ModelSpec`.
//!
//! Run with `cargo run --release -p commcost-examples --features files --example predict_from_file --
//! FILE`. Exits with an error if
//! the file does not load (parameters are validated on load) or a prediction is not a finite,
//! non-negative time.

use std::collections::BTreeMap;

use commcost::{CommModel, Message, ModelSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: predict_from_file FILE (as written by calibrate_host)")?;
    let text = std::fs::read_to_string(&path)?;
    // one model (a map with a "model" tag) or a map of them; a load error names the field path,
    // e.g. "at `openib.ranges[1].model.gap`: invalid type: string ..."
    // (`mpi_calibrate`'s map also names its `"preferred"` model: not a model itself)
    let mut value = serde_json::from_str::<serde_json::Value>(&text)?;
    let single = value.get("model").is_some_and(serde_json::Value::is_string);
    let models: BTreeMap<String, ModelSpec> = if single {
        BTreeMap::from([(
            "model".to_string(),
            ModelSpec::deserialize_with_path(value).map_err(|e| format!("{path}: {e}"))?,
        )])
    } else {
        if let Some(map) = value.as_object_mut()
            && map
                .get("preferred")
                .is_some_and(serde_json::Value::is_string)
        {
            map.remove("preferred");
        }
        commcost::models::spec::deserialize_with_path(value).map_err(|e| format!("{path}: {e}"))?
    };
    let messages = [
        ("8 B", Message::contiguous(8)),
        ("64 KiB", Message::contiguous(64 * 1024)),
        (
            "64 KiB of doubles at stride 256 B",
            Message::vector(8192, 8, 256)?,
        ),
        (
            "a column of a 1000 x 1000 int matrix",
            Message::vector(1000, 4, 4000)?,
        ),
    ];
    for (name, spec) in &models {
        let model: Box<dyn CommModel> = spec.clone().into_model();
        println!("{name}:");
        for (label, msg) in &messages {
            let t = model.p2p(msg);
            if !(t.is_finite() && t >= 0.0) {
                return Err(format!("{name}: prediction {t} for {label}").into());
            }
            println!("  {label:<40} {:>12.3} µs", t * 1e6);
        }
    }
    Ok(())
}
