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

use std::os::raw::c_int;

use super::bsend::AttachedBuffer;
use super::frame::{FrameHeader, FrameKind, FLAG_SYNC, HEADER_LEN};
use super::generalized::Generalized;
use super::outbox::Outbox;
use super::receive_lane::Lane;
use super::request::{
    cancelled_status, empty_status, receive_status, Matched, Operation, RecvOp, Request, SendOp,
    SendStage,
};
use super::user_buffer::UserBuffer;
use crate::core::error::{MpiError, MpiResult};
use crate::core::handles::{HandleTable, ObjectKind};
use crate::core::matching::{Envelope, Matcher, Pattern};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Request, MPI_Status};
pub use crate::transport::endpoints::Endpoints;
use crate::transport::endpoints::SendOutcome;
use crate::transport::{Placement, ProcessId, Sink};

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
    Eager {
        data: Vec<u8>,
        sync_request: Option<u64>,
    },
    Rendezvous {
        send_request: u64,
        single_copy: Option<(u32, u64)>,
    },
}

/// A frame waiting to leave for one peer.
enum Outgoing {
    /// `owner`: the send whose first frame this is (it can still be
    /// cancelled), or `MPI_REQUEST_NULL`. An owner is always a live request.
    Frame { bytes: Vec<u8>, owner: MPI_Request },
    /// Data pieces of the send request `send`, for the receive request
    /// `recv` at the peer, from byte `offset` on.
    /// `completes`: the send is done when the last piece left (else the
    /// receiver's `Finished` completes it: a shared copy's fallback).
    Stream {
        send: MPI_Request,
        recv: u64,
        offset: usize,
        completes: bool,
    },
}

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
}

/// The receiver's half of a shared copy, waiting for its turn.
struct OwnShare {
    id: MPI_Request,
    pid: u32,
    addr: u64,
    len: usize,
}

/// The sender's half of a shared copy: bytes `from..` of send `send` go to
/// address `addr` (where the receive buffer starts) in process `pid`,
/// which receives them as receive `recv` of process `receiver`.
struct OwnWrite {
    receiver: ProcessId,
    send: MPI_Request,
    recv: u64,
    from: usize,
    pid: u32,
    addr: u64,
}

/// Frames sent in one batch at most (see `send_front_frames`).
const MAX_BATCH: usize = 64;

/// Messages from this size on are offered single copy (`process_vm_readv`)
/// through shared memory; smaller rendezvous messages (above a ring cell)
/// stream through the rings (the receiver's CTS, then data pieces), both
/// processes copying at once. Pinning the pages of the other process costs
/// about as much as copying them (page walks are dear in a VM). Measured
/// on this project's VM, where the two virtual CPUs are sometimes close
/// (sharing caches) and sometimes far: close, 16 KiB ping-pong takes
/// 2-2.7 us through the rings against 6.3-8 us with single copy, and
/// 32 KiB streaming runs at 14.7 against 6.6 GB/s; far, ping-pong is the
/// same and 32 KiB streaming 3.5-4.9 against 4.9-5.7 GB/s. At 64 KiB and
/// more, far placements make the rings' two copies clearly slower (about
/// 4 GB/s against 9 for the shared single copy), so single copy stays.
const SINGLE_COPY_MIN: usize = 64 * 1024;

/// Messages from this size on are copied by both processes (shared copy)
/// when each has a core.
const SHARE_MIN: usize = 64 * 1024;
/// The receiver's share ends on a multiple of this.
const SHARE_ALIGN: usize = 4096;

impl Default for Engine {
    fn default() -> Self {
        Engine {
            requests: HandleTable::new(ObjectKind::Request),
            matcher: Matcher::default(),
            outbox: Outbox::default(),
            my_pid: std::process::id(),
            single_copy_refused: false,
            own_shares: Vec::new(),
            own_writes: Vec::new(),
            polling_grequests: false,
            attached: None,
            lane: None,
        }
    }
}

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
        if len > EAGER_LIMIT || self.outbox.has_queued(dest) {
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
        if let Some(sent) = ep.try_send_shm(dest, frame_len, shm_fill) {
            return sent;
        }
        let mut fill = |frame: &mut [u8]| {
            header.encode(frame);
            body(&mut frame[HEADER_LEN..HEADER_LEN + len]);
        };
        frame_len <= ep.max_frame(dest)
            && ep.try_send(dest, frame_len, &mut fill) == SendOutcome::Sent
    }

    /// Starts a send on the existing request `id` (new, or persistent).
    pub(super) fn launch_send(&mut self, ep: &mut Endpoints, id: MPI_Request, args: SendArgs) {
        let len = args.buf.len();
        let dest = args.dest;
        // Messages to oneself always go eagerly (copied), so a blocking send
        // to oneself before the receive is posted never waits (as in MPICH).
        let eager =
            dest == ep.me() || len + HEADER_LEN <= ep.max_frame(dest).min(EAGER_LIMIT + HEADER_LEN);
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
            let offer = match &self.requests.get(id).map(|r| &r.op) {
                // The receiver reads the data by process id: only a process
                // on this node (through shm) may be offered that.
                Some(Operation::Send(s))
                    if (len >= SINGLE_COPY_MIN
                        && crate::config::get().shm_single_copy
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
    /// transport, or copies it into the outbox when the transport is full.
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
            self.outbox.push(
                dest,
                Outgoing::Frame {
                    bytes: frame,
                    owner: id,
                },
            );
            if let Some(r) = self.requests.get_mut(id) {
                r.queued_frame = true;
            }
        }
        // A standard send is done once its frame is in the transport (a
        // ring cell or the kernel's socket buffer): from there it reaches
        // the peer without this process calling MPI again, as with MPICH,
        // so a program may block outside MPI after `MPI_Send` (or the wait
        // of an `MPI_Isend`) until the peer reacts. A frame that had to be
        // queued completes its send when it leaves the outbox (see
        // `frame_left`).
        if sent && header.flags & FLAG_SYNC == 0 {
            self.complete_send(id);
        }
    }

    /// Queues a frame for `dest` without sending it yet.
    fn queue(&mut self, dest: ProcessId, item: Outgoing) {
        self.outbox.push(dest, item);
    }

    /// Sends what waits for every peer, until each transport is full.
    pub(super) fn flush_all(&mut self, ep: &mut Endpoints) {
        let mut i = 0;
        while let Some(peer) = self.outbox.waiting_peer(i) {
            self.flush_peer(ep, peer);
            if !self.outbox.prune(i) {
                i += 1;
            }
        }
    }

    fn enqueue(&mut self, ep: &mut Endpoints, dest: ProcessId, item: Outgoing) {
        self.outbox.push(dest, item);
        self.flush_peer(ep, dest);
    }

    /// Queues the first frame of send `owner` (cancellable until it leaves).
    fn enqueue_owned(
        &mut self,
        ep: &mut Endpoints,
        dest: ProcessId,
        bytes: Vec<u8>,
        owner: MPI_Request,
    ) {
        if let Some(r) = self.requests.get_mut(owner) {
            r.queued_frame = true;
        }
        self.enqueue(ep, dest, Outgoing::Frame { bytes, owner });
    }

    /// A frame of `owner` left the outbox: handed to the transport
    /// (`sent`), or dropped. An eager standard send completes when its
    /// frame is handed over (see `send_eager`).
    fn frame_left(&mut self, owner: MPI_Request, sent: bool) {
        if owner == MPI_REQUEST_NULL {
            return;
        }
        let Some(r) = self.requests.get_mut(owner) else {
            return;
        };
        r.queued_frame = false;
        let eager_out = sent
            && !r.complete
            && matches!(
                r.op,
                Operation::Send(SendOp {
                    stage: SendStage::Queued,
                    ..
                })
            );
        if eager_out {
            self.complete_send(owner);
        }
    }

    /// Takes the queued first frame of send `id` back out of the outbox;
    /// false if it has left already.
    fn withdraw_frame(&mut self, id: MPI_Request) -> bool {
        for queue in self.outbox.waiting_queues_mut() {
            let found = queue
                .iter()
                .position(|o| matches!(o, Outgoing::Frame { owner, .. } if *owner == id));
            if let Some(i) = found {
                queue.remove(i);
                if let Some(r) = self.requests.get_mut(id) {
                    r.queued_frame = false;
                }
                return true;
            }
        }
        false
    }

    /// Removes a request from the table (see [`Engine::disown_frames`]).
    pub(super) fn remove_request(&mut self, id: MPI_Request) -> Option<Request> {
        self.disown_frames(id);
        self.requests.remove(id)
    }

    /// As [`Engine::remove_request`] when the request itself is not needed
    /// (it is dropped where it lies).
    fn drop_request(&mut self, id: MPI_Request) {
        self.disown_frames(id);
        self.requests.discard(id);
    }

    /// The operation of request `id` is over for the program (its request
    /// goes, or a persistent one becomes inactive): a frame of it still
    /// queued loses its owner, so it goes out but can no longer be
    /// cancelled, and a later activation's frame is the only one `id` owns.
    fn disown_frames(&mut self, id: MPI_Request) {
        let Some(req) = self.requests.get_mut(id) else {
            return;
        };
        if !std::mem::take(&mut req.queued_frame) {
            return;
        }
        for queue in self.outbox.waiting_queues_mut() {
            for item in queue.iter_mut() {
                if let Outgoing::Frame { owner, .. } = item {
                    if *owner == id {
                        *owner = MPI_REQUEST_NULL;
                    }
                }
            }
        }
    }

    /// Sends what waits for `dest`, in order, until the transport is full.
    fn flush_peer(&mut self, ep: &mut Endpoints, dest: ProcessId) {
        loop {
            if self.send_front_frames(ep, dest) > 0 {
                continue;
            }
            let Some(queue) = self.outbox.queue_mut(dest) else {
                return;
            };
            let Some(front) = queue.front_mut() else {
                return;
            };
            match front {
                Outgoing::Frame {
                    bytes: frame,
                    owner,
                } => {
                    let owner = *owner;
                    let bytes = std::mem::take(frame);
                    match ep.try_send(dest, bytes.len(), &mut |out: &mut [u8]| {
                        out.copy_from_slice(&bytes)
                    }) {
                        SendOutcome::Sent => {
                            queue.pop_front();
                            self.frame_left(owner, true);
                        }
                        SendOutcome::NotNow => {
                            *frame = bytes;
                            return;
                        }
                        SendOutcome::Unreachable(why) => {
                            log::warn!("dropping a frame to process {dest}: {why}");
                            queue.pop_front();
                            self.frame_left(owner, false);
                            if owner != MPI_REQUEST_NULL
                                && self.requests.get(owner).is_some_and(|r| !r.complete)
                            {
                                self.fail_request(owner, why);
                            }
                        }
                    }
                }
                Outgoing::Stream {
                    send,
                    recv,
                    offset,
                    completes,
                } => {
                    let (send, recv, start, completes) = (*send, *recv, *offset, *completes);
                    let Some(Request {
                        op: Operation::Send(op),
                        ..
                    }) = self.requests.get(send)
                    else {
                        queue.pop_front();
                        continue;
                    };
                    let total = op.buf.len();
                    let piece = (ep.max_frame(dest) - HEADER_LEN).min(total - start);
                    let mut header = FrameHeader::control(FrameKind::Data, 0, recv);
                    header.total_len = start as u64;
                    let outcome = match op.buf.contiguous_bytes(start, piece) {
                        // One block: the transport takes the piece from
                        // where it lies (a stream transport writes it to
                        // the kernel directly).
                        Some(body) => {
                            let mut head = [0u8; HEADER_LEN];
                            header.encode(&mut head);
                            ep.try_send_parts(dest, &head, body)
                        }
                        None => ep.try_send(dest, HEADER_LEN + piece, &mut |out: &mut [u8]| {
                            header.encode(out);
                            op.buf.pack(start, &mut out[HEADER_LEN..]);
                        }),
                    };
                    match outcome {
                        SendOutcome::Sent => {
                            let next = start + piece;
                            if next >= total {
                                queue.pop_front();
                                if completes {
                                    self.complete_send(send);
                                }
                            } else if let Some(Outgoing::Stream { offset, .. }) =
                                self.outbox.queue_mut(dest).and_then(|q| q.front_mut())
                            {
                                *offset = next;
                            }
                        }
                        SendOutcome::NotNow => return,
                        SendOutcome::Unreachable(why) => {
                            self.outbox.queue_mut(dest).map(|q| q.pop_front());
                            self.fail_request(send, why);
                        }
                    }
                }
            }
        }
    }

    /// Sends the whole frames at the front of `dest`'s queue as one batch
    /// when there are several (shared memory packs them into one cell);
    /// returns how many left. 0: none did, and the one-by-one path below
    /// finds out why (full, or unreachable).
    fn send_front_frames(&mut self, ep: &mut Endpoints, dest: ProcessId) -> usize {
        let Some(queue) = self.outbox.queue_mut(dest) else {
            return 0;
        };
        let mut frames: [&[u8]; MAX_BATCH] = [&[]; MAX_BATCH];
        let mut n = 0;
        for item in queue.iter().take(MAX_BATCH) {
            let Outgoing::Frame { bytes, .. } = item else {
                break;
            };
            frames[n] = bytes;
            n += 1;
        }
        if n < 2 {
            return 0;
        }
        let sent = ep.try_send_batch(dest, &frames[..n]);
        let mut owners = [MPI_REQUEST_NULL; MAX_BATCH];
        for owner in owners.iter_mut().take(sent) {
            if let Some(Outgoing::Frame { owner: o, .. }) = queue.pop_front() {
                *owner = o;
            }
        }
        for &owner in &owners[..sent] {
            self.frame_left(owner, true);
        }
        sent
    }

    fn fail_request(&mut self, id: MPI_Request, why: String) {
        log::debug!("request {id:#x} fails: {why}");
        if let Some(r) = self.requests.get_mut(id) {
            r.fail(MpiError::new(MPI_ERR_OTHER, why));
            self.settle(id);
        }
    }

    fn complete_send(&mut self, id: MPI_Request) {
        if let Some(r) = self.requests.get_mut(id) {
            r.finish(MPI_Status::default());
            self.settle(id);
        }
    }

    /// After request `id` completed in the engine: a buffered send gives
    /// its space back and goes, a part of an `MPI_Isendrecv` tells its
    /// request, a request whose handle was freed goes.
    pub(super) fn settle(&mut self, id: MPI_Request) {
        let Some(req) = self.requests.get(id) else {
            return;
        };
        if !req.complete {
            return;
        }
        if let Some(offset) = req.bsend_offset {
            if let Some(buffer) = &mut self.attached {
                buffer.release(offset);
            }
            self.drop_request(id);
        } else if req.parent != MPI_REQUEST_NULL {
            let parent = req.parent;
            self.settle_sendrecv(parent);
        } else if req.freed {
            self.drop_request(id);
        }
    }

    /// Starts a receive; returns its request.
    pub fn irecv(&mut self, ep: &mut Endpoints, buf: UserBuffer, pattern: Pattern) -> MPI_Request {
        let id = self.requests.insert(Request::new(Operation::Done));
        self.launch_recv(ep, id, buf, pattern);
        id
    }

    /// Starts a receive on the existing request `id` (new, or persistent).
    pub(super) fn launch_recv(
        &mut self,
        ep: &mut Endpoints,
        id: MPI_Request,
        buf: UserBuffer,
        pattern: Pattern,
    ) {
        let Some(req) = self.requests.get_mut(id) else {
            return;
        };
        req.op = Operation::Recv(RecvOp {
            buf,
            pattern,
            matched: None,
            received: 0,
            finish_notice: None,
        });
        req.complete = false;
        req.error = None;
        req.status = MPI_Status::default();
        if let Some((env, incoming)) = self.matcher.post(pattern, id) {
            self.deliver(id, env, incoming, None);
            self.flush_replies(ep);
        }
    }

    /// A matched message meets its receive. `direct` is an eager message's
    /// data still in the transport's frame (no intermediate copy).
    /// Replies it needs (acknowledgement, CTS, FIN) are queued; the caller
    /// flushes them (`flush_all`), or the next progress does.
    pub(super) fn deliver(
        &mut self,
        id: MPI_Request,
        env: Envelope,
        incoming: Incoming,
        direct: Option<&[u8]>,
    ) {
        let Some(Request {
            op: Operation::Recv(recv),
            ..
        }) = self.requests.get_mut(id)
        else {
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
                    self.acknowledge_sync(incoming.from, sender);
                }
                self.receive_piece(id, 0, direct.unwrap_or(&data));
            }
            IncomingBody::Rendezvous {
                send_request,
                single_copy,
            } => {
                if let Some((pid, addr)) = single_copy {
                    if self.share_copy(id, incoming.from, send_request, pid, addr) {
                        return;
                    }
                    if self.single_copy(id, pid, addr) {
                        let frame = control_frame(FrameKind::Finished, send_request, 0);
                        self.queue(incoming.from, control(frame));
                        return;
                    }
                }
                let frame = control_frame(FrameKind::ClearToSend, send_request, id as u32 as u64);
                self.queue(incoming.from, control(frame));
            }
        }
    }

    /// Queues the acknowledgement that tells a synchronous send's `sender`
    /// (its request at `from`) that its message matched.
    pub(super) fn acknowledge_sync(&mut self, from: ProcessId, sender: u64) {
        let frame = control_frame(FrameKind::SyncAck, sender, 0);
        self.queue(from, control(frame));
    }

    /// Sends the replies that matches and frames queued, then does the
    /// receiver's half of the shared copies they started (after their
    /// `ShareCopy` left, so the sender copies at the same time).
    #[inline(always)]
    pub(super) fn flush_replies(&mut self, ep: &mut Endpoints) {
        if !self.outbox.is_idle() || !self.own_shares.is_empty() || !self.own_writes.is_empty() {
            self.flush_waiting(ep);
        }
    }

    /// [`Engine::flush_replies`] when something waits. The halves of
    /// shared copies go in batches, one system call per peer for all the
    /// halves that came in the same poll (a call costs about as much as
    /// copying 16 KiB, whatever its size).
    #[inline(never)]
    fn flush_waiting(&mut self, ep: &mut Endpoints) {
        if !self.own_writes.is_empty() {
            let writes = std::mem::take(&mut self.own_writes);
            for group in writes.chunk_by(|a, b| a.pid == b.pid) {
                self.write_shares(group);
            }
        }
        self.flush_all(ep);
        if self.own_shares.is_empty() {
            return;
        }
        let shares = std::mem::take(&mut self.own_shares);
        for group in shares.chunk_by(|a, b| a.pid == b.pid) {
            let whole = self.copy_own_shares(group);
            for share in &group[whole..] {
                self.copy_own_share(share);
            }
        }
        self.flush_all(ep);
    }

    /// The receiver's halves of shared copies from one process, read in
    /// one go; returns how many leading ones were read whole (and their
    /// receives advanced).
    fn copy_own_shares(&mut self, group: &[OwnShare]) -> usize {
        let Some(first) = group.first() else {
            return 0;
        };
        let mut places = Vec::with_capacity(group.len());
        for share in group {
            match self.requests.get(share.id) {
                Some(Request {
                    op: Operation::Recv(recv),
                    ..
                }) => match recv.buf.placement(0, share.len) {
                    Some(place) => places.push((share.addr as usize, place)),
                    None => break,
                },
                _ => break,
            }
        }
        let mut parts: Vec<(usize, &mut [u8])> = places
            .iter_mut()
            .map(|(addr, place)| (*addr, place.as_mut_slice()))
            .collect();
        let whole =
            crate::transport::shm::single_copy::read_remote_parts(first.pid as i32, &mut parts);
        drop(places);
        for share in &group[..whole] {
            self.receive_cut(share.id, share.len);
        }
        whole
    }

    /// Starts a shared copy of a large single-copy message when both
    /// processes have a core of their own: the receiver copies the first
    /// half, the sender writes the second half into the receiver's buffer
    /// (`process_vm_writev`) at the same time, which about doubles the
    /// bandwidth of one copy. Returns false (nothing done) when not
    /// applicable; the caller then copies alone.
    fn share_copy(
        &mut self,
        id: MPI_Request,
        sender: ProcessId,
        send_request: u64,
        pid: u32,
        addr: u64,
    ) -> bool {
        let wanted = crate::config::get()
            .shm_shared_copy
            .unwrap_or_else(crate::core::progress::has_own_core);
        if !wanted || pid == self.my_pid || self.single_copy_refused {
            return false;
        }
        let Some(Request {
            op: Operation::Recv(recv),
            ..
        }) = self.requests.get_mut(id)
        else {
            return false;
        };
        let Some(m) = recv.matched else { return false };
        let Some((start, capacity)) = recv.buf.contiguous_block() else {
            return false;
        };
        if m.len < SHARE_MIN || capacity < m.len {
            return false;
        }
        // The receiver's share: the first half, rounded down to a page.
        let mine = (m.len / 2) & !(SHARE_ALIGN - 1);
        recv.finish_notice = Some((sender, send_request));
        let mut frame = vec![0u8; HEADER_LEN + SINGLE_COPY_LEN];
        let mut header = FrameHeader::control(FrameKind::ShareCopy, send_request, id as u32 as u64);
        header.total_len = mine as u64;
        header.encode(&mut frame);
        frame[HEADER_LEN..HEADER_LEN + 4].copy_from_slice(&self.my_pid.to_le_bytes());
        frame[HEADER_LEN + 8..HEADER_LEN + 16].copy_from_slice(&(start as u64).to_le_bytes());
        self.queue(sender, control(frame));
        self.own_shares.push(OwnShare {
            id,
            pid,
            addr,
            len: mine,
        });
        true
    }

    /// The receiver's half of a shared copy.
    fn copy_own_share(&mut self, share: &OwnShare) {
        let Some(Request {
            op: Operation::Recv(recv),
            ..
        }) = self.requests.get(share.id)
        else {
            return;
        };
        let copied = recv.buf.with_contiguous_mut(|dst| {
            crate::transport::shm::single_copy::read_remote(
                share.pid as i32,
                share.addr as usize,
                &mut dst[..share.len],
            )
        });
        match copied {
            Some(Ok(n)) if n == share.len => self.receive_cut(share.id, share.len),
            other => {
                // The first single copy between this pair worked, so this
                // should not happen; the receive fails rather than hang, and
                // the sender is still told (the notice goes at completion).
                let why = format!("shared copy from process {}: {other:?}", share.pid);
                log::warn!("{why}");
                self.fail_receive_with_notice(share.id, why);
            }
        }
    }

    /// Fails a receive whose sender waits for `Finished`, telling it.
    fn fail_receive_with_notice(&mut self, id: MPI_Request, why: String) {
        if let Some(Request {
            op:
                Operation::Recv(RecvOp {
                    finish_notice: Some((sender, send_request)),
                    ..
                }),
            ..
        }) = self.requests.get(id)
        {
            let frame = control_frame(FrameKind::Finished, *send_request, 0);
            self.queue(*sender, control(frame));
        }
        self.fail_request(id, why);
    }

    /// The sender's half of a shared copy (`ShareCopy` from the receiver):
    /// bytes `[from, len)` of the message go into the receiver's buffer at
    /// the next flush (see [`Engine::write_shares`]). The send completes
    /// when the receiver says `Finished`.
    fn ask_share(&mut self, receiver: ProcessId, header: &FrameHeader, payload: &[u8]) {
        if payload.len() < SINGLE_COPY_LEN {
            return;
        }
        self.own_writes.push(OwnWrite {
            receiver,
            send: header.id_a as u32 as c_int,
            recv: header.id_b,
            from: header.total_len as usize,
            pid: u32::from_le_bytes(payload[0..4].try_into().expect("4 bytes")),
            addr: u64::from_le_bytes(payload[8..16].try_into().expect("8 bytes")),
        });
    }

    /// The sender's halves of shared copies to one process, written in one
    /// go; those the batch did not write whole go one by one
    /// ([`Engine::write_share`]).
    fn write_shares(&mut self, group: &[OwnWrite]) {
        let Some(first) = group.first() else {
            return;
        };
        let mut parts: Vec<(usize, &[u8])> = Vec::with_capacity(group.len());
        let mut lens = Vec::with_capacity(group.len());
        for w in group {
            let Some(mine) = self.share_bytes(w) else {
                break;
            };
            parts.push((w.addr as usize + w.from, mine));
            lens.push(mine.len());
        }
        let whole =
            crate::transport::shm::single_copy::write_remote_parts(first.pid as i32, &parts);
        drop(parts);
        for (w, &n) in group.iter().zip(&lens).take(whole) {
            self.share_done(w, n);
        }
        for w in &group[whole..] {
            self.write_share(w);
        }
    }

    /// One sender half on its own: written into the receiver's buffer, or,
    /// if the kernel refuses, streamed as data pieces.
    fn write_share(&mut self, w: &OwnWrite) {
        if !matches!(
            self.requests.get(w.send),
            Some(Request {
                op: Operation::Send(_),
                ..
            })
        ) {
            return;
        }
        let written = match self.share_bytes(w) {
            Some(mine) => crate::transport::shm::single_copy::write_remote(
                w.pid as i32,
                w.addr as usize + w.from,
                mine,
            )
            .ok()
            .filter(|&n| n == mine.len()),
            None => None,
        };
        match written {
            Some(n) => self.share_done(w, n),
            None => {
                log::debug!(
                    "shared copy to process {} refused; streaming the rest",
                    w.pid
                );
                self.queue(
                    w.receiver,
                    Outgoing::Stream {
                        send: w.send,
                        recv: w.recv,
                        offset: w.from,
                        completes: false,
                    },
                );
            }
        }
    }

    /// The sender's half of a shared copy as it lies in the send buffer,
    /// when the send is still there and its buffer is one block.
    fn share_bytes(&self, w: &OwnWrite) -> Option<&[u8]> {
        let Some(Request {
            op: Operation::Send(op),
            ..
        }) = self.requests.get(w.send)
        else {
            return None;
        };
        let total = op.buf.len();
        op.buf
            .contiguous_bytes(w.from, total.saturating_sub(w.from))
    }

    /// Tells the receiver that the sender's `n` bytes of a shared copy are
    /// in its buffer.
    fn share_done(&mut self, w: &OwnWrite, n: usize) {
        let mut done = FrameHeader::control(FrameKind::ShareDone, 0, w.recv);
        done.total_len = n as u64;
        let mut frame = vec![0u8; HEADER_LEN];
        done.encode(&mut frame);
        self.queue(w.receiver, control(frame));
    }

    /// Copies the sender's data directly: a memcpy within this process,
    /// `process_vm_readv` from another (when the kernel allows it). Returns
    /// whether it was done; if not, the data comes by CTS and streaming.
    fn single_copy(&mut self, id: MPI_Request, pid: u32, addr: u64) -> bool {
        let Some(Request {
            op: Operation::Recv(recv),
            ..
        }) = self.requests.get(id)
        else {
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
                crate::transport::shm::single_copy::read_remote(
                    pid as i32,
                    addr as usize,
                    &mut dst[..n],
                )
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
                    match crate::transport::shm::single_copy::read_remote(
                        pid as i32,
                        addr as usize,
                        &mut tmp,
                    ) {
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
        recv.received += data.len();
        self.maybe_finish_receive(id);
    }

    fn receive_cut(&mut self, id: MPI_Request, bytes: usize) {
        if let Some(Request {
            op: Operation::Recv(recv),
            ..
        }) = self.requests.get_mut(id)
        {
            recv.received += bytes;
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
        let capacity = recv.buf.len();
        let notice = recv.finish_notice;
        let (bytes, error) = if m.len > capacity {
            (capacity, MPI_ERR_TRUNCATE)
        } else {
            (m.len, MPI_SUCCESS)
        };
        req.finish(receive_status(m.source, m.tag, bytes, error));
        if let Some((sender, send_request)) = notice {
            let frame = control_frame(FrameKind::Finished, send_request, 0);
            self.queue(sender, control(frame));
        }
        self.settle(id);
    }

    /// One frame from `from`. The case a blocking receive waits for, an
    /// eager message that no posted receive comes before and that the
    /// receive lane takes, is handled here, compiled into the transport's
    /// poll loop; any other frame goes to [`Engine::on_any_frame`].
    #[inline(always)]
    fn on_frame(&mut self, from: ProcessId, frame: &[u8]) {
        if self.lane.is_some() && !self.matcher.has_posted() {
            if let Some(header) = FrameHeader::decode(frame) {
                if header.kind == FrameKind::Eager && header.flags & FLAG_SYNC == 0 {
                    let env = Envelope {
                        context_id: header.context_id,
                        source: header.source,
                        tag: header.tag,
                    };
                    if self.offer_to_lane(from, &env, None, &frame[HEADER_LEN..]) {
                        return;
                    }
                }
            }
        }
        self.on_any_frame(from, frame);
    }

    /// One frame from `from`.
    /// Handles it in place (an eager message is copied straight from the
    /// transport's cell into the receive buffer); replies are queued.
    #[inline(never)]
    fn on_any_frame(&mut self, from: ProcessId, frame: &[u8]) {
        let Some(header) = FrameHeader::decode(frame) else {
            log::error!(
                "malformed frame from process {from} dropped ({} bytes)",
                frame.len()
            );
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
                    Some(id) => self.deliver(id, env, incoming, Some(payload)),
                    None if self.offer_to_lane(from, &env, sync_request, payload) => {}
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
                    Some(id) => self.deliver(id, env, incoming, None),
                    None => {
                        self.spill_lane(&env);
                        self.matcher.push_unexpected(env, incoming);
                    }
                }
            }
            FrameKind::ClearToSend => {
                let send = header.id_a as u32 as c_int;
                if let Some(Request {
                    op: Operation::Send(op),
                    ..
                }) = self.requests.get_mut(send)
                {
                    op.stage = SendStage::Streaming;
                    self.queue(
                        from,
                        Outgoing::Stream {
                            send,
                            recv: header.id_b,
                            offset: 0,
                            completes: true,
                        },
                    );
                }
            }
            FrameKind::Data => {
                self.receive_piece(
                    header.id_b as u32 as c_int,
                    header.total_len as usize,
                    payload,
                );
            }
            FrameKind::ShareCopy => self.ask_share(from, &header, payload),
            FrameKind::ShareDone => {
                self.receive_cut(header.id_b as u32 as c_int, header.total_len as usize)
            }
            FrameKind::Finished | FrameKind::SyncAck => {
                self.complete_send(header.id_a as u32 as c_int)
            }
        }
    }

    /// Moves everything that can move: arrived frames, then waiting sends.
    /// Returns whether anything happened.
    #[inline]
    pub fn progress(&mut self, ep: &mut Endpoints) -> bool {
        // Frames are handled where they lie in the transport; the replies
        // they cause are queued and leave in the flush below.
        let engine = &mut *self;
        let n = ep.poll(engine);
        self.flush_replies(ep);
        n > 0
    }

    /// The status of a completed request, removing it (the handle becomes
    /// `MPI_REQUEST_NULL`; a persistent request becomes inactive instead);
    /// `None` while it is still in flight.
    pub fn take_completed(&mut self, id: MPI_Request) -> MpiResult<Option<MPI_Status>> {
        if !self.is_complete(id)? {
            return Ok(None);
        }
        Ok(Some(self.take(id)?.status))
    }

    /// Where a request the program named is (checking the handle).
    pub fn state(&self, id: MPI_Request) -> MpiResult<RequestState> {
        let req = self.user_request(id)?;
        Ok(if req.is_inactive() {
            RequestState::Inactive
        } else if req.complete {
            RequestState::Complete
        } else {
            RequestState::Pending
        })
    }

    pub(super) fn user_request(&self, id: MPI_Request) -> MpiResult<&Request> {
        match self.requests.get(id) {
            Some(req) if req.is_user_request() => Ok(req),
            _ => Err(invalid_request(id)),
        }
    }

    /// The outcome of a complete request: removes it, or makes a persistent
    /// one inactive. A generalized request's callbacks come with it, to be
    /// called without the lock ([`Taken::finish`]).
    pub fn take(&mut self, id: MPI_Request) -> MpiResult<Taken> {
        let req = self
            .requests
            .get_mut(id)
            .ok_or_else(|| invalid_request(id))?;
        debug_assert!(req.complete, "take of a request in flight");
        if let Some(p) = &mut req.persistent {
            if !p.active {
                return Ok(Taken::inactive());
            }
            p.active = false;
        }
        let error = req.error.take();
        let mut status = req.status;
        if let Some(e) = &error {
            status.MPI_ERROR = e.class;
        }
        let persists = req.persistent.is_some();
        let generalized = req.generalized.take();
        if persists {
            self.disown_frames(id);
        } else {
            // Dropped in place: a request is large, moving it out costs.
            self.drop_request(id);
        }
        Ok(Taken {
            status,
            error,
            persists,
            generalized,
        })
    }

    /// Looks at the oldest unexpected message `pattern` accepts.
    pub fn iprobe(&self, pattern: &Pattern) -> Option<MPI_Status> {
        self.matcher
            .peek(pattern)
            .map(|(env, m)| receive_status(env.source, env.tag, m.len, MPI_SUCCESS))
    }

    /// `MPI_Cancel`: a receive that has not matched, or a send whose first
    /// frame has not left this process, completes as cancelled; anything
    /// else goes on (and reports not cancelled). Generalized requests are
    /// the caller's ([`Engine::generalized`]).
    pub fn cancel(&mut self, id: MPI_Request) -> MpiResult {
        let req = self.user_request(id)?;
        if req.is_inactive() {
            return Err(MpiError::new(
                MPI_ERR_REQUEST,
                "a persistent request that is not active cannot be cancelled",
            ));
        }
        let unmatched_receive = matches!(&req.op, Operation::Recv(recv) if recv.matched.is_none());
        let queued_send = req.queued_frame;
        if unmatched_receive && self.matcher.cancel(id) {
            if let Some(req) = self.requests.get_mut(id) {
                req.finish(cancelled_status());
            }
            self.settle(id);
        } else if queued_send && self.withdraw_frame(id) {
            // A send whose first frame is still queued has not completed
            // (see `send_eager`).
            if let Some(req) = self.requests.get_mut(id) {
                req.finish(cancelled_status());
                self.settle(id);
            }
        }
        Ok(())
    }

    /// `MPI_Request_free`: the operation goes on; the handle is gone. A
    /// complete generalized request is returned: its free function is due.
    pub fn free_request(&mut self, id: MPI_Request) -> MpiResult<Option<Generalized>> {
        let req = self.user_request(id)?;
        if req.is_inactive() || req.complete {
            return Ok(self
                .remove_request(id)
                .and_then(|r| r.generalized.map(|g| *g)));
        }
        if let Some(req) = self.requests.get_mut(id) {
            req.freed = true;
        }
        Ok(None)
    }

    /// `MPI_Request_free` for requests without callbacks.
    pub fn free(&mut self, id: MPI_Request) -> MpiResult {
        self.free_request(id).map(|_| ())
    }

    /// Whether a request is complete (without removing it).
    pub fn is_complete(&self, id: MPI_Request) -> MpiResult<bool> {
        Ok(self
            .requests
            .get(id)
            .ok_or_else(|| invalid_request(id))?
            .complete)
    }

    /// Whether frames still wait to leave (they must before an epoch ends).
    pub fn has_outgoing(&self) -> bool {
        self.outbox.has_any()
    }

    /// The end of `epoch`: drops queued messages and posted receives of its
    /// communicators (a correct program left none); returns how many
    /// messages went. Messages of later epochs stay.
    pub fn end_epoch(&mut self, epoch: crate::core::epoch::Epoch) -> usize {
        use crate::core::epoch::Epoch;
        self.matcher.purge(|cid| Epoch::of_context(cid) <= epoch)
    }

    /// A request that is complete from the start (`MPI_PROC_NULL`).
    pub fn completed_null(&mut self) -> MPI_Request {
        self.requests.insert(Request::completed_null())
    }

    /// A request that is complete from the start with `status` (a
    /// buffered send).
    pub fn completed(&mut self, status: MPI_Status) -> MPI_Request {
        let mut req = Request::new(Operation::Done);
        req.finish(status);
        self.requests.insert(req)
    }
}

/// Where a request is, as completion calls see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestState {
    /// A persistent request not started (it counts as `MPI_REQUEST_NULL`).
    Inactive,
    Pending,
    Complete,
}

/// A completed request's outcome, taken out of the table.
pub struct Taken {
    pub status: MPI_Status,
    pub error: Option<MpiError>,
    /// The handle stays valid (a persistent request, now inactive).
    pub persists: bool,
    /// A generalized request's callbacks: query and free are still due.
    pub generalized: Option<Box<Generalized>>,
}

impl Taken {
    /// An inactive persistent request: an empty status at once.
    fn inactive() -> Taken {
        Taken {
            status: empty_status(),
            error: None,
            persists: true,
            generalized: None,
        }
    }

    /// The final status and error, after a generalized request's query
    /// and free functions. Call without the runtime lock held.
    pub fn finish(self) -> (MPI_Status, Option<MpiError>) {
        match self.generalized {
            None => (self.status, self.error),
            Some(g) => {
                let (status, error) = g.query();
                let free_error = g.free();
                (status, error.or(free_error))
            }
        }
    }
}

/// Arriving frames: handled in place; a data piece for a receive into one
/// block of memory is placed there directly by a stream transport.
impl Sink for Engine {
    #[inline(always)]
    fn deliver(&mut self, from: ProcessId, frame: &[u8]) {
        self.on_frame(from, frame);
    }

    fn place(&mut self, _from: ProcessId, head: &[u8], len: usize) -> Option<Placement> {
        let header = FrameHeader::decode(head)?;
        if header.kind != FrameKind::Data {
            return None;
        }
        let Some(Request {
            op: Operation::Recv(recv),
            ..
        }) = self.requests.get(header.id_b as u32 as c_int)
        else {
            return None;
        };
        recv.matched?;
        recv.buf
            .placement(header.total_len as usize, len.checked_sub(HEADER_LEN)?)
    }

    fn placed(&mut self, _from: ProcessId, head: &[u8], body_len: usize) {
        if let Some(header) = FrameHeader::decode(head) {
            self.receive_cut(header.id_b as u32 as c_int, body_len);
        }
    }

    /// The receive lane holds its message: `MPI_Recv` returns before any
    /// later frame is looked at (the load of the next cell's stamp, a line
    /// the sender may hold, is off the path from the message to the reply).
    #[inline(always)]
    fn satisfied(&self) -> bool {
        self.lane_received()
    }
}

fn control(frame: Vec<u8>) -> Outgoing {
    Outgoing::Frame {
        bytes: frame,
        owner: MPI_REQUEST_NULL,
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

/// Engines over `self`-only endpoints, for the unit tests of this module
/// and its neighbours. Process 0 is this process; any other process is
/// never reachable (its card is never found), so frames to it stay in the
/// outbox.
#[cfg(test)]
pub(super) mod testing {
    use super::*;
    use crate::core::matching::ANY;

    pub const ME: ProcessId = 0;
    pub const UNREACHABLE: ProcessId = 7;
    pub const CONTEXT: u64 = 42;

    pub fn engine() -> (Engine, Endpoints) {
        (
            Engine::default(),
            Endpoints::new(ME, crate::transport::EpochTag::new(1)),
        )
    }

    /// A send of `data` (which must outlive it) to `dest` with `tag`.
    pub fn send_args(data: &[u8], dest: ProcessId, tag: i32) -> SendArgs {
        SendArgs {
            // SAFETY: the tests keep `data` alive until the send is done.
            buf: unsafe {
                UserBuffer::new(
                    data.as_ptr().cast(),
                    data.len(),
                    super::super::user_buffer::byte_type(),
                )
            },
            dest,
            context_id: CONTEXT,
            source: 0,
            tag,
            synchronous: false,
        }
    }

    /// A receive buffer over `buf` (which must outlive the receive).
    pub fn recv_buf(buf: &mut [u8]) -> UserBuffer {
        // SAFETY: the tests keep `buf` alive until the receive is done.
        unsafe {
            UserBuffer::new(
                buf.as_mut_ptr().cast(),
                buf.len(),
                super::super::user_buffer::byte_type(),
            )
        }
    }

    /// Accepts `tag` (or any tag) from rank 0.
    pub fn pattern(tag: Option<i32>) -> Pattern {
        Pattern {
            context_id: CONTEXT,
            source: 0,
            tag: tag.unwrap_or(ANY),
        }
    }

    /// Progress until nothing moves.
    pub fn settle_down(engine: &mut Engine, ep: &mut Endpoints) {
        while engine.progress(ep) {}
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn a_send_still_in_the_outbox_is_cancelled() {
        let (mut e, mut ep) = engine();
        let data = [1u8; 32];
        // Standard eager, queued (the peer cannot be reached yet): not
        // complete before its frame is handed to the transport.
        let standard = e.isend(&mut ep, send_args(&data, UNREACHABLE, 1));
        assert_eq!(e.state(standard).unwrap(), RequestState::Pending);
        // Synchronous: pending until cancelled.
        let mut args = send_args(&data, UNREACHABLE, 2);
        args.synchronous = true;
        let sync = e.isend(&mut ep, args);
        assert_eq!(e.state(sync).unwrap(), RequestState::Pending);
        assert!(e.has_outgoing());
        e.cancel(sync).unwrap();
        e.cancel(standard).unwrap();
        assert!(!e.has_outgoing(), "both frames were withdrawn");
        for id in [sync, standard] {
            assert_eq!(e.state(id).unwrap(), RequestState::Complete);
            assert!(e.take(id).unwrap().status.cancelled());
        }
    }

    #[test]
    fn a_queued_eager_send_completes_when_its_frame_leaves() {
        let (mut e, mut ep) = engine();
        let first = [1u8; 8];
        let second = [2u8; 8];
        let a = e.isend(&mut ep, send_args(&first, ME, 1));
        assert_eq!(e.state(a).unwrap(), RequestState::Complete, "sent at once");
        // Something queued for the same peer, that later frames wait
        // behind (an acknowledgement for no request: ignored on arrival).
        e.queue(ME, control(control_frame(FrameKind::SyncAck, 0, 0)));
        let b = e.isend(&mut ep, send_args(&second, ME, 2));
        assert_eq!(
            e.state(b).unwrap(),
            RequestState::Pending,
            "its frame waits behind the queued one"
        );
        settle_down(&mut e, &mut ep);
        assert!(!e.has_outgoing());
        assert_eq!(e.state(b).unwrap(), RequestState::Complete, "handed over");
        let mut buf = [0u8; 8];
        let r = e.irecv(&mut ep, recv_buf(&mut buf), pattern(Some(2)));
        settle_down(&mut e, &mut ep);
        assert_eq!(e.state(r).unwrap(), RequestState::Complete);
        assert_eq!(buf, second);
    }

    #[test]
    fn a_send_that_left_is_not_cancelled() {
        let (mut e, mut ep) = engine();
        let data = [9u8; 4];
        let s = e.isend(&mut ep, send_args(&data, ME, 3));
        e.cancel(s).unwrap();
        assert!(!e.take(s).unwrap().status.cancelled());
        let mut buf = [0u8; 4];
        let r = e.irecv(&mut ep, recv_buf(&mut buf), pattern(Some(3)));
        settle_down(&mut e, &mut ep);
        assert_eq!(e.state(r).unwrap(), RequestState::Complete);
        assert_eq!(buf, data);
    }

    #[test]
    fn a_freed_send_leaves_its_frame_without_an_owner() {
        let (mut e, mut ep) = engine();
        let data = [5u8; 8];
        let s = e.isend(&mut ep, send_args(&data, UNREACHABLE, 1));
        e.free(s).unwrap();
        assert!(
            e.requests.get(s).is_some_and(|r| r.freed && !r.complete),
            "a freed send stays until its frame leaves"
        );
        assert!(e.has_outgoing(), "the message still goes");
        // A receive cancelled later is not confused with the old frame.
        let mut buf = [0u8; 8];
        let r = e.irecv(&mut ep, recv_buf(&mut buf), pattern(Some(1)));
        e.cancel(r).unwrap();
        assert!(e.take(r).unwrap().status.cancelled());
        assert!(e.has_outgoing());
    }

    #[test]
    fn an_unmatched_receive_is_cancelled_and_message_handles_are_not_requests() {
        let (mut e, mut ep) = engine();
        let mut buf = [0u8; 8];
        let r = e.irecv(&mut ep, recv_buf(&mut buf), pattern(None));
        assert_eq!(e.state(r).unwrap(), RequestState::Pending);
        e.cancel(r).unwrap();
        let taken = e.take(r).unwrap();
        assert!(taken.status.cancelled() && !taken.persists);
        assert_eq!(
            e.state(r).unwrap_err().class,
            MPI_ERR_REQUEST,
            "taken requests are gone"
        );
        assert_eq!(
            e.state(MPI_REQUEST_NULL).unwrap_err().class,
            MPI_ERR_REQUEST
        );
    }
}
