//! Traffic counters per transport, for MPI_T's performance variables:
//! user messages (and their bytes) whose first frame a transport carried.
//! Only ever added to. Writers are serialized by their caller (the
//! point-to-point engine lives behind the runtime lock), so an addition is
//! a relaxed load and store, not a locked read-modify-write: no cost on the
//! message path beyond two plain memory operations per counter; a reader
//! (MPI_T, any thread, no lock) sees each counter's latest whole value.
use std::sync::atomic::{AtomicU64, Ordering};

/// Messages and bytes carried by one transport since the process began.
pub struct Traffic {
    messages: AtomicU64,
    bytes: AtomicU64,
}

impl Traffic {
    const fn new() -> Traffic {
        Traffic {
            messages: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }

    /// One message of `bytes` bytes left. Callers are serialized (see the
    /// module documentation).
    #[inline(always)]
    pub fn add(&self, bytes: u64) {
        add(&self.messages, 1);
        add(&self.bytes, bytes);
    }

    pub fn messages(&self) -> u64 {
        self.messages.load(Ordering::Relaxed)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// Adds `n` to a counter whose writers are serialized: a plain load and
/// store (no locked instruction), which loses nothing when no two writers
/// run at once.
#[inline(always)]
pub fn add(counter: &AtomicU64, n: u64) {
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(n),
        Ordering::Relaxed,
    );
}

/// Messages sent through shared memory.
pub static SHM: Traffic = Traffic::new();
/// Messages sent through TCP.
pub static TCP: Traffic = Traffic::new();
