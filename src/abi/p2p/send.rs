//! Sends in every mode: standard, synchronous, ready (sent as standard: a
//! correct program has the receive posted already) and buffered, blocking
//! and nonblocking. A standard send of a contiguous predefined type that
//! can leave at once takes the latency-critical path
//! ([`send_contiguous_now`]): one lock, no request, no allocation; the
//! nonblocking form then returns the engine's pre-completed request
//! ([`COMPLETED_SEND`]).
use std::os::raw::{c_int, c_void};

use super::{message_buffer, wait_request, Mode, Route};
use crate::core::datatype;
use crate::core::error::MpiResult;
use crate::core::matching::Envelope;
use crate::core::p2p::engine::COMPLETED_SEND;
use crate::core::p2p::user_buffer::copy_message;
use crate::core::runtime;
use crate::mpi_abi::types::*;

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
    // SAFETY: `buf` holds `n` elements of `datatype` until the send completes
    // (this function's contract, `begin_send`'s).
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
    // SAFETY: `buf` holds `n` elements of `datatype` until the send completes
    // (this function's contract, `message_buffer`'s).
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

unsafe fn blocking_send(
    buf: *const c_void,
    n: usize,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: Mode,
) -> MpiResult {
    if matches!(mode, Mode::Standard | Mode::Ready)
        // SAFETY: a blocking send's `buf` holds `n` elements of `datatype`
        // until it returns (MPI's contract); `send_contiguous_now` copies them
        // out before returning.
        && unsafe { send_contiguous_now(buf, n, datatype, dest, tag, comm) }
    {
        return Ok(());
    }
    // SAFETY: a blocking send's `buf` holds `n` elements of `datatype` until
    // it returns (MPI's contract); a pending send is waited for before that.
    match unsafe { begin_send(buf, n, datatype, dest, tag, comm, mode, true) }? {
        SendStart::Finished => Ok(()),
        SendStart::Pending(id) => wait_request(id).map(|_| ()),
    }
}

unsafe fn nonblocking_send(
    buf: *const c_void,
    n: usize,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: &mut MPI_Request,
    mode: Mode,
) -> MpiResult {
    // A small standard (or ready) send that leaves at once needs no request
    // of its own: it gets the engine's pre-completed one.
    if matches!(mode, Mode::Standard | Mode::Ready)
        // SAFETY: MPI's contract for a nonblocking send: `buf` holds `n`
        // elements of `datatype`; `send_contiguous_now` copies them out
        // before returning.
        && unsafe { send_contiguous_now(buf, n, datatype, dest, tag, comm) }
    {
        *request = COMPLETED_SEND;
        return Ok(());
    }
    // SAFETY: MPI's contract for a nonblocking send: `buf` holds `n` elements
    // of `datatype`, not modified by the program, until the request completes.
    *request = unsafe { start_send(buf, n, datatype, dest, tag, comm, mode) }?;
    Ok(())
}

/// Defines the blocking and the nonblocking call of each send mode.
macro_rules! send_modes {
    ($($blocking:ident, $nonblocking:ident => $mode:expr;)*) => {$(
        pub unsafe fn $blocking(
            buf: *const c_void,
            n: usize,
            datatype: MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
        ) -> MpiResult {
            // SAFETY: this MPI send call's arguments, passed on unchanged:
            // `buf` holds `n` elements of `datatype` until the call returns
            // (MPI's contract).
            unsafe { blocking_send(buf, n, datatype, dest, tag, comm, $mode) }
        }

        pub unsafe fn $nonblocking(
            buf: *const c_void,
            n: usize,
            datatype: MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
            request: &mut MPI_Request,
        ) -> MpiResult {
            // SAFETY: this MPI_I*send call's arguments, passed on unchanged:
            // `buf` holds `n` elements of `datatype` until the request
            // completes (MPI's contract).
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
