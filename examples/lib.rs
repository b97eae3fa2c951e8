//! The commcost examples package. Its content is the `[[example]]` targets listed in
//! `examples/Cargo.toml` (run them with `cargo run --release --example NAME` from the
//! repository root); this library is empty — cargo wants a library or binary target in every
//! package.
