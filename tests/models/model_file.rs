//! The one model-file loader (`commcost::model_file`) that the CLI, the C ABI and the Python
//! package share: every shape it reads, and every hostile file refused with an error naming the
//! file, the model or the field (the CLI, C and Python suites repeat the classes through their
//! own surfaces).

// the values compared are read back, not computed: they must be bit for bit what the file says
#![allow(clippy::float_cmp)]

use std::path::{Path, PathBuf};

use commcost::model_file::{ModelFile, load_model_file, parse_model_text};
use commcost::sim::{Platform, RendezvousCompletion};
use commcost::{CommModel, FileError, Message, ModelFileError, ModelSpec};

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("model_file")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/selection")
        .join(name)
}

fn pram(cost: &str) -> String {
    format!(r#"{{"model": "pram", "unit_cost": {cost}}}"#)
}

fn p2p(spec: &ModelSpec) -> f64 {
    spec.p2p(&Message::contiguous(8))
}

#[test]
fn files_written_by_calibrate_load_with_their_local_section() {
    // committed `commcost calibrate osu` + `calibrate local` output
    let loaded = load_model_file(&fixture("cluster-1gbit-model-local.json")).unwrap();
    assert_eq!(loaded.name, "cluster-1gbit-model-local");
    // the file's values, as written in it (independent of the loader: the literals parsed by
    // Rust's own float parser)
    assert_eq!(
        // per_call 0 in the file: one byte costs exactly per_byte
        loaded.operator.cost(1),
        "3.13135205181787e-11".parse::<f64>().unwrap()
    );
    assert_eq!(
        loaded.local.temp_buffer(),
        "3.384797297297297e-08".parse::<f64>().unwrap()
    );
    // without a local section: free
    let plain = load_model_file(&fixture("cluster-1gbit-model.json")).unwrap();
    assert!(plain.local.is_free());
    // the same model either way
    assert_eq!(plain.spec, loaded.spec);
    // and read whole, as a tool that adds a section reads it
    let file = ModelFile::read(&fixture("cluster-1gbit-model-local.json")).unwrap();
    assert_eq!(file.spec, loaded.spec);
    assert_eq!(file.provenance.host, "vm");
    let again = parse_model_text(&file.to_json().unwrap(), "again", None).unwrap();
    assert_eq!(
        (again.local, again.operator),
        (loaded.local, loaded.operator)
    );
}

#[test]
fn floats_read_bit_for_bit() {
    // literals serde_json without `float_roundtrip` reads 1 ULP off (found by comparing it
    // with Rust's correctly rounded `str::parse`, the oracle here, over random 16-digit values)
    for literal in [
        "0.6672410791262988e-7",
        "0.7020380624025129e-9",
        "0.4849683599576358e-7",
        "0.2503395047159356e-7",
        "0.8844017525470288e-9",
    ] {
        let loaded = parse_model_text(&pram(literal), "json", None).unwrap();
        assert_eq!(
            p2p(&loaded.spec).to_bits(),
            literal.parse::<f64>().unwrap().to_bits(),
            "{literal}"
        );
    }
}

#[test]
fn named_models_are_picked_by_name_mark_or_preference() {
    let dir = scratch("named");
    let two = dir.join("two.json");
    std::fs::write(
        &two,
        format!(
            r#"{{"plogp_mpi": {}, "loggp_mpi": {}, "x": {}}}"#,
            pram("1e-6"),
            pram("2e-6"),
            pram("3e-6")
        ),
    )
    .unwrap();
    // no mark: the first of the default preference present
    let loaded = load_model_file(&two).unwrap();
    assert_eq!(
        (loaded.name.as_str(), p2p(&loaded.spec)),
        ("two#loggp_mpi", 2e-6)
    );
    let x = load_model_file(&dir.join("two.json#x")).unwrap();
    assert_eq!(p2p(&x.spec), 3e-6);
    // a mark
    let marked = format!(
        r#"{{"preferred": "b", "models": {{"a": {}, "b": {}}}}}"#,
        pram("1e-6"),
        pram("2e-6")
    );
    assert_eq!(
        p2p(&parse_model_text(&marked, "m", None).unwrap().spec),
        2e-6
    );
    assert_eq!(
        p2p(&parse_model_text(&marked, "m", Some("a")).unwrap().spec),
        1e-6
    );
    // several, no mark, no known name: asks for a name, listing them
    let e = parse_model_text(
        &format!(r#"{{"a": {}, "b": {}}}"#, pram("1e-6"), pram("2e-6")),
        "f.json",
        None,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("several models (a, b)") && e.to_string().contains("f.json#NAME"),
        "{e}"
    );
    // an error inside a named model names the model and the field
    let bad = format!(
        r#"{{"preferred": "b", "models": {{"a": {}, "b": {}}}}}"#,
        pram("1e-6"),
        pram("-2e-6")
    );
    let e = parse_model_text(&bad, "f.json", None).unwrap_err();
    assert!(
        matches!(&e, ModelFileError::Invalid { path, .. } if path == "models.b"),
        "{e:?}"
    );
    // the unselected model is not what is loaded, but a name on a single model is refused
    let e = parse_model_text(&pram("1e-6"), "f.json", Some("a")).unwrap_err();
    assert!(e.to_string().contains("holds one model"), "{e}");
}

#[test]
fn hostile_files_are_refused_naming_what_is_wrong() {
    let dir = scratch("hostile");
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let provenance = r#""provenance": {"measured": "", "method": "", "date": "", "host": "",
        "parameters": {}, "accuracy": {}, "tool": ""}"#;
    // a byte-order mark is dropped, in a file and in text
    let bom = write("bom.json", &format!("\u{feff}{}", pram("1e-6")));
    assert_eq!(p2p(&load_model_file(&bom).unwrap().spec), 1e-6);
    assert!(parse_model_text(&format!("\u{feff}{}", pram("1e-6")), "t", None).is_ok());
    // a key given twice, with its line
    let e = parse_model_text(
        "{\"model\": \"pram\",\n\"unit_cost\": 1e-6,\n\"unit_cost\": 2e-6}",
        "t",
        None,
    )
    .unwrap_err();
    assert!(matches!(e, ModelFileError::Syntax { .. }), "{e:?}");
    assert!(
        e.to_string().contains("duplicate key `unit_cost`") && e.to_string().contains("line 3"),
        "{e}"
    );
    // a format version that is not 1 (garbage, a float, a later version)
    for version in ["\"x\"", "1.5", "2", "null"] {
        let text = format!(
            r#"{{"commcost_model_file": {version}, {provenance}, "spec": {}}}"#,
            pram("1e-6")
        );
        let e = parse_model_text(&text, "v.json", None).unwrap_err();
        assert!(
            matches!(&e, ModelFileError::Version { found, .. } if found == version),
            "{version}: {e:?}"
        );
    }
    // a local section that does not validate: named by its path
    let text = format!(
        r#"{{"commcost_model_file": 1, {provenance}, "spec": {},
            "local": {{"work": {{"copy": {{"per_call": -1.0, "classes": [[0, 1e-10]]}},
                       "temp_buffer": 0.0}}, "operator": {{"per_call": 0.0, "per_byte": 0.0}},
                       {provenance}}}}}"#,
        pram("1e-6")
    );
    let e = parse_model_text(&text, "l.json", None).unwrap_err();
    assert!(
        matches!(&e, ModelFileError::Invalid { path, .. } if path.starts_with("local.work")),
        "{e:?}"
    );
    // an unknown top-level entry of a calibrate file, and a file without provenance
    for text in [
        format!(
            r#"{{"commcost_model_file": 1, {provenance}, "spec": {}, "extra": 1}}"#,
            pram("1e-6")
        ),
        format!(r#"{{"commcost_model_file": 1, "spec": {}}}"#, pram("1e-6")),
    ] {
        let e = parse_model_text(&text, "u.json", None).unwrap_err();
        assert!(
            e.to_string().starts_with("u.json: invalid model file"),
            "{e}"
        );
    }
    // not an object, not JSON, an empty object
    for (text, kind) in [("[1]", "object"), ("{", "JSON"), ("{}", "no model")] {
        let e = parse_model_text(text, "s.json", None).unwrap_err();
        assert!(e.to_string().contains(kind), "{text}: {e}");
    }
    // deep nesting is an error, not a stack overflow
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(parse_model_text(&deep, "d.json", None).is_err());
    // not a regular file: refused before reading
    #[cfg(unix)]
    {
        let e = load_model_file(Path::new("/dev/zero")).unwrap_err();
        assert!(
            matches!(e, ModelFileError::File(FileError::NotRegular { .. })),
            "{e:?}"
        );
        let fifo = dir.join("fifo.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = load_model_file(&fifo).unwrap_err();
            assert!(
                matches!(e, ModelFileError::File(FileError::NotRegular { .. })),
                "{e:?}"
            );
        }
    }
    // larger than the bound: refused, never cut
    let big = write(
        "big.json",
        &format!(
            "{}{}",
            pram("1e-6"),
            " ".repeat(commcost::limits::MAX_MODEL_FILE_BYTES as usize)
        ),
    );
    let e = load_model_file(&big).unwrap_err();
    assert!(
        matches!(e, ModelFileError::File(FileError::TooLarge { .. })),
        "{e:?}"
    );
    // a missing file names it
    let e = load_model_file(&dir.join("missing.json")).unwrap_err();
    assert!(e.to_string().contains("missing.json"), "{e}");
    // a bare spec must not be read as a calibrate file by a tool that writes sections back
    let e = ModelFile::read(&bom).unwrap_err();
    assert!(e.to_string().contains("commcost_model_file"), "{e}");
}

/// The model-file reference in docs/MODELS.md ("Model files") against the loader: every
/// example line of docs/model-files.jsonl loads; every model the loader knows has a row and one example; the fields of a
/// row are exactly what the loader accepts (a required one missing fails, an optional one
/// missing loads, any other field fails).
#[test]
fn model_file_reference() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/MODELS.md"))
        .unwrap();
    let section = &doc[doc.find("## Model files").expect("the section")..];
    let ticked = |cell: &str| -> Vec<(String, bool)> {
        // backticked names outside parentheses; `*`name`*` is optional
        let (mut out, mut depth, mut rest) = (Vec::new(), 0i32, cell);
        while let Some(c) = rest.chars().next() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                '`' if depth == 0 => {
                    let end = rest[1..].find('`').expect("closing backtick") + 1;
                    let optional = rest[end + 1..].starts_with('*');
                    out.push((rest[1..end].to_string(), optional));
                    rest = &rest[end..];
                }
                _ => {}
            }
            rest = &rest[c.len_utf8()..];
        }
        out
    };
    let mut rows = std::collections::BTreeMap::new();
    // the rows after the header (`| `model` | fields |`)
    for line in section.lines().filter(|l| l.starts_with("| `")).skip(1) {
        let cells: Vec<&str> = line.split(" | ").collect();
        for (tag, _) in ticked(cells[0].trim_start_matches("| ")) {
            rows.insert(tag, ticked(cells[1].trim_end_matches(" |")));
        }
    }
    // the loader's own list of models (its error for an unknown one)
    let e = parse_model_text(r#"{"model": "nope"}"#, "t", None)
        .unwrap_err()
        .to_string();
    let known: std::collections::BTreeSet<String> = e[e.find("expected one of").unwrap()..]
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    assert_eq!(
        rows.keys()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>(),
        known,
        "a row per model"
    );
    let block = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/model-files.jsonl"),
    )
    .unwrap();
    // every field of every example with its value: offered to every other model below
    let mut values = serde_json::Map::new();
    for line in block.lines() {
        if let Ok(serde_json::Value::Object(example)) = serde_json::from_str(line) {
            for (k, v) in example {
                values.entry(k).or_insert(v);
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for line in block.lines() {
        assert!(parse_model_text(line, "example", None).is_ok(), "{line}");
        let serde_json::Value::Object(example) = serde_json::from_str(line).unwrap() else {
            panic!("{line}")
        };
        let tag = example["model"].as_str().unwrap().to_string();
        assert!(seen.insert(tag.clone()), "two examples of {tag}");
        let fields = &rows[&tag];
        for key in example.keys().filter(|k| *k != "model") {
            assert!(
                fields.iter().any(|(f, _)| f == key),
                "{tag}: `{key}` not in the table"
            );
        }
        for (field, optional) in fields {
            let mut without = example.clone();
            let present = without.remove(field).is_some();
            assert!(
                present || *optional,
                "{tag}: the example lacks required `{field}`"
            );
            let loads =
                parse_model_text(&serde_json::Value::Object(without).to_string(), "t", None)
                    .is_ok();
            assert_eq!(loads, *optional, "{tag}: `{field}` optional = {optional}");
        }
        let other = values
            .iter()
            .filter(|(k, _)| !fields.iter().any(|(f, _)| f == *k) && *k != "model");
        for (key, value) in other.chain([(&"zzz".to_string(), &1.into())]) {
            let mut extra = example.clone();
            extra.insert(key.clone(), value.clone());
            let text = serde_json::Value::Object(extra).to_string();
            assert!(
                parse_model_text(&text, "t", None).is_err(),
                "{tag} accepts `{key}`, which its row does not list"
            );
        }
    }
    assert_eq!(seen, known, "an example per model");
}

#[test]
fn a_platform_section_loads_validated() {
    let provenance = r#""provenance": {"measured": "", "method": "", "date": "", "host": "",
        "parameters": {}, "accuracy": {}, "tool": ""}"#;
    let with = |platform: &str| {
        format!(
            r#"{{"commcost_model_file": 1, {provenance}, "spec": {}, "platform": {platform}}}"#,
            pram("1e-6")
        )
    };
    let loaded = parse_model_text(
        &with(
            r#"{"rendezvous_above": 65522, "rendezvous_completion": "at_handshake",
                  "cores": 2, "link_burst": 9100, "ack_behind_sends": true}"#,
        ),
        "p.json",
        None,
    )
    .unwrap();
    let want = Platform {
        rendezvous_above: Some(65522),
        rendezvous_completion: RendezvousCompletion::AtHandshake,
        cores: Some(2),
        link_burst: Some(9100),
        ack_behind_sends: true,
    };
    assert_eq!(loaded.platform, want);
    // every field optional; none: the plain platform
    let empty = parse_model_text(&with("{}"), "p.json", None).unwrap();
    assert!(empty.platform.is_plain());
    let none = parse_model_text(&pram("1e-6"), "p.json", None).unwrap();
    assert!(none.platform.is_plain());
    // refused, naming the field
    for (platform, field) in [
        (r#"{"cores": 0}"#, "cores"),
        (r#"{"rendezvous_completion": "later"}"#, "later"),
        (r#"{"link_burst": -1}"#, "link_burst"),
        (r#"{"ack_behind_sends": 1}"#, "ack_behind_sends"),
        (r#"{"burst": 1}"#, "burst"),
    ] {
        let e = parse_model_text(&with(platform), "p.json", None).unwrap_err();
        assert!(
            matches!(&e, ModelFileError::Invalid { path, .. } if path.starts_with("platform"))
                && e.to_string().contains(field),
            "{platform}: {e}"
        );
    }
    // written back as read
    let mut file = ModelFile::read(&fixture("cluster-1gbit-model.json")).unwrap();
    file.platform = Some(want);
    let again = parse_model_text(&file.to_json().unwrap(), "again", None).unwrap();
    assert_eq!(again.platform, want);
}

#[test]
fn a_nodes_section_loads_validated() {
    use commcost::sim::{NodeLayout, Placement};
    let provenance = r#""provenance": {"measured": "", "method": "", "date": "", "host": "",
        "parameters": {}, "accuracy": {}, "tool": ""}"#;
    let with = |nodes: &str| {
        format!(
            r#"{{"commcost_model_file": 1, {provenance}, "spec": {}, "nodes": {nodes}}}"#,
            pram("1e-6")
        )
    };
    let inter = pram("5e-6");
    let loaded = parse_model_text(
        &with(&format!(
            r#"{{"layout": {{"ranks_per_node": 4, "placement": "round_robin"}}, "inter": {inter},
                 "inter_platform": {{"link_burst": 9100}}}}"#
        )),
        "n.json",
        None,
    )
    .unwrap();
    let section = loaded.nodes.clone().unwrap();
    assert_eq!(
        section.layout,
        NodeLayout::Uniform {
            ranks_per_node: 4,
            placement: Placement::RoundRobin
        }
    );
    assert_eq!(p2p(&section.inter), 5e-6);
    assert_eq!(section.inter_platform.unwrap().link_burst, Some(9100));
    let map = section.layout.map_for(8).unwrap();
    assert_eq!((map.nodes(), map.node(1)), (2, 1));
    // placement defaults to block; an explicit map
    let block = parse_model_text(
        &with(&format!(
            r#"{{"layout": {{"ranks_per_node": 2}}, "inter": {inter}}}"#
        )),
        "n.json",
        None,
    )
    .unwrap();
    assert!(matches!(
        block.nodes.unwrap().layout,
        NodeLayout::Uniform {
            placement: Placement::Block,
            ..
        }
    ));
    let explicit = parse_model_text(
        &with(&format!(
            r#"{{"layout": {{"map": [0, 1, 1]}}, "inter": {inter}}}"#
        )),
        "n.json",
        None,
    )
    .unwrap();
    let layout = explicit.nodes.unwrap().layout;
    assert_eq!(layout.map_for(3).unwrap().as_slice(), [0, 1, 1]);
    // a job of another size than the map
    assert!(layout.map_for(4).is_err());
    // refused, naming the field
    for (nodes, field) in [
        (
            format!(r#"{{"layout": {{"ranks_per_node": 0}}, "inter": {inter}}}"#),
            "ranks_per_node",
        ),
        (
            format!(r#"{{"layout": {{"map": []}}, "inter": {inter}}}"#),
            "map",
        ),
        (
            format!(r#"{{"layout": {{"map": [0, 2]}}, "inter": {inter}}}"#),
            "map",
        ),
        (
            format!(r#"{{"layout": {{"map": [0, 1], "ranks_per_node": 1}}, "inter": {inter}}}"#),
            "not both",
        ),
        (
            format!(r#"{{"layout": {{}}, "inter": {inter}}}"#),
            "ranks_per_node",
        ),
        (
            format!(r#"{{"layout": {{"ranks_per_node": 2, "slots": 1}}, "inter": {inter}}}"#),
            "slots",
        ),
        (r#"{"layout": {"ranks_per_node": 2}}"#.to_string(), "inter"),
        (
            format!(
                r#"{{"layout": {{"ranks_per_node": 2}}, "inter": {}}}"#,
                pram("-1")
            ),
            "inter",
        ),
    ] {
        let e = parse_model_text(&with(&nodes), "n.json", None).unwrap_err();
        assert!(
            matches!(&e, ModelFileError::Invalid { path, .. } if path.starts_with("nodes"))
                && e.to_string().contains(field),
            "{nodes}: {e}"
        );
    }
    // written back as read
    let mut file = ModelFile::read(&fixture("cluster-1gbit-model.json")).unwrap();
    file.nodes = loaded.nodes.clone();
    let again = parse_model_text(&file.to_json().unwrap(), "again", None).unwrap();
    assert_eq!(again.nodes, loaded.nodes);
}
