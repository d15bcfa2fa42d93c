//! The target side: taking a window's requests off its context, applying
//! them in order per origin, granting locks, and counting what
//! synchronization needs (operations applied, for fences; PSCW notices).
use std::collections::VecDeque;

use super::memory;
use super::wire::{Header, Kind, REQUEST_TAG};
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
            held: vec![Vec::new(); size],
            posts: vec![0; size],
            completes: vec![0; size],
            ..Default::default()
        }
    }

    /// Whether requests are still arriving.
    pub fn is_busy(&self) -> bool {
        self.arrivals.iter().any(|q| !q.is_empty())
    }
}

/// Sends `data` to `origin` on `tag` (a reply or a notice).
pub fn send(
    win: &Window,
    engine: &mut Engine,
    ep: &mut Endpoints,
    origin: usize,
    tag: i32,
    data: Vec<u8>,
) {
    let id = engine.isend(
        ep,
        SendArgs {
            buf: UserBuffer::packed(data),
            dest: win.members[origin],
            context_id: win.context_id,
            source: win.rank as i32,
            tag,
            synchronous: false,
        },
    );
    // Dropped once sent: nobody waits for it.
    let _ = engine.free(id);
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
                Some(queue) => queue.push_back(Arrival { request, bytes }),
                None => log::error!("RMA request from rank {source}, outside the window"),
            },
            Err(e) => log::error!("receiving an RMA request: {e}"),
        }
        moved = true;
    }
    for origin in 0..win.target.arrivals.len() {
        while let Some(front) = win.target.arrivals[origin].front() {
            match engine.take_completed(front.request) {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => log::error!("an RMA request's receive: {e}"),
            }
            let arrival = win.target.arrivals[origin]
                .pop_front()
                .expect("the front is there");
            apply(win, engine, ep, origin, &arrival.bytes);
            moved = true;
        }
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
                (kind != Kind::Put && kind != Kind::Accumulate).then(Vec::new)
            });
            if let Some(answer) = answer {
                send(win, engine, ep, origin, reply, answer);
            }
        }
    }
}

/// Reads or updates the window memory; returns the reply's data for the
/// kinds that have one.
fn access(win: &Window, header: &Header, data: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let spans = win.exposed.locate(header.disp, &header.blocks)?;
    let need = header.block_bytes() as usize;
    let element = || header.element.ok_or("no element kind");
    let op =
        || BuiltinOp::from_handle(header.op).ok_or_else(|| format!("operation {:#x}", header.op));
    match header.kind {
        Kind::Put => {
            check_len(data, need)?;
            memory::write(&spans, data);
            Ok(None)
        }
        Kind::Get => Ok(Some(memory::read_all(&spans))),
        Kind::Accumulate => {
            check_len(data, need)?;
            memory::accumulate(&spans, element()?, op()?, data, false);
            Ok(None)
        }
        Kind::GetAccumulate => {
            let op = op()?;
            if op != BuiltinOp::NoOp {
                check_len(data, need)?;
            }
            Ok(memory::accumulate(&spans, element()?, op, data, true))
        }
        Kind::CompareAndSwap => {
            check_len(data, 2 * need)?;
            let (new, compare) = data.split_at(need);
            let old = memory::read_all(&spans);
            if old == compare {
                memory::write(&spans, new);
            }
            Ok(Some(old))
        }
        _ => Ok(None),
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
