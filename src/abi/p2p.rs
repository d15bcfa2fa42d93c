//! Point-to-point calls: blocking, nonblocking and synchronous sends,
//! receives, send-receive, probes. Arguments are checked here; the engine
//! in `core::p2p` does the work.
use std::os::raw::{c_int, c_void};

use crate::abi::args::count;
use crate::abi::constants::*;
use crate::abi::status::{write_status, StatusOut};
use crate::abi::types::*;
use crate::core::datatype;
use crate::core::error::{MpiError, MpiResult};
use crate::core::matching::{Pattern, ANY};
use crate::core::p2p::engine::{invalid_request, SendArgs};
use crate::core::p2p::user_buffer::UserBuffer;
use crate::core::progress::block_on;
use crate::core::runtime;

/// Largest user tag (the `MPI_TAG_UB` attribute); negative tags are
/// reserved for oxmpi's own protocols.
pub const TAG_UB: c_int = c_int::MAX;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Standard,
    Synchronous,
}

fn check_tag(tag: c_int, receive: bool) -> MpiResult {
    if (receive && tag == MPI_ANY_TAG) || (0..=TAG_UB).contains(&tag) {
        return Ok(());
    }
    Err(MpiError::new(
        MPI_ERR_TAG,
        format!("tag {tag} is not in 0..={TAG_UB}"),
    ))
}

fn check_buffer(buf: *const c_void, bytes: usize) -> MpiResult {
    if buf.is_null() && bytes > 0 {
        return Err(MpiError::new(
            MPI_ERR_BUFFER,
            "buffer is NULL but the message is not empty",
        ));
    }
    Ok(())
}

/// Starts a send and returns its request.
///
/// # Safety
/// `buf` must hold `count` elements of `datatype` until the send completes.
pub unsafe fn start_send(
    buf: *const c_void,
    n: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: Mode,
) -> MpiResult<MPI_Request> {
    let n = count(n, "count")?;
    let dt = datatype::lookup_committed(datatype)?;
    check_tag(tag, false)?;
    check_buffer(buf, n * dt.size())?;
    let mut rt = runtime::lock();
    let c = rt.comms.get(comm)?;
    if dest == MPI_PROC_NULL {
        return Ok(rt.p2p.completed_null());
    }
    let dest = c.peer(dest)?;
    let args = SendArgs {
        // SAFETY: the caller's contract is MPI's for send buffers.
        buf: unsafe { UserBuffer::new(buf, n, dt) },
        dest,
        context_id: c.context_id,
        source: c.rank as c_int,
        tag,
        synchronous: mode == Mode::Synchronous,
    };
    let (engine, endpoints) = rt.engine_and_endpoints()?;
    Ok(engine.isend(endpoints, args))
}

/// Starts a receive and returns its request.
///
/// # Safety
/// `buf` must have room for `count` elements of `datatype` until the
/// receive completes.
pub unsafe fn start_recv(
    buf: *mut c_void,
    n: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<MPI_Request> {
    let n = count(n, "count")?;
    let dt = datatype::lookup_committed(datatype)?;
    check_tag(tag, true)?;
    check_buffer(buf, n * dt.size())?;
    let mut rt = runtime::lock();
    let c = rt.comms.get(comm)?;
    if source == MPI_PROC_NULL {
        return Ok(rt.p2p.completed_null());
    }
    if source != MPI_ANY_SOURCE {
        c.check_rank(source)?;
    }
    let pattern = Pattern {
        context_id: c.context_id,
        source: if source == MPI_ANY_SOURCE {
            ANY
        } else {
            source
        },
        tag: if tag == MPI_ANY_TAG { ANY } else { tag },
    };
    // SAFETY: the caller's contract is MPI's for receive buffers.
    let buf = unsafe { UserBuffer::new(buf, n, dt) };
    let (engine, endpoints) = rt.engine_and_endpoints()?;
    Ok(engine.irecv(endpoints, buf, pattern))
}

/// Waits for a request this module started and returns its status (or
/// its error).
pub fn wait_request(id: MPI_Request) -> MpiResult<MPI_Status> {
    block_on(|rt| {
        let done = rt
            .p2p
            .requests
            .get(id)
            .ok_or_else(|| invalid_request(id))?
            .complete;
        if !done {
            return Ok(None);
        }
        let error = rt.p2p.requests.get_mut(id).and_then(|r| r.error.take());
        let status = rt.p2p.take_completed(id)?;
        match error {
            Some(e) => Err(e),
            None => Ok(status),
        }
    })
}

/// A completed receive's status as an error when it reports one
/// (truncation).
pub fn status_error(status: &MPI_Status) -> MpiResult {
    match status.MPI_ERROR {
        MPI_SUCCESS => Ok(()),
        MPI_ERR_TRUNCATE => Err(MpiError::new(
            MPI_ERR_TRUNCATE,
            format!(
                "message from rank {} with tag {} is larger than the receive buffer ({} bytes kept)",
                status.MPI_SOURCE,
                status.MPI_TAG,
                status.byte_count()
            ),
        )),
        class => Err(MpiError::new(class, "the operation failed")),
    }
}

unsafe fn blocking_send(
    buf: *const c_void,
    n: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: Mode,
) -> MpiResult {
    let id = unsafe { start_send(buf, n, datatype, dest, tag, comm, mode) }?;
    wait_request(id).map(|_| ())
}

pub unsafe fn send(
    buf: *const c_void,
    n: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult {
    unsafe { blocking_send(buf, n, datatype, dest, tag, comm, Mode::Standard) }
}

pub unsafe fn ssend(
    buf: *const c_void,
    n: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult {
    unsafe { blocking_send(buf, n, datatype, dest, tag, comm, Mode::Synchronous) }
}

/// Ready mode: a correct program has the receive posted already, so a
/// standard send behaves the same.
pub unsafe fn rsend(
    buf: *const c_void,
    n: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult {
    unsafe { blocking_send(buf, n, datatype, dest, tag, comm, Mode::Standard) }
}

fn out_request<'a>(request: *mut MPI_Request) -> MpiResult<&'a mut MPI_Request> {
    // SAFETY: `request` is the caller's output argument (NULL checked).
    unsafe { crate::abi::args::out(request, "request") }
}

pub unsafe fn isend(
    buf: *const c_void,
    n: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult {
    let request = out_request(request)?;
    *request = unsafe { start_send(buf, n, datatype, dest, tag, comm, Mode::Standard) }?;
    Ok(())
}

pub unsafe fn issend(
    buf: *const c_void,
    n: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult {
    let request = out_request(request)?;
    *request = unsafe { start_send(buf, n, datatype, dest, tag, comm, Mode::Synchronous) }?;
    Ok(())
}

pub unsafe fn irecv(
    buf: *mut c_void,
    n: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult {
    let request = out_request(request)?;
    *request = unsafe { start_recv(buf, n, datatype, source, tag, comm) }?;
    Ok(())
}

pub unsafe fn recv(
    buf: *mut c_void,
    n: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult {
    let status_out = unsafe { StatusOut::new(status) }?;
    let id = unsafe { start_recv(buf, n, datatype, source, tag, comm) }?;
    let st = wait_request(id)?;
    unsafe { write_status(status_out, &st) };
    status_error(&st)
}

#[allow(clippy::too_many_arguments)]
pub unsafe fn sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult {
    let status_out = unsafe { StatusOut::new(status) }?;
    let r = unsafe { start_recv(recvbuf, recvcount, recvtype, source, recvtag, comm) }?;
    let s = unsafe {
        start_send(
            sendbuf,
            sendcount,
            sendtype,
            dest,
            sendtag,
            comm,
            Mode::Standard,
        )
    }?;
    wait_request(s)?;
    let st = wait_request(r)?;
    unsafe { write_status(status_out, &st) };
    status_error(&st)
}

#[allow(clippy::too_many_arguments)]
pub unsafe fn sendrecv_replace(
    buf: *mut c_void,
    n: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult {
    let status_out = unsafe { StatusOut::new(status) }?;
    let count_n = count(n, "count")?;
    let dt = datatype::lookup_committed(datatype)?;
    // Send from a packed copy, receive into the buffer itself.
    let bytes = count_n * dt.size();
    let mut packed = vec![0u8; bytes];
    // SAFETY: `buf` holds `n` elements of `datatype` (MPI's contract).
    let user = unsafe { UserBuffer::new(buf, count_n, dt) };
    user.pack(0, &mut packed);
    let s = unsafe {
        start_send(
            packed.as_ptr().cast(),
            bytes as c_int,
            MPI_BYTE,
            dest,
            sendtag,
            comm,
            Mode::Standard,
        )
    }?;
    let r = unsafe { start_recv(buf, n, datatype, source, recvtag, comm) }?;
    wait_request(s)?;
    let st = wait_request(r)?;
    drop(packed);
    unsafe { write_status(status_out, &st) };
    status_error(&st)
}

fn probe_pattern(
    rt: &runtime::Runtime,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<Option<Pattern>> {
    check_tag(tag, true)?;
    let c = rt.comms.get(comm)?;
    if source == MPI_PROC_NULL {
        return Ok(None);
    }
    if source != MPI_ANY_SOURCE {
        c.check_rank(source)?;
    }
    Ok(Some(Pattern {
        context_id: c.context_id,
        source: if source == MPI_ANY_SOURCE {
            ANY
        } else {
            source
        },
        tag: if tag == MPI_ANY_TAG { ANY } else { tag },
    }))
}

fn proc_null_status() -> MPI_Status {
    MPI_Status {
        MPI_SOURCE: MPI_PROC_NULL,
        MPI_TAG: MPI_ANY_TAG,
        ..Default::default()
    }
}

pub unsafe fn iprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult {
    let flag = unsafe { crate::abi::args::out(flag, "flag") }?;
    let status_out = unsafe { StatusOut::new(status) }?;
    let mut rt = runtime::lock();
    rt.progress();
    let found = match probe_pattern(&rt, source, tag, comm)? {
        None => Some(proc_null_status()),
        Some(pattern) => rt.p2p.iprobe(&pattern),
    };
    *flag = found.is_some() as c_int;
    if let Some(st) = found {
        unsafe { write_status(status_out, &st) };
    }
    Ok(())
}

pub unsafe fn probe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult {
    let status_out = unsafe { StatusOut::new(status) }?;
    let st = block_on(|rt| match probe_pattern(rt, source, tag, comm)? {
        None => Ok(Some(proc_null_status())),
        Some(pattern) => Ok(rt.p2p.iprobe(&pattern)),
    })?;
    unsafe { write_status(status_out, &st) };
    Ok(())
}
