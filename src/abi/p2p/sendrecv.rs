//! Send-receive: `MPI_Sendrecv`, `MPI_Sendrecv_replace` and their
//! nonblocking forms, each one request of the engine.
use std::os::raw::{c_int, c_void};

use super::{accepting, message_buffer, wait_receive, Mode, Route};
use crate::abi::status::StatusOut;
use crate::core::error::MpiResult;
use crate::core::p2p::user_buffer::UserBuffer;
use crate::core::runtime;
use crate::mpi_abi::types::*;

/// Starts a send and a receive as one request (`MPI_Isendrecv`).
///
/// # Safety
/// MPI's contract for the two buffers.
unsafe fn start_sendrecv(
    sendbuf: *const c_void,
    sendcount: usize,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
) -> MpiResult<MPI_Request> {
    // SAFETY: `sendbuf` holds `sendcount` elements of `sendtype` until the
    // request completes (this function's contract, MPI's).
    let sendbuf = unsafe { message_buffer(sendbuf, sendcount, sendtype) }?;
    // SAFETY: `recvbuf` has room for `recvcount` elements of `recvtype` until
    // then, and MPI requires it not to overlap `sendbuf`.
    let recvbuf = unsafe { message_buffer(recvbuf, recvcount, recvtype) }?;
    let mut rt = runtime::lock();
    let route = Route::to(&rt, comm, dest)?;
    let pattern = accepting(&rt, comm, source, recvtag)?;
    let (engine, endpoints) = rt.engine_and_endpoints()?;
    Ok(engine.isendrecv(
        endpoints,
        route.map(|r| r.send(sendbuf, sendtag, Mode::Standard)),
        pattern.map(|p| (recvbuf, p)),
    ))
}

/// Starts `MPI_Isendrecv_replace`: the message goes from a packed copy,
/// the reply lands in the buffer itself.
///
/// # Safety
/// MPI's contract for the buffer.
unsafe fn start_sendrecv_replace(
    buf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
) -> MpiResult<MPI_Request> {
    // SAFETY: `buf` holds `n` elements of `datatype`, and is writable, until
    // the request completes (this function's contract); the outgoing message is
    // packed out of it before the reply can land.
    let user = unsafe { message_buffer(buf, n, datatype) }?;
    let mut rt = runtime::lock();
    let route = Route::to(&rt, comm, dest)?;
    let pattern = accepting(&rt, comm, source, recvtag)?;
    let send = route.map(|r| {
        let mut packed = vec![0u8; user.len()];
        user.pack(0, &mut packed);
        r.send(UserBuffer::packed(packed), sendtag, Mode::Standard)
    });
    let (engine, endpoints) = rt.engine_and_endpoints()?;
    Ok(engine.isendrecv(endpoints, send, pattern.map(|p| (user, p))))
}

pub unsafe fn sendrecv(
    sendbuf: *const c_void,
    sendcount: usize,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: `status` is NULL (rejected), MPI_STATUS_IGNORE or valid for
    // writing one status during this call (MPI's contract for MPI_Sendrecv);
    // `new` only classifies the address.
    let status_out = unsafe { StatusOut::new(status) }?;
    // SAFETY: MPI_Sendrecv's buffers are valid until it returns, and
    // `wait_receive` below waits for the request to complete.
    let id = unsafe {
        start_sendrecv(
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
            recvtag, comm,
        )
    }?;
    // SAFETY: `status_out` came from `StatusOut::new` above.
    unsafe { wait_receive(id, status_out) }
}

pub unsafe fn isendrecv(
    sendbuf: *const c_void,
    sendcount: usize,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: &mut MPI_Request,
) -> MpiResult {
    // SAFETY: MPI_Isendrecv's contract: both buffers stay valid, and untouched
    // by the program, until the request completes.
    *request = unsafe {
        start_sendrecv(
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
            recvtag, comm,
        )
    }?;
    Ok(())
}

pub unsafe fn sendrecv_replace(
    buf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: `status` is NULL (rejected), MPI_STATUS_IGNORE or valid for
    // writing one status during this call (MPI's contract for
    // MPI_Sendrecv_replace); `new` only classifies the address.
    let status_out = unsafe { StatusOut::new(status) }?;
    // SAFETY: MPI_Sendrecv_replace's `buf` is valid until it returns, and
    // `wait_receive` below waits for the request to complete.
    let id =
        unsafe { start_sendrecv_replace(buf, n, datatype, dest, sendtag, source, recvtag, comm) }?;
    // SAFETY: `status_out` came from `StatusOut::new` above.
    unsafe { wait_receive(id, status_out) }
}

pub unsafe fn isendrecv_replace(
    buf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: &mut MPI_Request,
) -> MpiResult {
    // SAFETY: MPI_Isendrecv_replace's contract: `buf` stays valid, and
    // untouched by the program, until the request completes.
    *request =
        unsafe { start_sendrecv_replace(buf, n, datatype, dest, sendtag, source, recvtag, comm) }?;
    Ok(())
}
