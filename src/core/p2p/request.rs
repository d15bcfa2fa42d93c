//! Requests: one per point-to-point operation in flight, addressed by its
//! `MPI_Request` handle. A request whose handle the user freed
//! (`MPI_Request_free`) stays until its operation completes; the handle
//! table's delayed reuse keeps its id unique while frames may still name it.
//!
//! Besides plain operations the table holds:
//! - persistent requests (`MPI_Send_init`..., and the persistent
//!   collectives, `MPI_Bcast_init`...): a [`Template`] that `MPI_Start`
//!   launches again on the same handle; completion makes one inactive
//!   instead of removing it;
//! - `MPI_Isendrecv` requests, whose two parts are internal requests
//!   (`parent` names the request they complete);
//! - generalized requests ([`Generalized`]), completed by the program;
//! - messages taken by `MPI_Mprobe` ([`Operation::Message`]): their handles
//!   are `MPI_Message`s, never valid as requests.
use std::future::Future;
use std::os::raw::c_int;
use std::pin::Pin;
use std::sync::Arc;

use super::engine::{Incoming, SendArgs};
use super::generalized::Generalized;
use super::partitioned::Partitioned;
use super::user_buffer::UserBuffer;
use crate::core::error::{MpiError, MpiResult};
use crate::core::matching::{Envelope, Pattern};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Request, MPI_Status};
use crate::transport::ProcessId;

/// Where a send is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendStage {
    /// Waiting for its frame to leave (transport full or peer not ready).
    Queued,
    /// Sent as RTS; waiting for the receiver (CTS, or FIN after its own copy).
    AwaitingReceiver,
    /// Streaming data pieces after a CTS.
    Streaming,
    /// Eager synchronous send: waiting for the match acknowledgement.
    AwaitingSyncAck,
}

pub struct SendOp {
    pub buf: UserBuffer,
    pub dest: ProcessId,
    /// The context id the message goes on.
    pub context_id: u64,
    pub stage: SendStage,
}

pub struct RecvOp {
    pub buf: UserBuffer,
    pub pattern: Pattern,
    /// Set once matched: the message's size and envelope.
    pub matched: Option<Matched>,
    /// Message bytes accounted for so far (delivered or cut off).
    pub received: usize,
    /// A shared copy's sender, told (`Finished`, with its request) when the
    /// whole message is in.
    pub finish_notice: Option<(ProcessId, u64)>,
}

impl RecvOp {
    /// A receive into `buf` of a message `pattern` accepts, not matched yet.
    pub fn new(buf: UserBuffer, pattern: Pattern) -> RecvOp {
        RecvOp {
            buf,
            pattern,
            matched: None,
            received: 0,
            finish_notice: None,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Matched {
    /// The sending process.
    pub from: ProcessId,
    pub source: i32,
    pub tag: i32,
    pub len: usize,
}

/// A message `MPI_Mprobe` took out of the unexpected queue.
pub struct Probed {
    pub env: Envelope,
    pub incoming: Incoming,
}

pub enum Operation {
    Send(SendOp),
    Recv(RecvOp),
    /// Nothing left to do (a `MPI_PROC_NULL` operation, or finished).
    Done,
    /// A nonblocking collective: the collective worker finishes it (see
    /// `core::collective::executor`); the engine leaves it alone.
    Collective,
    /// `MPI_Isendrecv`: waits for its two parts (internal requests, or
    /// `MPI_REQUEST_NULL` for a `MPI_PROC_NULL` part); the status is the
    /// receive's.
    SendRecv {
        send: MPI_Request,
        recv: MPI_Request,
    },
    /// Not a request: a message matched by `MPI_Mprobe`/`MPI_Improbe`,
    /// waiting for `MPI_Mrecv`/`MPI_Imrecv`.
    Message(Box<Probed>),
    /// An active partitioned send or receive: its parts (internal requests)
    /// complete it (see `core::p2p::partitioned`).
    Partitioned,
}

/// What `MPI_Start` launches.
#[derive(Clone)]
pub enum Template {
    /// `buffered`: packed into the attached buffer first (`MPI_Bsend_init`).
    Send {
        args: SendArgs,
        buffered: bool,
    },
    Recv {
        buf: UserBuffer,
        pattern: Pattern,
    },
    /// A send to or a receive from `MPI_PROC_NULL`.
    ProcNull,
    /// A persistent collective (`MPI_Bcast_init`...): each start makes a
    /// new call of it, which the collective executor runs (see
    /// `core::collective::plan`).
    Collective(CollectiveCalls),
    /// A partitioned send or receive (`MPI_Psend_init`, `MPI_Precv_init`):
    /// its state is the request's `partitioned`.
    Partitioned,
}

/// Makes the next call of a persistent collective: its algorithm, which
/// takes the communicator's next collective tag when made.
pub type CollectiveCalls =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = MpiResult> + Send>> + Send + Sync>;

pub struct Persistent {
    pub template: Template,
    /// Started and not yet completed by a wait or test.
    pub active: bool,
}

pub struct Request {
    pub op: Operation,
    pub complete: bool,
    pub status: MPI_Status,
    /// `MPI_Request_free` was called: the request goes when complete.
    pub freed: bool,
    /// Why the operation failed, if it did (reported at completion).
    pub error: Option<MpiError>,
    /// Set for a persistent request.
    pub persistent: Option<Box<Persistent>>,
    /// Set for a generalized request.
    pub generalized: Option<Box<Generalized>>,
    /// Set for a partitioned request.
    pub partitioned: Option<Box<Partitioned>>,
    /// The `MPI_Isendrecv` request this one is a part of, or
    /// `MPI_REQUEST_NULL`.
    pub parent: MPI_Request,
    /// The offset of this send's data in the attached buffer (an internal
    /// buffered send, which gives the space back when it completes).
    pub bsend_offset: Option<usize>,
    /// A frame of this request waits in the engine's outbox (so the send
    /// has not left the process and can still be cancelled).
    pub queued_frame: bool,
}

impl Request {
    pub fn new(op: Operation) -> Request {
        Request {
            op,
            complete: false,
            status: MPI_Status::default(),
            freed: false,
            error: None,
            persistent: None,
            generalized: None,
            partitioned: None,
            parent: MPI_REQUEST_NULL,
            bsend_offset: None,
            queued_frame: false,
        }
    }

    /// A request that is already complete (e.g. `MPI_PROC_NULL`): source
    /// `MPI_PROC_NULL`, tag `MPI_ANY_TAG`, count 0.
    pub fn completed_null() -> Request {
        let mut r = Request::new(Operation::Done);
        r.complete = true;
        r.status = proc_null_status();
        r
    }

    /// The engine's one pre-completed send request
    /// ([`crate::core::p2p::engine::COMPLETED_SEND`]).
    pub fn completed_send() -> Request {
        let mut r = Request::new(Operation::Done);
        r.complete = true;
        r
    }

    /// Ends the operation with an error.
    pub fn fail(&mut self, error: MpiError) {
        let status = MPI_Status {
            MPI_ERROR: error.class,
            ..Default::default()
        };
        self.error = Some(error);
        self.finish(status);
    }

    /// Marks the operation finished with `status`.
    pub fn finish(&mut self, status: MPI_Status) {
        self.status = status;
        self.complete = true;
        self.op = Operation::Done;
    }

    /// A persistent request that is not started (or completed since).
    /// Whether a complete request needs [`Engine::settle`](super::engine::Engine)
    /// (its completion does more than mark it: a buffered send's space, a
    /// part of a bigger request, a request the program freed).
    #[inline]
    pub fn needs_settling(&self) -> bool {
        self.bsend_offset.is_some() || self.parent != MPI_REQUEST_NULL || self.freed
    }

    pub fn is_inactive(&self) -> bool {
        self.persistent.as_ref().is_some_and(|p| !p.active)
    }

    /// Handles the program may pass to completion calls (not a message,
    /// not the internal part of another operation).
    pub fn is_user_request(&self) -> bool {
        !matches!(self.op, Operation::Message(_))
            && self.parent == MPI_REQUEST_NULL
            && self.bsend_offset.is_none()
    }
}

/// The status of a completed receive.
pub fn receive_status(source: i32, tag: i32, bytes: usize, error: c_int) -> MPI_Status {
    let mut status = MPI_Status {
        MPI_SOURCE: source,
        MPI_TAG: tag,
        MPI_ERROR: error,
        ..Default::default()
    };
    status.set_byte_count(bytes as i64);
    status
}

/// The status of an operation on `MPI_PROC_NULL`: source `MPI_PROC_NULL`,
/// tag `MPI_ANY_TAG`, count 0.
pub fn proc_null_status() -> MPI_Status {
    MPI_Status {
        MPI_SOURCE: MPI_PROC_NULL,
        MPI_TAG: MPI_ANY_TAG,
        ..Default::default()
    }
}

/// The status of an empty (null or inactive) request: source
/// `MPI_ANY_SOURCE`, tag `MPI_ANY_TAG`, count 0, not cancelled.
pub fn empty_status() -> MPI_Status {
    MPI_Status {
        MPI_SOURCE: MPI_ANY_SOURCE,
        MPI_TAG: MPI_ANY_TAG,
        MPI_ERROR: MPI_SUCCESS,
        ..Default::default()
    }
}

/// The status of a cancelled operation.
pub fn cancelled_status() -> MPI_Status {
    let mut status = empty_status();
    status.set_cancelled(true);
    status
}
