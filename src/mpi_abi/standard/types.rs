//! The C types of the standard ABI that differ from oxmpi's (MPICH's):
//! pointer-sized handles to incomplete structs, and the 32-byte
//! `MPI_Status`. `MPI_Aint`, `MPI_Offset` and `MPI_Count` are 64-bit
//! integers in both, the MPI_T handles pointers in both, so those pass
//! unchanged and are not repeated here.
#![allow(non_camel_case_types, non_snake_case)]

use std::os::raw::c_int;

macro_rules! handle_types {
    ($($handle:ident => $target:ident),* $(,)?) => {
        $(
            /// The incomplete struct a standard-ABI handle points to.
            pub struct $target {
                _opaque: [u8; 0],
            }
            pub type $handle = *mut $target;
        )*
    };
}

handle_types! {
    MPI_Comm => MPI_ABI_Comm,
    MPI_Group => MPI_ABI_Group,
    MPI_Datatype => MPI_ABI_Datatype,
    MPI_Op => MPI_ABI_Op,
    MPI_Errhandler => MPI_ABI_Errhandler,
    MPI_Info => MPI_ABI_Info,
    MPI_Win => MPI_ABI_Win,
    MPI_File => MPI_ABI_File,
    MPI_Request => MPI_ABI_Request,
    MPI_Message => MPI_ABI_Message,
    MPI_Session => MPI_ABI_Session,
}

/// The standard ABI's `MPI_Status`: the three public fields, then five
/// ints of the implementation's. oxmpi keeps its byte count and cancelled
/// flag (the first two fields of its own status) in `MPI_internal[0..2]`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MPI_Status {
    pub MPI_SOURCE: c_int,
    pub MPI_TAG: c_int,
    pub MPI_ERROR: c_int,
    pub MPI_internal: [c_int; 5],
}
