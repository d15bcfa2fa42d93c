//! Frames waiting to leave, and the flush that hands them to the
//! transports: per peer and in order, whole frames (batched when several
//! wait) and the data pieces of a pipelined rendezvous (`Outgoing::Stream`,
//! after the receiver's CTS). A send's first frame (eager data or RTS) is
//! owned by its request while queued, so that the send can be cancelled.
//!
//! Invariant: a queued frame's `owner` is a live request, marked
//! `queued_frame`; before a request leaves the table or becomes inactive,
//! its frames are disowned (`disown_frames`), so an owner is never a
//! request that is gone or started again.

use super::Engine;
use crate::core::p2p::frame::{message_len, FrameHeader, FrameKind, HEADER_LEN};
use crate::core::p2p::request::{Operation, Request, SendOp, SendStage};
use crate::core::p2p::user_buffer::UserBuffer;
use crate::mpi_abi::constants::MPI_REQUEST_NULL;
use crate::mpi_abi::types::MPI_Request;
use crate::transport::endpoints::{Endpoints, SendOutcome};
use crate::transport::ProcessId;

/// A frame waiting to leave for one peer.
pub(super) enum Outgoing {
    /// `owner`: the send whose first frame this is (it can still be
    /// cancelled), or `MPI_REQUEST_NULL`. An owner is always a live request.
    /// `body`: the message of an eager send, packed straight from the
    /// send's buffer behind `bytes` (its header) when the frame leaves, so
    /// that a message that finds the transport full is not copied twice;
    /// the buffer stays valid until then because the send completes only
    /// when its frame leaves (and a freed active send's buffer must stay
    /// untouched, as MPI says).
    Frame {
        bytes: Vec<u8>,
        body: Option<UserBuffer>,
        owner: MPI_Request,
    },
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

/// Frames sent in one batch at most (see `send_front_frames`).
const MAX_BATCH: usize = 64;

impl Engine {
    /// Queues a frame for `dest` without sending it yet.
    pub(super) fn queue(&mut self, dest: ProcessId, item: Outgoing) {
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
    pub(super) fn enqueue_owned(
        &mut self,
        ep: &mut Endpoints,
        dest: ProcessId,
        bytes: Vec<u8>,
        owner: MPI_Request,
    ) {
        if let Some(r) = self.requests.get_mut(owner) {
            r.queued_frame = true;
        }
        self.enqueue(
            ep,
            dest,
            Outgoing::Frame {
                bytes,
                body: None,
                owner,
            },
        );
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
    pub(super) fn withdraw_frame(&mut self, id: MPI_Request) -> bool {
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

    /// The operation of request `id` is over for the program (its request
    /// goes, or a persistent one becomes inactive): a frame of it still
    /// queued loses its owner, so it goes out but can no longer be
    /// cancelled, and a later activation's frame is the only one `id` owns.
    pub(super) fn disown_frames(&mut self, id: MPI_Request) {
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
                    body,
                    owner,
                } => {
                    let owner = *owner;
                    let bytes = std::mem::take(frame);
                    let body_len = body.as_ref().map_or(0, UserBuffer::len);
                    let head = bytes.len();
                    match ep.try_send(dest, head + body_len, &mut |out: &mut [u8]| {
                        out[..head].copy_from_slice(&bytes);
                        if let Some(body) = body.as_ref() {
                            body.pack(0, &mut out[head..]);
                        }
                    }) {
                        SendOutcome::Sent => {
                            if let Some(len) = message_len(&bytes) {
                                ep.count_message(dest, len);
                            }
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
            // (A frame whose body is still in a send's buffer leaves alone.)
            let Outgoing::Frame {
                bytes, body: None, ..
            } = item
            else {
                break;
            };
            frames[n] = bytes;
            n += 1;
        }
        if n < 2 {
            return 0;
        }
        let sent = ep.try_send_batch(dest, &frames[..n]);
        for frame in &frames[..sent] {
            if let Some(len) = message_len(frame) {
                ep.count_message(dest, len);
            }
        }
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

    /// Whether frames still wait to leave (they must before an epoch ends).
    pub fn has_outgoing(&self) -> bool {
        self.outbox.has_any()
    }
}

/// A queued frame that no send owns (a reply or an acknowledgement), so
/// that nothing can withdraw it.
pub(super) fn control(frame: Vec<u8>) -> Outgoing {
    Outgoing::Frame {
        bytes: frame,
        body: None,
        owner: MPI_REQUEST_NULL,
    }
}

/// A frame of `kind` that is only a header naming requests `id_a`, `id_b`.
pub(super) fn control_frame(kind: FrameKind, id_a: u64, id_b: u64) -> Vec<u8> {
    let mut frame = vec![0u8; HEADER_LEN];
    FrameHeader::control(kind, id_a, id_b).encode(&mut frame);
    frame
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::RequestState;
    use super::*;

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
}
