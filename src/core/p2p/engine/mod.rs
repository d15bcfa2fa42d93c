//! The point-to-point engine: starts sends and receives, turns arriving
//! frames into matches and completions, and drives the eager and rendezvous
//! protocols. Process-level (it outlives epochs, so a message of an epoch
//! this process has not entered yet waits in the unexpected queue); the
//! transports it uses belong to the current epoch and are passed in.
//!
//! Protocols:
//! - eager (message fits one frame): the data goes with the envelope; a
//!   standard send completes when the frame is handed over, a synchronous
//!   one when the receiver's `SyncAck` comes back;
//! - rendezvous: RTS carries the envelope and size (and, for a contiguous
//!   buffer, where the sender's data lies); the matching receiver either
//!   copies the data itself (single copy, then FIN) or answers CTS, and the
//!   sender streams data pieces. Large unexpected messages therefore never
//!   take memory at the receiver;
//! - eager flow control (`flow_control`): a sender without eager credit
//!   for a receiver sends even a small message as a rendezvous, so small
//!   unexpected messages take bounded memory at the receiver too; credit
//!   comes back in `Credit` frames as the receiver delivers.
//!
//! Around those: persistent requests (`start` launches a request's
//! template again on the same handle), buffered sends (packed into the
//! attached buffer, see `bsend`), matched probes (the message leaves the
//! unexpected queue for a `Probed` entry of the request table, so no other
//! receive can match it), `MPI_Isendrecv` (two internal requests completing
//! one), generalized requests, and cancellation.
//!
//! Cancelling a send works while its first frame (eager data or RTS) still
//! waits in this process's outbox: the frame is withdrawn and the request
//! completes as cancelled. Once the frame has left, the send is not
//! cancelled (there is no protocol to take a message back from a peer);
//! `MPI_Test_cancelled` then reports false.
//!
//! The parts, a file each:
//! - `send`: starting sends, the eager fast paths without a request, and
//!   the RTS of a rendezvous;
//! - `outgoing`: frames waiting in the outbox, and the flush that hands
//!   them (and the data pieces of a pipelined rendezvous) to the
//!   transports;
//! - `receive`: posting receives, a matched message meeting its receive,
//!   and counting its bytes in until the receive completes;
//! - `rendezvous`: the shared-memory copies (single copy with
//!   `process_vm_readv`, shared copy where both processes copy half), and
//!   the flush of replies that does the halves;
//! - `dispatch`: what each arriving frame does, and `progress`;
//! - `requests`: request completion in the engine, and the request API
//!   (state, take for test and wait, cancel, free).

mod dispatch;
pub mod failure;
mod outgoing;
mod receive;
mod rendezvous;
mod requests;
mod send;
#[cfg(test)]
pub(super) mod testing;

pub use receive::{Incoming, IncomingBody};
pub use requests::{invalid_request, Polled, RequestState, Taken, COMPLETED_SEND};
pub use send::{SendArgs, EAGER_LIMIT};

use outgoing::Outgoing;
use rendezvous::{OwnShare, OwnWrite};

use super::bsend::AttachedBuffer;
use super::flow_control::EagerCredits;
use super::outbox::Outbox;
use super::receive_lane::Lane;
use super::request::Request;
use crate::core::epoch::Epoch;
use crate::core::handles::{HandleTable, ObjectKind};
use crate::core::matching::Matcher;
use crate::mpi_abi::types::MPI_Request;
pub use crate::transport::endpoints::Endpoints;

pub struct Engine {
    pub requests: HandleTable<Request>,
    pub(super) matcher: Matcher<MPI_Request, Incoming>,
    /// Per peer, frames that could not leave yet, in order.
    outbox: Outbox<Outgoing>,
    my_pid: u32,
    /// `process_vm_readv` failed once: do not try it again.
    single_copy_refused: bool,
    /// A generalized request with a poll function was ever started (waits
    /// then look for them among their requests).
    pub(super) polling_grequests: bool,
    /// Shared copies whose receiver half waits until the `ShareCopy` frame
    /// has left (so that both processes copy at once).
    own_shares: Vec<OwnShare>,
    /// Shared copies whose sender half (asked by a `ShareCopy` frame) is
    /// written at the next flush, with the others that came meanwhile.
    own_writes: Vec<OwnWrite>,
    /// The buffer of buffered-mode sends (`MPI_Buffer_attach`).
    pub(super) attached: Option<AttachedBuffer>,
    /// A blocking receive waiting without a request (see `receive_lane`).
    pub(super) lane: Option<Lane>,
    /// Eager credit towards each peer and owed to each (see
    /// `flow_control`).
    pub(super) credits: EagerCredits,
    /// Processes the launcher reported failed (see `failure`).
    failed: Vec<crate::transport::ProcessId>,
    /// Started partitioned receives whose sender's layout arrived: their
    /// partitions' receives are posted at the next progress (see
    /// `partitioned`).
    pub(super) partitioned_due: Vec<MPI_Request>,
}

impl Default for Engine {
    fn default() -> Self {
        let mut requests = HandleTable::new(ObjectKind::Request);
        let builtin = requests.insert(Request::completed_send());
        debug_assert_eq!(builtin, requests::COMPLETED_SEND);
        Engine {
            requests,
            matcher: Matcher::counted(&crate::core::tool::pvars::UNEXPECTED_MESSAGES),
            outbox: Outbox::default(),
            my_pid: std::process::id(),
            single_copy_refused: false,
            own_shares: Vec::new(),
            own_writes: Vec::new(),
            polling_grequests: false,
            attached: None,
            lane: None,
            partitioned_due: Vec::new(),
            credits: EagerCredits::default(),
            failed: Vec::new(),
        }
    }
}

impl Engine {
    /// The end of `epoch`: drops queued messages and posted receives of its
    /// communicators (a correct program left none); returns how many
    /// messages went. Messages of later epochs stay.
    pub fn end_epoch(&mut self, epoch: Epoch) -> usize {
        self.matcher.purge(|cid| Epoch::of_context(cid) <= epoch)
    }

    /// The start of an epoch of a job of `job_size` processes: eager
    /// credit afresh (peers reach this process in the new epoch only
    /// after this), a window per peer sized for the job.
    pub fn start_epoch(&mut self, job_size: u32) {
        self.credits
            .reset(crate::config::get().unexpected_limit, job_size);
    }
}
