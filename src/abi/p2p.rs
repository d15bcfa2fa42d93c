//! Point-to-point calls: blocking and nonblocking sends in every mode,
//! receives, send-receive, probes. Arguments are checked here; the engine
//! in `core::p2p` does the work. Persistent requests, the buffer of
//! buffered sends and matched probes have their own files below.
//!
//! Each call serves its large-count twin too: a count argument is an
//! [`CountArg`], `int` for `MPI_Send` and `MPI_Count` for `MPI_Send_c`, so
//! both lines of the function table name the same function.
use std::os::raw::{c_int, c_void};

use crate::abi::datatype::large_count;
use crate::abi::status::{write_status, StatusOut};
use crate::core::datatype;
use crate::core::error::{MpiError, MpiResult};
use crate::core::matching::{Envelope, Pattern, ANY};
use crate::core::p2p::engine::SendArgs;
use crate::core::p2p::receive_lane::{LaneOutcome, LaneStart};
use crate::core::p2p::request::proc_null_status;
use crate::core::p2p::user_buffer::{copy_message, UserBuffer};
use crate::core::progress::{block_on, block_on_locked};
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;
use crate::transport::ProcessId;

mod buffered;
mod matched_probe;
mod persistent;

pub use buffered::{buffer_attach, buffer_detach};
pub use matched_probe::{improbe, imrecv, mprobe, mrecv};
pub use persistent::{bsend_init, recv_init, rsend_init, send_init, ssend_init, start, startall};

/// Largest user tag (the `MPI_TAG_UB` attribute); negative tags are
/// reserved for oxmpi's own protocols.
pub const TAG_UB: c_int = c_int::MAX;

/// A count argument: `int` in the classic calls, `MPI_Count` in the
/// large-count (`_c`) ones. `MPI_Aint` is the same Rust type as
/// `MPI_Count`, so [`CountArg::LARGE`] cannot tell an address from a large
/// count: a function generic over the count type takes addresses as
/// `MPI_Count`.
pub trait CountArg: Copy + Into<i64> {
    /// Whether this is the large-count form (what `MPI_Type_get_contents`
    /// reports the arguments of a constructor as).
    const LARGE: bool;
}
impl CountArg for c_int {
    const LARGE: bool = false;
}
impl CountArg for MPI_Count {
    const LARGE: bool = true;
}

/// An output count of either width: `*mut c_int` in the classic calls,
/// `*mut MPI_Count` in the `_c` ones. Only an `int` can be too small; each
/// call decides what that means (`MPI_UNDEFINED`, an error class...).
pub trait CountOut: CountArg + From<c_int> {
    /// `v` in this type, `None` when it does not fit.
    fn fit(v: usize) -> Option<Self>;
}
impl CountOut for c_int {
    fn fit(v: usize) -> Option<c_int> {
        c_int::try_from(v).ok()
    }
}
impl CountOut for MPI_Count {
    fn fit(v: usize) -> Option<MPI_Count> {
        Some(v as MPI_Count)
    }
}

/// A count argument checked (non-negative).
fn elements(n: impl CountArg, name: &str) -> MpiResult<usize> {
    large_count(n.into(), name)
}

/// The send modes. Ready mode sends like standard mode: a correct program
/// has the receive posted already, and then the two are the same.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Standard,
    Synchronous,
    Ready,
    Buffered,
}

#[inline(always)]
fn check_tag(tag: c_int, receive: bool) -> MpiResult {
    if (receive && tag == MPI_ANY_TAG) || (0..=TAG_UB).contains(&tag) {
        return Ok(());
    }
    Err(MpiError::new(
        MPI_ERR_TAG,
        format!("tag {tag} is not in 0..={TAG_UB}"),
    ))
}

/// A message buffer from the C arguments: the datatype is committed, the
/// size representable, and the address NULL only for an empty message.
///
/// # Safety
/// `buf` must hold (or have room for) `n` elements of `datatype` until the
/// operation using the buffer completes.
#[inline(always)]
unsafe fn message_buffer(
    buf: *const c_void,
    n: usize,
    datatype: MPI_Datatype,
) -> MpiResult<UserBuffer> {
    let dt = datatype::lookup_for_message(datatype)?;
    let bytes = n
        .checked_mul(dt.size())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| {
            MpiError::new(
                MPI_ERR_COUNT,
                format!("{n} elements of this datatype do not fit in memory"),
            )
        })?;
    if buf.is_null() && bytes > 0 {
        return Err(MpiError::new(
            MPI_ERR_BUFFER,
            "buffer is NULL but the message is not empty",
        ));
    }
    // SAFETY: the caller's contract is MPI's for message buffers.
    Ok(unsafe { UserBuffer::new(buf, n, dt) })
}

/// Where a send goes, checked against the communicator.
pub(crate) struct Route {
    dest: ProcessId,
    context_id: u64,
    /// This process's rank, the message's source.
    source: c_int,
}

impl Route {
    /// The route to `dest` in `comm`; `None` for `MPI_PROC_NULL`.
    #[inline(always)]
    pub(crate) fn to(rt: &Runtime, comm: MPI_Comm, dest: c_int) -> MpiResult<Option<Route>> {
        let c = rt.comms().get(comm)?;
        if dest == MPI_PROC_NULL {
            return Ok(None);
        }
        Ok(Some(Route {
            dest: c.peer(dest)?,
            context_id: c.context_id,
            source: c.rank as c_int,
        }))
    }

    pub(crate) fn send(self, buf: UserBuffer, tag: c_int, mode: Mode) -> SendArgs {
        SendArgs {
            buf,
            dest: self.dest,
            context_id: self.context_id,
            source: self.source,
            tag,
            synchronous: mode == Mode::Synchronous,
        }
    }
}

/// What a receive or probe from `source` with `tag` in `comm` accepts;
/// `None` for `MPI_PROC_NULL`.
#[inline(always)]
pub(crate) fn accepting(
    rt: &Runtime,
    comm: MPI_Comm,
    source: c_int,
    tag: c_int,
) -> MpiResult<Option<Pattern>> {
    let c = rt.comms().get(comm)?;
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

/// Starts a send and returns its request. A buffered send's request is
/// complete at once (the message is in the attached buffer).
///
/// # Safety
/// `buf` must hold `n` elements of `datatype` until the send completes.
pub unsafe fn start_send(
    buf: *const c_void,
    n: usize,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: Mode,
) -> MpiResult<MPI_Request> {
    match unsafe { begin_send(buf, n, datatype, dest, tag, comm, mode, false) }? {
        SendStart::Pending(id) => Ok(id),
        SendStart::Finished => unreachable!("only a blocking send finishes at once"),
    }
}

/// How a send began.
enum SendStart {
    /// A blocking send left at once (no request).
    Finished,
    Pending(MPI_Request),
}

/// Starts a send; a `blocking` standard or ready-mode send that can leave
/// at once does so without a request (the latency-critical path: one lock,
/// no allocation).
///
/// # Safety
/// As [`start_send`].
#[allow(clippy::too_many_arguments)]
unsafe fn begin_send(
    buf: *const c_void,
    n: usize,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: Mode,
    blocking: bool,
) -> MpiResult<SendStart> {
    check_tag(tag, false)?;
    let buf = unsafe { message_buffer(buf, n, datatype) }?;
    let mut rt = runtime::lock();
    let Some(route) = Route::to(&rt, comm, dest)? else {
        if blocking {
            return Ok(SendStart::Finished);
        }
        return Ok(SendStart::Pending(rt.engine().completed_null()));
    };
    let args = route.send(buf, tag, mode);
    let (engine, endpoints) = rt.engine_and_endpoints()?;
    if mode == Mode::Buffered {
        engine.bsend(endpoints, args)?;
        return Ok(SendStart::Pending(engine.completed(MPI_Status::default())));
    }
    if blocking && matches!(mode, Mode::Standard | Mode::Ready) && engine.send_now(endpoints, &args)
    {
        return Ok(SendStart::Finished);
    }
    Ok(SendStart::Pending(engine.isend(endpoints, args)))
}

/// The latency-critical send: a blocking standard (or ready) send of a
/// contiguous predefined datatype leaves straight from the user's buffer
/// when the engine can send it at once ([`Engine::send_eager_now`]), with
/// no intermediate objects. False when anything is out of the ordinary
/// (an error to report, `MPI_PROC_NULL`, a large message, a full ring...):
/// the general path then takes the call from the start.
///
/// # Safety
/// As [`start_send`].
///
/// [`Engine::send_eager_now`]: crate::core::p2p::engine::Engine::send_eager_now
#[inline(always)]
unsafe fn send_contiguous_now(
    buf: *const c_void,
    n: usize,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> bool {
    let Some(t) = datatype::predefined(datatype) else {
        return false;
    };
    let Some(len) = n
        .checked_mul(t.size())
        .filter(|&l| l <= isize::MAX as usize)
    else {
        return false;
    };
    if !t.is_contiguous() || tag < 0 || (buf.is_null() && len > 0) {
        return false;
    }
    let bytes: &[u8] = if len == 0 {
        &[]
    } else {
        // SAFETY: MPI's contract: `buf` holds `n` elements of the type,
        // which is one block of `len` bytes from its true lower bound, and
        // is not written while the send lasts.
        unsafe { std::slice::from_raw_parts(buf.cast::<u8>().wrapping_offset(t.true_lb()), len) }
    };
    let mut rt = runtime::lock();
    let Some(c) = rt.comms().find(comm) else {
        return false;
    };
    let Some(&to) = usize::try_from(dest).ok().and_then(|d| c.peers().get(d)) else {
        return false;
    };
    let env = Envelope {
        context_id: c.context_id,
        source: c.rank as c_int,
        tag,
    };
    let Some((engine, endpoints)) = rt.active() else {
        return false;
    };
    engine.send_eager_now(endpoints, to, env, len, |out| copy_message(out, bytes))
}

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
    check_tag(tag, true)?;
    let buf = unsafe { message_buffer(buf, n, datatype) }?;
    let rt = runtime::lock();
    let pattern = accepting(&rt, comm, source, tag)?;
    Ok((rt, buf, pattern))
}

/// Waits for a request this module started and returns its status (or
/// its error).
pub fn wait_request(id: MPI_Request) -> MpiResult<MPI_Status> {
    let (status, error) = block_on(|rt| {
        if !rt.engine().is_complete(id)? {
            return Ok(None);
        }
        Ok(Some(rt.engine().take(id)?))
    })?
    .finish();
    match error {
        Some(e) => Err(e),
        None => Ok(status),
    }
}

/// A completed receive's status as an error when it reports one
/// (truncation).
#[inline]
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

/// Waits for a receive-like request and writes its status.
///
/// # Safety
/// `status_out` as checked by `StatusOut::new`.
unsafe fn wait_receive(id: MPI_Request, status_out: StatusOut) -> MpiResult {
    let st = wait_request(id)?;
    unsafe { finish_receive(status_out, &st) }
}

fn out_request<'a>(request: *mut MPI_Request) -> MpiResult<&'a mut MPI_Request> {
    // SAFETY: `request` is the caller's output argument (NULL checked).
    unsafe { crate::abi::args::out(request, "request") }
}

unsafe fn blocking_send(
    buf: *const c_void,
    n: impl CountArg,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: Mode,
) -> MpiResult {
    let n = elements(n, "count")?;
    if matches!(mode, Mode::Standard | Mode::Ready)
        && unsafe { send_contiguous_now(buf, n, datatype, dest, tag, comm) }
    {
        return Ok(());
    }
    match unsafe { begin_send(buf, n, datatype, dest, tag, comm, mode, true) }? {
        SendStart::Finished => Ok(()),
        SendStart::Pending(id) => wait_request(id).map(|_| ()),
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn nonblocking_send(
    buf: *const c_void,
    n: impl CountArg,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    mode: Mode,
) -> MpiResult {
    let request = out_request(request)?;
    let n = elements(n, "count")?;
    *request = unsafe { start_send(buf, n, datatype, dest, tag, comm, mode) }?;
    Ok(())
}

/// Defines the blocking and the nonblocking call of each send mode.
macro_rules! send_modes {
    ($($blocking:ident, $nonblocking:ident => $mode:expr;)*) => {$(
        pub unsafe fn $blocking(
            buf: *const c_void,
            n: impl CountArg,
            datatype: MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
        ) -> MpiResult {
            unsafe { blocking_send(buf, n, datatype, dest, tag, comm, $mode) }
        }

        pub unsafe fn $nonblocking(
            buf: *const c_void,
            n: impl CountArg,
            datatype: MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> MpiResult {
            unsafe { nonblocking_send(buf, n, datatype, dest, tag, comm, request, $mode) }
        }
    )*};
}

send_modes! {
    send, isend => Mode::Standard;
    ssend, issend => Mode::Synchronous;
    rsend, irsend => Mode::Ready;
    bsend, ibsend => Mode::Buffered;
}

pub unsafe fn irecv(
    buf: *mut c_void,
    n: impl CountArg,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult {
    let request = out_request(request)?;
    let n = elements(n, "count")?;
    *request = unsafe { start_recv(buf, n, datatype, source, tag, comm) }?;
    Ok(())
}

pub unsafe fn recv(
    buf: *mut c_void,
    n: impl CountArg,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult {
    let status_out = unsafe { StatusOut::new(status) }?;
    let n = elements(n, "count")?;
    let (mut rt, buf, pattern) = unsafe { receive_parts(buf, n, datatype, source, tag, comm) }?;
    let Some(pattern) = pattern else {
        drop(rt);
        unsafe { write_status(status_out, &proc_null_status()) };
        return Ok(());
    };
    // Without a request when it can (see core::p2p::receive_lane).
    let (engine, endpoints) = rt.engine_and_endpoints()?;
    let buf = match engine.arm_lane(endpoints, buf, pattern) {
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
                Ok(LaneOutcome::Received(st)) => return unsafe { finish_receive(status_out, &st) },
                Ok(LaneOutcome::General(buf)) => buf,
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
    unsafe { wait_receive(id, status_out) }
}

/// Writes a finished receive's status and reports its error (truncation).
///
/// # Safety
/// `status_out` as checked by `StatusOut::new`.
unsafe fn finish_receive(status_out: StatusOut, st: &MPI_Status) -> MpiResult {
    unsafe { write_status(status_out, st) };
    status_error(st)
}

/// Starts a send and a receive as one request (`MPI_Isendrecv`).
///
/// # Safety
/// MPI's contract for the two buffers.
#[allow(clippy::too_many_arguments)]
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
    check_tag(sendtag, false)?;
    check_tag(recvtag, true)?;
    let sendbuf = unsafe { message_buffer(sendbuf, sendcount, sendtype) }?;
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
#[allow(clippy::too_many_arguments)]
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
    check_tag(sendtag, false)?;
    check_tag(recvtag, true)?;
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

#[allow(clippy::too_many_arguments)]
pub unsafe fn sendrecv(
    sendbuf: *const c_void,
    sendcount: impl CountArg,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: impl CountArg,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult {
    let status_out = unsafe { StatusOut::new(status) }?;
    let sendcount = elements(sendcount, "sendcount")?;
    let recvcount = elements(recvcount, "recvcount")?;
    let id = unsafe {
        start_sendrecv(
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
            recvtag, comm,
        )
    }?;
    unsafe { wait_receive(id, status_out) }
}

#[allow(clippy::too_many_arguments)]
pub unsafe fn isendrecv(
    sendbuf: *const c_void,
    sendcount: impl CountArg,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: impl CountArg,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult {
    let request = out_request(request)?;
    let sendcount = elements(sendcount, "sendcount")?;
    let recvcount = elements(recvcount, "recvcount")?;
    *request = unsafe {
        start_sendrecv(
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
            recvtag, comm,
        )
    }?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub unsafe fn sendrecv_replace(
    buf: *mut c_void,
    n: impl CountArg,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult {
    let status_out = unsafe { StatusOut::new(status) }?;
    let n = elements(n, "count")?;
    let id =
        unsafe { start_sendrecv_replace(buf, n, datatype, dest, sendtag, source, recvtag, comm) }?;
    unsafe { wait_receive(id, status_out) }
}

#[allow(clippy::too_many_arguments)]
pub unsafe fn isendrecv_replace(
    buf: *mut c_void,
    n: impl CountArg,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult {
    let request = out_request(request)?;
    let n = elements(n, "count")?;
    *request =
        unsafe { start_sendrecv_replace(buf, n, datatype, dest, sendtag, source, recvtag, comm) }?;
    Ok(())
}

/// What a probe looks for; `None` for `MPI_PROC_NULL`.
fn probe_pattern(
    rt: &Runtime,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<Option<Pattern>> {
    check_tag(tag, true)?;
    accepting(rt, comm, source, tag)
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
        Some(pattern) => rt.engine().iprobe(&pattern),
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
        Some(pattern) => Ok(rt.engine().iprobe(&pattern)),
    })?;
    unsafe { write_status(status_out, &st) };
    Ok(())
}
