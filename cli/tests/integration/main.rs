//! The command-line tool's tests, one binary that runs the built `commcost` (each further binary
//! would link its dependencies again): `cargo test -p commcost-cli --test integration hostile::`
//! runs one file.

mod cli;
mod hostile;
mod hostile_export;
mod hostile_importers;
mod model_files;
mod support;
mod tune;
