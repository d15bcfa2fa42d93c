//! The origin side: turning `MPI_Put`, `MPI_Get`, the accumulates and
//! their request forms into requests to the target, and keeping track of
//! what is still in flight (the receives of replies) until it completes.
use std::sync::Arc;

use super::atomics;
use super::memory::{self, Exposed, Span};
use super::target;
use super::window::{invalid_window, Window};
use super::wire::{Header, Kind, DATA_TAG, DIRECT_MIN, REQUEST_TAG};
use crate::core::datatype::Datatype;
use crate::core::error::{MpiError, MpiResult};
use crate::core::matching::Pattern;
use crate::core::op::{kernels, BuiltinOp};
use crate::core::p2p::engine::{Endpoints, Engine};
use crate::core::p2p::request::{empty_status, Operation, Request};
use crate::core::p2p::user_buffer::UserBuffer;
use crate::core::runtime;
use crate::core::tool::pvars;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Aint, MPI_Request, MPI_Win};

/// What this origin waits for: the receive posted for a reply, or the
/// send of a large put's data; the target involved, and the program's
/// request it completes (`MPI_Rget`...).
struct Pending {
    request: MPI_Request,
    target: usize,
    user: Option<MPI_Request>,
}

#[derive(Default)]
pub struct OriginState {
    pending: Vec<Pending>,
    /// Operations sent to each target since creation (for fences).
    pub sent: Vec<u64>,
    /// Per target, whether a message went there since the last flush (a
    /// flush of a target reached only by loads and stores sends nothing).
    pub unflushed: Vec<bool>,
    next_reply: u32,
    /// Small puts waiting to be written by single copy.
    batch: PutBatch,
}

/// A put of fewer bytes than this to another rank's `MPI_Win_create`
/// memory on this node waits in the origin's batch (its data copied
/// there, so the origin buffer is free at once), and the batch is written
/// with one `process_vm_writev` at the next synchronization: a system call
/// costs about a microsecond here whatever it carries, so 64 puts of 8
/// bytes then a flush take one call, not 64.
const BATCHED_PUT_MAX: usize = 4096;
/// The batch is written when it holds this many bytes...
const BATCH_BYTES: usize = 64 * 1024;
/// ... or this many blocks.
const BATCH_BLOCKS: usize = 256;

/// Puts waiting to be written to one target by single copy (see
/// [`BATCHED_PUT_MAX`]): each block's address in the target and, in
/// `data`, the blocks' bytes in order. Written out ([`write_out`]) by
/// every synchronization call of the window, when full, and before any
/// other operation to the same target or any put to another, so the
/// operations of an origin reach a target in the order it made them.
#[derive(Default)]
struct PutBatch {
    target: usize,
    spans: Vec<Span>,
    data: Vec<u8>,
    puts: u64,
}

impl PutBatch {
    fn holds_puts_to(&self, target: usize) -> bool {
        !self.spans.is_empty() && self.target == target
    }
}

/// Writes the waiting puts (see [`PutBatch`]) into the target's memory. If
/// the kernel refuses (the target is gone, or its rights changed), they
/// go as messages instead, like every later operation to that target.
pub fn write_out(w: &mut Window, engine: &mut Engine, ep: &mut Endpoints) -> MpiResult {
    if w.origin.batch.spans.is_empty() {
        return Ok(());
    }
    let batch = std::mem::take(&mut w.origin.batch);
    let t = batch.target;
    let Some(memory) = w.single_copy[t] else {
        return Err(MpiError::new(
            MPI_ERR_INTERN,
            "puts batched for a target with no single copy",
        ));
    };
    if memory.write(&batch.spans, &batch.data) {
        crate::transport::counters::add(&pvars::RMA_SINGLE_COPY_OPS, batch.puts);
    } else {
        log::debug!("single copy to rank {t}'s window memory refused; messages from now on");
        w.single_copy[t] = None;
        let mut at = 0;
        for &(address, len) in &batch.spans {
            let header = Header {
                kind: Kind::Put,
                exclusive: false,
                data_follows: false,
                element: None,
                reply_tag: 0,
                op: 0,
                disp: (address - memory.base) as i64,
                blocks: vec![(0, len as u64)],
            };
            let start = header.encoded_len();
            let mut message = header.encode(len);
            message[start..].copy_from_slice(&batch.data[at..at + len]);
            at += len;
            target::send(w, engine, ep, t, REQUEST_TAG, message);
            w.origin.sent[t] += 1;
        }
        w.origin.unflushed[t] = true;
    }
    // Keep the allocations for the next batch.
    let mut emptied = batch;
    emptied.spans.clear();
    emptied.data.clear();
    emptied.puts = 0;
    w.origin.batch = emptied;
    Ok(())
}

impl OriginState {
    pub fn new(size: usize) -> OriginState {
        OriginState {
            sent: vec![0; size],
            unflushed: vec![false; size],
            ..Default::default()
        }
    }

    /// A fresh reply tag.
    pub fn reply_tag(&mut self) -> i32 {
        self.next_reply = self.next_reply.wrapping_add(1);
        super::wire::reply_tag(self.next_reply)
    }

    /// Whether a reply from `target` (any target for `None`) is awaited.
    pub fn has_pending(&self, target: Option<usize>) -> bool {
        self.pending
            .iter()
            .any(|p| target.is_none_or(|t| p.target == t))
    }

    /// Takes the replies that arrived, completing the program's requests
    /// they belong to; returns whether any did.
    pub fn reap(&mut self, engine: &mut Engine) -> bool {
        let before = self.pending.len();
        self.pending.retain(|p| {
            match engine.take_completed(p.request) {
                Ok(Some(_)) => {}
                Ok(None) => return true,
                Err(e) => log::error!("an RMA reply's receive: {e}"),
            }
            if let Some(user) = p.user {
                if let Some(req) = engine.requests.get_mut(user) {
                    // Nothing of the reply message: MPI leaves an RMA
                    // request's status undefined; MPICH reports an empty one.
                    req.finish(empty_status());
                    if req.freed {
                        engine.requests.remove(user);
                    }
                }
            }
            false
        });
        self.pending.len() != before
    }

    /// Waits (in the caller's loop) for a reply on a receive just posted.
    pub fn expect(&mut self, request: MPI_Request, target: usize, user: Option<MPI_Request>) {
        self.pending.push(Pending {
            request,
            target,
            user,
        });
    }
}

/// The operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmaOp {
    Put,
    Get,
    Accumulate(BuiltinOp),
    GetAccumulate(BuiltinOp),
    CompareAndSwap,
}

/// Where an operation goes at the target.
pub struct TargetSpec {
    pub rank: i32,
    pub disp: MPI_Aint,
    pub count: usize,
    pub datatype: Arc<Datatype>,
}

/// The origin's buffers: the data sent, the compare value, where the
/// result lands.
#[derive(Default)]
pub struct Buffers {
    pub origin: Option<UserBuffer>,
    pub compare: Option<UserBuffer>,
    pub result: Option<UserBuffer>,
}

/// The blocks `(offset, length)` that `count` elements of `datatype`
/// occupy, adjacent ones merged.
fn blocks_of(datatype: &Datatype, count: usize) -> Vec<(i64, u64)> {
    let mut blocks: Vec<(i64, u64)> = Vec::new();
    datatype.for_each_block(count, 0, count * datatype.size(), |disp, len| {
        if len == 0 {
            return;
        }
        match blocks.last_mut() {
            Some((at, l)) if *at + *l as i64 == disp as i64 => *l += len as u64,
            _ => blocks.push((disp as i64, len as u64)),
        }
    });
    blocks
}

/// Runs `f` on the `need` bytes of data in `buffer` (none: no bytes),
/// in place where the buffer is one block, else packed.
fn with_packed<R>(buffer: Option<&UserBuffer>, need: usize, f: impl FnOnce(&[u8]) -> R) -> R {
    match buffer {
        None => f(&[]),
        Some(b) => match b.contiguous_bytes(0, need) {
            Some(bytes) => f(bytes),
            None => {
                let mut data = vec![0u8; need];
                b.pack(0, &mut data);
                f(&data)
            }
        },
    }
}

/// Runs `f` on `need` bytes that end up in `buffer` (none: dropped), in
/// place where the buffer is one block, else unpacked after.
fn with_result<R>(buffer: Option<&UserBuffer>, need: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    let mut f = Some(f);
    if let Some(r) =
        buffer.and_then(|b| b.with_contiguous_mut(|bytes| (f.take().expect("once"))(bytes)))
    {
        return r;
    }
    let mut data = vec![0u8; need];
    let r = (f.take().expect("once"))(&mut data);
    if let Some(b) = buffer {
        b.unpack(0, &data);
    }
    r
}

/// Runs `f` on the target blocks of an access at `disp` of a fixed
/// window's rank whose memory starts at `base` (here, or in its process)
/// and holds `size` bytes: without an allocation for one block, whose
/// range the caller has checked.
fn with_spans<R>(
    base: usize,
    size: usize,
    disp: i64,
    blocks: &[(i64, u64)],
    f: impl FnOnce(&[Span]) -> R,
) -> MpiResult<R> {
    match blocks {
        [(offset, len)] => Ok(f(&[(base + (disp + offset) as usize, *len as usize)])),
        _ => {
            let spans = Exposed::Fixed { base, size }
                .locate(disp, blocks)
                .map_err(|e| MpiError::new(MPI_ERR_RMA_RANGE, e))?;
            Ok(f(&spans))
        }
    }
}

fn type_error(what: String) -> MpiError {
    MpiError::new(MPI_ERR_TYPE, what)
}

/// Starts an operation; returns the program's request (`MPI_Rput`...)
/// when `want_request`, else `MPI_REQUEST_NULL`.
pub fn issue(
    win: MPI_Win,
    op: RmaOp,
    buffers: Buffers,
    target: TargetSpec,
    want_request: bool,
) -> MpiResult<MPI_Request> {
    let mut rt = runtime::lock();
    let (windows, engine, ep) = rt.windows_engine_endpoints()?;
    let w = windows.get_mut(win).ok_or_else(|| invalid_window(win))?;
    let Some(t) = w.target_rank(target.rank)? else {
        return Ok(if want_request {
            engine.completed_null()
        } else {
            MPI_REQUEST_NULL
        });
    };
    if !w.may_access(t) {
        return Err(w.sync_error(&format!("{op:?}"), t));
    }
    let tdt = &target.datatype;
    let need = target.count * tdt.size();
    let (kind, builtin) = match op {
        RmaOp::Put => (Kind::Put, None),
        RmaOp::Get => (Kind::Get, None),
        RmaOp::Accumulate(b) => (Kind::Accumulate, Some(b)),
        RmaOp::GetAccumulate(b) => (Kind::GetAccumulate, Some(b)),
        RmaOp::CompareAndSwap => (Kind::CompareAndSwap, None),
    };
    let element = match (builtin, kind) {
        (Some(b), _) => {
            let element = tdt.basic_kind();
            match element {
                Some(k) if kernels::supports(b, k) => {}
                Some(k) if need > 0 => {
                    return Err(MpiError::new(
                        MPI_ERR_OP,
                        format!("{} is not defined for {k:?} values", b.name()),
                    ))
                }
                None if need > 0 => {
                    return Err(type_error(
                        "an accumulate's target datatype must hold one predefined type".into(),
                    ))
                }
                _ => {}
            }
            element
        }
        (None, Kind::CompareAndSwap) => tdt.basic_kind(),
        _ => None,
    };
    let sends_data = match op {
        RmaOp::Put | RmaOp::Accumulate(_) | RmaOp::CompareAndSwap => true,
        RmaOp::GetAccumulate(b) => b != BuiltinOp::NoOp,
        RmaOp::Get => false,
    };
    let origin_len = if sends_data {
        let len = buffers.origin.as_ref().map_or(0, UserBuffer::len);
        if len != need {
            return Err(type_error(format!(
                "the origin holds {len} bytes of data, the target {need}"
            )));
        }
        len
    } else {
        0
    };
    if let Some(result) = &buffers.result {
        if result.len() != need {
            return Err(type_error(format!(
                "the result buffer holds {} bytes, the target {need}",
                result.len()
            )));
        }
    }
    let peer = w.peers[t];
    let dynamic = matches!(w.exposed, Exposed::Dynamic { .. });
    let disp = if dynamic {
        target.disp
    } else {
        target.disp.saturating_mul(peer.disp_unit as i64)
    };
    // The target blocks: one for a contiguous datatype (listed without an
    // allocation, for the in-place path), else every block.
    let single = tdt
        .contiguous_span(target.count)
        .filter(|s| s.1 > 0)
        .map(|(lb, len)| (lb as i64, len as u64));
    let listed = match single {
        Some(_) => Vec::new(),
        None => blocks_of(tdt, target.count),
    };
    let blocks: &[(i64, u64)] = match &single {
        Some(block) => std::slice::from_ref(block),
        None => &listed,
    };
    if !dynamic && need > 0 {
        let low = blocks.iter().map(|b| disp + b.0).min().unwrap_or(disp);
        let high = blocks
            .iter()
            .map(|b| disp + b.0 + b.1 as i64)
            .max()
            .unwrap_or(disp);
        if low < 0 || high > peer.size as i64 {
            return Err(MpiError::new(
                MPI_ERR_RMA_RANGE,
                format!(
                    "bytes [{low}, {high}) of rank {t}'s window, which has {} bytes",
                    peer.size
                ),
            ));
        }
    }
    // Memory this process maps: a small put or get is a store or a load,
    // an accumulate is done in place under the memory's lock; complete at
    // once, at the target too.
    if let Some(direct) = w.direct[t].filter(|_| !dynamic) {
        let in_place = match op {
            RmaOp::Put | RmaOp::Get => need < DIRECT_MIN,
            _ => true,
        };
        if in_place {
            let use_atomics = w.atomics;
            let (origin, compare, result) = (
                buffers.origin.as_ref(),
                buffers.compare.as_ref(),
                buffers.result.as_ref(),
            );
            with_spans(direct.base, peer.size, disp, blocks, |spans| {
                match (op, element) {
                    (RmaOp::Put, _) => with_packed(origin, need, |data| memory::write(spans, data)),
                    (RmaOp::Get, _) => with_result(result, need, |out| memory::read(spans, out)),
                    (_, None) => {} // nothing to update (`need` is 0)
                    (RmaOp::Accumulate(b), Some(kind)) => with_packed(origin, need, |data| {
                        if !(use_atomics && atomics::accumulate(spans, kind, b, data, None)) {
                            let _held = direct.lock.lock();
                            memory::accumulate(spans, kind, b, data, None);
                        }
                    }),
                    (RmaOp::GetAccumulate(b), Some(kind)) => with_packed(origin, need, |data| {
                        with_result(result, need, |old| {
                            if !(use_atomics
                                && atomics::accumulate(spans, kind, b, data, Some(old)))
                            {
                                let _held = direct.lock.lock();
                                memory::accumulate(spans, kind, b, data, Some(old));
                            }
                        })
                    }),
                    (RmaOp::CompareAndSwap, Some(_)) => with_packed(origin, need, |new| {
                        with_packed(compare, need, |expected| {
                            with_result(result, need, |old| {
                                if !(use_atomics
                                    && atomics::compare_and_swap(spans, new, expected, old))
                                {
                                    let _held = direct.lock.lock();
                                    memory::compare_and_swap(spans, new, expected, old);
                                }
                            })
                        })
                    }),
                }
            })?;
            return Ok(if want_request {
                engine.completed(empty_status())
            } else {
                MPI_REQUEST_NULL
            });
        }
    }
    // `MPI_Win_create` memory of a rank of this node: a put or get copies
    // straight into or out of it, complete at once at the target too.
    // Accumulates stay messages: the target applies them one at a time,
    // which is their atomicity (see the module documentation of `rma`).
    // Small puts to another process wait in a batch (see `PutBatch`);
    // anything else to a target first writes out the puts waiting for it.
    if w.origin.batch.holds_puts_to(t) || (op == RmaOp::Put && !w.origin.batch.spans.is_empty()) {
        let batched_here = op == RmaOp::Put && need < BATCHED_PUT_MAX && w.origin.batch.target == t;
        if !batched_here {
            write_out(w, engine, ep)?;
        }
    }
    if let Some(memory) = w.single_copy[t].filter(|_| matches!(op, RmaOp::Put | RmaOp::Get)) {
        let batched = op == RmaOp::Put && need < BATCHED_PUT_MAX && !memory.own;
        let batch = &mut w.origin.batch;
        let (origin, result) = (buffers.origin.as_ref(), buffers.result.as_ref());
        let copied = with_spans(memory.base, peer.size, disp, blocks, |spans| {
            if batched {
                batch.target = t;
                with_packed(origin, need, |data| batch.data.extend_from_slice(data));
                batch.spans.extend_from_slice(spans);
                batch.puts += 1;
                true
            } else if op == RmaOp::Put {
                with_packed(origin, need, |data| memory.write(spans, data))
            } else {
                with_result(result, need, |out| memory.read(spans, out))
            }
        })?;
        if copied {
            if !batched {
                pvars::count(&pvars::RMA_SINGLE_COPY_OPS);
            } else if batch.data.len() >= BATCH_BYTES || batch.spans.len() >= BATCH_BLOCKS {
                write_out(w, engine, ep)?;
            }
            return Ok(if want_request {
                engine.completed(empty_status())
            } else {
                MPI_REQUEST_NULL
            });
        }
        // The kernel refused (the target's rights changed, or it is gone):
        // this and later operations to it are messages.
        log::debug!("single copy to rank {t}'s window memory refused; messages from now on");
        w.single_copy[t] = None;
    }
    w.origin.unflushed[t] = true;
    let reply = if buffers.result.is_some() {
        w.origin.reply_tag()
    } else {
        0
    };
    // A large put to one block sends its data apart, from the origin's
    // buffer (see `wire::DATA_TAG`).
    let direct = kind == Kind::Put && !dynamic && blocks.len() == 1 && need >= DIRECT_MIN;
    let header = Header {
        kind,
        exclusive: false,
        data_follows: direct,
        element,
        reply_tag: reply,
        op: builtin.map_or(0, BuiltinOp::handle),
        disp,
        blocks: blocks.to_vec(),
    };
    let compare_len = if kind == Kind::CompareAndSwap {
        need
    } else {
        0
    };
    let inline_len = if direct { 0 } else { origin_len };
    let at = header.encoded_len();
    let mut message = header.encode(inline_len + compare_len);
    if let Some(origin) = buffers.origin.as_ref().filter(|_| sends_data && !direct) {
        origin.pack(0, &mut message[at..at + origin_len]);
    }
    if let Some(compare) = buffers.compare.as_ref().filter(|_| compare_len > 0) {
        compare.pack(0, &mut message[at + origin_len..]);
    }
    let mut user = None;
    if want_request && (direct || buffers.result.is_some()) {
        user = Some(engine.requests.insert(Request::new(Operation::Collective)));
    }
    if let Some(result) = buffers.result {
        let pattern = Pattern {
            context_id: w.context_id,
            source: t as i32,
            tag: reply,
        };
        let receive = engine.irecv(ep, result, pattern);
        w.origin.expect(receive, t, user);
    }
    target::send(w, engine, ep, t, REQUEST_TAG, message);
    if direct {
        let data = buffers.origin.expect("a put has data");
        let send = target::send_buffer(w, engine, ep, t, DATA_TAG, data);
        w.origin.expect(send, t, user);
    }
    w.origin.sent[t] += 1;
    Ok(match user {
        Some(u) => u,
        None if want_request => engine.completed(empty_status()),
        None => MPI_REQUEST_NULL,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::datatype::{constructors, lookup};

    #[test]
    fn blocks_merge_where_the_data_is_contiguous() {
        let int = lookup(MPI_INT).unwrap();
        assert_eq!(blocks_of(&int, 5), vec![(0, 20)]);
        let vector = constructors::vector(3, 2, 4, &int).unwrap();
        assert_eq!(blocks_of(&vector, 1), vec![(0, 8), (16, 8), (32, 8)]);
        let full = constructors::vector(3, 2, 2, &int).unwrap();
        assert_eq!(blocks_of(&full, 2), vec![(0, 48)]);
        assert!(blocks_of(&int, 0).is_empty());
    }
}
