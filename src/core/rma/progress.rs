//! Progress for windows: every progress of the runtime serves them
//! ([`serve_all`]); and while a window exists, a task of the collective
//! executor keeps its worker thread running ([`keep_serving`]), so
//! passive-target operations are applied while the target's program
//! computes outside MPI. The worker polls, then yields, then sleeps a
//! millisecond between polls when idle: a target serves within about a
//! millisecond at a cost of about a thousand short wake-ups a second.
use std::future::poll_fn;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;

use super::target;
use super::Window;
use crate::core::collective::executor;
use crate::core::error::MpiResult;
use crate::core::handles::HandleTable;
use crate::core::p2p::engine::{Endpoints, Engine};
use crate::core::runtime;

/// Serves every window's target side and takes the replies its origin
/// side waits for; returns whether anything moved. Cheap when nothing is
/// in flight: a window is served only when a request for it waits in
/// the unexpected queue, or it has requests arriving or replies to take.
pub fn serve_all(
    windows: &mut HandleTable<Window>,
    engine: &mut Engine,
    ep: &mut Endpoints,
) -> bool {
    let waiting = engine.unexpected_contexts(super::wire::REQUEST_TAG);
    let mut moved = false;
    for w in windows.iter_mut() {
        if w.target.is_busy() || waiting.contains(&w.context_id) {
            moved |= target::serve(w, engine, ep);
        }
        if w.origin.has_pending(None) {
            moved |= w.origin.reap(engine);
        }
    }
    moved
}

/// Windows alive in this process (each holds a [`Serving`]).
static LIVE_WINDOWS: AtomicUsize = AtomicUsize::new(0);

/// A window's share of the background progress: while any exists, a task
/// of the collective executor stays pending, so its worker thread keeps
/// making progress. Dropping the last one lets the task end.
pub struct Serving(());

impl Drop for Serving {
    fn drop(&mut self) {
        LIVE_WINDOWS.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Takes a share of the background progress for a new window, starting
/// the task when it is the first. Call without the runtime lock.
pub fn keep_serving() -> MpiResult<Serving> {
    if LIVE_WINDOWS.fetch_add(1, Ordering::AcqRel) > 0 {
        return Ok(Serving(()));
    }
    let serving = Serving(());
    let request = executor::start(poll_fn(|_| {
        if LIVE_WINDOWS.load(Ordering::Acquire) > 0 {
            Poll::Pending
        } else {
            Poll::Ready(Ok(()))
        }
    }))?;
    // Nobody waits for it: it goes when it ends.
    runtime::lock().engine().free(request)?;
    Ok(serving)
}
