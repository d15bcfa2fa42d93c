//! The MPICH ABI's vocabulary, the bottom layer every other layer may use:
//! handle and integer typedefs and `MPI_Status` ([`types`]), every constant
//! of MPICH 4.0.2's `mpi.h` ([`constants`]), the callback function types
//! ([`callbacks`]) and the exported data objects ([`data_symbols`]); and
//! the MPI 5.0 standard ABI's vocabulary with its conversions ([`standard`]).
//! cbindgen writes include/mpi.h from these files (with `callbacks.h` and
//! `mpi_trailer.h`); nothing here calls into another module of the crate.
pub mod callbacks;
pub mod constants;
pub mod data_symbols;
pub mod standard;
pub mod types;
