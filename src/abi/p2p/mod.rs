//! Point-to-point calls through the C ABI: sends in every mode
//! ([`send`]), receives ([`recv`]), send-receive ([`sendrecv`]), probes
//! ([`probe`], and matched probes), persistent requests and the buffer of
//! buffered sends. Arguments are checked here (counts, tags and required
//! outputs by the entry points, from the function table's kinds); the
//! engine in `core::p2p` does the work. This file holds what the parts
//! share: send modes, message buffers, routes and receive patterns, and
//! waiting for a request's status.
use std::os::raw::{c_int, c_void};

use crate::abi::status::{write_status, StatusOut};
use crate::core::datatype;
use crate::core::error::{MpiError, MpiResult};
use crate::core::matching::{Pattern, ANY};
use crate::core::p2p::engine::SendArgs;
use crate::core::p2p::user_buffer::UserBuffer;
use crate::core::progress::block_on;
use crate::core::runtime::Runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;
use crate::transport::ProcessId;

mod buffered;
mod matched_probe;
mod partitioned;
mod persistent;
mod probe;
mod recv;
mod send;
mod sendrecv;

pub use buffered::{buffer_attach, buffer_detach};
pub use matched_probe::{improbe, imrecv, mprobe, mrecv};
pub use partitioned::{parrived, pready, pready_list, pready_range, precv_init, psend_init};
pub use persistent::{bsend_init, recv_init, rsend_init, send_init, ssend_init, start, startall};
pub use probe::{iprobe, probe};
pub use recv::{irecv, recv, start_recv};
pub use send::{bsend, ibsend, irsend, isend, issend, rsend, send, ssend, start_send};
pub use sendrecv::{isendrecv, isendrecv_replace, sendrecv, sendrecv_replace};

/// The send modes. Ready mode sends like standard mode: a correct program
/// has the receive posted already, and then the two are the same.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Standard,
    Synchronous,
    Ready,
    Buffered,
}

/// A message buffer from the C arguments: the datatype is committed, the
/// size representable, and the address NULL only for an empty message or
/// `MPI_BOTTOM` with absolute displacements. An empty message may name
/// `MPI_DATATYPE_NULL`, as MPICH allows (programs written against it send
/// `MPI_Send(NULL, 0, MPI_DATATYPE_NULL, ...)` as a bare signal).
///
/// # Safety
/// `buf` must hold (or have room for) `n` elements of `datatype` until the
/// operation using the buffer completes.
#[inline(always)]
pub(crate) unsafe fn message_buffer(
    buf: *const c_void,
    n: usize,
    datatype: MPI_Datatype,
) -> MpiResult<UserBuffer> {
    if n == 0 && datatype == MPI_DATATYPE_NULL {
        // SAFETY: no element: the address is never read or written.
        return Ok(unsafe { UserBuffer::new(buf, 0, crate::core::p2p::user_buffer::byte_type()) });
    }
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
    if buf.is_null() && bytes > 0 && !dt.may_be_at_bottom(n) {
        return Err(MpiError::new(
            MPI_ERR_BUFFER,
            "buffer is NULL but the message is not empty (MPI_BOTTOM needs a datatype of absolute addresses)",
        ));
    }
    // SAFETY: `buf` holds (or has room for) `n` elements of `dt` until the
    // operation completes (this function's contract, MPI's for message
    // buffers); NULL was rejected above unless the message is empty or
    // the datatype's displacements are absolute addresses (MPI_BOTTOM).
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
pub(super) unsafe fn wait_receive(id: MPI_Request, status_out: StatusOut) -> MpiResult {
    let st = wait_request(id)?;
    // SAFETY: `status_out` was checked by `StatusOut::new` (this function's
    // contract).
    unsafe { finish_receive(status_out, &st) }
}

/// Writes a finished receive's status and reports its error (truncation).
///
/// # Safety
/// `status_out` as checked by `StatusOut::new`.
pub(super) unsafe fn finish_receive(status_out: StatusOut, st: &MPI_Status) -> MpiResult {
    // SAFETY: `status_out` was checked by `StatusOut::new` (this function's
    // contract), so a `To` pointer is the caller's status, valid for writes.
    unsafe { write_status(status_out, st) };
    status_error(st)
}
