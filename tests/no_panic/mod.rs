//! Hostile inputs over the whole public API: one regression test per panic, hang or accepted
//! invalid value found so far, and proptests with extreme values.

mod no_panic_properties;
mod robustness;
