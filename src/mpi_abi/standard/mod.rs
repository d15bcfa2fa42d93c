//! The vocabulary of the MPI 5.0 standard ABI, beside MPICH's: its C
//! types ([`types`]), its constant values next to oxmpi's ([`values`], from
//! which build.rs also writes include/mpi_abi.h) and the conversions
//! between the two ([`convert`]). The standard-ABI library
//! (`crate::std_abi`, feature `standard-abi`) converts every argument
//! through these; the callers of program callbacks use them in that build.
pub mod convert;
pub mod types;
pub mod values;
