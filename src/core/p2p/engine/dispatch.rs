//! Frame dispatch: what each arriving frame does, handled where it lies in
//! the transport (the engine is the transports' `Sink`), and `progress`,
//! which polls the transports and then sends what the frames caused. The
//! case a blocking receive waits for (an eager message the receive lane
//! takes) is decided first, compiled into the transport's poll loop.
//!
//! Invariant: handling a frame never sends (the transports are borrowed by
//! their poll); replies are queued and leave in the flush after the poll.

use std::os::raw::c_int;

use super::outgoing::Outgoing;
use super::receive::{Incoming, IncomingBody};
use super::rendezvous::SINGLE_COPY_LEN;
use super::Engine;
use crate::core::matching::Envelope;
use crate::core::p2p::frame::{FrameHeader, FrameKind, FLAG_SYNC, HEADER_LEN};
use crate::core::p2p::request::{Operation, Request, SendStage};
use crate::transport::endpoints::Endpoints;
use crate::transport::{Placement, ProcessId, Sink};

impl Engine {
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
            FrameKind::Credit => self.credits.returned(from, header.id_a),
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
        if !self.partitioned_due.is_empty() {
            self.post_due_partitioned(ep);
        }
        self.flush_replies(ep);
        n > 0
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
