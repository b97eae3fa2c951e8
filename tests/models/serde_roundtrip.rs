//! Serde: every parameter struct round-trips, and loading runs the constructors' validation.
//! (`cargo test` enables the `serde` feature through the crate's dev-dependency on itself.)

use commcost::models::copy_transfer::Composition;
use commcost::models::copy_transfer::Stage;
use commcost::models::loggpo::Mechanism;
use commcost::models::loggpo::Progress;
use commcost::models::protocol::ProtocolRange;
use commcost::table::Table1D;
use commcost::table::Table2D;
use commcost::{
    CommModel, CopyTransfer, LogGP, LogGpo, LogNP, LogP, MemoryLogP, MemoryNetworkLogP, Message,
    MlinesModel, ModelSpec, Pram, Protocols, presets,
};
use serde::Deserialize;
use serde::de::value::{Error as ValueError, MapDeserializer};

fn round_trip<T>(value: &T) -> T
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let json = serde_json::to_string(value).unwrap();
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

fn load_error<T: serde::de::DeserializeOwned + std::fmt::Debug>(json: &str) -> String {
    serde_json::from_str::<T>(json)
        .expect_err("this file must be rejected")
        .to_string()
}

#[test]
fn every_model_round_trips() {
    let logp = LogP::new(1e-6, 2e-6, 3e-6, 8).unwrap();
    let loggp = LogGP::new(1e-6, 2e-6, 3e-6, 4e-9).unwrap();
    assert_eq!(round_trip(&logp), logp);
    assert_eq!(round_trip(&loggp), loggp);
    assert_eq!(round_trip(&Pram::unit()), Pram::unit());
    for (_, preset) in presets::table2_transports() {
        assert_eq!(round_trip(&preset), preset);
        let spec = ModelSpec::from(preset);
        assert_eq!(round_trip(&spec), spec);
    }
    let l = Table2D::new(
        vec![0.0, 4096.0],
        vec![8.0, 64.0],
        vec![vec![0.0, 1e-9], vec![0.0, 2e-9]],
    )
    .unwrap();
    let memory = MemoryLogP::new(Table1D::constant(1e-9).unwrap(), Some(l), 8, 8).unwrap();
    let pack = Stage::new("pack", 4e9, 0.0)
        .unwrap()
        .with_strided_bandwidth(vec![16.0, 64.0], vec![2e9, 1e9])
        .unwrap();
    let wire = Stage::new("wire", 1e9, 5e-6).unwrap();
    let chain = CopyTransfer::new(vec![pack, wire], Composition::Pipelined, 8).unwrap();
    for spec in [
        ModelSpec::from(logp.clone()),
        ModelSpec::from(loggp),
        ModelSpec::from(Pram::unit()),
        ModelSpec::from(Protocols::single(logp)),
        ModelSpec::from(MlinesModel::new(1e-5, 1e-9, 5e-8, 64).unwrap()),
        ModelSpec::from(presets::titan_log3p()),
        ModelSpec::from(LogNP::from(presets::titan_log3p())),
        ModelSpec::from(LogNP::from(LogP::new(1e-6, 2e-6, 3e-6, 8).unwrap())),
        ModelSpec::from(memory.clone()),
        ModelSpec::from(MemoryNetworkLogP::new(
            memory,
            LogP::new(1e-6, 2e-6, 3e-6, 8).unwrap(),
        )),
        ModelSpec::from(chain.clone()),
        ModelSpec::from(LogNP::from(chain)),
        ModelSpec::from(
            LogGpo::new(
                5e-6,
                1e-9,
                16384,
                Progress::Dependent,
                Mechanism::T,
                Mechanism::Rat,
                2e-6,
                Table1D::linear(1e-6, 1e-10).unwrap(),
                Table1D::linear(0.0, 5e-10).unwrap(),
            )
            .unwrap(),
        ),
    ] {
        assert_eq!(round_trip(&spec), spec);
    }
}

#[test]
fn tables_and_messages_round_trip() {
    let t1 = Table1D::new(vec![1.0, 2.0, 8.0], vec![3.0, 4.0, 9.0]).unwrap();
    let t2 = Table2D::new(
        vec![1.0, 2.0],
        vec![8.0, 16.0, 64.0],
        vec![vec![0.0, 1.0, 2.0], vec![0.0, 3.0, 5.0]],
    )
    .unwrap();
    assert_eq!(round_trip(&t1), t1);
    assert_eq!(round_trip(&t2), t2);
    let m = Message::vector(100, 4, 4000).unwrap().with_offset(12);
    assert_eq!(round_trip(&m), m);
}

#[test]
fn a_scheduler_loads_a_model_file_and_predicts() {
    let file = r#"{
        "model": "loggp_protocols",
        "ranges": [
            {"start": 1, "end": 12289,
             "model": {"latency": 0.0, "overhead": 2.98e-6, "gap": 5.14e-6,
                       "gap_per_byte": 7.3e-10, "processors": 2}},
            {"start": 12289, "end": null,
             "model": {"latency": 0.0, "overhead": 2.98e-6, "gap": 2.139e-5,
                       "gap_per_byte": 1.03e-9, "processors": 2}}
        ]
    }"#;
    let model: Box<dyn CommModel> = serde_json::from_str::<ModelSpec>(file)
        .unwrap()
        .into_model();
    let preset = presets::open_mpi_openib();
    for bytes in [1, 1024, 12288, 12289, 65536] {
        let msg = Message::contiguous(bytes);
        let (a, b) = (model.p2p(&msg), preset.p2p(&msg));
        assert!((a - b).abs() <= 1e-12 * b, "{bytes} B: {a} vs {b}");
    }
}

#[test]
fn invalid_parameters_are_rejected_naming_the_field() {
    let err = load_error::<LogGP>(
        r#"{"latency": -1e-6, "overhead": 0, "gap": 0, "gap_per_byte": 0, "processors": 2}"#,
    );
    assert!(
        err.contains("`latency`") && err.contains("-0.000001"),
        "{err}"
    );
    let err = load_error::<LogP>(
        r#"{"latency": 1, "overhead": 1, "gap": 1, "processors": 0, "word_bytes": 8}"#,
    );
    assert!(err.contains("`processors`"), "{err}");
    let err = load_error::<ModelSpec>(r#"{"model": "pram", "unit_cost": -2}"#);
    assert!(err.contains("`unit_cost`"), "{err}");
    let err = load_error::<ModelSpec>(
        r#"{"model": "mlines", "per_message": 1e-6, "per_byte": 0, "per_line": 0, "line_bytes": 0}"#,
    );
    assert!(err.contains("`line_bytes`"), "{err}");
    // log_3 P with l_mw non-zero at the unit stride
    let err = load_error::<ModelSpec>(
        r#"{"model": "log3p", "unit_stride": 8,
            "middleware_overhead": {"sizes": [16384], "values": [2.9e-5]},
            "middleware_latency": {"sizes": [16384], "strides": [8], "values": [[4.2e-4]]},
            "network_overhead": {"sizes": [16384], "values": [1.31e-4]}}"#,
    );
    assert!(
        err.contains("middleware_latency") && err.contains("unit stride"),
        "{err}"
    );
    // a copy-transfer stage with zero bandwidth
    let err = load_error::<ModelSpec>(
        r#"{"model": "copy_transfer", "unit_stride": 8, "composition": "Sequential",
            "stages": [{"name": "wire", "contiguous_bandwidth": 0, "strided_bandwidth": null, "startup": 0}]}"#,
    );
    assert!(err.contains("`contiguous_bandwidth`"), "{err}");
    // log_n P with no hops
    let err = load_error::<ModelSpec>(r#"{"model": "lognp", "unit_stride": 8, "hops": []}"#);
    assert!(err.contains("`hops`"), "{err}");
    // a LogGPO combination the paper does not analyse
    let err = load_error::<ModelSpec>(
        r#"{"model": "loggpo", "latency": 5e-6, "gap_per_byte": 1e-9, "eager_limit": 16384,
            "progress": "Dependent", "eager_mechanism": "T", "rendezvous_mechanism": "Rta",
            "control_overhead": 2e-6,
            "init_overhead": {"sizes": [0], "values": [1e-6]},
            "copy_overhead": {"sizes": [0], "values": [0]}}"#,
    );
    assert!(
        err.contains("does not analyse the rendezvous protocol"),
        "{err}"
    );
    let err = load_error::<LogGP>(r#"{"latency": 1, "overhead": 1, "gap": 1, "processors": 2}"#);
    assert!(err.contains("gap_per_byte"), "missing field named: {err}");
    let err = load_error::<LogGP>(
        r#"{"latency": 1, "overhead": 1, "gap": 1, "gap_per_byte": 0, "processors": 2, "lag": 1}"#,
    );
    assert!(err.contains("lag"), "unknown field named: {err}");
}

/// JSON cannot spell NaN, so feed one through serde's in-memory deserializer.
#[test]
fn nan_is_rejected_on_load() {
    let fields = vec![
        ("latency", f64::NAN),
        ("overhead", 1.0),
        ("gap", 1.0),
        ("gap_per_byte", 1.0),
    ];
    let mut map: Vec<(&str, serde_value_helper::Value)> = fields
        .into_iter()
        .map(|(k, v)| (k, serde_value_helper::Value::F64(v)))
        .collect();
    map.push(("processors", serde_value_helper::Value::U64(2)));
    let de: MapDeserializer<_, ValueError> = MapDeserializer::new(map.into_iter());
    let err = LogGP::deserialize(de).expect_err("NaN latency must be rejected");
    assert!(err.to_string().contains("`latency` = NaN"), "{err}");
}

/// A value that is either an `f64` or a `u64`, so one map can hold both kinds of field.
mod serde_value_helper {
    use serde::de::{Deserializer, IntoDeserializer, Visitor};

    pub enum Value {
        F64(f64),
        U64(u64),
    }

    pub struct ValueDeserializer(Value);

    impl<'de> IntoDeserializer<'de, serde::de::value::Error> for Value {
        type Deserializer = ValueDeserializer;
        fn into_deserializer(self) -> ValueDeserializer {
            ValueDeserializer(self)
        }
    }

    impl<'de> Deserializer<'de> for ValueDeserializer {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            match self.0 {
                Value::F64(v) => visitor.visit_f64(v),
                Value::U64(v) => visitor.visit_u64(v),
            }
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
            identifier ignored_any
        }
    }
}

/// `(start, end)` of one protocol range in a test file.
type Range = (u64, Option<u64>);

#[test]
fn invalid_protocol_lists_are_rejected() {
    let model = r#"{"latency": 1e-6, "overhead": 1e-6, "gap": 1e-6, "gap_per_byte": 1e-9, "processors": 2}"#;
    let list = |ranges: &[Range]| {
        let body: Vec<String> = ranges
            .iter()
            .map(|(s, e)| {
                let end = e.map_or("null".to_string(), |e| e.to_string());
                format!(r#"{{"start": {s}, "end": {end}, "model": {model}}}"#)
            })
            .collect();
        format!(r#"{{"ranges": [{}]}}"#, body.join(","))
    };
    let cases: [(&[Range], &str); 6] = [
        (&[(1, Some(100)), (50, None)], "overlap"),
        (&[(1, Some(100)), (200, None)], "gap"),
        (&[(1, Some(100)), (100, Some(50)), (50, None)], "empty"),
        (&[(1, Some(100))], "must be unbounded"),
        (&[(5, None)], "start at 0 or 1"),
        (&[], "at least one"),
    ];
    for (ranges, expected) in cases {
        let err = load_error::<Protocols<LogGP>>(&list(ranges));
        assert!(err.contains(expected), "{ranges:?}: {err}");
    }
    // an unsorted list in the typed constructor
    let m = LogGP::new(1e-6, 1e-6, 1e-6, 1e-9).unwrap();
    let unsorted = Protocols::new(vec![
        ProtocolRange::new(0, Some(100), m.clone()),
        ProtocolRange::new(100, Some(200), m.clone()),
        ProtocolRange::new(20, None, m),
    ]);
    assert!(unsorted.unwrap_err().to_string().contains("unsorted"));
}

#[test]
fn invalid_tables_are_rejected() {
    let err = load_error::<Table1D>(r#"{"sizes": [1, 3, 2], "values": [1, 2, 3]}"#);
    assert!(err.contains("strictly increasing"), "{err}");
    let err = load_error::<Table1D>(r#"{"sizes": [1, 2], "values": [1]}"#);
    assert!(err.contains("expected 2 values, got 1"), "{err}");
    let err = load_error::<Table2D>(r#"{"sizes": [1], "strides": [8, 16], "values": [[1]]}"#);
    assert!(err.contains("one per stride"), "{err}");
    let err = load_error::<Table1D>(r#"{"sizes": [], "values": []}"#);
    assert!(err.contains("no points"), "{err}");
    let err = load_error::<Message>(r#"{"count": 4, "block_len": 16, "stride": 8}"#);
    assert!(err.contains("overlap"), "{err}");
}

#[test]
fn a_protocol_list_keeps_its_rendezvous_threshold() {
    // the Open MPI/openib preset states its rendezvous protocol above 12288 bytes (Hoefler,
    // Lichei & Rehm, IPDPS 2007, Sec. 5); a file round trip keeps it
    let preset = presets::open_mpi_openib();
    assert_eq!(preset.rendezvous_above(), Some(12288));
    let back = round_trip(&preset);
    assert_eq!(back, preset);
    assert_eq!(back.rendezvous_above(), Some(12288));
    // written by hand, and absent (every message eager, as before)
    let range = r#"{"start": 1, "end": null, "model": {"latency": 5e-6, "overhead": 1e-6, "gap": 2e-6, "gap_per_byte": 1e-9, "processors": 2}}"#;
    let with: Protocols<LogGP> = serde_json::from_str(&format!(
        r#"{{"ranges": [{range}], "rendezvous_above": 4096}}"#
    ))
    .unwrap();
    assert_eq!(with.rendezvous_above(), Some(4096));
    let without: Protocols<LogGP> =
        serde_json::from_str(&format!(r#"{{"ranges": [{range}]}}"#)).unwrap();
    assert_eq!(without.rendezvous_above(), None);
    assert!(
        !serde_json::to_string(&without)
            .unwrap()
            .contains("rendezvous")
    );
    assert!(
        serde_json::from_str::<Protocols<LogGP>>(&format!(
            r#"{{"ranges": [{range}], "rendezvous_above": -1}}"#
        ))
        .is_err()
    );
}
