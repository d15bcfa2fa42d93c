//! Running collective algorithms. Each algorithm is an `async fn` over a
//! [`super::call::Call`]; the same code serves the blocking call and its
//! nonblocking form:
//!
//! - [`block`] drives it on the caller's thread: poll, then make progress
//!   (spinning a little, then yielding), until it is done;
//! - [`start`] makes it a request that `MPI_Wait`/`MPI_Test` and friends
//!   complete: the algorithm is polled once at once (so its first messages
//!   leave during the call), then handed to the process's collective
//!   worker, a thread that polls every unfinished collective and makes
//!   progress until none is left, marking each request complete as its
//!   algorithm ends. Collectives in flight interleave on that one thread,
//!   so any number of them, on any communicators, in any order the
//!   standard allows, all move; and the runtime being one lock makes a
//!   thread that runs communication safe.
//!
//! The worker exists only while there is work: it ends when its last
//! collective finishes, and [`quiesce`] joins it (the end of an epoch
//! leaves no thread behind).
//!
//! The request of a nonblocking collective is an ordinary request of the
//! point-to-point table with `Operation::Collective`: incomplete until the
//! worker finishes it, then it carries an empty status (or the
//! algorithm's error), so every completion call works on it unchanged.
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};
use std::thread::JoinHandle;

use once_cell::sync::Lazy;

use crate::abi::constants::*;
use crate::abi::types::{MPI_Request, MPI_Status};
use crate::core::error::{MpiError, MpiResult};
use crate::core::p2p::request::{Operation, Request};
use crate::core::runtime;

/// Polls before a waiting loop starts yielding the CPU.
const SPINS: u32 = 64;

/// Runs a collective algorithm to its end on this thread.
pub fn block<T>(algorithm: impl Future<Output = MpiResult<T>>) -> MpiResult<T> {
    let mut algorithm = pin!(algorithm);
    let mut cx = Context::from_waker(Waker::noop());
    let mut idle: u32 = 0;
    loop {
        if let Poll::Ready(result) = algorithm.as_mut().poll(&mut cx) {
            return result;
        }
        if runtime::lock().progress() {
            idle = 0;
        } else {
            back_off(&mut idle);
        }
    }
}

fn back_off(idle: &mut u32) {
    if *idle < SPINS {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
    *idle = idle.saturating_add(1);
}

type Algorithm = Pin<Box<dyn Future<Output = MpiResult> + Send>>;

struct Task {
    request: MPI_Request,
    algorithm: Algorithm,
}

impl Task {
    fn poll(&mut self) -> Poll<MpiResult> {
        self.algorithm
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
    }
}

#[derive(Default)]
struct Worker {
    /// Tasks handed over since the worker last looked.
    incoming: Vec<Task>,
    running: bool,
    thread: Option<JoinHandle<()>>,
}

static WORKER: Lazy<Mutex<Worker>> = Lazy::new(|| Mutex::new(Worker::default()));

fn worker() -> std::sync::MutexGuard<'static, Worker> {
    WORKER.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts a nonblocking collective; returns its request.
pub fn start(
    algorithm: impl Future<Output = MpiResult> + Send + 'static,
) -> MpiResult<MPI_Request> {
    let request = runtime::lock()
        .p2p
        .requests
        .insert(Request::new(Operation::Collective));
    let mut task = Task {
        request,
        algorithm: Box::pin(algorithm),
    };
    if let Poll::Ready(result) = task.poll() {
        finish(request, result);
        return Ok(request);
    }
    let mut w = worker();
    w.incoming.push(task);
    if !w.running {
        // The previous worker, if any, has handed back the work and is
        // ending (it holds no lock any more).
        if let Some(old) = w.thread.take() {
            let _ = old.join();
        }
        let thread = std::thread::Builder::new()
            .name("oxmpi-collectives".into())
            .spawn(run_worker)
            .map_err(|e| {
                MpiError::new(
                    MPI_ERR_OTHER,
                    format!("cannot start the collective worker thread: {e}"),
                )
            })?;
        w.thread = Some(thread);
        w.running = true;
    }
    Ok(request)
}

fn run_worker() {
    let mut tasks: Vec<Task> = Vec::new();
    let mut idle: u32 = 0;
    loop {
        {
            let mut w = worker();
            tasks.append(&mut w.incoming);
            if tasks.is_empty() {
                w.running = false;
                return;
            }
        }
        let mut moved = false;
        tasks.retain_mut(|task| match task.poll() {
            Poll::Ready(result) => {
                finish(task.request, result);
                moved = true;
                false
            }
            Poll::Pending => true,
        });
        moved |= runtime::lock().progress();
        if moved {
            idle = 0;
        } else {
            back_off(&mut idle);
        }
    }
}

/// Marks a collective's request complete with its outcome.
fn finish(request: MPI_Request, result: MpiResult) {
    let mut rt = runtime::lock();
    let Some(req) = rt.p2p.requests.get_mut(request) else {
        return;
    };
    match result {
        Ok(()) => req.finish(MPI_Status {
            MPI_SOURCE: MPI_ANY_SOURCE,
            MPI_TAG: MPI_ANY_TAG,
            MPI_ERROR: MPI_SUCCESS,
            ..Default::default()
        }),
        Err(e) => req.fail(e),
    }
    if req.freed {
        rt.p2p.requests.remove(request);
    }
}

/// Joins the collective worker if it has no work left (the end of an
/// epoch calls this, without the runtime lock). With collectives still in
/// flight (an erroneous program) the worker is left to finish them.
pub fn quiesce() {
    let mut w = worker();
    if !w.running {
        if let Some(thread) = w.thread.take() {
            let _ = thread.join();
        }
    } else {
        log::debug!(
            "collective worker still has {} new collectives at quiesce",
            w.incoming.len()
        );
    }
}
