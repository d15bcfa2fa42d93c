//! The C surface: the MPICH-ABI types and constants (cbindgen writes
//! include/mpi.h from them), the entry points generated from
//! `mpi_functions.txt`, and the per-area implementations they call. This
//! layer converts and checks arguments; MPI semantics live in `core`.
pub mod args;
pub mod boundary;
pub mod callbacks;
pub mod comm;
pub mod constants;
pub mod data_symbols;
pub mod entry_points;
pub mod errors;
pub mod info;
pub mod init;
pub mod types;
