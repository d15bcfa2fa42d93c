//! Waiting: how a blocking call waits for its condition while moving
//! traffic along. It takes the runtime lock only to make progress and test
//! the condition, so other threads' calls run in between; between tries it
//! spins, then yields the CPU, so many ranks oversubscribing few cores
//! still progress at full speed; a long wait then sleeps on the
//! shared-memory doorbell that senders ring.
//!
//! How long it spins depends on the node: when this node's ranks fit on
//! the cores this process may use, a peer's reply comes from a process that
//! is running, so polling on (as MPICH does) gives the lowest latency; when
//! they oversubscribe the cores, the reply needs this process's core, so
//! it yields early. `OXMPI_SPIN_POLLS` overrides the choice.
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::error::MpiResult;
use super::runtime::{self, Runtime};

/// Polls before yielding when the node's ranks oversubscribe its cores:
/// none. A peer this wait needs may be ready to run on this very core, and
/// every poll before the yield delays it (16 ranks on 2 cores: a barrier
/// took about twice as long with 64 polls before each yield).
const SHARED_CORE_SPINS: u32 = 0;
/// Polls before yielding when each rank has a core (a few milliseconds).
const OWN_CORE_SPINS: u32 = 1 << 15;
/// The polls of the current policy (see [`set_local_processes`]).
static SPINS: AtomicU32 = AtomicU32::new(SHARED_CORE_SPINS);

/// Whether this node's ranks fit on its cores (each can count on running
/// while it polls); false until the process is set up.
pub fn has_own_core() -> bool {
    OWN_CORE.load(Ordering::Relaxed)
}

static OWN_CORE: AtomicBool = AtomicBool::new(false);

/// Chooses the spin policy for `local` processes on this node.
pub fn set_local_processes(local: usize) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let own_core = crate::config::get().own_core.unwrap_or(local <= cores);
    OWN_CORE.store(own_core, Ordering::Relaxed);
    let spins = chosen_spin_polls().unwrap_or(if own_core {
        OWN_CORE_SPINS
    } else {
        SHARED_CORE_SPINS
    });
    SPINS.store(spins, Ordering::Relaxed);
}

/// `OXMPI_SPIN_POLLS` as MPI_T last wrote it (`NOT_WRITTEN`: none).
static SPINS_WRITTEN: AtomicI64 = AtomicI64::new(NOT_WRITTEN);
const NOT_WRITTEN: i64 = -1;

/// The polls the program chose: through MPI_T, else `OXMPI_SPIN_POLLS`.
fn chosen_spin_polls() -> Option<u32> {
    match SPINS_WRITTEN.load(Ordering::Relaxed) {
        NOT_WRITTEN => crate::config::get().spin_polls,
        written => Some(written as u32),
    }
}

/// The polls a wait makes before it yields (`OXMPI_SPIN_POLLS` in
/// effect): the chosen value, else the current policy's.
pub fn spin_polls() -> u32 {
    chosen_spin_polls().unwrap_or_else(|| SPINS.load(Ordering::Relaxed))
}

/// MPI_T writes `OXMPI_SPIN_POLLS`: the next wait uses it, and so do the
/// later epochs.
pub fn set_spin_polls(polls: u32) {
    log::debug!("OXMPI_SPIN_POLLS set to {polls} through MPI_T");
    SPINS_WRITTEN.store(i64::from(polls), Ordering::Relaxed);
    SPINS.store(polls, Ordering::Relaxed);
}

/// Yields before a wait sleeps (on the doorbell, or briefly)...
const YIELDS: u32 = 512;
/// ... or the time it may spend yielding, whichever ends first. Where the
/// node's runnable threads are few, a yield comes back within a
/// microsecond or so and the count ends the phase; where many threads
/// (the program's own, spinning) share the cores, each yield can give away
/// a whole time slice, and 512 of them keep a waiting thread yielding
/// long after a sleeper would have been woken (MPICH's `threads/pt2pt/multisend4`: 25
/// threads on 2 cores took 52 s with the count alone, 33 s with this
/// limit; its `-mode=1` 37 s and 16 s). A sleeper is woken by the
/// sender's doorbell and runs at once. On 16 single-threaded ranks on 2
/// cores the collectives' times did not move beyond the noise.
const YIELD_TIME: Duration = Duration::from_micros(500);

/// The yielding part of a wait, shared by every waiting loop: see
/// [`YIELDS`] and [`YIELD_TIME`].
#[derive(Debug, Default)]
pub struct Yielding {
    yields: u32,
    started: Option<Instant>,
}

impl Yielding {
    /// Yields the CPU and returns true, or returns false when this wait
    /// has yielded long enough and should sleep instead.
    pub fn yield_now(&mut self) -> bool {
        let now = Instant::now();
        let started = *self.started.get_or_insert(now);
        if self.yields >= YIELDS || now.duration_since(started) >= YIELD_TIME {
            return false;
        }
        self.yields += 1;
        std::thread::yield_now();
        true
    }

    /// The wait made progress: the next idle stretch yields again first.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}
/// The longest sleep: frames that ring no doorbell (from this process's
/// other threads, or other transports) wait at most this long.
const NAP: Duration = Duration::from_millis(1);

/// Sleeps until a shared-memory sender rings this process's doorbell (or
/// `NAP` passes), after a last look under the lock; with
/// `wake_on_progress`, that last look ends the wait when it moved any frame
/// (for a caller that tests its condition outside the lock).
fn sleep_until_rung<T>(
    poll: &mut impl FnMut(&mut Runtime) -> MpiResult<Option<T>>,
    wake_on_progress: bool,
) -> MpiResult<Option<T>> {
    let (bell, tcp_fd) = {
        let mut rt = runtime::lock();
        (rt.doorbell(), rt.tcp_ready_fd())
    };
    let Some(bell) = bell else {
        // No shared memory: a last look at every transport (an idle TCP
        // listener too, so that a connection waiting to be accepted does
        // not keep the socket set ready), then sleep until a TCP socket is
        // ready (or briefly).
        {
            let mut rt = runtime::lock();
            let moved = rt.progress_before_sleep();
            if let Some(value) = poll(&mut rt)? {
                return Ok(Some(value));
            }
            if moved && wake_on_progress {
                return Ok(None);
            }
        }
        match tcp_fd {
            Some(fd) => crate::transport::tcp::wait_readable(fd, NAP),
            None => std::thread::sleep(NAP / 20),
        }
        return Ok(None);
    };
    let ticket = bell.prepare_sleep();
    {
        let mut rt = runtime::lock();
        let moved = rt.progress_before_sleep();
        if let Some(value) = poll(&mut rt)? {
            return Ok(Some(value));
        }
        if rt.has_pending_arrivals() || (moved && wake_on_progress) {
            return Ok(None);
        }
    }
    ticket.wait(NAP);
    Ok(None)
}

/// For a wait whose condition is tested outside the runtime lock (a
/// blocking collective's algorithm, see `collective::executor::block`)
/// that has spun and yielded long enough: sleeps as [`block_on`] does,
/// until a frame arrives or a short while passes, unless a last progress
/// moves a frame (the caller then tests its condition again at once).
pub fn nap() -> MpiResult {
    sleep_until_rung(&mut |_: &mut Runtime| Ok(None::<()>), true).map(|_| ())
}

/// Looks at the shared-memory rings this many times, under the lock,
/// between two polls of a spinning wait (see [`block_on`]).
const RING_WATCHES: u32 = 32;
/// Polls under one holding of the lock at most, so that frames arriving
/// all the time (none of them what this wait wants) do not keep other
/// threads, and the collectives' helper, out.
const POLLS_PER_LOCK: u32 = 16;

/// Runs `poll` under the lock, after progress, until it returns a value.
///
/// While it spins with a core of its own, a failed poll is followed by a
/// short watch of the shared-memory rings under the same lock: a load of
/// each ring's next stamp, polled again as soon as one holds a frame. A
/// message from a peer on this node is then seen within a few nanoseconds
/// of its arrival, with no lock traffic in between; other threads wait
/// for the lock at most [`POLLS_PER_LOCK`] polls and watches.
pub fn block_on<T>(poll: impl FnMut(&mut Runtime) -> MpiResult<Option<T>>) -> MpiResult<T> {
    block_on_locked(runtime::lock(), poll)
}

/// [`block_on`], starting with the lock the caller holds (the first poll
/// then follows what the caller did under it without a release).
pub fn block_on_locked<T>(
    guard: runtime::RuntimeGuard,
    mut poll: impl FnMut(&mut Runtime) -> MpiResult<Option<T>>,
) -> MpiResult<T> {
    let spins = SPINS.load(Ordering::Relaxed);
    let watch = has_own_core();
    let mut tries: u32 = 0;
    let mut yielding = Yielding::default();
    let mut first = Some(guard);
    loop {
        {
            let mut rt = first.take().unwrap_or_else(runtime::lock);
            for held in 1.. {
                rt.progress();
                if let Some(value) = poll(&mut rt)? {
                    return Ok(value);
                }
                if !watch
                    || held == POLLS_PER_LOCK
                    || tries >= spins
                    || !rt.watch_rings(RING_WATCHES)
                {
                    break;
                }
                tries += 1;
            }
        }
        // Pending nonblocking collectives advance while this thread waits
        // (what it waits for may be one of them).
        if super::collective::executor::help() {
            tries = 0;
            yielding.reset();
            continue;
        }
        // While spinning, poll again at once: a poll is long enough not to
        // hammer the lock, and the ring watch already pauses between its
        // looks (a PAUSE here, before the ring watch existed, delayed
        // seeing the message: the median 8-byte latency dropped by about
        // 7% without it).
        if tries >= spins {
            if !yielding.yield_now() {
                if let Some(value) = sleep_until_rung(&mut poll, false)? {
                    return Ok(value);
                }
            }
        } else {
            tries += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yielding_ends_after_its_count() {
        let mut y = Yielding::default();
        let mut yielded = 0;
        while y.yield_now() {
            yielded += 1;
            assert!(yielded <= YIELDS, "yielded past the count");
        }
        // Either the count or the time ended it; never before a first yield.
        assert!(yielded >= 1);
        assert!(!y.yield_now(), "an ended phase stays ended");
        y.reset();
        assert!(y.yield_now(), "a reset phase yields again");
    }

    #[test]
    fn yielding_ends_after_its_time() {
        let mut y = Yielding::default();
        assert!(y.yield_now());
        std::thread::sleep(YIELD_TIME + Duration::from_millis(1));
        assert!(!y.yield_now(), "yielded on past the time limit");
    }
}
