//! Bootstrap: how a process learns its job (rank, size, node) and finds its
//! peers, through the PMI-1 or PMI-2 wire protocol spoken by oxmpi's
//! mpiexec, MPICH's Hydra and Slurm's pmi2 plugin, or through PMIx (Slurm's
//! pmix plugin, Open MPI's launchers).
pub mod card;
#[cfg(test)]
mod fuzz;
pub mod node;
pub mod pmi;
pub mod process_mapping;
pub mod rank_list;

/// A process of the job, by its rank in the launcher's job.
pub type ProcessId = u32;
