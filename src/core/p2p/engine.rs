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
//!   take memory at the receiver.
use std::collections::{HashMap, VecDeque};
use std::os::raw::c_int;

use super::frame::{FrameHeader, FrameKind, FLAG_SYNC, HEADER_LEN};
use super::request::{receive_status, Matched, Operation, RecvOp, Request, SendOp, SendStage};
use super::user_buffer::UserBuffer;
use crate::abi::constants::*;
use crate::abi::types::{MPI_Request, MPI_Status};
use crate::core::error::{MpiError, MpiResult};
use crate::core::handles::{HandleTable, ObjectKind};
use crate::core::matching::{Envelope, Matcher, Pattern};
use crate::transport::endpoints::{Endpoints, SendOutcome};
use crate::transport::ProcessId;

/// Messages up to this size (plus header, and within the transport's frame
/// limit) go eagerly.
pub const EAGER_LIMIT: usize = 64 * 1024;

/// Single-copy offer in an RTS payload: the sender's pid and address.
const SINGLE_COPY_LEN: usize = 16;

/// An unexpected message as the engine keeps it.
pub struct Incoming {
    pub from: ProcessId,
    pub len: usize,
    pub body: IncomingBody,
}

pub enum IncomingBody {
    Eager { data: Vec<u8>, sync_request: Option<u64> },
    Rendezvous { send_request: u64, single_copy: Option<(u32, u64)> },
}

/// A frame waiting to leave for one peer.
enum Outgoing {
    Frame(Vec<u8>),
    /// Data pieces of the send request `send`, for the receive request
    /// `recv` at the peer, from byte `offset` on.
    Stream { send: MPI_Request, recv: u64, offset: usize },
}

pub struct Engine {
    pub requests: HandleTable<Request>,
    matcher: Matcher<MPI_Request, Incoming>,
    /// Per peer, frames that could not leave yet, in order.
    outbox: HashMap<ProcessId, VecDeque<Outgoing>>,
    my_pid: u32,
    /// `process_vm_readv` failed once: do not try it again.
    single_copy_refused: bool,
}

impl Default for Engine {
    fn default() -> Self {
        Engine {
            requests: HandleTable::new(ObjectKind::Request),
            matcher: Matcher::default(),
            outbox: HashMap::new(),
            my_pid: std::process::id(),
            single_copy_refused: false,
        }
    }
}

/// A send as the abi layer describes it.
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
        let len = args.buf.len();
        let dest = args.dest;
        let eager = len + HEADER_LEN <= ep.max_frame(dest).min(EAGER_LIMIT + HEADER_LEN);
        let stage = if !eager {
            SendStage::AwaitingReceiver
        } else if args.synchronous {
            SendStage::AwaitingSyncAck
        } else {
            SendStage::Queued
        };
        let id = self.requests.insert(Request::new(Operation::Send(SendOp {
            buf: args.buf,
            dest,
            stage,
        })));
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
            let offer = match &self.requests.get(id).map(|r| &r.op) {
                Some(Operation::Send(s)) if crate::config::get().shm_single_copy || dest == ep.me() => {
                    s.buf.contiguous_block()
                }
                _ => None,
            };
            let mut frame = vec![0u8; HEADER_LEN + if offer.is_some() { SINGLE_COPY_LEN } else { 0 }];
            header.encode(&mut frame);
            if let Some((addr, _)) = offer {
                frame[HEADER_LEN..HEADER_LEN + 4].copy_from_slice(&self.my_pid.to_le_bytes());
                frame[HEADER_LEN + 8..HEADER_LEN + 16].copy_from_slice(&(addr as u64).to_le_bytes());
            }
            self.enqueue(ep, dest, Outgoing::Frame(frame));
        }
        id
    }

    /// Sends an eager message straight from the user's buffer into the
    /// transport, or copies it into the outbox when the transport is full.
    fn send_eager(&mut self, ep: &mut Endpoints, id: MPI_Request, header: &FrameHeader) {
        let Some(Request { op: Operation::Send(send), .. }) = self.requests.get(id) else {
            return;
        };
        let dest = send.dest;
        let len = send.buf.len();
        let queued_before = self.outbox.get(&dest).is_some_and(|q| !q.is_empty());
        let mut sent = false;
        if !queued_before {
            let outcome = ep.try_send(dest, HEADER_LEN + len, &mut |frame: &mut [u8]| {
                header.encode(frame);
                send.buf.pack(0, &mut frame[HEADER_LEN..]);
            });
            match outcome {
                SendOutcome::Sent => sent = true,
                SendOutcome::NotNow => {}
                SendOutcome::Unreachable(why) => {
                    self.fail_request(id, why);
                    return;
                }
            }
        }
        if !sent {
            let mut frame = vec![0u8; HEADER_LEN + len];
            header.encode(&mut frame);
            send.buf.pack(0, &mut frame[HEADER_LEN..]);
            self.outbox.entry(dest).or_default().push_back(Outgoing::Frame(frame));
        }
        // The data is out of the user's buffer: a standard send is done.
        if header.flags & FLAG_SYNC == 0 {
            self.complete_send(id);
        }
    }

    fn enqueue(&mut self, ep: &mut Endpoints, dest: ProcessId, item: Outgoing) {
        self.outbox.entry(dest).or_default().push_back(item);
        self.flush_peer(ep, dest);
    }

    /// Sends what waits for `dest`, in order, until the transport is full.
    fn flush_peer(&mut self, ep: &mut Endpoints, dest: ProcessId) {
        loop {
            let Some(queue) = self.outbox.get_mut(&dest) else {
                return;
            };
            let Some(front) = queue.front_mut() else {
                self.outbox.remove(&dest);
                return;
            };
            match front {
                Outgoing::Frame(frame) => {
                    let bytes = std::mem::take(frame);
                    match ep.try_send(dest, bytes.len(), &mut |out: &mut [u8]| out.copy_from_slice(&bytes)) {
                        SendOutcome::Sent => {
                            queue.pop_front();
                        }
                        SendOutcome::NotNow => {
                            *frame = bytes;
                            return;
                        }
                        SendOutcome::Unreachable(why) => {
                            log::warn!("dropping a frame to process {dest}: {why}");
                            queue.pop_front();
                        }
                    }
                }
                Outgoing::Stream { send, recv, offset } => {
                    let (send, recv, start) = (*send, *recv, *offset);
                    let Some(Request { op: Operation::Send(op), .. }) = self.requests.get(send) else {
                        queue.pop_front();
                        continue;
                    };
                    let total = op.buf.len();
                    let piece = (ep.max_frame(dest) - HEADER_LEN).min(total - start);
                    let mut header = FrameHeader::control(FrameKind::Data, 0, recv);
                    header.total_len = start as u64;
                    let outcome = ep.try_send(dest, HEADER_LEN + piece, &mut |out: &mut [u8]| {
                        header.encode(out);
                        op.buf.pack(start, &mut out[HEADER_LEN..]);
                    });
                    match outcome {
                        SendOutcome::Sent => {
                            let next = start + piece;
                            if next >= total {
                                queue.pop_front();
                                self.complete_send(send);
                            } else if let Some(Outgoing::Stream { offset, .. }) =
                                self.outbox.get_mut(&dest).and_then(|q| q.front_mut())
                            {
                                *offset = next;
                            }
                        }
                        SendOutcome::NotNow => return,
                        SendOutcome::Unreachable(why) => {
                            self.outbox.get_mut(&dest).map(|q| q.pop_front());
                            self.fail_request(send, why);
                        }
                    }
                }
            }
        }
    }

    fn fail_request(&mut self, id: MPI_Request, why: String) {
        log::debug!("request {id:#x} fails: {why}");
        if let Some(r) = self.requests.get_mut(id) {
            r.fail(MpiError::new(MPI_ERR_OTHER, why));
        }
    }

    fn complete_send(&mut self, id: MPI_Request) {
        if let Some(r) = self.requests.get_mut(id) {
            r.finish(MPI_Status::default());
            if r.freed {
                self.requests.remove(id);
            }
        }
    }

    /// Starts a receive; returns its request.
    pub fn irecv(&mut self, ep: &mut Endpoints, buf: UserBuffer, pattern: Pattern) -> MPI_Request {
        let id = self.requests.insert(Request::new(Operation::Recv(RecvOp {
            buf,
            pattern,
            matched: None,
            received: 0,
        })));
        if let Some((env, incoming)) = self.matcher.post(pattern, id) {
            self.deliver(ep, id, env, incoming, None);
        }
        id
    }

    /// A matched message meets its receive. `direct` is an eager message's
    /// data still in the transport's frame (no intermediate copy).
    fn deliver(&mut self, ep: &mut Endpoints, id: MPI_Request, env: Envelope, incoming: Incoming, direct: Option<&[u8]>) {
        let Some(Request { op: Operation::Recv(recv), .. }) = self.requests.get_mut(id) else {
            return;
        };
        recv.matched = Some(Matched {
            source: env.source,
            tag: env.tag,
            len: incoming.len,
        });
        match incoming.body {
            IncomingBody::Eager { data, sync_request } => {
                if let Some(sender) = sync_request {
                    let frame = control_frame(FrameKind::SyncAck, sender, 0);
                    self.enqueue(ep, incoming.from, Outgoing::Frame(frame));
                }
                self.receive_piece(id, 0, direct.unwrap_or(&data));
            }
            IncomingBody::Rendezvous { send_request, single_copy } => {
                if let Some((pid, addr)) = single_copy {
                    if self.single_copy(id, pid, addr) {
                        let frame = control_frame(FrameKind::Finished, send_request, 0);
                        self.enqueue(ep, incoming.from, Outgoing::Frame(frame));
                        return;
                    }
                }
                let frame = control_frame(FrameKind::ClearToSend, send_request, id as u32 as u64);
                self.enqueue(ep, incoming.from, Outgoing::Frame(frame));
            }
        }
    }

    /// Copies the sender's data directly: a memcpy within this process,
    /// `process_vm_readv` from another (when the kernel allows it). Returns
    /// whether it was done; if not, the data comes by CTS and streaming.
    fn single_copy(&mut self, id: MPI_Request, pid: u32, addr: u64) -> bool {
        let Some(Request { op: Operation::Recv(recv), .. }) = self.requests.get(id) else {
            return false;
        };
        let Some(m) = recv.matched else { return false };
        let n = m.len.min(recv.buf.len());
        let data = if pid == self.my_pid {
            // SAFETY: the sender's buffer lives in this process and stays
            // valid until its send completes, which needs our FIN.
            let source = unsafe { std::slice::from_raw_parts(addr as usize as *const u8, n) };
            source.to_vec()
        } else {
            if self.single_copy_refused {
                return false;
            }
            let direct = recv.buf.with_contiguous_mut(|dst| {
                crate::transport::shm::single_copy::read_remote(pid as i32, addr as usize, &mut dst[..n])
            });
            match direct {
                Some(Ok(got)) if got == n => {
                    self.receive_cut(id, n);
                    if m.len > n {
                        self.receive_cut(id, m.len - n);
                    }
                    return true;
                }
                Some(Ok(_)) | Some(Err(_)) => {
                    log::debug!("single copy from process {pid} refused; using the pipelined copy");
                    self.single_copy_refused = true;
                    return false;
                }
                None => {
                    let mut tmp = vec![0u8; n];
                    match crate::transport::shm::single_copy::read_remote(pid as i32, addr as usize, &mut tmp) {
                        Ok(got) if got == n => tmp,
                        _ => {
                            self.single_copy_refused = true;
                            return false;
                        }
                    }
                }
            }
        };
        self.receive_piece(id, 0, &data);
        // Account for a truncated remainder.
        if m.len > n {
            self.receive_cut(id, m.len - n);
        }
        true
    }

    /// Data for a matched receive at `offset` of the message.
    fn receive_piece(&mut self, id: MPI_Request, offset: usize, data: &[u8]) {
        let Some(Request { op: Operation::Recv(recv), .. }) = self.requests.get_mut(id) else {
            return;
        };
        let capacity = recv.buf.len();
        if offset < capacity {
            let n = data.len().min(capacity - offset);
            recv.buf.unpack(offset, &data[..n]);
        }
        recv.received += data.len();
        self.maybe_finish_receive(id);
    }

    fn receive_cut(&mut self, id: MPI_Request, bytes: usize) {
        if let Some(Request { op: Operation::Recv(recv), .. }) = self.requests.get_mut(id) {
            recv.received += bytes;
        }
        self.maybe_finish_receive(id);
    }

    fn maybe_finish_receive(&mut self, id: MPI_Request) {
        let Some(req) = self.requests.get_mut(id) else { return };
        let Operation::Recv(recv) = &req.op else { return };
        let Some(m) = recv.matched else { return };
        if recv.received < m.len {
            return;
        }
        let capacity = recv.buf.len();
        let (bytes, error) = if m.len > capacity {
            (capacity, MPI_ERR_TRUNCATE)
        } else {
            (m.len, MPI_SUCCESS)
        };
        req.finish(receive_status(m.source, m.tag, bytes, error));
        if req.freed {
            self.requests.remove(id);
        }
    }

    /// One frame from `from`.
    fn on_frame(&mut self, ep: &mut Endpoints, from: ProcessId, frame: &[u8]) {
        let Some(header) = FrameHeader::decode(frame) else {
            log::error!("malformed frame from process {from} dropped ({} bytes)", frame.len());
            return;
        };
        let payload = &frame[HEADER_LEN..];
        let env = Envelope {
            context_id: header.context_id,
            source: header.source,
            tag: header.tag,
        };
        match header.kind {
            FrameKind::Eager => {
                let sync_request = (header.flags & FLAG_SYNC != 0).then_some(header.id_a);
                let incoming = Incoming {
                    from,
                    len: payload.len(),
                    body: IncomingBody::Eager {
                        data: Vec::new(),
                        sync_request,
                    },
                };
                match self.matcher.match_posted(&env) {
                    Some(id) => self.deliver(ep, id, env, incoming, Some(payload)),
                    None => {
                        let incoming = Incoming {
                            body: IncomingBody::Eager {
                                data: payload.to_vec(),
                                sync_request,
                            },
                            ..incoming
                        };
                        self.matcher.push_unexpected(env, incoming);
                    }
                }
            }
            FrameKind::RequestToSend => {
                let single_copy = (payload.len() >= SINGLE_COPY_LEN).then(|| {
                    let pid = u32::from_le_bytes(payload[0..4].try_into().expect("4 bytes"));
                    let addr = u64::from_le_bytes(payload[8..16].try_into().expect("8 bytes"));
                    (pid, addr)
                });
                let incoming = Incoming {
                    from,
                    len: header.total_len as usize,
                    body: IncomingBody::Rendezvous {
                        send_request: header.id_a,
                        single_copy,
                    },
                };
                match self.matcher.match_posted(&env) {
                    Some(id) => self.deliver(ep, id, env, incoming, None),
                    None => self.matcher.push_unexpected(env, incoming),
                }
            }
            FrameKind::ClearToSend => {
                let send = header.id_a as u32 as c_int;
                if let Some(Request { op: Operation::Send(op), .. }) = self.requests.get_mut(send) {
                    op.stage = SendStage::Streaming;
                    self.enqueue(
                        ep,
                        from,
                        Outgoing::Stream {
                            send,
                            recv: header.id_b,
                            offset: 0,
                        },
                    );
                }
            }
            FrameKind::Data => {
                self.receive_piece(header.id_b as u32 as c_int, header.total_len as usize, payload);
            }
            FrameKind::Finished | FrameKind::SyncAck => self.complete_send(header.id_a as u32 as c_int),
        }
    }

    /// Moves everything that can move: arrived frames, then waiting sends.
    /// Returns whether anything happened.
    pub fn progress(&mut self, ep: &mut Endpoints) -> bool {
        let mut arrived: Vec<(ProcessId, Vec<u8>)> = Vec::new();
        let mut n = 0;
        // Frames are handled after the poll returns so that handling may
        // send (CTS, acknowledgements) through the same endpoints.
        n += ep.poll(&mut |from, frame| arrived.push((from, frame.to_vec())));
        for (from, frame) in arrived {
            self.on_frame(ep, from, &frame);
        }
        let peers: Vec<ProcessId> = self.outbox.keys().copied().collect();
        for peer in peers {
            self.flush_peer(ep, peer);
        }
        n > 0
    }

    /// The status of a completed request, removing it (the handle becomes
    /// `MPI_REQUEST_NULL`); `None` while it is still in flight.
    pub fn take_completed(&mut self, id: MPI_Request) -> MpiResult<Option<MPI_Status>> {
        let req = self.requests.get(id).ok_or_else(|| invalid_request(id))?;
        if !req.complete {
            return Ok(None);
        }
        let status = req.status;
        self.requests.remove(id);
        Ok(Some(status))
    }

    /// Looks at the oldest unexpected message `pattern` accepts.
    pub fn iprobe(&self, pattern: &Pattern) -> Option<MPI_Status> {
        self.matcher
            .peek(pattern)
            .map(|(env, m)| receive_status(env.source, env.tag, m.len, MPI_SUCCESS))
    }

    /// `MPI_Cancel` of a receive that has not matched yet.
    pub fn cancel(&mut self, id: MPI_Request) -> MpiResult {
        let req = self.requests.get_mut(id).ok_or_else(|| invalid_request(id))?;
        if let Operation::Recv(recv) = &req.op {
            if recv.matched.is_none() && self.matcher.cancel(id) {
                let mut status = receive_status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
                status.set_cancelled(true);
                req.finish(status);
            }
        }
        Ok(())
    }

    /// `MPI_Request_free`: the operation goes on; the handle is gone.
    pub fn free(&mut self, id: MPI_Request) -> MpiResult {
        let req = self.requests.get_mut(id).ok_or_else(|| invalid_request(id))?;
        if req.complete {
            self.requests.remove(id);
        } else {
            req.freed = true;
        }
        Ok(())
    }

    /// Whether a request is complete (without removing it).
    pub fn is_complete(&self, id: MPI_Request) -> MpiResult<bool> {
        Ok(self.requests.get(id).ok_or_else(|| invalid_request(id))?.complete)
    }

    /// The end of `epoch`: drops queued messages and posted receives of its
    /// communicators (a correct program left none); returns how many
    /// messages went. Messages of later epochs stay.
    pub fn end_epoch(&mut self, epoch: u64) -> usize {
        self.matcher
            .purge(|cid| crate::core::runtime::epoch_of_context(cid) <= epoch)
    }

    /// A request that is complete from the start (`MPI_PROC_NULL`).
    pub fn completed_null(&mut self) -> MPI_Request {
        self.requests.insert(Request::completed_null())
    }
}

fn control_frame(kind: FrameKind, id_a: u64, id_b: u64) -> Vec<u8> {
    let mut frame = vec![0u8; HEADER_LEN];
    FrameHeader::control(kind, id_a, id_b).encode(&mut frame);
    frame
}

pub fn invalid_request(id: MPI_Request) -> MpiError {
    MpiError::new(
        MPI_ERR_REQUEST,
        format!("handle {:#010x} is not an active request", id as u32),
    )
}
