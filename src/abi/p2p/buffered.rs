//! The buffer of buffered-mode sends: `MPI_Buffer_attach` and
//! `MPI_Buffer_detach` (and their `_c` twins). The sends themselves are
//! `MPI_Bsend`, `MPI_Ibsend` and `MPI_Bsend_init` (see `core::p2p::bsend`
//! for how space is counted).
use std::os::raw::c_void;

use crate::abi::args::out;
use crate::core::error::{MpiError, MpiResult};
use crate::core::progress::block_on;
use crate::core::runtime;
use crate::mpi_abi::constants::*;

/// `size` is `MPI_ERR_ARG` when negative (as in MPICH), not a count's
/// `MPI_ERR_COUNT`.
pub unsafe fn buffer_attach(buffer: *mut c_void, size: i64) -> MpiResult {
    let size = usize::try_from(size)
        .map_err(|_| MpiError::new(MPI_ERR_ARG, format!("size is negative ({size})")))?;
    if buffer.is_null() && size > 0 {
        return Err(MpiError::new(MPI_ERR_BUFFER, "buffer is NULL"));
    }
    runtime::lock()
        .engine()
        .attach_buffer(buffer as usize, size)
}

/// Waits until every buffered send has left the buffer, then detaches it;
/// gives its address and size (NULL and 0 when none was attached).
/// `buffer_addr` is a `void **` in C.
pub unsafe fn buffer_detach<S: TryFrom<usize>>(
    buffer_addr: *mut c_void,
    size_out: &mut S,
) -> MpiResult {
    // SAFETY: `buffer_addr` is MPI_Buffer_detach's `void **` output: NULL
    // (rejected by `out`) or valid for writing one pointer during this call.
    let addr_out = unsafe { out(buffer_addr.cast::<*mut c_void>(), "buffer_addr") }?;
    if let Some((_, bytes)) = runtime::lock().engine().attached_buffer() {
        if S::try_from(bytes).is_err() {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                format!("the attached buffer's size ({bytes}) does not fit in an int: use MPI_Buffer_detach_c"),
            ));
        }
    }
    let detached = block_on(|rt| {
        if rt.engine().buffered_sends_pending() {
            return Ok(None);
        }
        Ok(Some(rt.engine().detach_buffer()))
    })?;
    let (base, bytes) = detached.unwrap_or((0, 0));
    *addr_out = base as *mut c_void;
    *size_out = S::try_from(bytes).unwrap_or_else(|_| unreachable!("checked before detaching"));
    Ok(())
}
