//! Tuning files.
