//! oxmpi: an MPI implementation with the MPICH ABI, built around the MPI
//! Sessions model and correct re-initialization.
//!
//! Layers, lowest first; each uses only the layers below it
//! (`tools/check_layers.py`, run by `make check`, reads every path and
//! fails on one that reaches up). docs/design.md draws them.
//! - [`mpi_abi`]: the MPICH ABI's vocabulary (handle and integer types,
//!   constants, callback types, data symbols), from which cbindgen writes
//!   include/mpi.h;
//! - [`config`]: the knobs, every `OXMPI_*` variable read once;
//! - [`bootstrap`]: the PMI client, this node's identity, business cards:
//!   how a process learns its job and finds its peers;
//! - [`transport`]: moves frames between processes (`self`, `shm`, `tcp`
//!   behind one trait);
//! - [`core`]: MPI semantics (the instance and its epochs, handles,
//!   communicators, matching, the point-to-point engine, datatypes,
//!   collectives, error handlers, ...);
//! - [`abi`]: the C surface: entry points generated from one table, argument
//!   checks, panic containment, error-handler dispatch.
//!
//! The launcher (`mpiexec`, src/bin/mpiexec) is a program beside the
//! library: it uses `bootstrap` (the PMI wire), `transport` (removing a
//! killed job's segments), `config` and `mpi_abi`.

pub mod mpi_abi;

pub mod config;

pub mod bootstrap;

pub mod transport;

pub mod core;

pub mod abi;
