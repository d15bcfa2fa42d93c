//! Receiving: posting a receive (matched at once against the unexpected
//! messages), a matched message meeting its receive (eager data copied in;
//! a rendezvous answered by a single or shared copy, or by CTS), and the
//! bytes of the message counted in until the receive completes. Also
//! `iprobe`, which looks at the unexpected messages.
//!
//! Invariant: a matched receive completes once `received` reaches the
//! message's length; bytes past the buffer's capacity are counted, not
//! stored, and the status says `MPI_ERR_TRUNCATE`.

use super::outgoing::{control, control_frame};
use super::Engine;
use crate::core::matching::{Envelope, Pattern};
use crate::core::p2p::frame::FrameKind;
use crate::core::p2p::request::{receive_status, Matched, Operation, RecvOp, Request};
use crate::core::p2p::user_buffer::UserBuffer;
use crate::mpi_abi::constants::MPI_SUCCESS;
use crate::mpi_abi::types::{MPI_Request, MPI_Status};
use crate::transport::endpoints::Endpoints;
use crate::transport::ProcessId;

/// An unexpected message as the engine keeps it.
pub struct Incoming {
    pub from: ProcessId,
    pub len: usize,
    pub body: IncomingBody,
}

pub enum IncomingBody {
    Eager {
        data: Vec<u8>,
        sync_request: Option<u64>,
    },
    Rendezvous {
        send_request: u64,
        single_copy: Option<(u32, u64)>,
    },
}

impl Engine {
    /// Starts a receive; returns its request (made with its operation in
    /// place: a receive is on the latency-critical path).
    pub fn irecv(&mut self, ep: &mut Endpoints, buf: UserBuffer, pattern: Pattern) -> MPI_Request {
        let id = self
            .requests
            .insert(Request::new(Operation::Recv(RecvOp::new(buf, pattern))));
        self.post_recv(ep, id, pattern);
        id
    }

    /// Starts a receive on the existing request `id` (a persistent one, or
    /// a part of another request).
    pub(in crate::core::p2p) fn launch_recv(
        &mut self,
        ep: &mut Endpoints,
        id: MPI_Request,
        buf: UserBuffer,
        pattern: Pattern,
    ) {
        let Some(req) = self.requests.get_mut(id) else {
            return;
        };
        req.op = Operation::Recv(RecvOp::new(buf, pattern));
        req.complete = false;
        req.error = None;
        req.status = MPI_Status::default();
        self.post_recv(ep, id, pattern);
    }

    /// Matches receive `id` against the unexpected messages, or leaves it
    /// posted.
    fn post_recv(&mut self, ep: &mut Endpoints, id: MPI_Request, pattern: Pattern) {
        if let Some((env, incoming)) = self.matcher.post(pattern, id) {
            self.deliver(id, env, incoming, None);
            self.flush_replies(ep);
        }
    }

    /// A matched message meets its receive. `direct` is an eager message's
    /// data still in the transport's frame (no intermediate copy).
    /// Replies it needs (acknowledgement, CTS, FIN) are queued; the caller
    /// flushes them (`flush_all`), or the next progress does.
    pub(in crate::core::p2p) fn deliver(
        &mut self,
        id: MPI_Request,
        env: Envelope,
        incoming: Incoming,
        direct: Option<&[u8]>,
    ) {
        let Some(req) = self.requests.get_mut(id) else {
            return;
        };
        let Operation::Recv(recv) = &mut req.op else {
            return;
        };
        let from = incoming.from;
        match incoming.body {
            IncomingBody::Eager { data, sync_request } => {
                // The whole message is here: the receive completes now,
                // with this one look-up of its request (the message rate
                // is decided on this path).
                let data = direct.unwrap_or(&data);
                let capacity = recv.buf.len();
                let n = data.len().min(capacity);
                if n > 0 {
                    recv.buf.unpack(0, &data[..n]);
                }
                let (bytes, error) = recv.buf.receive_outcome(incoming.len);
                req.finish(receive_status(env.source, env.tag, bytes, error));
                let settles = req.needs_settling();
                if let Some(sender) = sync_request {
                    self.acknowledge_sync(from, sender);
                }
                self.eager_delivered(from, incoming.len);
                if settles {
                    self.settle(id);
                }
            }
            IncomingBody::Rendezvous {
                send_request,
                single_copy,
            } => {
                recv.matched = Some(Matched {
                    from,
                    source: env.source,
                    tag: env.tag,
                    len: incoming.len,
                });
                if let Some((pid, addr)) = single_copy {
                    if self.share_copy(id, from, send_request, pid, addr) {
                        return;
                    }
                    if self.single_copy(id, pid, addr) {
                        let frame = control_frame(FrameKind::Finished, send_request, 0);
                        self.queue(from, control(frame));
                        return;
                    }
                }
                let frame = control_frame(FrameKind::ClearToSend, send_request, id as u32 as u64);
                self.queue(from, control(frame));
            }
        }
    }

    /// Queues the acknowledgement that tells a synchronous send's `sender`
    /// (its request at `from`) that its message matched.
    pub(in crate::core::p2p) fn acknowledge_sync(&mut self, from: ProcessId, sender: u64) {
        let frame = control_frame(FrameKind::SyncAck, sender, 0);
        self.queue(from, control(frame));
    }

    /// An eager message of `len` bytes from `from` was handed to a receive:
    /// its credit goes back to the sender once enough has accumulated.
    #[inline(always)]
    pub(in crate::core::p2p) fn eager_delivered(&mut self, from: ProcessId, len: usize) {
        if let Some(bytes) = self.credits.delivered(from, len) {
            self.queue(from, control(control_frame(FrameKind::Credit, bytes, 0)));
        }
    }

    /// Data for a matched receive at `offset` of the message.
    pub(super) fn receive_piece(&mut self, id: MPI_Request, offset: usize, data: &[u8]) {
        let Some(Request {
            op: Operation::Recv(recv),
            ..
        }) = self.requests.get_mut(id)
        else {
            return;
        };
        let capacity = recv.buf.len();
        if offset < capacity {
            let n = data.len().min(capacity - offset);
            recv.buf.unpack(offset, &data[..n]);
        }
        recv.received = recv.received.saturating_add(data.len());
        self.maybe_finish_receive(id);
    }

    pub(super) fn receive_cut(&mut self, id: MPI_Request, bytes: usize) {
        if let Some(Request {
            op: Operation::Recv(recv),
            ..
        }) = self.requests.get_mut(id)
        {
            recv.received = recv.received.saturating_add(bytes);
        }
        self.maybe_finish_receive(id);
    }

    fn maybe_finish_receive(&mut self, id: MPI_Request) {
        let Some(req) = self.requests.get_mut(id) else {
            return;
        };
        let Operation::Recv(recv) = &req.op else {
            return;
        };
        let Some(m) = recv.matched else { return };
        if recv.received < m.len {
            return;
        }
        let notice = recv.finish_notice;
        let (bytes, error) = recv.buf.receive_outcome(m.len);
        req.finish(receive_status(m.source, m.tag, bytes, error));
        let settles = req.needs_settling();
        if let Some((sender, send_request)) = notice {
            let frame = control_frame(FrameKind::Finished, send_request, 0);
            self.queue(sender, control(frame));
        }
        if settles {
            self.settle(id);
        }
    }

    /// Looks at the oldest unexpected message `pattern` accepts.
    pub fn iprobe(&self, pattern: &Pattern) -> Option<MPI_Status> {
        self.matcher
            .peek(pattern)
            .map(|(env, m)| receive_status(env.source, env.tag, m.len, MPI_SUCCESS))
    }
}
