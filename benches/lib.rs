//! The commcost benchmarks package. Its content is the `[[bench]]` targets listed in
//! `benches/Cargo.toml` (run them with `cargo bench -p commcost-benches --bench NAME` from the
//! repository root); this library is empty — cargo wants a library or binary target in every package.
