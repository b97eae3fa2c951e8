//! Models, their parameters and files: hand-computed values from the papers, properties
//! that hold for every model, serde round trips and validation, and the value-stability pins.

mod golden_table2;
mod json_mutation;
mod keeps_pace;
mod lag_lines;
mod loggpo;
mod mlines_exact;
mod model_file;
mod named_params;
mod plogp;
mod properties;
mod serde_roundtrip;
mod serde_validation;
mod simgrid_export;
mod software_models;
mod validation;
mod value_stability;
