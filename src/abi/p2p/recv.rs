//! Receives: `MPI_Recv` (which waits without a request when it can, see
//! `core::p2p::receive_lane`) and `MPI_Irecv`.
use std::os::raw::{c_int, c_void};

use super::{accepting, finish_receive, message_buffer, wait_receive};
use crate::abi::status::{write_status, StatusOut};
use crate::core::error::MpiResult;
use crate::core::matching::Pattern;
use crate::core::p2p::receive_lane::{LaneOutcome, LaneStart};
use crate::core::p2p::request::proc_null_status;
use crate::core::p2p::user_buffer::UserBuffer;
use crate::core::progress::block_on_locked;
use crate::core::runtime;
use crate::mpi_abi::types::*;

/// Starts a receive and returns its request.
///
/// # Safety
/// `buf` must have room for `n` elements of `datatype` until the receive
/// completes.
pub unsafe fn start_recv(
    buf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<MPI_Request> {
    // SAFETY: `buf` has room for `n` elements of `datatype` until the receive
    // completes: this function's contract, which is `receive_parts`'.
    let (mut rt, buf, pattern) = unsafe { receive_parts(buf, n, datatype, source, tag, comm) }?;
    let Some(pattern) = pattern else {
        return Ok(rt.engine().completed_null());
    };
    let (engine, endpoints) = rt.engine_and_endpoints()?;
    Ok(engine.irecv(endpoints, buf, pattern))
}

/// A receive's checked arguments, with the runtime locked: its buffer and
/// what it accepts (`None` for `MPI_PROC_NULL`).
///
/// # Safety
/// As [`start_recv`].
#[inline(always)]
unsafe fn receive_parts(
    buf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<(runtime::RuntimeGuard, UserBuffer, Option<Pattern>)> {
    // SAFETY: `buf` has room for `n` elements of `datatype` until the receive
    // completes (this function's contract, `message_buffer`'s).
    let buf = unsafe { message_buffer(buf, n, datatype) }?;
    let rt = runtime::lock();
    let pattern = accepting(&rt, comm, source, tag)?;
    Ok((rt, buf, pattern))
}

pub unsafe fn irecv(
    buf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: &mut MPI_Request,
) -> MpiResult {
    // SAFETY: MPI_Irecv's contract: `buf` has room for `n` elements of
    // `datatype` until the request completes, and the program does not touch it
    // meanwhile.
    *request = unsafe { start_recv(buf, n, datatype, source, tag, comm) }?;
    Ok(())
}

pub unsafe fn recv(
    buf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: `status` is NULL (rejected), MPI_STATUS_IGNORE or valid for
    // writing one status during this call (MPI's contract for MPI_Recv); `new`
    // only classifies the address.
    let status_out = unsafe { StatusOut::new(status) }?;
    // SAFETY: MPI_Recv's `buf` has room for `n` elements of `datatype` until it
    // returns; every path below returns once the receive is complete, never
    // started, or its lane disarmed (the engine then holds `buf` no more).
    let (mut rt, buf, pattern) = unsafe { receive_parts(buf, n, datatype, source, tag, comm) }?;
    let Some(pattern) = pattern else {
        drop(rt);
        // SAFETY: `status_out` came from `StatusOut::new` on the caller's
        // `status`, valid for writing one status during this call.
        unsafe { write_status(status_out, &proc_null_status()) };
        return Ok(());
    };
    // Without a request when it can (see core::p2p::receive_lane).
    let (engine, endpoints) = rt.engine_and_endpoints()?;
    let buf = match engine.arm_lane(endpoints, buf, pattern) {
        // SAFETY: `status_out` came from `StatusOut::new` above.
        LaneStart::Received(st) => return unsafe { finish_receive(status_out, &st) },
        LaneStart::General(buf) => Some(buf),
        LaneStart::Armed => None,
    };
    let buf = match buf {
        Some(buf) => {
            drop(rt);
            buf
        }
        None => {
            // The wait starts under this lock: the message may be there.
            let outcome = block_on_locked(rt, |rt| Ok(rt.engine().lane_outcome()));
            match outcome {
                // SAFETY: `status_out` came from `StatusOut::new` above.
                Ok(LaneOutcome::Received(st)) => return unsafe { finish_receive(status_out, &st) },
                Ok(LaneOutcome::General(buf)) => buf,
                Ok(LaneOutcome::Failed(e)) => return Err(e),
                Err(e) => {
                    runtime::lock().engine().disarm_lane();
                    return Err(e);
                }
            }
        }
    };
    let id = {
        let mut rt = runtime::lock();
        let (engine, endpoints) = rt.engine_and_endpoints()?;
        engine.irecv(endpoints, buf, pattern)
    };
    // SAFETY: `status_out` came from `StatusOut::new` above; the wait keeps
    // `buf` in use no longer than this call.
    unsafe { wait_receive(id, status_out) }
}
