//! Waiting: how a blocking call waits for its condition while moving
//! traffic along. It takes the runtime lock only to make progress and test
//! the condition, so other threads' calls run in between; between tries it
//! spins a little, then yields the CPU, so many ranks oversubscribing few
//! cores still progress at full speed.
use super::error::MpiResult;
use super::runtime::{self, Runtime};

const SPINS: u32 = 64;

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
        if tries < SPINS {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
        tries = tries.saturating_add(1);
    }
}
