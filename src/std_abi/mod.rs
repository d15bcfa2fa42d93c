//! The MPI 5.0 standard ABI (`mpi_abi.h`, `libmpi_abi.so.1`), built from the
//! same core as the MPICH-ABI library.
//!
//! A second build of the crate with the cargo feature `standard-abi` (the
//! Makefile runs it with its own target directory) makes the standard-ABI
//! library: build.rs (build_std_abi.rs) then generates, from the same
//! function table, entry points that take the standard's C types
//! (`mpi_abi::standard::types`: pointer-sized handles to incomplete structs, a 32-byte
//! `MPI_Status`), convert every argument at the boundary (`mpi_abi::standard::convert`,
//! through the tables of `mpi_abi::standard::values`; [`support`] for what
//! needs the runtime) and call oxmpi's own entry points,
//! which that build does not export. Results, error codes and statuses are
//! converted back. Callbacks are stored as given and converted where oxmpi
//! calls them (error handlers, attribute copy and delete functions, user
//! reduction operations: the `standard-abi` code in `abi::boundary`,
//! `abi::attributes` and `core::op::user`). [`functions`] holds the
//! functions new in the standard ABI (`MPI_Abi_get_version`, the
//! `MPI_*_toint`/`_fromint` conversions...).
//!
//! This is the top layer (above `abi`, whose entry points it calls). The
//! tables and conversions are compiled (and unit-tested) in both builds;
//! only the exported entry points need the feature.
#[cfg(feature = "standard-abi")]
pub mod entry_points;
#[cfg(feature = "standard-abi")]
pub mod functions;
pub mod support;
