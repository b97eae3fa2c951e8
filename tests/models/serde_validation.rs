//! Loading validates: every type with an invariant deserialises through its validating
//! constructor, unknown keys are errors wherever people write JSON, and load errors name the
//! field path.

use commcost::mlines::NestedLayout;
use commcost::models::loggpo::Timeline;
use commcost::models::lognp::Hop;
use commcost::models::lognp::SizeCost;
use commcost::models::lognp::StrideCost;
use commcost::models::memory_logp::CacheLevel;
use commcost::models::spec::deserialize_with_path;
use commcost::{LogGP, LogNP, MemoryNetworkLogP, Message, ModelSpec, Protocols};

fn rejects<T: serde::de::DeserializeOwned + std::fmt::Debug>(text: &str) {
    let r = serde_json::from_str::<T>(text);
    assert!(r.is_err(), "accepted {text}: {r:?}");
}

/// A log_n P model of the one hop `hop` (JSON): hops are checked by the model they are in.
fn lognp_of(hop: &str) -> String {
    format!(r#"{{"unit_stride": 0, "hops": [{hop}]}}"#)
}

/// A log_n P model whose one hop has the unit-stride cost `cost` (JSON).
fn lognp_with_overhead(cost: &str) -> String {
    lognp_of(&format!(r#"{{"overhead": {cost}}}"#))
}

#[test]
fn size_costs_load_through_validation() {
    for bad in [
        r#"{"form": "linear", "fixed": -1.0, "per_byte": 1e-9}"#,
        r#"{"form": "long_message", "first_byte": 1e-6, "per_byte": -1e-9}"#,
        r#"{"form": "words", "first_word": 1e-6, "per_extra_word": 1e-7, "word_bytes": 0}"#,
        r#"{"form": "table", "sizes": [0.0, 1.0], "values": [1e-6, -1e-6]}"#,
        r#"{"form": "per_byte", "sizes": [0.0], "values": [-1.0]}"#,
        r#"{"form": "linear", "fixed": 1e-320, "per_byte": 1e-9}"#,
        r#"{"form": "linear", "fixed": 0.0, "per_byte": 1e300}"#,
    ] {
        rejects::<LogNP>(&lognp_with_overhead(bad));
    }
    rejects::<SizeCost>(r#"{"form": "linear", "fixed": 0.0, "per_byte": 1e-9, "extra": 1}"#);
    let ok: SizeCost =
        serde_json::from_str(r#"{"form": "linear", "fixed": 1e-6, "per_byte": 1e-9}"#).unwrap();
    approx::assert_relative_eq!(ok.eval(1000), 1e-6 + 1000.0 * 1e-9, max_relative = 1e-15);
}

#[test]
fn stride_costs_and_hops_load_through_validation() {
    let linear = r#"{"form": "linear", "fixed": 1e-6, "per_byte": 1e-9}"#;
    let stride = r#"{"form": "table", "sizes": [64.0], "strides": [16.0], "values": [[-1e-6]]}"#;
    serde_json::from_str::<StrideCost>(stride).unwrap();
    rejects::<LogNP>(&lognp_of(&format!(
        r#"{{"overhead": {linear}, "strided": {stride}}}"#
    )));
    rejects::<LogNP>(&lognp_of(&format!(
        r#"{{"overhead": {linear}, "gap": {{"form": "linear", "fixed": -1.0, "per_byte": 0.0}}}}"#
    )));
    rejects::<LogNP>(&lognp_of(&format!(
        r#"{{"overhead": {linear}, "strided": {{"form": "per_byte", "sizes": [64.0], "strides": [16.0], "values": [[-1e-9]]}}}}"#
    )));
    rejects::<Hop>(&format!(r#"{{"overhead": {linear}, "gapp": null}}"#));
    let hop: Hop =
        serde_json::from_str(r#"{"overhead": {"form": "linear", "fixed": 1e-6, "per_byte": 0.0}}"#)
            .unwrap();
    approx::assert_relative_eq!(
        hop.cost(&Message::contiguous(10), 0),
        1e-6,
        max_relative = 1e-15
    );
    // the unit-stride rule needs the model's unit stride: checked by LogNP on load
    rejects::<LogNP>(
        r#"{"unit_stride": 32, "hops": [{"overhead": {"form": "linear", "fixed": 0.0, "per_byte": 0.0}, "strided": {"form": "table", "sizes": [64.0], "strides": [16.0], "values": [[1e-6]]}}]}"#,
    );
}

#[test]
fn unknown_keys_are_rejected_in_nested_specs() {
    rejects::<Message>(r#"{"count": 1, "block_len": 8, "stride": 8, "ofset": 3}"#);
    rejects::<NestedLayout>(
        r#"{"planes": 1, "plane_stride": 1, "rows": 1, "row_stride": 1, "block": 1, "offset": 0, "x": 0}"#,
    );
    rejects::<CacheLevel>(r#"{"capacity_bytes": 1024, "miss_penalty": 1e-9, "latency": 1}"#);
    rejects::<Timeline>(
        r#"{"isend": 0, "irecv": 0, "send_wait": 1, "recv_wait": 1, "computation": 1, "x": 1}"#,
    );
    let loggp = r#"{"latency": 5e-6, "overhead": 1e-6, "gap": 2e-6, "gap_per_byte": 1e-9, "processors": 2}"#;
    rejects::<Protocols<LogGP>>(&format!(
        r#"{{"ranges": [{{"start": 1, "end": null, "model": {loggp}, "typo": 1}}]}}"#
    ));
    let logp =
        r#"{"latency": 5e-6, "overhead": 1e-6, "gap": 2e-6, "processors": 2, "word_bytes": 8}"#;
    let memory = r#"{"overhead_per_byte": {"sizes": [0.0], "values": [1e-9]}, "latency_per_byte": null, "word_bytes": 8, "unit_stride": 8}"#;
    let good = format!(r#"{{"memory": {memory}, "network": {logp}}}"#);
    serde_json::from_str::<MemoryNetworkLogP>(&good).unwrap();
    rejects::<MemoryNetworkLogP>(&format!(
        r#"{{"memory": {memory}, "network": {logp}, "netwrok": 1}}"#
    ));
}

fn load(text: &str) -> Result<ModelSpec, commcost::LoadError> {
    ModelSpec::deserialize_with_path(&mut serde_json::Deserializer::from_str(text))
}

#[test]
fn load_errors_name_the_field_path() {
    let range = |gap: &str| {
        format!(
            r#"{{"start": 1, "end": null, "model": {{"latency": 5e-6, "overhead": 1e-6, "gap": {gap}, "gap_per_byte": 1e-9, "processors": 2}}}}"#
        )
    };
    let first = r#"{"start": 1, "end": 1024, "model": {"latency": 5e-6, "overhead": 1e-6, "gap": 2e-6, "gap_per_byte": 1e-9, "processors": 2}}"#;
    let bad = range("\"2e-6\"").replace("\"start\": 1", "\"start\": 1024");
    let e = load(&format!(
        r#"{{"model": "loggp_protocols", "ranges": [{first}, {bad}]}}"#
    ))
    .unwrap_err();
    assert_eq!(e.path, "ranges[1].model.gap");
    assert!(e.message.contains("invalid type"), "{e}");
    // a validation error names the object (path) and the parameter (message)
    let negative = range("-2e-6").replace("\"start\": 1", "\"start\": 1024");
    let e = load(&format!(
        r#"{{"model": "loggp_protocols", "ranges": [{first}, {negative}]}}"#
    ))
    .unwrap_err();
    assert_eq!(e.path, "ranges[1].model");
    assert!(e.message.contains("`gap`"), "{e}");
    // a misspelt field of a nested hop
    let e = load(r#"{"model": "lognp", "unit_stride": 0, "hops": [{"overhead": {"form": "linear", "fixed": 0.0, "per_byte": 0.0}}, {"overhead": {"form": "linear", "fixed": 0.0, "per_byte": 0.0}, "gapp": null}]}"#)
        .unwrap_err();
    assert_eq!(e.path, "hops[1].gapp");
    // an invalid cost of a hop: the model's validation names the hop and the field
    let e = load(r#"{"model": "lognp", "unit_stride": 0, "hops": [{"overhead": {"form": "linear", "fixed": 0.0, "per_byte": 0.0}}, {"overhead": {"form": "linear", "fixed": 0.0, "per_byte": 0.0}, "gap": {"form": "linear", "fixed": -1.0, "per_byte": 0.0}}]}"#)
        .unwrap_err();
    assert!(
        e.message.contains("hop 1") && e.message.contains("`gap`"),
        "{e}"
    );
    // a generic load names the path too
    let e = deserialize_with_path::<Protocols<LogGP>, _>(&mut serde_json::Deserializer::from_str(
        &format!(r#"{{"ranges": [{}]}}"#, range("true")),
    ))
    .unwrap_err();
    assert_eq!(e.path, "ranges[0].model.gap");
}

#[test]
fn the_model_tag_may_stand_anywhere() {
    let spec = load(r#"{"unit_cost": 2e-6, "model": "pram"}"#).unwrap();
    assert_eq!(spec, ModelSpec::from(commcost::Pram::new(2e-6).unwrap()));
    let spec: ModelSpec = serde_json::from_str(r#"{"unit_cost": 2e-6, "model": "pram"}"#).unwrap();
    assert_eq!(spec, ModelSpec::from(commcost::Pram::new(2e-6).unwrap()));
    // an error in a field before the tag names the field in the message
    let e = load(r#"{"unit_cost": "x", "model": "pram"}"#).unwrap_err();
    assert!(e.message.starts_with("unit_cost:"), "{e}");
    assert!(load(r#"{"unit_cost": 2e-6}"#).is_err());
    assert!(load(r#"{"model": "pramm", "unit_cost": 2e-6}"#).is_err());
    assert!(load(r#"{"model": "pram", "unit_cost": 2e-6, "model": "pram"}"#).is_err());
    // deep nesting before the tag is refused, not a stack overflow
    let deep = format!(
        r#"{{"x": {}1{}, "model": "pram"}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    assert!(load(&deep).is_err());
}

#[test]
fn operators_load_through_validation() {
    use commcost::collectives::Operator;
    rejects::<Operator>(r#"{"per_call": -1.0, "per_byte": 0.0}"#);
    rejects::<Operator>(r#"{"per_call": 0.0, "per_byte": -1e-9}"#);
    rejects::<Operator>(r#"{"per_call": 1e400, "per_byte": 0.0}"#);
    rejects::<Operator>(r#"{"per_call": "NaN", "per_byte": 0.0}"#);
    rejects::<Operator>(r#"{"per_call": 0.0}"#);
    rejects::<Operator>(r#"{"per_call": 0.0, "per_byte": 1e-9, "per_element": 1.0}"#);
    let ok: Operator = serde_json::from_str(r#"{"per_call": 1e-7, "per_byte": 1e-9}"#).unwrap();
    assert_eq!(ok, Operator::new(1e-7, 1e-9).unwrap());
    approx::assert_relative_eq!(ok.cost(1000), 1e-7 + 1e-6, max_relative = 1e-15);
    // what it writes, it reads back
    let text = serde_json::to_string(&ok).unwrap();
    assert_eq!(serde_json::from_str::<Operator>(&text).unwrap(), ok);
}

#[test]
fn algorithms_with_parameters_reject_unknown_fields() {
    use commcost::collectives::{Bcast, DecisionTable, ompi};
    rejects::<Bcast>(r#"{"Pipelined": {"segment": 8192, "segmnet": 4096}}"#);
    rejects::<ompi::Bcast>(r#"{"chain": {"segment": 8192, "fanout": 4, "radix": 2}}"#);
    rejects::<ompi::Reduce>(r#"{"binomial": {"segment": 0, "fanout": 2}}"#);
    rejects::<ompi::Allreduce>(r#"{"segmented-ring": {"segment": 0, "extra": 1}}"#);
    rejects::<DecisionTable<ompi::Bcast>>(
        r#"{"processes": [2], "sizes": [0], "best": ["basic-linear"], "extra": 0}"#,
    );
    let chain: ompi::Bcast =
        serde_json::from_str(r#"{"chain": {"segment": 8192, "fanout": 4}}"#).unwrap();
    assert_eq!(
        chain,
        ompi::Bcast::Chain {
            segment: 8192,
            fanout: 4
        }
    );
    let table: DecisionTable<ompi::Bcast> =
        serde_json::from_str(r#"{"processes": [2], "sizes": [0], "best": ["basic-linear"]}"#)
            .unwrap();
    assert_eq!(table.lookup(2, 0), ompi::Bcast::BasicLinear);
}
