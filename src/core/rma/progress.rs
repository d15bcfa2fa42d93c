//! Progress for windows: every progress of the runtime serves them
//! ([`serve_all`]); and while a window exists, a task of the collective
//! executor keeps its worker thread running ([`keep_serving`]), so
//! passive-target operations are applied while the target's program
//! computes outside MPI. The worker polls, then yields, then sleeps a
//! millisecond between polls when idle: a target serves within about a
//! millisecond at a cost of about a thousand short wake-ups a second.
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;

use super::target;
use super::Window;
use crate::core::collective::executor;
use crate::core::error::MpiResult;
use crate::core::handles::HandleTable;
use crate::core::p2p::engine::{Endpoints, Engine};
use crate::core::runtime;

/// Serves every window's target side and takes the replies its origin
/// side waits for; returns whether anything moved.
pub fn serve_all(
    windows: &mut HandleTable<Window>,
    engine: &mut Engine,
    ep: &mut Endpoints,
) -> bool {
    let mut moved = false;
    for w in windows.iter_mut() {
        moved |= target::serve(w, engine, ep);
        moved |= w.origin.reap(engine);
    }
    moved
}

/// Keeps the collective worker making progress until the returned flag
/// is cleared (the window's drop clears it). Call without the runtime
/// lock.
pub fn keep_serving() -> MpiResult<Arc<AtomicBool>> {
    let alive = Arc::new(AtomicBool::new(true));
    let flag = alive.clone();
    let request = executor::start(poll_fn(move |_| {
        if flag.load(Ordering::Acquire) {
            Poll::Pending
        } else {
            Poll::Ready(Ok(()))
        }
    }))?;
    // Nobody waits for it: it goes when it ends.
    runtime::lock().engine().free(request)?;
    Ok(alive)
}
