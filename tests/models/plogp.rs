//! pLogP (Kielmann, Bal, Verstoep, IPDPS 2000 workshops): predictions by hand, the collective
//! forms of Pješivac-Grbović et al. (Cluster Computing 2007) — binomial broadcast
//! `⌈log2 P⌉ (L + g(m))`, linear broadcast `L + (P - 1) g(m)` — and validated loading.

use approx::assert_relative_eq;
use commcost::collectives::{Algorithm, Bcast, Problem};
use commcost::table::Table1D;
use commcost::{CommModel, Message, ModelSpec, PLogP};

const US: f64 = 1e-6;

/// L = 10 µs; g(m) = 2 µs + 0.01 µs/B to 4096 B, then 0.005 µs/B; o_s = o_r = 1 µs + 0.002 µs/B.
fn model() -> PLogP {
    PLogP::new(
        10.0 * US,
        Table1D::linear(1.0 * US, 0.002 * US).unwrap(),
        Table1D::linear(1.0 * US, 0.002 * US).unwrap(),
        Table1D::new(
            vec![0.0, 4096.0, 65536.0],
            vec![2.0 * US, 42.96 * US, 42.96 * US + 61440.0 * 0.005 * US],
        )
        .unwrap(),
        64,
    )
    .unwrap()
}

#[test]
fn one_message_by_hand() {
    let m = model();
    // T(1000) = 10 + 2 + 1000 · 0.01 = 22 µs
    assert_relative_eq!(
        m.p2p(&Message::contiguous(1000)),
        22.0 * US,
        max_relative = 1e-12
    );
    // T(8192) = 10 + 42.96 + 4096 · 0.005 = 73.44 µs
    assert_relative_eq!(
        m.p2p(&Message::contiguous(8192)),
        73.44 * US,
        max_relative = 1e-12
    );
    // o_s(1000) = 1 + 2 = 3 µs; interval = max(g, o_s) = g(1000) = 12 µs
    let msg = Message::contiguous(1000);
    assert_relative_eq!(m.send_overhead(&msg), 3.0 * US, max_relative = 1e-12);
    assert_relative_eq!(m.send_interval(&msg), 12.0 * US, max_relative = 1e-12);
}

#[test]
fn broadcasts_have_the_published_forms() {
    let m = model();
    for (p, bytes) in [(2u64, 1000u64), (16, 1000), (64, 8192), (33, 100)] {
        let problem = Problem::new(p, Message::contiguous(bytes));
        let (l, g) = (m.latency(), m.gap_at(bytes));
        let h = (p as f64).log2().ceil();
        let binomial = Bcast::Binomial.cost(&m, &problem).unwrap();
        assert_relative_eq!(binomial, h * (l + g), max_relative = 1e-12);
        let linear = Bcast::Linear.cost(&m, &problem).unwrap();
        assert_relative_eq!(linear, l + (p - 1) as f64 * g, max_relative = 1e-12);
    }
}

#[test]
fn loading_validates() {
    let spec = ModelSpec::from(model());
    let json = serde_json::to_string(&spec).unwrap();
    let back: ModelSpec = serde_json::from_str(&json).unwrap();
    assert_eq!(back, spec);
    let negative = json.replacen("\"latency\":", "\"latency\":-", 1);
    assert_ne!(negative, json);
    let err = serde_json::from_str::<ModelSpec>(&negative)
        .unwrap_err()
        .to_string();
    assert!(err.contains("latency"), "{err}");
    let unknown = json.replacen("\"processors\"", "\"extra\":1,\"processors\"", 1);
    assert!(serde_json::from_str::<ModelSpec>(&unknown).is_err());
    let flat = Table1D::constant(1.0 * US).unwrap();
    let below = Table1D::constant(-US).unwrap();
    let err = PLogP::new(1.0 * US, below, flat.clone(), flat, 2).unwrap_err();
    assert!(err.to_string().contains("send_overhead"), "{err}");
}
