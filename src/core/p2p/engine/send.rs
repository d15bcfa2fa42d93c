//! Sending: a send leaves eagerly (envelope and data in one frame) when it
//! fits a frame and the receiver has given enough eager credit (see
//! `flow_control`), else as a rendezvous request-to-send (RTS), which offers
//! single copy when the receiver may read the data in place. The eager fast
//! paths (`send_now`, `send_eager_now`) write the frame from the user's
//! buffer straight into the transport, without a request.
//!
//! Invariant: a frame goes straight to the transport only when nothing
//! waits before it for the same peer in the outbox; otherwise it queues
//! behind (see `outgoing`), so frames to a peer leave in the order they
//! were sent (MPI's non-overtaking rule).

use super::outgoing::Outgoing;
use super::rendezvous::{SINGLE_COPY_LEN, SINGLE_COPY_MIN};
use super::Engine;
use crate::core::matching::Envelope;
use crate::core::p2p::frame::{FrameHeader, FrameKind, FLAG_SYNC, HEADER_LEN};
use crate::core::p2p::request::{Operation, Request, SendOp, SendStage};
use crate::core::p2p::user_buffer::UserBuffer;
use crate::mpi_abi::types::{MPI_Request, MPI_Status};
use crate::transport::endpoints::{Endpoints, SendOutcome};
use crate::transport::ProcessId;

/// Messages up to this size (plus header, and within the transport's frame
/// limit) go eagerly.
pub const EAGER_LIMIT: usize = 64 * 1024;

/// A send as the abi layer describes it.
#[derive(Clone)]
pub struct SendArgs {
    pub buf: UserBuffer,
    pub dest: ProcessId,
    pub context_id: u64,
    /// Sender's rank in the communicator.
    pub source: i32,
    pub tag: i32,
    pub synchronous: bool,
}

impl Engine {
    /// Starts a send; returns its request.
    pub fn isend(&mut self, ep: &mut Endpoints, args: SendArgs) -> MPI_Request {
        let id = self.requests.insert(Request::new(Operation::Done));
        self.launch_send(ep, id, args);
        id
    }

    /// The fast path of a blocking standard-mode send: when the message is
    /// eager, nothing waits before it for `dest` and the transport has room,
    /// it leaves straight from the user's buffer and the send is over, with
    /// no request at all. Returns false, having done nothing, otherwise (the
    /// caller then starts a request, which also reports an unreachable peer).
    pub fn send_now(&mut self, ep: &mut Endpoints, args: &SendArgs) -> bool {
        !args.synchronous
            && self.send_eager_now(
                ep,
                args.dest,
                Envelope {
                    context_id: args.context_id,
                    source: args.source,
                    tag: args.tag,
                },
                args.buf.len(),
                |body| {
                    args.buf.pack(0, body);
                },
            )
    }

    /// [`Engine::send_now`] for a message of `len` bytes that `body` writes
    /// (into a slice of exactly `len` bytes): the one way a message leaves
    /// without a request. Also the whole of `MPI_Send` for a small
    /// message of a contiguous predefined type (see `abi::p2p`).
    #[inline(always)]
    pub fn send_eager_now(
        &mut self,
        ep: &mut Endpoints,
        dest: ProcessId,
        env: Envelope,
        len: usize,
        body: impl Fn(&mut [u8]),
    ) -> bool {
        if len > EAGER_LIMIT || self.outbox.has_queued(dest) || !self.credits.try_take(dest, len) {
            return false;
        }
        let header = FrameHeader {
            kind: FrameKind::Eager,
            flags: 0,
            tag: env.tag,
            source: env.source,
            context_id: env.context_id,
            total_len: len as u64,
            id_a: 0,
            id_b: 0,
        };
        let frame_len = HEADER_LEN + len;
        // Two closures of their own types (not one used twice), so that
        // the shared-memory one is compiled into the ring push.
        let shm_fill = |frame: &mut [u8]| {
            header.encode(frame);
            body(&mut frame[HEADER_LEN..HEADER_LEN + len]);
        };
        let sent = match ep.try_send_shm(dest, frame_len, shm_fill) {
            Some(sent) => sent,
            None => {
                let mut fill = |frame: &mut [u8]| {
                    header.encode(frame);
                    body(&mut frame[HEADER_LEN..HEADER_LEN + len]);
                };
                frame_len <= ep.max_frame(dest)
                    && ep.try_send(dest, frame_len, &mut fill) == SendOutcome::Sent
            }
        };
        if sent {
            ep.count_message(dest, len as u64);
        } else {
            self.credits.give_back(dest, len);
        }
        sent
    }

    /// Starts a send on the existing request `id` (new, or persistent).
    pub(in crate::core::p2p) fn launch_send(
        &mut self,
        ep: &mut Endpoints,
        id: MPI_Request,
        args: SendArgs,
    ) {
        let len = args.buf.len();
        let dest = args.dest;
        if self.has_failures() && self.is_failed(dest) {
            if let Some(req) = self.requests.get_mut(id) {
                req.complete = false;
                req.op = Operation::Done;
            }
            self.fail_request_with(id, super::failure::proc_failed(dest));
            return;
        }
        // Messages to oneself always go eagerly (copied), so a blocking send
        // to oneself before the receive is posted never waits (as in MPICH).
        let eager = if dest == ep.me() {
            self.credits.take(dest, len);
            true
        } else {
            len + HEADER_LEN <= ep.max_frame(dest).min(EAGER_LIMIT + HEADER_LEN)
                && self.credits.try_take(dest, len)
        };
        let stage = if !eager {
            SendStage::AwaitingReceiver
        } else if args.synchronous {
            SendStage::AwaitingSyncAck
        } else {
            SendStage::Queued
        };
        let Some(req) = self.requests.get_mut(id) else {
            return;
        };
        req.op = Operation::Send(SendOp {
            buf: args.buf,
            dest,
            context_id: args.context_id,
            stage,
        });
        req.complete = false;
        req.error = None;
        req.status = MPI_Status::default();
        let mut header = FrameHeader {
            kind: FrameKind::Eager,
            flags: if args.synchronous { FLAG_SYNC } else { 0 },
            tag: args.tag,
            source: args.source,
            context_id: args.context_id,
            total_len: len as u64,
            id_a: id as u32 as u64,
            id_b: 0,
        };
        if eager {
            self.send_eager(ep, id, &header);
        } else {
            header.kind = FrameKind::RequestToSend;
            crate::core::tool::pvars::count(&crate::core::tool::pvars::RENDEZVOUS_SENDS);
            let offer = match &self.requests.get(id).map(|r| &r.op) {
                // The receiver reads the data by process id: only a process
                // on this node (through shm) may be offered that.
                Some(Operation::Send(s))
                    if (len >= SINGLE_COPY_MIN
                        && crate::config::shm_single_copy()
                        && ep.reaches_through_shm(dest))
                        || dest == ep.me() =>
                {
                    s.buf.contiguous_block()
                }
                _ => None,
            };
            let mut frame =
                vec![0u8; HEADER_LEN + if offer.is_some() { SINGLE_COPY_LEN } else { 0 }];
            header.encode(&mut frame);
            if let Some((addr, _)) = offer {
                frame[HEADER_LEN..HEADER_LEN + 4].copy_from_slice(&self.my_pid.to_le_bytes());
                frame[HEADER_LEN + 8..HEADER_LEN + 16]
                    .copy_from_slice(&(addr as u64).to_le_bytes());
            }
            self.enqueue_owned(ep, dest, frame, id);
        }
    }

    /// Sends an eager message straight from the user's buffer into the
    /// transport, or, when the transport is full, queues its header in the
    /// outbox, to be followed by the message from the same buffer when the
    /// transport has room.
    fn send_eager(&mut self, ep: &mut Endpoints, id: MPI_Request, header: &FrameHeader) {
        let Some(Request {
            op: Operation::Send(send),
            ..
        }) = self.requests.get(id)
        else {
            return;
        };
        let dest = send.dest;
        let len = send.buf.len();
        let queued_before = self.outbox.has_queued(dest);
        let mut sent = false;
        if !queued_before {
            let outcome = ep.try_send(dest, HEADER_LEN + len, &mut |frame: &mut [u8]| {
                header.encode(frame);
                send.buf.pack(0, &mut frame[HEADER_LEN..]);
            });
            match outcome {
                SendOutcome::Sent => {
                    ep.count_message(dest, len as u64);
                    sent = true;
                }
                SendOutcome::NotNow => {}
                SendOutcome::Unreachable(why) => {
                    self.fail_request(id, why);
                    return;
                }
            }
        }
        if !sent {
            // The header now, the message from the send's buffer when the
            // frame leaves (see `Outgoing::Frame`).
            let mut frame = vec![0u8; HEADER_LEN];
            header.encode(&mut frame);
            let body = Some(send.buf.clone());
            self.outbox.push(
                dest,
                Outgoing::Frame {
                    bytes: frame,
                    body,
                    owner: id,
                },
            );
            if let Some(r) = self.requests.get_mut(id) {
                r.queued_frame = true;
            }
        }
        // A standard send is done once its frame is in the transport (a
        // ring record or the kernel's socket buffer): from there it reaches
        // the peer without this process calling MPI again, as with MPICH,
        // so a program may block outside MPI after `MPI_Send` (or the wait
        // of an `MPI_Isend`) until the peer reacts. A frame that had to be
        // queued completes its send when it leaves the outbox (see
        // `frame_left`).
        if sent && header.flags & FLAG_SYNC == 0 {
            self.complete_send(id);
        }
    }
}
