//! The C surface.
pub mod constants;
pub mod types;
