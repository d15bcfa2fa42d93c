//! `MPI_Pcontrol`: the profiling level a tool may listen to. oxmpi itself
//! profiles nothing, so the call only succeeds (MPI defines it as a no-op
//! for the library; a PMPI tool that wraps it sees the level and the
//! variadic arguments, which the entry point ignores).
use std::os::raw::c_int;

use crate::core::error::MpiResult;

pub unsafe fn pcontrol(_level: c_int) -> MpiResult {
    Ok(())
}
