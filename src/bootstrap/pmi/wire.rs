//! placeholder, written by the launcher work
