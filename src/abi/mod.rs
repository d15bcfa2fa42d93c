//! The C surface: the entry points generated from `mpi_functions.txt` and
//! the per-area implementations they call. This layer converts and checks
//! arguments and dispatches errors; MPI semantics live in `core`, and the
//! ABI's vocabulary (types, constants, callbacks, data symbols) in
//! [`crate::mpi_abi`].
// The implementation functions here are `unsafe fn`s whose contract is
// their MPI function's (pointers valid as the standard requires); that is
// their safety documentation.
#![allow(clippy::missing_safety_doc)]
// The entry points and the functions behind them take MPI's parameter
// lists as the standard writes them (`MPI_Alltoallw` has nine, its
// nonblocking form ten): the count is the standard's, not a design choice.
#![allow(clippy::too_many_arguments)]

pub mod args;
pub mod attributes;
pub mod boundary;
pub mod collective;
pub mod comm;
pub mod completion;
pub mod count;
pub mod datarep;
pub mod datatype;
pub mod datatype_arrays;
pub mod datatype_query;
pub mod dynamic;
pub mod entry_points;
pub mod errors;
pub mod gpu;
pub mod group;
pub mod info;
pub mod init;
pub mod io;
pub mod memory;
#[cfg(not(feature = "standard-abi"))]
pub mod mpich_fortran;
pub mod op;
pub mod p2p;
pub mod pack;
pub mod profiling;
#[cfg(not(feature = "standard-abi"))]
pub mod qmpi;
pub mod rma;
pub mod session;
pub mod status;
pub mod tool;
pub mod topology;
pub mod ulfm;
