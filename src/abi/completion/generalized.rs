//! Generalized requests: `MPI_Grequest_start`, MPICH's
//! `MPIX_Grequest_start` (with poll and wait functions that waits and tests
//! call to move the request along), MPICH's request classes
//! (`MPIX_Grequest_class_create`, `MPIX_Grequest_class_allocate`) and
//! `MPI_Grequest_complete`. How their
//! callbacks run is described in `core::p2p::generalized`.
use std::os::raw::c_void;

use crate::core::error::MpiResult;
use crate::core::p2p::generalized::{classes, Generalized};
use crate::core::runtime;
use crate::mpi_abi::callbacks::*;
use crate::mpi_abi::types::*;

pub unsafe fn grequest_start(
    query_fn: MPI_Grequest_query_function,
    free_fn: MPI_Grequest_free_function,
    cancel_fn: MPI_Grequest_cancel_function,
    extra_state: *mut c_void,
    request: &mut MPI_Request,
) -> MpiResult {
    // SAFETY: MPI_Grequest_start's arguments, passed on unchanged with no poll
    // or wait function; `mpix_grequest_start` only records the callbacks and
    // `extra_state` for later calls, which MPI lets the program rely on.
    unsafe {
        mpix_grequest_start(
            query_fn,
            free_fn,
            cancel_fn,
            None,
            None,
            extra_state,
            request,
        )
    }
}

pub unsafe fn mpix_grequest_start(
    query_fn: MPI_Grequest_query_function,
    free_fn: MPI_Grequest_free_function,
    cancel_fn: MPI_Grequest_cancel_function,
    poll_fn: MPIX_Grequest_poll_function,
    wait_fn: MPIX_Grequest_wait_function,
    extra_state: *mut c_void,
    request: &mut MPI_Request,
) -> MpiResult {
    *request = runtime::lock().engine().grequest_start(Generalized {
        query_fn,
        free_fn,
        cancel_fn,
        poll_fn,
        wait_fn,
        extra_state: extra_state as usize,
        fortran: false,
    });
    Ok(())
}

pub unsafe fn grequest_class_create(
    query_fn: MPI_Grequest_query_function,
    free_fn: MPI_Grequest_free_function,
    cancel_fn: MPI_Grequest_cancel_function,
    poll_fn: MPIX_Grequest_poll_function,
    wait_fn: MPIX_Grequest_wait_function,
    greq_class: &mut MPIX_Grequest_class,
) -> MpiResult {
    *greq_class = classes::create(Generalized {
        query_fn,
        free_fn,
        cancel_fn,
        poll_fn,
        wait_fn,
        extra_state: 0,
        fortran: false,
    })?;
    Ok(())
}

pub unsafe fn grequest_class_allocate(
    greq_class: MPIX_Grequest_class,
    extra_state: *mut c_void,
    request: &mut MPI_Request,
) -> MpiResult {
    let callbacks = classes::instance(greq_class, extra_state as usize)?;
    *request = runtime::lock().engine().grequest_start(callbacks);
    Ok(())
}

/// Marks the request complete; a request whose handle was freed already
/// goes now, and its free function runs.
pub unsafe fn grequest_complete(request: MPI_Request) -> MpiResult {
    let freed = runtime::lock().engine().grequest_complete(request)?;
    match freed.and_then(|g| g.free()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
