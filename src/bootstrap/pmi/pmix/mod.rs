//! PMIx: the launcher interface of Slurm's `--mpi=pmix` and Open MPI's
//! `mpirun`/`prterun`, spoken through the launcher's own client library
//! (`libpmix.so.2`), loaded at run time (`ffi`), so PMIx stays optional.
//! `client` holds the job's view (rank, size, node peers, process sets)
//! and the key-value exchange of business cards.
pub mod client;
mod ffi;

pub use ffi::DEFAULT_LIBRARY;
