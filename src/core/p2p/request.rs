//! Requests: one per point-to-point operation in flight, addressed by its
//! `MPI_Request` handle. A request whose handle the user freed
//! (`MPI_Request_free`) stays until its operation completes; the handle
//! table's delayed reuse keeps its id unique while frames may still name it.
use std::os::raw::c_int;

use super::user_buffer::UserBuffer;
use crate::abi::constants::*;
use crate::abi::types::MPI_Status;
use crate::core::error::MpiError;
use crate::core::matching::Pattern;
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
    pub stage: SendStage,
}

pub struct RecvOp {
    pub buf: UserBuffer,
    pub pattern: Pattern,
    /// Set once matched: the message's size and envelope.
    pub matched: Option<Matched>,
    /// Message bytes accounted for so far (delivered or cut off).
    pub received: usize,
}

#[derive(Debug, Clone, Copy)]
pub struct Matched {
    pub source: i32,
    pub tag: i32,
    pub len: usize,
}

pub enum Operation {
    Send(SendOp),
    Recv(RecvOp),
    /// Nothing left to do (a `MPI_PROC_NULL` operation, or finished).
    Done,
}

pub struct Request {
    pub op: Operation,
    pub complete: bool,
    pub status: MPI_Status,
    /// `MPI_Request_free` was called: the request goes when complete.
    pub freed: bool,
    /// Why the operation failed, if it did (reported at completion).
    pub error: Option<MpiError>,
}

impl Request {
    pub fn new(op: Operation) -> Request {
        Request {
            op,
            complete: false,
            status: MPI_Status::default(),
            freed: false,
            error: None,
        }
    }

    /// A request that is already complete (e.g. `MPI_PROC_NULL`): source
    /// `MPI_PROC_NULL`, tag `MPI_ANY_TAG`, count 0.
    pub fn completed_null() -> Request {
        let mut r = Request::new(Operation::Done);
        r.complete = true;
        r.status.MPI_SOURCE = MPI_PROC_NULL;
        r.status.MPI_TAG = MPI_ANY_TAG;
        r
    }

    /// Ends the operation with an error.
    pub fn fail(&mut self, error: MpiError) {
        let mut status = MPI_Status::default();
        status.MPI_ERROR = error.class;
        self.error = Some(error);
        self.finish(status);
    }

    /// Marks the operation finished with `status`.
    pub fn finish(&mut self, status: MPI_Status) {
        self.status = status;
        self.complete = true;
        self.op = Operation::Done;
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
