//! JSON mutation test: every model kind and every preset is serialised, then every field of the
//! document is mutated (wrong types, negatives, NaN as a string, subnormal and absurd numbers,
//! nulls, unknown keys, removed keys, deep nesting). Each mutation must be rejected with an error
//! whose field path leads to the mutated field, or load into a model whose predictions are finite
//! and non-negative for every message tried.
//!
//! The repository ships no model files, so the documents are generated from the models
//! themselves: the four Table 2 transports and the Titan log_3 P preset (Hoefler et al. 2007;
//! Cameron, Ge & Sun 2007), and one hand-built model of every other kind.

use commcost::models::copy_transfer::Composition;
use commcost::models::copy_transfer::Stage;
use commcost::models::loggpo::Mechanism;
use commcost::models::loggpo::Progress;
use commcost::table::Table1D;
use commcost::table::Table2D;
use commcost::{
    CommModel, CopyTransfer, LogGP, LogGpo, LogNP, LogP, MemoryLogP, MemoryNetworkLogP, Message,
    MlinesModel, ModelSpec, PLogP, Pram, Protocols, presets,
};
use serde_json::{Value, json};

fn models() -> Vec<(String, ModelSpec)> {
    let mut out: Vec<(String, ModelSpec)> = presets::table2_transports()
        .into_iter()
        .map(|(name, m)| (name.to_string(), ModelSpec::from(m)))
        .collect();
    let titan = presets::titan_log3p();
    out.push(("titan log3p".into(), titan.clone().into()));
    out.push(("titan as lognp".into(), LogNP::from(titan).into()));
    let logp = LogP::new(5e-6, 1e-6, 2e-6, 8).unwrap();
    out.push(("logp".into(), logp.clone().into()));
    out.push((
        "logp protocols".into(),
        Protocols::from_starts(vec![(1, logp.clone()), (4096, logp.clone())])
            .unwrap()
            .into(),
    ));
    let loggp = LogGP::new(5e-6, 1e-6, 2e-6, 1e-9).unwrap();
    out.push(("loggp".into(), loggp.clone().into()));
    out.push(("loggp as lognp".into(), LogNP::from(loggp).into()));
    out.push(("logp as lognp".into(), LogNP::from(logp.clone()).into()));
    out.push(("pram".into(), Pram::new(1e-6).unwrap().into()));
    out.push((
        "mlines".into(),
        MlinesModel::new(1e-6, 1e-9, 1e-8, 64).unwrap().into(),
    ));
    let memory = MemoryLogP::new(
        Table1D::new(vec![64.0, 4096.0], vec![1e-9, 2e-9]).unwrap(),
        Some(
            Table2D::new(
                vec![64.0, 4096.0],
                vec![8.0, 64.0, 512.0],
                vec![vec![0.0, 1e-9, 2e-9], vec![0.0, 2e-9, 3e-9]],
            )
            .unwrap(),
        ),
        8,
        8,
    )
    .unwrap();
    out.push(("memory logp".into(), memory.clone().into()));
    out.push((
        "memory logp as lognp".into(),
        LogNP::from(memory.clone()).into(),
    ));
    out.push((
        "memory network logp".into(),
        MemoryNetworkLogP::new(memory, logp).into(),
    ));
    let stages = vec![
        Stage::new("pack", 2e9, 1e-7)
            .unwrap()
            .with_strided_bandwidth(vec![8.0, 64.0, 1024.0], vec![2e9, 1e9, 2e8])
            .unwrap(),
        Stage::new("wire", 1e9, 2e-6).unwrap(),
    ];
    for composition in [Composition::Sequential, Composition::Pipelined] {
        let c = CopyTransfer::new(stages.clone(), composition, 8).unwrap();
        out.push((format!("copy transfer {composition:?}"), c.clone().into()));
        out.push((
            format!("copy transfer {composition:?} as lognp"),
            LogNP::from(c).into(),
        ));
    }
    out.push((
        "loggpo".into(),
        LogGpo::new(
            5e-6,
            1e-9,
            12288,
            Progress::Dependent,
            Mechanism::T,
            Mechanism::Rat,
            1e-6,
            Table1D::new(vec![0.0, 65536.0], vec![1e-6, 3e-6]).unwrap(),
            Table1D::new(vec![0.0, 65536.0], vec![0.0, 2e-5]).unwrap(),
        )
        .unwrap()
        .into(),
    ));
    out.push((
        "plogp".into(),
        PLogP::new(
            5e-6,
            Table1D::new(vec![1.0, 65536.0], vec![1e-6, 2e-5]).unwrap(),
            Table1D::linear(1e-6, 1e-10).unwrap(),
            Table1D::new(vec![1.0, 4096.0, 262144.0], vec![1e-6, 3e-6, 2e-4]).unwrap(),
            2,
        )
        .unwrap()
        .into(),
    ));
    out
}

fn messages() -> Vec<Message> {
    let mut out: Vec<Message> = [0, 1, 7, 8, 64, 4095, 12289, 1 << 20, 1 << 40, u64::MAX]
        .into_iter()
        .map(Message::contiguous)
        .collect();
    for (count, block, stride) in [
        (2, 1, 2),
        (100, 8, 64),
        (1000, 4, 4000),
        (1 << 20, 8, 1 << 12),
        (u64::MAX / 16, 8, 16),
        (2, u64::MAX / 2, u64::MAX / 2),
    ] {
        out.push(
            Message::vector(count, block, stride)
                .unwrap()
                .with_offset(3),
        );
    }
    out
}

/// Every (path, value) in the document; paths in serde_path_to_error's notation.
fn paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.push(p.clone());
                paths(child, &p, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                let p = format!("{prefix}[{i}]");
                out.push(p.clone());
                paths(child, &p, out);
            }
        }
        _ => {}
    }
}

/// The node at a path (a JSON pointer built from it).
fn node<'a>(doc: &'a mut Value, path: &str) -> &'a mut Value {
    let pointer: String = path
        .replace('[', ".")
        .replace(']', "")
        .split('.')
        .map(|s| format!("/{s}"))
        .collect();
    doc.pointer_mut(&pointer).expect("path exists")
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mutation {
    WrongType,
    NanString,
    Negative,
    Subnormal,
    Huge,
    MaxInteger,
    Null,
    EmptyArray,
    DeepNesting,
    UnknownKey,
    RemoveKey,
}

const ALL: [Mutation; 11] = [
    Mutation::WrongType,
    Mutation::NanString,
    Mutation::Negative,
    Mutation::Subnormal,
    Mutation::Huge,
    Mutation::MaxInteger,
    Mutation::Null,
    Mutation::EmptyArray,
    Mutation::DeepNesting,
    Mutation::UnknownKey,
    Mutation::RemoveKey,
];

/// Applies a mutation at `path`; `None` when it does not apply to that node.
fn mutate(doc: &Value, path: &str, mutation: Mutation) -> Option<String> {
    let mut doc = doc.clone();
    let target = node(&mut doc, path);
    match mutation {
        Mutation::WrongType => *target = Value::Bool(true),
        Mutation::NanString => *target = json!("NaN"),
        Mutation::Negative => {
            let x = target.as_f64()?;
            *target = json!(-(x.abs() + 1e-6));
        }
        // serde_json writes neither 1e-320 nor 1e300 losslessly through Value; spliced as text
        Mutation::Subnormal => {
            target.as_f64()?;
            *target = json!("@SUBNORMAL@");
        }
        Mutation::Huge => {
            target.as_f64()?;
            *target = json!("@HUGE@");
        }
        Mutation::MaxInteger => {
            target.as_u64()?;
            *target = json!(u64::MAX);
        }
        Mutation::Null => *target = Value::Null,
        Mutation::EmptyArray => {
            target.as_array()?;
            *target = json!([]);
        }
        Mutation::DeepNesting => *target = json!("@DEEP@"),
        Mutation::UnknownKey => {
            target
                .as_object_mut()?
                .insert("unexpected_key".into(), json!(1));
        }
        Mutation::RemoveKey => {
            let map = target.as_object_mut()?;
            let key = map.keys().next()?.clone();
            map.remove(&key);
        }
    }
    let text = tag_first(&doc);
    Some(
        text.replace("\"@SUBNORMAL@\"", "1e-320")
            .replace("\"@HUGE@\"", "1e300")
            .replace(
                "\"@DEEP@\"",
                &format!("{}1{}", "[".repeat(300), "]".repeat(300)),
            ),
    )
}

/// The document as text with the `"model"` tag first, as `ModelSpec`'s `Serialize` writes it
/// (`serde_json::Value` sorts keys).
fn tag_first(doc: &Value) -> String {
    let mut rest = doc.clone();
    let Some(map) = rest.as_object_mut() else {
        return serde_json::to_string(doc).unwrap();
    };
    let Some(tag) = map.remove("model") else {
        return serde_json::to_string(doc).unwrap();
    };
    let rest = serde_json::to_string(&rest).unwrap();
    let tag = serde_json::to_string(&tag).unwrap();
    if rest == "{}" {
        format!("{{\"model\":{tag}}}")
    } else {
        format!("{{\"model\":{tag},{}", &rest[1..])
    }
}

/// `a` is `b` or one of its ancestors.
fn ancestor_or_self(a: &str, b: &str) -> bool {
    a == "." || a == b || b.starts_with(&format!("{a}.")) || b.starts_with(&format!("{a}["))
}

/// `error_path` leads to `mutated`: the field itself, an ancestor (the object whose validation
/// failed) or a place inside the value put there.
fn leads_to(error_path: &str, mutated: &str) -> bool {
    ancestor_or_self(error_path, mutated) || ancestor_or_self(mutated, error_path)
}

#[test]
fn every_generated_model_file_loads_back_identically() {
    for (name, spec) in models() {
        let text = serde_json::to_string(&spec).unwrap();
        let back = ModelSpec::deserialize_with_path(&mut serde_json::Deserializer::from_str(&text))
            .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        assert_eq!(back, spec, "{name}");
    }
}

#[test]
fn every_mutation_is_rejected_with_a_path_or_predicts_finite_times() {
    let messages = messages();
    let (mut rejected, mut accepted, mut exact_paths) = (0, 0, 0);
    for (name, spec) in models() {
        let doc = serde_json::to_value(&spec).unwrap();
        let mut all = Vec::new();
        paths(&doc, "", &mut all);
        // the document itself: unknown key, removed key
        for mutation in [Mutation::UnknownKey, Mutation::RemoveKey] {
            let mut d = doc.clone();
            let map = d.as_object_mut().unwrap();
            if mutation == Mutation::UnknownKey {
                map.insert("unexpected_key".into(), json!(1));
            } else {
                map.remove("model");
            }
            let text = tag_first(&d);
            assert!(
                ModelSpec::deserialize_with_path(&mut serde_json::Deserializer::from_str(&text))
                    .is_err(),
                "{name}: {mutation:?} at the top level was accepted"
            );
        }
        for path in &all {
            for mutation in ALL {
                let Some(text) = mutate(&doc, path, mutation) else {
                    continue;
                };
                match ModelSpec::deserialize_with_path(&mut serde_json::Deserializer::from_str(
                    &text,
                )) {
                    Err(e) => {
                        rejected += 1;
                        assert!(!e.message.is_empty());
                        assert!(
                            leads_to(&e.path, path),
                            "{name}: {mutation:?} at {path}: error at {} ({})",
                            e.path,
                            e.message
                        );
                        if mutation == Mutation::WrongType {
                            // a type error is reported at the field or an ancestor below the
                            // top level
                            assert_ne!(e.path, ".", "{name}: {mutation:?} at {path}: {e}");
                        }
                        if e.path == *path {
                            exact_paths += 1;
                        }
                    }
                    Ok(model) => {
                        accepted += 1;
                        assert!(
                            !matches!(mutation, Mutation::UnknownKey | Mutation::DeepNesting),
                            "{name}: {mutation:?} at {path} was accepted"
                        );
                        for msg in &messages {
                            let q = model.quantities(msg);
                            for (what, t) in [
                                ("p2p", q.p2p),
                                ("send_overhead", q.send_overhead),
                                ("recv_overhead", q.recv_overhead),
                                ("send_interval", q.send_interval),
                                ("gap", q.gap),
                            ] {
                                assert!(
                                    t.is_finite() && t >= 0.0,
                                    "{name}: {mutation:?} at {path}: {what}({msg:?}) = {t}\n{text}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    eprintln!("{rejected} rejected ({exact_paths} at the exact path), {accepted} accepted");
    // the suite exercises both outcomes, and most rejections point at the very field
    assert!(
        rejected > 1000 && accepted > 10,
        "{rejected} rejected, {accepted} accepted"
    );
    assert!(
        exact_paths * 2 > rejected,
        "{exact_paths} of {rejected} at the exact path"
    );
}
