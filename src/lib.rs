//! oxmpi: an MPI implementation with the MPICH ABI, built around the MPI
//! Sessions model and correct re-initialization.
//!
//! Layers, each calling only the one below it (see docs/design.md):
//! - [`abi`]: the C surface (`extern "C"` entry points, generated from one
//!   table), argument conversion, panic containment, error-handler dispatch;
//! - [`core`]: MPI semantics (handles, instance and epochs, communicators,
//!   error handlers, info, ...);
//! - [`bootstrap`]: the PMI client and the process's view of its job;
//! - the `mpiexec` binary (src/bin/mpiexec) is the launcher and PMI server.

pub mod abi;
pub mod bootstrap;
pub mod config;
pub mod core;
pub mod transport;
