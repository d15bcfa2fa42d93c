//! Matched probes: `MPI_Mprobe` and `MPI_Improbe` take a message out of
//! the matching queue (no other receive can match it any more) and name it
//! by an `MPI_Message`; `MPI_Mrecv` and `MPI_Imrecv` receive it, after which
//! the handle is `MPI_MESSAGE_NULL`. A probe from `MPI_PROC_NULL` gives
//! `MPI_MESSAGE_NO_PROC`, whose receive completes at once.
use std::os::raw::{c_int, c_void};

use super::probe::probe_pattern;
use super::{message_buffer, wait_receive};
use crate::abi::status::{write_status, StatusOut};
use crate::core::error::{MpiError, MpiResult};
use crate::core::p2p::request::proc_null_status;
use crate::core::progress::block_on;
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// Takes a matching message if there is one now.
fn take(
    rt: &mut Runtime,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<Option<(MPI_Message, MPI_Status)>> {
    match probe_pattern(rt, source, tag, comm)? {
        None => Ok(Some((MPI_MESSAGE_NO_PROC, proc_null_status()))),
        Some(pattern) => match rt.engine().improbe(&pattern) {
            Some(found) => Ok(Some(found)),
            None => rt.check_source_alive(&pattern).map(|()| None),
        },
    }
}

pub unsafe fn improbe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: &mut c_int,
    message: &mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: `status` is NULL (rejected), MPI_STATUS_IGNORE or valid for
    // writing one status during this call (MPI's contract for MPI_Improbe);
    // `new` only classifies the address.
    let status_out = unsafe { StatusOut::new(status) }?;
    let mut rt = runtime::lock();
    rt.progress();
    let found = take(&mut rt, source, tag, comm)?;
    *flag = found.is_some() as c_int;
    if let Some((m, st)) = found {
        *message = m;
        // SAFETY: `status_out` came from `StatusOut::new` on the caller's
        // `status`, valid for writing one status during this call.
        unsafe { write_status(status_out, &st) };
    }
    Ok(())
}

pub unsafe fn mprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    message: &mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: `status` is NULL (rejected), MPI_STATUS_IGNORE or valid for
    // writing one status during this call (MPI's contract for MPI_Mprobe);
    // `new` only classifies the address.
    let status_out = unsafe { StatusOut::new(status) }?;
    let (m, st) = block_on(|rt| take(rt, source, tag, comm))?;
    *message = m;
    // SAFETY: `status_out` came from `StatusOut::new` on the caller's `status`,
    // valid for writing one status during this call.
    unsafe { write_status(status_out, &st) };
    Ok(())
}

/// Starts receiving a probed message; the handle becomes
/// `MPI_MESSAGE_NULL`. `None` for `MPI_MESSAGE_NO_PROC`.
///
/// # Safety
/// MPI's contract for the receive buffer.
unsafe fn start_mrecv(
    buf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    message: &mut MPI_Message,
) -> MpiResult<Option<MPI_Request>> {
    // SAFETY: `buf` has room for `n` elements of `datatype` until the receive
    // completes (this function's contract, MPI's for MPI_Mrecv/MPI_Imrecv).
    let buf = unsafe { message_buffer(buf, n, datatype) }?;
    match *message {
        MPI_MESSAGE_NULL => Err(MpiError::new(
            MPI_ERR_REQUEST,
            "message is MPI_MESSAGE_NULL",
        )),
        MPI_MESSAGE_NO_PROC => {
            *message = MPI_MESSAGE_NULL;
            Ok(None)
        }
        m => {
            let mut rt = runtime::lock();
            let (engine, endpoints) = rt.engine_and_endpoints()?;
            let id = engine.imrecv(endpoints, m, buf)?;
            *message = MPI_MESSAGE_NULL;
            Ok(Some(id))
        }
    }
}

pub unsafe fn mrecv(
    buf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    message: &mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: `status` is NULL (rejected), MPI_STATUS_IGNORE or valid for
    // writing one status during this call (MPI's contract for MPI_Mrecv); `new`
    // only classifies the address.
    let status_out = unsafe { StatusOut::new(status) }?;
    // SAFETY: MPI_Mrecv's `buf` has room for `n` elements of `datatype` until
    // it returns, and `wait_receive` below waits for the receive to complete.
    match unsafe { start_mrecv(buf, n, datatype, message) }? {
        None => {
            // SAFETY: `status_out` came from `StatusOut::new` on the caller's
            // `status`, valid for writing one status during this call.
            unsafe { write_status(status_out, &proc_null_status()) };
            Ok(())
        }
        // SAFETY: `status_out` came from `StatusOut::new` above.
        Some(id) => unsafe { wait_receive(id, status_out) },
    }
}

pub unsafe fn imrecv(
    buf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    message: &mut MPI_Message,
    request: &mut MPI_Request,
) -> MpiResult {
    // SAFETY: MPI_Imrecv's contract: `buf` has room for `n` elements of
    // `datatype` until the request completes.
    *request = match unsafe { start_mrecv(buf, n, datatype, message) }? {
        None => runtime::lock().engine().completed_null(),
        Some(id) => id,
    };
    Ok(())
}
