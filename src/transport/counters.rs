//! Traffic counters per transport, for MPI_T's performance variables:
//! user messages (and their bytes) whose first frame a transport carried.
//! Only ever added to, with relaxed atomics: no lock, no ordering cost on
//! the message path; a reader sees each counter's own latest value.
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

    /// One message of `bytes` bytes left.
    #[inline(always)]
    pub fn add(&self, bytes: u64) {
        self.messages.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub fn messages(&self) -> u64 {
        self.messages.load(Ordering::Relaxed)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// Messages sent through shared memory.
pub static SHM: Traffic = Traffic::new();
/// Messages sent through TCP.
pub static TCP: Traffic = Traffic::new();
