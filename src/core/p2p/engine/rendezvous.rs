//! The shared-memory copies of the rendezvous protocol, which the receiver
//! chooses when the sender's RTS offers where its data lies: single copy
//! (the receiver reads the whole message with `process_vm_readv`, then
//! sends FIN) and shared copy (both processes copy half at once: the
//! receiver reads the first, the sender writes the second with
//! `process_vm_writev`). When the kernel refuses, the message takes the
//! pipelined copy instead (CTS, then data pieces: `Outgoing::Stream`).
//! Also the flush of replies after frames and matches, where the halves of
//! shared copies are done.
//!
//! Invariant: the sender's buffer stays valid until the receiver's
//! `Finished` completes the send, and the receiver's half of a shared copy
//! waits until its `ShareCopy` has left, so that both processes copy at
//! the same time.

use std::os::raw::c_int;

use super::outgoing::{control, control_frame, Outgoing};
use super::Engine;
use crate::core::p2p::frame::{FrameHeader, FrameKind, HEADER_LEN};
use crate::core::p2p::request::{Operation, RecvOp, Request};
use crate::mpi_abi::types::MPI_Request;
use crate::transport::endpoints::Endpoints;
use crate::transport::ProcessId;

/// Single-copy offer in an RTS payload: the sender's pid and address.
pub(super) const SINGLE_COPY_LEN: usize = 16;

/// Messages from this size on are offered single copy (`process_vm_readv`)
/// through shared memory; smaller rendezvous messages (above a ring record)
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
pub(super) const SINGLE_COPY_MIN: usize = 64 * 1024;

/// Messages from this size on are copied by both processes (shared copy)
/// when each has a core.
const SHARE_MIN: usize = 64 * 1024;
/// The receiver's share ends on a multiple of this.
const SHARE_ALIGN: usize = 4096;

/// The receiver's half of a shared copy, waiting for its turn.
pub(super) struct OwnShare {
    id: MPI_Request,
    pid: u32,
    addr: u64,
    len: usize,
}

/// The sender's half of a shared copy: bytes `from..` of send `send` go to
/// address `addr` (where the receive buffer starts) in process `pid`,
/// which receives them as receive `recv` of process `receiver`.
pub(super) struct OwnWrite {
    receiver: ProcessId,
    send: MPI_Request,
    recv: u64,
    from: usize,
    pid: u32,
    addr: u64,
}

impl Engine {
    /// Sends the replies that matches and frames queued, then does the
    /// receiver's half of the shared copies they started (after their
    /// `ShareCopy` left, so the sender copies at the same time).
    #[inline(always)]
    pub(in crate::core::p2p) fn flush_replies(&mut self, ep: &mut Endpoints) {
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
    pub(super) fn share_copy(
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
    pub(super) fn ask_share(&mut self, receiver: ProcessId, header: &FrameHeader, payload: &[u8]) {
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
    pub(super) fn single_copy(&mut self, id: MPI_Request, pid: u32, addr: u64) -> bool {
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
}
