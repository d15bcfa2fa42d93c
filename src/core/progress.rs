//! Waiting: how a blocking call waits for its condition while moving
//! traffic along. It takes the runtime lock only to make progress and test
//! the condition, so other threads' calls run in between; between tries it
//! spins a little, then yields the CPU, so many ranks oversubscribing few
//! cores still progress at full speed; a long wait then sleeps on the
//! shared-memory doorbell that senders ring.
use std::time::Duration;

use super::error::MpiResult;
use super::runtime::{self, Runtime};

const SPINS: u32 = 64;
/// Yields before sleeping on the doorbell.
const YIELDS: u32 = 512;
/// The longest sleep: frames that ring no doorbell (from this process's
/// other threads, or other transports) wait at most this long.
const NAP: Duration = Duration::from_millis(1);

/// Sleeps until a shared-memory sender rings this process's doorbell (or
/// `NAP` passes), after a last look under the lock.
fn sleep_until_rung<T>(
    poll: &mut impl FnMut(&mut Runtime) -> MpiResult<Option<T>>,
) -> MpiResult<Option<T>> {
    let bell = runtime::lock().doorbell();
    let Some(bell) = bell else {
        std::thread::sleep(NAP / 20);
        return Ok(None);
    };
    let ticket = bell.prepare_sleep();
    {
        let mut rt = runtime::lock();
        rt.progress();
        if let Some(value) = poll(&mut rt)? {
            return Ok(Some(value));
        }
        if rt.has_pending_arrivals() {
            return Ok(None);
        }
    }
    ticket.wait(NAP);
    Ok(None)
}

/// Runs `poll` under the lock, after progress, until it returns a value.
pub fn block_on<T>(mut poll: impl FnMut(&mut Runtime) -> MpiResult<Option<T>>) -> MpiResult<T> {
    let mut tries: u32 = 0;
    loop {
        {
            let mut rt = runtime::lock();
            rt.progress();
            if let Some(value) = poll(&mut rt)? {
                return Ok(value);
            }
        }
        // Pending nonblocking collectives advance while this thread waits
        // (what it waits for may be one of them).
        if super::collective::executor::help() {
            tries = 0;
            continue;
        }
        if tries < SPINS {
            std::hint::spin_loop();
        } else if tries < SPINS + YIELDS {
            std::thread::yield_now();
        } else if let Some(value) = sleep_until_rung(&mut poll)? {
            return Ok(value);
        }
        tries = tries.saturating_add(1);
    }
}
