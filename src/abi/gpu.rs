//! MPICH's GPU support queries (`MPIX_GPU_query_support`,
//! `MPIX_Query_{cuda,hip,ze}_support`). oxmpi moves host memory only: a
//! GPU buffer handed to it is read and written as host memory would be,
//! which works only for memory the host can address (managed or pinned
//! host memory). So every answer is "not supported".
//!
//! The `MPIX_Query_*_support` functions return their answer, not an error
//! code: 0 (false), which is also what their generated entry points return
//! for a call that succeeds, and these calls cannot fail.
use std::os::raw::c_int;

use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;

pub unsafe fn query_support(gpu_type: c_int, is_supported: &mut c_int) -> MpiResult {
    match gpu_type {
        MPIX_GPU_SUPPORT_CUDA | MPIX_GPU_SUPPORT_ZE | MPIX_GPU_SUPPORT_HIP => {
            *is_supported = 0;
            Ok(())
        }
        other => Err(MpiError::new(
            MPI_ERR_ARG,
            format!("{other} is not a GPU type (MPIX_GPU_SUPPORT_CUDA, _ZE or _HIP)"),
        )),
    }
}

/// `MPIX_Query_cuda_support`: false (see the module documentation).
pub unsafe fn query_cuda_support() -> MpiResult {
    Ok(())
}

/// `MPIX_Query_hip_support`: false.
pub unsafe fn query_hip_support() -> MpiResult {
    Ok(())
}

/// `MPIX_Query_ze_support`: false.
pub unsafe fn query_ze_support() -> MpiResult {
    Ok(())
}
