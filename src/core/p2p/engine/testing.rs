//! Engines over `self`-only endpoints, for the unit tests of the engine
//! and its neighbours. Process 0 is this process; any other process is
//! never reachable (its card is never found), so frames to it stay in the
//! outbox.

use super::{Endpoints, Engine, SendArgs};
use crate::core::matching::{Pattern, ANY};
use crate::core::p2p::user_buffer::{byte_type, UserBuffer};
use crate::transport::ProcessId;

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
        buf: unsafe { UserBuffer::new(data.as_ptr().cast(), data.len(), byte_type()) },
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
    unsafe { UserBuffer::new(buf.as_mut_ptr().cast(), buf.len(), byte_type()) }
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
