//! The integration tests, one binary (each further binary would link the library's generic code
//! again): `cargo test --test integration AREA::` runs one area.

#[path = "../common/mod.rs"]
mod common;

#[path = "../calibrate/mod.rs"]
mod calibrate;
#[path = "../collectives/mod.rs"]
mod collectives;
#[path = "../models/mod.rs"]
mod models;
#[path = "../no_panic/mod.rs"]
mod no_panic;
#[path = "../sim/mod.rs"]
mod sim;
