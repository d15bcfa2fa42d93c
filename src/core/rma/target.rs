//! The target side: taking a window's requests off its context, applying
//! them in order per origin, granting locks, and counting what
//! synchronization needs (operations applied, for fences; PSCW notices).
use std::collections::VecDeque;

use super::atomics;
use super::memory;
use super::wire::{Header, Kind, DATA_TAG, DIRECT_MIN, REQUEST_TAG};
use super::Window;
use crate::core::datatype;
use crate::core::matching::{Pattern, ANY};
use crate::core::op::BuiltinOp;
use crate::core::p2p::engine::{Endpoints, Engine, SendArgs};
use crate::core::p2p::user_buffer::UserBuffer;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::MPI_Request;

/// A request on its way in: its receive, and the buffer it lands in.
struct Arrival {
    request: MPI_Request,
    bytes: Vec<u8>,
}

/// Who holds the window's lock at this rank, and who waits for it
/// (granted first come, first served; shared requests behind a waiting
/// exclusive one wait too, so an exclusive request is never starved).
#[derive(Default, Debug)]
pub struct LockQueue {
    exclusive: bool,
    shared: usize,
    waiting: VecDeque<(usize, bool, i32)>,
}

impl LockQueue {
    fn grantable(&self, exclusive: bool) -> bool {
        !self.exclusive && (!exclusive || self.shared == 0)
    }

    /// A request from `origin`; true when granted at once (else it waits).
    pub fn request(&mut self, origin: usize, exclusive: bool, reply: i32) -> bool {
        if self.waiting.is_empty() && self.grantable(exclusive) {
            self.take(exclusive);
            return true;
        }
        self.waiting.push_back((origin, exclusive, reply));
        false
    }

    fn take(&mut self, exclusive: bool) {
        if exclusive {
            self.exclusive = true;
        } else {
            self.shared += 1;
        }
    }

    /// Releases a lock; returns the waiting requests granted now
    /// `(origin, exclusive, reply tag)`.
    pub fn release(&mut self, exclusive: bool) -> Vec<(usize, bool, i32)> {
        if exclusive {
            self.exclusive = false;
        } else {
            self.shared = self.shared.saturating_sub(1);
        }
        let mut granted = Vec::new();
        while let Some(&(origin, exclusive, reply)) = self.waiting.front() {
            if !self.grantable(exclusive) {
                break;
            }
            self.waiting.pop_front();
            self.take(exclusive);
            granted.push((origin, exclusive, reply));
        }
        granted
    }

    pub fn is_held(&self) -> bool {
        self.exclusive || self.shared > 0
    }
}

#[derive(Default)]
pub struct TargetState {
    /// Requests being received, per origin rank, in arrival order.
    arrivals: Vec<VecDeque<Arrival>>,
    /// How many requests `arrivals` holds.
    queued: usize,
    /// Per origin, the receive of a large put's data into the window (and
    /// the scratch buffer of one that had to be refused): the origin's
    /// next requests wait for it.
    data_receives: Vec<Option<(MPI_Request, Option<Vec<u8>>)>>,
    /// Per origin, large gets' replies sent from the window memory and not
    /// gone yet: the origin's unlock, flush or complete waits for them (the
    /// memory must not change under them once the lock passes on).
    direct_replies: Vec<Vec<MPI_Request>>,
    /// How many entries the two above hold.
    in_flight: usize,
    /// Operations applied so far (all origins, since creation).
    pub applied: u64,
    pub locks: LockQueue,
    /// The exclusive flag of each origin's granted lock (for its unlock).
    held: Vec<Vec<bool>>,
    /// PSCW posts received from each rank and not consumed by a start.
    pub posts: Vec<u32>,
    /// PSCW completes received from each rank and not consumed by a wait.
    pub completes: Vec<u32>,
    /// The origins of the exposure epoch `MPI_Win_post` opened.
    pub post_group: Option<Vec<usize>>,
}

impl TargetState {
    pub fn new(size: usize) -> TargetState {
        TargetState {
            arrivals: (0..size).map(|_| VecDeque::new()).collect(),
            data_receives: (0..size).map(|_| None).collect(),
            direct_replies: vec![Vec::new(); size],
            held: vec![Vec::new(); size],
            posts: vec![0; size],
            completes: vec![0; size],
            ..Default::default()
        }
    }

    /// Whether the data of a large put is still arriving.
    pub fn is_receiving(&self) -> bool {
        self.data_receives.iter().any(Option::is_some)
    }

    /// Whether requests are still arriving.
    pub fn is_busy(&self) -> bool {
        self.queued > 0 || self.in_flight > 0
    }
}

/// Sends `data` to `origin` on `tag` (a reply or a notice), dropped once
/// sent: nobody waits for it.
pub fn send(
    win: &Window,
    engine: &mut Engine,
    ep: &mut Endpoints,
    origin: usize,
    tag: i32,
    data: Vec<u8>,
) {
    let id = send_buffer(win, engine, ep, origin, tag, UserBuffer::packed(data));
    let _ = engine.free(id);
}

/// Starts sending `buf` to `origin` on `tag`; returns the send.
pub fn send_buffer(
    win: &Window,
    engine: &mut Engine,
    ep: &mut Endpoints,
    origin: usize,
    tag: i32,
    buf: UserBuffer,
) -> MPI_Request {
    engine.isend(
        ep,
        SendArgs {
            buf,
            dest: win.members[origin],
            context_id: win.context_id,
            source: win.rank as i32,
            tag,
            synchronous: false,
        },
    )
}

/// Takes the window's new requests and applies the ones fully arrived, in
/// order per origin; returns whether anything happened.
pub fn serve(win: &mut Window, engine: &mut Engine, ep: &mut Endpoints) -> bool {
    let mut moved = false;
    let pattern = Pattern {
        context_id: win.context_id,
        source: ANY,
        tag: REQUEST_TAG,
    };
    while let Some((message, status)) = engine.improbe(&pattern) {
        let source = status.MPI_SOURCE as usize;
        let mut bytes = vec![0u8; status.byte_count() as usize];
        let byte = datatype::lookup_for_message(MPI_BYTE).expect("MPI_BYTE is predefined");
        // SAFETY: `bytes` is our own buffer; its heap memory stays where it
        // is (the Vec moves into the queue, its allocation does not) until
        // the receive completes and the request is taken below.
        let buf = unsafe { UserBuffer::new(bytes.as_mut_ptr().cast(), bytes.len(), byte) };
        match engine.imrecv(ep, message, buf) {
            Ok(request) => match win.target.arrivals.get_mut(source) {
                Some(queue) => {
                    queue.push_back(Arrival { request, bytes });
                    win.target.queued += 1;
                }
                None => log::error!("RMA request from rank {source}, outside the window"),
            },
            Err(e) => log::error!("receiving an RMA request: {e}"),
        }
        moved = true;
    }
    for origin in 0..win.target.arrivals.len() {
        if !win.target.is_busy() {
            break;
        }
        moved |= serve_origin(win, engine, ep, origin);
    }
    moved
}

/// Takes what finished of `origin`'s large transfers, then applies its
/// fully arrived requests in order, stopping at one that must wait.
fn serve_origin(win: &mut Window, engine: &mut Engine, ep: &mut Endpoints, origin: usize) -> bool {
    let mut moved = false;
    let t = &mut win.target;
    let before = t.direct_replies[origin].len();
    t.direct_replies[origin].retain(|&r| !matches!(engine.take_completed(r), Ok(Some(_)) | Err(_)));
    t.in_flight -= before - t.direct_replies[origin].len();
    loop {
        let t = &mut win.target;
        if let Some((receive, _)) = &t.data_receives[origin] {
            match engine.take_completed(*receive) {
                Ok(None) => break,
                Ok(Some(_)) => {}
                Err(e) => log::error!("the receive of a put's data: {e}"),
            }
            t.data_receives[origin] = None;
            t.in_flight -= 1;
            moved = true;
        }
        let Some(front) = t.arrivals[origin].front() else {
            break;
        };
        if !engine.is_complete(front.request).unwrap_or(true) {
            break;
        }
        let holds = Kind::of(&front.bytes).is_some_and(Kind::completes)
            && !t.direct_replies[origin].is_empty();
        if holds {
            break;
        }
        if let Err(e) = engine.take_completed(front.request) {
            log::error!("an RMA request's receive: {e}");
        }
        let arrival = t.arrivals[origin].pop_front().expect("the front is there");
        t.queued -= 1;
        apply(win, engine, ep, origin, &arrival.bytes);
        moved = true;
    }
    moved
}

/// Applies one request from `origin`.
fn apply(win: &mut Window, engine: &mut Engine, ep: &mut Endpoints, origin: usize, bytes: &[u8]) {
    let (header, data) = match Header::decode(bytes) {
        Ok(decoded) => decoded,
        Err(e) => {
            log::error!("RMA request from rank {origin}: {e}");
            return;
        }
    };
    let reply = header.reply_tag;
    match header.kind {
        Kind::Lock => {
            if win.target.locks.request(origin, header.exclusive, reply) {
                win.target.held[origin].push(header.exclusive);
                send(win, engine, ep, origin, reply, Vec::new());
            }
        }
        Kind::Unlock => {
            let exclusive = win.target.held[origin].pop().unwrap_or(false);
            for (granted, exclusive, tag) in win.target.locks.release(exclusive) {
                win.target.held[granted].push(exclusive);
                send(win, engine, ep, granted, tag, Vec::new());
            }
            send(win, engine, ep, origin, reply, Vec::new());
        }
        Kind::Flush => send(win, engine, ep, origin, reply, Vec::new()),
        Kind::Complete => win.target.completes[origin] += 1,
        Kind::Post => win.target.posts[origin] += 1,
        kind => {
            win.target.applied += 1;
            let answer = access(win, &header, data).unwrap_or_else(|e| {
                log::error!("RMA {kind:?} from rank {origin}: {e}");
                match kind {
                    Kind::Put if header.data_follows => {
                        // Take the data anyway (into a buffer that goes).
                        Answer::Discard(header.block_bytes() as usize)
                    }
                    Kind::Put | Kind::Accumulate => Answer::Nothing,
                    _ => Answer::Data(Vec::new()),
                }
            });
            match answer {
                Answer::Nothing => {}
                Answer::Data(bytes) => send(win, engine, ep, origin, reply, bytes),
                Answer::Direct(span) => {
                    let id = send_buffer(win, engine, ep, origin, reply, memory::span_buffer(span));
                    win.target.direct_replies[origin].push(id);
                    win.target.in_flight += 1;
                }
                Answer::Receive(span) => {
                    let pattern = data_pattern(win, origin);
                    let id = engine.irecv(ep, memory::span_buffer(span), pattern);
                    win.target.data_receives[origin] = Some((id, None));
                    win.target.in_flight += 1;
                }
                Answer::Discard(len) => {
                    let mut scratch = vec![0u8; len];
                    let byte =
                        datatype::lookup_for_message(MPI_BYTE).expect("MPI_BYTE is predefined");
                    // SAFETY: our own buffer, kept with the receive (its heap
                    // memory does not move) until the receive is taken.
                    let buf = unsafe { UserBuffer::new(scratch.as_mut_ptr().cast(), len, byte) };
                    let id = engine.irecv(ep, buf, data_pattern(win, origin));
                    win.target.data_receives[origin] = Some((id, Some(scratch)));
                    win.target.in_flight += 1;
                }
            }
        }
    }
}

/// Where a put's data from `origin` comes.
fn data_pattern(win: &Window, origin: usize) -> Pattern {
    Pattern {
        context_id: win.context_id,
        source: origin as i32,
        tag: DATA_TAG,
    }
}

/// What a memory access answers.
enum Answer {
    Nothing,
    /// Reply with these bytes.
    Data(Vec<u8>),
    /// Reply with the memory of this span itself.
    Direct((usize, usize)),
    /// The put's data follows: receive it into this span.
    Receive((usize, usize)),
    /// The put's data follows but may not land: receive it and drop it.
    Discard(usize),
}

/// Reads or updates the window memory; says what to answer.
fn access(win: &Window, header: &Header, data: &[u8]) -> Result<Answer, String> {
    let spans = win.exposed.locate(header.disp, &header.blocks)?;
    let need = header.block_bytes() as usize;
    let element = || header.element.ok_or("no element kind");
    let op =
        || BuiltinOp::from_handle(header.op).ok_or_else(|| format!("operation {:#x}", header.op));
    match header.kind {
        Kind::Put if header.data_follows => match spans[..] {
            [span] => Ok(Answer::Receive(span)),
            _ => Err("a put's data may follow only to one block".into()),
        },
        Kind::Put => {
            check_len(data, need)?;
            memory::write(&spans, data);
            Ok(Answer::Nothing)
        }
        Kind::Get => Ok(match spans[..] {
            [span] if span.1 >= DIRECT_MIN => Answer::Direct(span),
            _ => Answer::Data(memory::read_all(&spans)),
        }),
        Kind::Accumulate => {
            check_len(data, need)?;
            let (kind, op) = (element()?, op()?);
            if !(win.atomics && atomics::accumulate(&spans, kind, op, data, None)) {
                let _held = win.accumulate_lock().map(|l| l.lock());
                memory::accumulate(&spans, kind, op, data, None);
            }
            Ok(Answer::Nothing)
        }
        Kind::GetAccumulate => {
            let (kind, op) = (element()?, op()?);
            if op != BuiltinOp::NoOp {
                check_len(data, need)?;
            }
            let mut old = vec![0u8; need];
            if !(win.atomics && atomics::accumulate(&spans, kind, op, data, Some(&mut old))) {
                let _held = win.accumulate_lock().map(|l| l.lock());
                memory::accumulate(&spans, kind, op, data, Some(&mut old));
            }
            Ok(Answer::Data(old))
        }
        Kind::CompareAndSwap => {
            check_len(data, 2 * need)?;
            let (new, compare) = data.split_at(need);
            let mut old = vec![0u8; need];
            if !(win.atomics && atomics::compare_and_swap(&spans, new, compare, &mut old)) {
                let _held = win.accumulate_lock().map(|l| l.lock());
                memory::compare_and_swap(&spans, new, compare, &mut old);
            }
            Ok(Answer::Data(old))
        }
        _ => Ok(Answer::Nothing),
    }
}

fn check_len(data: &[u8], need: usize) -> Result<(), String> {
    if data.len() < need {
        return Err(format!(
            "{} bytes of data for {need} bytes of target",
            data.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_are_shared_or_exclusive_and_granted_in_order() {
        let mut q = LockQueue::default();
        assert!(q.request(0, false, 10));
        assert!(q.request(1, false, 11), "shared locks share");
        assert!(
            !q.request(2, true, 12),
            "exclusive waits for the shared ones"
        );
        assert!(
            !q.request(3, false, 13),
            "shared waits behind a waiting exclusive"
        );
        assert!(q.release(false).is_empty());
        assert_eq!(q.release(false), vec![(2, true, 12)]);
        assert!(q.is_held());
        assert_eq!(q.release(true), vec![(3, false, 13)]);
        assert!(!q.request(0, true, 14));
        assert_eq!(q.release(false), vec![(0, true, 14)]);
        assert!(q.release(true).is_empty());
        assert!(!q.is_held());
    }
}
