//! Partitioned communication (MPI 4.1 §4.2): `MPI_Psend_init` and
//! `MPI_Precv_init` make persistent requests whose buffer is cut into
//! partitions; after `MPI_Start`, the sender marks partitions ready
//! (`MPI_Pready`, `_range`, `_list`) in any order and from any thread, and
//! each one leaves at once; the receiver may look at each of its own
//! partitions (`MPI_Parrived`) before the whole request completes.
//!
//! How a send and a receive find each other: MPI matches them by
//! communicator, ranks and tag, in the order of the init calls, and lets
//! the two sides cut the buffer differently (the same bytes in all). So
//! `MPI_Psend_init` sends a small *layout* message at once: the number of
//! send partitions, the bytes in each and the first of the tags its
//! partitions travel with; `MPI_Precv_init` posts the receive for it with
//! the program's source and tag. Init calls post in their order and
//! messages between two processes do not overtake, so layouts match as MPI
//! matches the requests. Everything goes on the communicator's collective
//! context (`context_id + 1`), never on the program's: the layout with the
//! program's tag (collectives only use negative tags there), the partitions
//! with negative tags below every collective tag ([`DATA_TAGS`]), one per
//! send partition, taken from a per-process counter at the send's init.
//!
//! Each send partition is one message (eager or rendezvous like any other,
//! over shared memory or TCP), sent when it is marked ready and received
//! straight into the receive buffer: into the partition itself when both
//! sides cut alike, into the right bytes when the receive buffer is one
//! block, and otherwise through a staging copy that is unpacked into place
//! when it arrives. Every start of the pair uses the same tags; a round's
//! messages cannot be taken by the next round's receives, because a
//! receive is posted again only after the previous one completed and
//! messages with one tag arrive in order.
//!
//! Decisions where MPI leaves room: `MPI_Parrived` on an inactive request
//! answers true (its data is all there); marking a partition ready twice in
//! one round, or outside an active round, is `MPI_ERR_ARG` /
//! `MPI_ERR_REQUEST`; a send of more bytes than the receive holds fails the
//! receive with `MPI_ERR_TRUNCATE` when the layout arrives.
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};

use super::engine::{Endpoints, Engine, SendArgs};
use super::request::{empty_status, receive_status, Operation, Request, Template};
use super::user_buffer::{byte_type, UserBuffer};
use crate::core::collective::sequence;
use crate::core::error::{MpiError, MpiResult};
use crate::core::matching::Pattern;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Request, MPI_Status};
use crate::transport::ProcessId;

/// The tags of partitions: from `DATA_TAGS.start()` down to `i32::MIN`,
/// below every collective sequence tag (with a margin).
const DATA_TAGS_TOP: c_int = sequence::LOWEST_TAG - 64;
/// How many partition tags there are before the counter wraps.
const DATA_TAGS: u32 = (DATA_TAGS_TOP as i64 - i32::MIN as i64 + 1) as u32;
/// The tags handed out so far, modulo [`DATA_TAGS`].
static NEXT_TAG: AtomicU32 = AtomicU32::new(0);

/// Bytes of a layout message: partitions (u64), bytes per partition (u64),
/// first tag (i32), little-endian.
const LAYOUT_LEN: usize = 20;

/// `partitions` consecutive partition tags; returns the first (partition
/// `i` uses `first - i`). They come around again after about 2^30 (a job
/// would need that many partitions alive at once to meet its own).
fn take_tags(partitions: usize) -> MpiResult<c_int> {
    let n = u32::try_from(partitions)
        .ok()
        .filter(|&n| n <= DATA_TAGS)
        .ok_or_else(|| MpiError::new(MPI_ERR_ARG, format!("{partitions} partitions")))?;
    let mut first = 0;
    let _ = NEXT_TAG.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| {
        first = if DATA_TAGS - next < n { 0 } else { next };
        Some((first + n) % DATA_TAGS)
    });
    Ok(DATA_TAGS_TOP - first as c_int)
}

/// The other side of a partitioned request.
#[derive(Clone, Copy)]
pub struct Peer {
    pub process: ProcessId,
    /// The communicator's collective context, which the layout and the
    /// partitions travel on.
    pub context_id: u64,
    /// This process's rank and the peer's on that context.
    pub own_rank: c_int,
    pub peer_rank: c_int,
    /// The peer's rank as the program names it (a receive's status source).
    pub program_rank: c_int,
}

/// A partitioned request's arguments, checked by the abi layer.
pub struct Spec {
    /// The whole buffer: `partitions * count` elements.
    pub buf: UserBuffer,
    pub partitions: usize,
    /// Elements per partition.
    pub count: usize,
    /// `None`: `MPI_PROC_NULL`.
    pub peer: Option<Peer>,
    pub tag: c_int,
}

/// The sender's cut of the buffer, as its layout message gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    partitions: usize,
    bytes: usize,
    first_tag: c_int,
}

impl Layout {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(LAYOUT_LEN);
        out.extend_from_slice(&(self.partitions as u64).to_le_bytes());
        out.extend_from_slice(&(self.bytes as u64).to_le_bytes());
        out.extend_from_slice(&self.first_tag.to_le_bytes());
        out
    }

    fn decode(b: &[u8]) -> Option<Layout> {
        let word = |at: usize| -> Option<u64> {
            Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
        };
        Some(Layout {
            partitions: usize::try_from(word(0)?).ok()?,
            bytes: usize::try_from(word(8)?).ok()?,
            first_tag: i32::from_le_bytes(b.get(16..20)?.try_into().ok()?),
        })
    }
}

/// Where a send partition is in the current round.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PartState {
    /// Not marked ready (send) or not posted (receive) yet.
    Idle,
    InFlight,
    Done,
}

pub struct Partitioned {
    spec: Spec,
    send: bool,
    /// Send: this side's layout. Receive: the sender's, once it arrived.
    layout: Option<Layout>,
    /// The layout message's internal request until it completes.
    setup: MPI_Request,
    /// Receive: where the layout message lands.
    layout_area: Box<[u8; LAYOUT_LEN]>,
    /// Per send partition, this round.
    parts: Vec<PartState>,
    /// The internal requests in flight, by the send partition they carry.
    in_flight: HashMap<MPI_Request, usize>,
    /// Receive: staging copies of partitions that cannot land in place.
    staging: HashMap<usize, Box<[u8]>>,
    /// Send partitions not done this round.
    remaining: usize,
    /// Receive: the partitions' receives are posted for this round.
    posted: bool,
    /// The first failure of this round (or of the layout message).
    error: Option<MpiError>,
}

impl Partitioned {
    fn new(spec: Spec, send: bool, layout: Option<Layout>) -> Partitioned {
        Partitioned {
            spec,
            send,
            layout,
            setup: MPI_REQUEST_NULL,
            layout_area: Box::new([0; LAYOUT_LEN]),
            parts: Vec::new(),
            in_flight: HashMap::new(),
            staging: HashMap::new(),
            remaining: 0,
            posted: false,
            error: None,
        }
    }

    /// Bytes of one partition of this side.
    fn partition_bytes(&self) -> usize {
        self.spec.buf.len() / self.spec.partitions.max(1)
    }

    /// The buffer send partition `i` of `layout` is received into: the
    /// receive partition itself when both sides cut alike, its bytes when
    /// the receive buffer is one block, else a staging copy.
    fn landing(&mut self, i: usize, layout: Layout) -> UserBuffer {
        let same_cut =
            layout.partitions == self.spec.partitions && layout.bytes == self.partition_bytes();
        if same_cut {
            return self.spec.buf.elements(i * self.spec.count, self.spec.count);
        }
        if let Some(b) = self.spec.buf.byte_range(i * layout.bytes, layout.bytes) {
            return b;
        }
        let area = self
            .staging
            .entry(i)
            .or_insert_with(|| vec![0u8; layout.bytes].into_boxed_slice());
        // SAFETY: the staging box lives in this request's state until the
        // partition's receive completed (it is unpacked and dropped in
        // `settle_partitioned`) or was cancelled; a box's heap memory does
        // not move when the state does.
        unsafe { UserBuffer::new(area.as_mut_ptr() as *const c_void, area.len(), byte_type()) }
    }
}

impl Engine {
    /// `MPI_Psend_init`: an inactive partitioned send; its layout message
    /// leaves now.
    pub fn psend_init(&mut self, ep: &mut Endpoints, spec: Spec) -> MpiResult<MPI_Request> {
        let layout = match spec.peer {
            Some(_) => Some(Layout {
                partitions: spec.partitions,
                bytes: spec.buf.len() / spec.partitions.max(1),
                first_tag: take_tags(spec.partitions)?,
            }),
            None => None,
        };
        let peer = spec.peer;
        let tag = spec.tag;
        let id = self.persistent(Template::Partitioned);
        let state = Partitioned::new(spec, true, layout);
        if let Some(req) = self.requests.get_mut(id) {
            req.partitioned = Some(Box::new(state));
        }
        if let (Some(peer), Some(layout)) = (peer, layout) {
            let part = self.part_of(id);
            self.with_state(id, |s| s.setup = part);
            let args = SendArgs {
                buf: UserBuffer::packed(layout.encode()),
                dest: peer.process,
                context_id: peer.context_id,
                source: peer.own_rank,
                tag,
                synchronous: false,
            };
            self.launch_send(ep, part, args);
        }
        Ok(id)
    }

    /// `MPI_Precv_init`: an inactive partitioned receive; the receive of
    /// its sender's layout is posted now.
    pub fn precv_init(&mut self, ep: &mut Endpoints, spec: Spec) -> MPI_Request {
        let peer = spec.peer;
        let tag = spec.tag;
        let id = self.persistent(Template::Partitioned);
        let mut state = Box::new(Partitioned::new(spec, false, None));
        // SAFETY: the layout area is a box in the request's state, which
        // lives until the layout's receive completed: freeing the request
        // before that only marks it (see `free_partitioned`).
        let area = unsafe {
            UserBuffer::new(
                state.layout_area.as_mut_ptr() as *const c_void,
                LAYOUT_LEN,
                byte_type(),
            )
        };
        if let Some(req) = self.requests.get_mut(id) {
            req.partitioned = Some(state);
        }
        if let Some(peer) = peer {
            let part = self.part_of(id);
            self.with_state(id, |s| s.setup = part);
            let pattern = Pattern {
                context_id: peer.context_id,
                source: peer.peer_rank,
                tag,
            };
            self.launch_recv(ep, part, area, pattern);
        }
        id
    }

    /// An internal request that is a part of partitioned request `id`.
    fn part_of(&mut self, id: MPI_Request) -> MPI_Request {
        let mut r = Request::new(Operation::Done);
        r.parent = id;
        self.requests.insert(r)
    }

    fn with_state<R>(
        &mut self,
        id: MPI_Request,
        f: impl FnOnce(&mut Partitioned) -> R,
    ) -> Option<R> {
        self.requests
            .get_mut(id)
            .and_then(|r| r.partitioned.as_deref_mut())
            .map(f)
    }

    /// The state of a partitioned request the program named.
    fn partitioned(&self, id: MPI_Request) -> MpiResult<(&Request, &Partitioned)> {
        let req = self.user_request(id)?;
        match req.partitioned.as_deref() {
            Some(p) => Ok((req, p)),
            None => Err(MpiError::new(
                MPI_ERR_REQUEST,
                format!("request {:#010x} is not a partitioned request", id as u32),
            )),
        }
    }

    /// `MPI_Start` of a partitioned request (checked startable): a new
    /// round, with no partition ready (send) or arrived (receive).
    pub(super) fn start_partitioned(&mut self, ep: &mut Endpoints, id: MPI_Request) {
        let Some(req) = self.requests.get_mut(id) else {
            return;
        };
        req.op = Operation::Partitioned;
        req.complete = false;
        req.status = empty_status();
        req.error = None;
        let Some(s) = req.partitioned.as_deref_mut() else {
            return;
        };
        s.posted = false;
        s.in_flight.clear();
        let receives = !s.send && s.spec.peer.is_some();
        if s.send {
            s.parts = vec![PartState::Idle; s.spec.partitions];
            s.remaining = s.spec.partitions;
        } else {
            // Posted when the sender's layout is known; a receive from
            // MPI_PROC_NULL has nothing to wait for.
            s.parts.clear();
            s.remaining = if receives { usize::MAX } else { 0 };
        }
        if receives {
            self.post_receives(ep, id);
        } else {
            self.finish_round_if_done(id);
        }
    }

    /// Posts the receives of a started partitioned receive's partitions,
    /// once the sender's layout is known.
    fn post_receives(&mut self, ep: &mut Endpoints, id: MPI_Request) {
        let Some(req) = self.requests.get_mut(id) else {
            return;
        };
        let active = matches!(req.op, Operation::Partitioned) && !req.complete;
        let Some(s) = req.partitioned.as_deref_mut() else {
            return;
        };
        let (Some(layout), Some(peer)) = (s.layout, s.spec.peer) else {
            return;
        };
        if !active || s.posted {
            return;
        }
        s.posted = true;
        let total = layout.partitions.checked_mul(layout.bytes);
        if total.is_none_or(|t| t > s.spec.buf.len()) {
            s.error.get_or_insert_with(|| {
                MpiError::new(
                    MPI_ERR_TRUNCATE,
                    format!(
                        "the partitioned send holds {} partitions of {} bytes; the receive has room for {} bytes",
                        layout.partitions,
                        layout.bytes,
                        s.spec.buf.len()
                    ),
                )
            });
            s.remaining = 0;
            s.parts.clear();
            self.finish_round_if_done(id);
            return;
        }
        s.parts = vec![PartState::Idle; layout.partitions];
        s.remaining = layout.partitions;
        for i in 0..layout.partitions {
            let Some(s) = self
                .requests
                .get_mut(id)
                .and_then(|r| r.partitioned.as_deref_mut())
            else {
                return;
            };
            if s.parts.get(i) != Some(&PartState::Idle) {
                continue;
            }
            let buf = s.landing(i, layout);
            s.parts[i] = PartState::InFlight;
            let part = self.part_of(id);
            self.with_state(id, |s| s.in_flight.insert(part, i));
            let pattern = Pattern {
                context_id: peer.context_id,
                source: peer.peer_rank,
                tag: layout.first_tag - i as c_int,
            };
            self.launch_recv(ep, part, buf, pattern);
        }
        self.finish_round_if_done(id);
    }

    /// Checks that `id` is a started partitioned send (`MPI_ERR_REQUEST`
    /// otherwise), as `MPI_Pready` and its list forms need.
    pub fn check_pready(&self, id: MPI_Request) -> MpiResult {
        let (req, s) = self.partitioned(id)?;
        if !s.send {
            return Err(MpiError::new(
                MPI_ERR_REQUEST,
                "MPI_Pready on a partitioned receive",
            ));
        }
        if req.is_inactive() {
            return Err(MpiError::new(
                MPI_ERR_REQUEST,
                "MPI_Pready on a partitioned send that is not started",
            ));
        }
        Ok(())
    }

    /// `MPI_Pready` for send partition `partition` of request `id`: it
    /// leaves now.
    pub fn pready(&mut self, ep: &mut Endpoints, id: MPI_Request, partition: usize) -> MpiResult {
        self.check_pready(id)?;
        let (_, s) = self.partitioned(id)?;
        match s.parts.get(partition) {
            None => {
                return Err(MpiError::new(
                    MPI_ERR_ARG,
                    format!(
                        "partition {partition} of a send of {} partitions",
                        s.spec.partitions
                    ),
                ))
            }
            Some(PartState::Idle) => {}
            Some(_) => {
                return Err(MpiError::new(
                    MPI_ERR_ARG,
                    format!("partition {partition} is marked ready already in this round"),
                ))
            }
        }
        let (Some(peer), Some(layout)) = (s.spec.peer, s.layout) else {
            // MPI_PROC_NULL: the partition is done at once.
            self.with_state(id, |s| {
                s.parts[partition] = PartState::Done;
                s.remaining -= 1;
            });
            self.finish_round_if_done(id);
            return Ok(());
        };
        let buf = s.spec.buf.elements(partition * s.spec.count, s.spec.count);
        let part = self.part_of(id);
        self.with_state(id, |s| {
            s.parts[partition] = PartState::InFlight;
            s.in_flight.insert(part, partition);
        });
        let args = SendArgs {
            buf,
            dest: peer.process,
            context_id: peer.context_id,
            source: peer.own_rank,
            tag: layout.first_tag - partition as c_int,
            synchronous: false,
        };
        self.launch_send(ep, part, args);
        Ok(())
    }

    /// `MPI_Parrived`: whether receive partition `partition` of request
    /// `id` has all its data (true on an inactive request).
    pub fn parrived(&self, id: MPI_Request, partition: usize) -> MpiResult<bool> {
        let (req, s) = self.partitioned(id)?;
        if s.send {
            return Err(MpiError::new(
                MPI_ERR_REQUEST,
                "MPI_Parrived on a partitioned send",
            ));
        }
        if partition >= s.spec.partitions {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                format!(
                    "partition {partition} of a receive of {} partitions",
                    s.spec.partitions
                ),
            ));
        }
        if req.is_inactive() || req.complete {
            return Ok(true);
        }
        let Some(layout) = s.layout.filter(|_| s.posted) else {
            return Ok(false);
        };
        let mine = s.partition_bytes();
        if layout.partitions == s.spec.partitions && layout.bytes == mine {
            // Cut alike (empty partitions too): partition i is send partition i.
            return Ok(s.parts[partition] == PartState::Done);
        }
        let (start, end) = (partition * mine, (partition + 1) * mine);
        if layout.bytes == 0 || start >= end {
            // No bytes to map it to a send partition: it has arrived
            // with the last of them.
            return Ok(s.parts.iter().all(|p| *p == PartState::Done));
        }
        let first = start / layout.bytes;
        let last = ((end - 1) / layout.bytes).min(layout.partitions.saturating_sub(1));
        Ok(first >= layout.partitions
            || s.parts[first..=last].iter().all(|p| *p == PartState::Done))
    }

    /// After an internal request of partitioned request `parent`
    /// completed: the layout message, or a partition (unpacked from its
    /// staging copy if it has one).
    pub(super) fn settle_partitioned(&mut self, parent: MPI_Request, part: MPI_Request) {
        let Some(done) = self.remove_request(part) else {
            return;
        };
        let Some(s) = self
            .requests
            .get_mut(parent)
            .and_then(|r| r.partitioned.as_deref_mut())
        else {
            return;
        };
        if part == s.setup {
            s.setup = MPI_REQUEST_NULL;
            match done.error {
                Some(e) => {
                    s.error.get_or_insert(e);
                }
                None if !s.send && !done.status.cancelled() => {
                    s.layout = Layout::decode(&s.layout_area[..]);
                    if s.layout.is_none() {
                        s.error.get_or_insert_with(|| {
                            MpiError::new(MPI_ERR_INTERN, "a malformed partition layout")
                        });
                    }
                }
                None => {}
            }
            if !s.send {
                self.partitioned_due.push(parent);
            }
            self.drop_if_freed(parent);
            return;
        }
        let Some(i) = s.in_flight.remove(&part) else {
            return;
        };
        if let Some(e) = done.error {
            s.error.get_or_insert(e);
        } else if let (Some(area), Some(layout)) = (s.staging.remove(&i), s.layout) {
            s.spec.buf.unpack(i * layout.bytes, &area);
        }
        s.parts[i] = PartState::Done;
        s.remaining = s.remaining.saturating_sub(1);
        self.finish_round_if_done(parent);
    }

    /// Completes a round once every partition is done.
    fn finish_round_if_done(&mut self, id: MPI_Request) {
        let Some(req) = self.requests.get_mut(id) else {
            return;
        };
        if req.complete || !matches!(req.op, Operation::Partitioned) {
            return;
        }
        let Some(s) = req.partitioned.as_deref_mut() else {
            return;
        };
        if s.remaining != 0 || !s.in_flight.is_empty() {
            return;
        }
        let error = s.error.take();
        let status: MPI_Status = match (s.send, s.spec.peer, s.layout) {
            (false, Some(peer), Some(layout)) => receive_status(
                peer.program_rank,
                s.spec.tag,
                layout.partitions * layout.bytes,
                MPI_SUCCESS,
            ),
            (false, None, _) => super::request::proc_null_status(),
            _ => empty_status(),
        };
        match error {
            Some(e) => req.fail(e),
            None => req.finish(status),
        }
        self.drop_if_freed(id);
    }

    /// A partitioned request freed by the program goes once nothing of it
    /// is in flight.
    fn drop_if_freed(&mut self, id: MPI_Request) {
        let Some(req) = self.requests.get(id) else {
            return;
        };
        let idle = req.complete || req.is_inactive();
        let quiet = req
            .partitioned
            .as_deref()
            .is_some_and(|s| s.setup == MPI_REQUEST_NULL && s.in_flight.is_empty());
        if req.freed && idle && quiet {
            self.remove_request(id);
        }
    }

    /// `MPI_Request_free` of a partitioned request: it goes now unless its
    /// layout message or partitions are still in flight, whose memory it
    /// holds; then it goes when they are done (a receive of the layout is
    /// withdrawn if it can be).
    pub(super) fn free_partitioned(&mut self, id: MPI_Request) {
        let setup = self
            .requests
            .get(id)
            .and_then(|r| r.partitioned.as_deref())
            .map_or(MPI_REQUEST_NULL, |s| s.setup);
        if setup != MPI_REQUEST_NULL && self.matcher.cancel(setup) {
            self.remove_request(setup);
            self.with_state(id, |s| s.setup = MPI_REQUEST_NULL);
        }
        if let Some(req) = self.requests.get_mut(id) {
            req.freed = true;
        }
        self.drop_if_freed(id);
    }

    /// Posts the receives of partitioned receives whose layout arrived
    /// while they were started (called with the endpoints at hand).
    pub(super) fn post_due_partitioned(&mut self, ep: &mut Endpoints) {
        for id in std::mem::take(&mut self.partitioned_due) {
            self.post_receives(ep, id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::engine::testing::*;
    use super::super::engine::RequestState;
    use super::*;

    fn to_me() -> Option<Peer> {
        Some(Peer {
            process: ME,
            context_id: CONTEXT + 1,
            own_rank: 0,
            peer_rank: 0,
            program_rank: 0,
        })
    }

    fn spec(buf: &mut [u8], partitions: usize, tag: c_int) -> Spec {
        let count = buf.len() / partitions;
        Spec {
            buf: recv_buf(buf),
            partitions,
            count,
            peer: to_me(),
            tag,
        }
    }

    /// A round of `sparts` send partitions into `rparts` receive ones,
    /// marked ready last first; returns the receive's status.
    fn round(sparts: usize, rparts: usize, rounds: u8) {
        let (mut e, mut ep) = engine();
        let mut out = vec![0u8; 96];
        let mut inbox = vec![0u8; 96];
        let recv = e.precv_init(&mut ep, spec(&mut inbox, rparts, 3));
        let send = e.psend_init(&mut ep, spec(&mut out, sparts, 3)).unwrap();
        for r in 0..rounds {
            for (i, b) in out.iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(3).wrapping_add(r);
            }
            e.start(&mut ep, recv).unwrap();
            e.start(&mut ep, send).unwrap();
            settle_down(&mut e, &mut ep);
            assert_eq!(e.state(recv).unwrap(), RequestState::Pending);
            assert!(!e.parrived(recv, 0).unwrap(), "nothing is ready yet");
            for p in (0..sparts).rev() {
                e.pready(&mut ep, send, p).unwrap();
                assert_eq!(
                    e.pready(&mut ep, send, p).unwrap_err().class,
                    MPI_ERR_ARG,
                    "ready twice"
                );
            }
            settle_down(&mut e, &mut ep);
            for p in 0..rparts {
                assert!(e.parrived(recv, p).unwrap());
            }
            assert_eq!(e.state(send).unwrap(), RequestState::Complete);
            assert_eq!(e.state(recv).unwrap(), RequestState::Complete);
            let status = e.take(recv).unwrap().status;
            assert_eq!((status.MPI_SOURCE, status.MPI_TAG), (0, 3));
            assert!(e.take(send).unwrap().persists);
            assert_eq!(inbox, out, "round {r} of {sparts} into {rparts}");
        }
        e.free(send).unwrap();
        e.free(recv).unwrap();
        settle_down(&mut e, &mut ep);
        assert!(e.request_count() == 0, "nothing left behind");
    }

    #[test]
    fn partitions_land_whatever_the_two_cuts() {
        round(4, 4, 3);
        round(8, 2, 3);
        round(2, 8, 3);
        round(1, 3, 2);
    }

    #[test]
    fn a_receive_started_before_the_layout_arrives_posts_when_it_does() {
        let (mut e, mut ep) = engine();
        let mut out = vec![7u8; 16];
        let mut inbox = vec![0u8; 16];
        let recv = e.precv_init(&mut ep, spec(&mut inbox, 2, 9));
        e.start(&mut ep, recv).unwrap();
        let send = e.psend_init(&mut ep, spec(&mut out, 4, 9)).unwrap();
        e.start(&mut ep, send).unwrap();
        for p in 0..4 {
            e.pready(&mut ep, send, p).unwrap();
        }
        settle_down(&mut e, &mut ep);
        assert_eq!(e.state(recv).unwrap(), RequestState::Complete);
        assert_eq!(inbox, out);
    }

    #[test]
    fn a_larger_send_truncates_the_receive() {
        let (mut e, mut ep) = engine();
        let mut out = vec![1u8; 32];
        let mut inbox = vec![0u8; 16];
        let recv = e.precv_init(&mut ep, spec(&mut inbox, 1, 4));
        let send = e.psend_init(&mut ep, spec(&mut out, 2, 4)).unwrap();
        e.start(&mut ep, recv).unwrap();
        e.start(&mut ep, send).unwrap();
        e.pready(&mut ep, send, 0).unwrap();
        e.pready(&mut ep, send, 1).unwrap();
        settle_down(&mut e, &mut ep);
        let taken = e.take(recv).unwrap();
        assert_eq!(taken.error.map(|e| e.class), Some(MPI_ERR_TRUNCATE));
    }

    #[test]
    fn a_layout_survives_its_encoding() {
        let l = Layout {
            partitions: 8192,
            bytes: 2048,
            first_tag: DATA_TAGS_TOP - 77,
        };
        assert_eq!(Layout::decode(&l.encode()), Some(l));
        assert_eq!(Layout::decode(&l.encode()[..12]), None);
    }

    #[test]
    fn partition_tags_are_below_every_collective_tag_and_wrap_whole() {
        let first = take_tags(1000).unwrap();
        assert!(first - 999 < sequence::LOWEST_TAG);
        assert!(first <= DATA_TAGS_TOP);
        let next = take_tags(5).unwrap();
        assert_eq!(next, first - 1000, "consecutive ranges");
        // A range that does not fit before the end starts again at the top.
        let big = take_tags(DATA_TAGS as usize - 10).unwrap();
        assert_eq!(big, DATA_TAGS_TOP, "no range straddles the end");
        assert!(
            (big as i64) - (DATA_TAGS as i64 - 11) >= i32::MIN as i64,
            "the range's last tag is an i32"
        );
        assert!(take_tags(DATA_TAGS as usize + 1).is_err());
    }
}
