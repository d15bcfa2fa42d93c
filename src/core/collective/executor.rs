//! Running collective algorithms. Each algorithm is an `async fn` over a
//! [`super::call::Call`]; the same code serves the blocking call and its
//! nonblocking form:
//!
//! - [`block`] drives it on the caller's thread: poll, then make progress
//!   (spinning a little, then yielding, then sleeping until a frame comes,
//!   as every blocking call does), until it is done;
//! - [`start`] makes it a request that `MPI_Wait`/`MPI_Test` and friends
//!   complete. The algorithm is polled once at once (so its first messages
//!   leave during the call), then joins the pending collectives, which
//!   advance in two ways: any thread waiting in oxmpi (`block_on`, a
//!   blocking collective) polls them between its own tries ([`help`]), and
//!   the collective worker, a thread that exists while collectives are
//!   pending (and lingers a little after), polls them too, so they also
//!   move while the program computes or only tests. Whoever polls takes the
//!   whole pending set, so each algorithm runs on one thread at a time; all
//!   of them interleave, so any number of collectives on any communicators,
//!   started in any order the standard allows, all move. The runtime being
//!   one lock makes communication from several threads safe.
//!
//! The request of a nonblocking collective is an ordinary request of the
//! point-to-point table with `Operation::Collective`: incomplete until its
//! algorithm ends, then it carries an empty status (or the algorithm's
//! error), so every completion call works on it unchanged. A started
//! persistent collective is one too ([`restart`] runs each of its calls on
//! its handle), which completion then makes inactive.
//!
//! [`quiesce`] ends and joins the worker and frees the scratch-buffer pool
//! (the end of an epoch calls it, so no thread outlives the epoch); left
//! alone the worker ends after [`LINGER`] without work.
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::{Condvar, LazyLock};
use std::task::{Context, Poll, Waker};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::core::error::{MpiError, MpiResult};
use crate::core::locks::{Level, OrderedGuard, OrderedMutex};
use crate::core::p2p::request::{Operation, Request};
use crate::core::progress::Yielding;
use crate::core::runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Request, MPI_Status};

/// Idle polls after which a blocking collective, or the worker, yields
/// (none when this node's ranks oversubscribe its cores).
const BLOCK_SPINS: u32 = 64;
/// What the worker sleeps between polls once it has yielded long enough
/// (see `progress::Yielding`; a waiting thread drives the collectives
/// itself meanwhile, and sleeps on the doorbell). The worker never sleeps
/// on the epoch's doorbell: the end of the epoch unmaps it while the
/// worker may still be around.
const WORKER_NAP: Duration = Duration::from_millis(1);
/// How long the worker waits for new collectives before it ends.
pub const LINGER: Duration = Duration::from_millis(50);

/// Runs a collective algorithm to its end on this thread.
pub fn block<T>(algorithm: impl Future<Output = MpiResult<T>>) -> MpiResult<T> {
    let mut algorithm = pin!(algorithm);
    let mut cx = Context::from_waker(Waker::noop());
    // Polls before yielding the CPU: a few (not a point-to-point wait's
    // milliseconds: with several threads per process in collectives at
    // once, as in `MPI_Comm_dup` from many threads, long polls starve the
    // thread that would answer); none when this node's ranks oversubscribe
    // its cores, since the peers this call waits for need the CPU it would
    // spin on.
    let spins = if crate::core::progress::has_own_core() {
        BLOCK_SPINS
    } else {
        0
    };
    let mut idle: u32 = 0;
    let mut yielding = Yielding::default();
    loop {
        if let Poll::Ready(result) = algorithm.as_mut().poll(&mut cx) {
            return result;
        }
        let progressed = runtime::lock().progress();
        // (The guard is gone: `help` takes the lock itself.)
        let moved = help() || progressed;
        if moved {
            idle = 0;
            yielding.reset();
        } else if idle < spins {
            std::hint::spin_loop();
            idle += 1;
        } else if !yielding.yield_now() {
            crate::core::progress::nap()?;
        }
    }
}

pub type Algorithm = Pin<Box<dyn Future<Output = MpiResult> + Send>>;

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
struct Pending {
    tasks: Vec<Task>,
    /// A thread has taken `tasks` to poll them.
    polling: bool,
    worker_running: bool,
    stop_worker: bool,
    worker: Option<JoinHandle<()>>,
}

static PENDING: LazyLock<OrderedMutex<Pending>> =
    LazyLock::new(|| OrderedMutex::new(Level::PendingCollectives, Pending::default()));
/// False only while no task is pending (set under the lock with each push,
/// cleared under the lock when the list is found empty), so `help` skips
/// the lock on the point-to-point fast path.
static MAY_HAVE_TASKS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static WORK_ARRIVED: Condvar = Condvar::new();

fn pending() -> OrderedGuard<'static, Pending> {
    PENDING.lock()
}

/// Starts a nonblocking collective; returns its request.
pub fn start(
    algorithm: impl Future<Output = MpiResult> + Send + 'static,
) -> MpiResult<MPI_Request> {
    let request = runtime::lock()
        .engine()
        .requests
        .insert(Request::new(Operation::Collective));
    restart(request, Box::pin(algorithm))?;
    Ok(request)
}

/// Runs `algorithm` on `request`, an existing request already made
/// pending (a started persistent collective: see `Engine::start`).
pub fn restart(request: MPI_Request, algorithm: Algorithm) -> MpiResult {
    let mut task = Task { request, algorithm };
    if let Poll::Ready(result) = task.poll() {
        finish(request, result);
        return Ok(());
    }
    let mut p = pending();
    p.tasks.push(task);
    MAY_HAVE_TASKS.store(true, std::sync::atomic::Ordering::Release);
    if !p.worker_running {
        // A previous worker has ended (or is ending, holding no lock).
        if let Some(old) = p.worker.take() {
            let _ = old.join();
        }
        p.stop_worker = false;
        let worker = std::thread::Builder::new()
            .name("oxmpi-collectives".into())
            .spawn(run_worker)
            .map_err(|e| {
                MpiError::new(
                    MPI_ERR_OTHER,
                    format!("cannot start the collective worker thread: {e}"),
                )
            })?;
        p.worker = Some(worker);
        p.worker_running = true;
    }
    WORK_ARRIVED.notify_one();
    Ok(())
}

/// Puts taken tasks back even if polling one panics.
struct Taken(Vec<Task>);

impl Drop for Taken {
    fn drop(&mut self) {
        let mut p = pending();
        let mut tasks = std::mem::take(&mut self.0);
        tasks.append(&mut p.tasks);
        p.tasks = tasks;
        p.polling = false;
    }
}

/// Polls the pending nonblocking collectives once, unless another thread
/// is at it; returns whether one finished. Called without the runtime
/// lock by any thread that waits.
pub fn help() -> bool {
    if !MAY_HAVE_TASKS.load(std::sync::atomic::Ordering::Acquire) {
        return false;
    }
    let mut taken = {
        let mut p = pending();
        if p.tasks.is_empty() && !p.polling {
            MAY_HAVE_TASKS.store(false, std::sync::atomic::Ordering::Release);
            return false;
        }
        if p.polling || p.tasks.is_empty() {
            return false;
        }
        p.polling = true;
        Taken(std::mem::take(&mut p.tasks))
    };
    let mut finished = false;
    taken.0.retain_mut(|task| match task.poll() {
        Poll::Ready(result) => {
            finish(task.request, result);
            finished = true;
            false
        }
        Poll::Pending => true,
    });
    finished
}

fn run_worker() {
    let worker_spins = if crate::core::progress::has_own_core() {
        BLOCK_SPINS
    } else {
        0
    };
    let mut idle: u32 = 0;
    let mut yielding = Yielding::default();
    loop {
        {
            let mut p = pending();
            loop {
                if p.stop_worker {
                    p.worker_running = false;
                    return;
                }
                if !p.tasks.is_empty() || p.polling {
                    break;
                }
                let (guard, timed_out) = p.wait_timeout(&WORK_ARRIVED, LINGER);
                p = guard;
                if timed_out && p.tasks.is_empty() && !p.polling {
                    p.worker_running = false;
                    return;
                }
            }
        }
        let finished = help();
        let moved = runtime::lock().progress() || finished;
        if moved {
            idle = 0;
            yielding.reset();
            continue;
        }
        if idle < worker_spins {
            std::hint::spin_loop();
            idle += 1;
        } else if !yielding.yield_now() {
            std::thread::sleep(WORKER_NAP);
        }
    }
}

/// Marks a collective's request complete with its outcome.
fn finish(request: MPI_Request, result: MpiResult) {
    let mut rt = runtime::lock();
    let engine = rt.engine();
    let Some(req) = engine.requests.get_mut(request) else {
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
        engine.requests.remove(request);
    }
}

/// How long the end of an epoch helps pending collectives finish before
/// it leaves them to the worker (see [`quiesce`]).
const QUIESCE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Ends and joins the collective worker when no collective is pending
/// (the end of an epoch calls this, without the runtime lock). With
/// collectives still pending (an erroneous program) the worker is left to
/// finish them.
pub fn quiesce() {
    // Tasks that ended without being polled since (the background
    // progress of windows, once the last window is gone) finish now. Up
    // to a time, not a number of tries: on a loaded machine a thousand
    // yields can pass before the task's last message arrives, and the
    // worker would then outlive the epoch.
    let deadline = std::time::Instant::now() + QUIESCE_PATIENCE;
    while std::time::Instant::now() < deadline {
        help();
        let p = pending();
        if p.tasks.is_empty() && !p.polling {
            break;
        }
        drop(p);
        std::thread::yield_now();
    }
    let worker = {
        let mut p = pending();
        if !p.tasks.is_empty() || p.polling {
            log::debug!(
                "{} nonblocking collectives still pending at the end of the epoch",
                p.tasks.len()
            );
            return;
        }
        p.stop_worker = true;
        WORK_ARRIVED.notify_all();
        p.worker.take()
    };
    if let Some(worker) = worker {
        let _ = worker.join();
    }
    super::buffer::release_pool();
}
