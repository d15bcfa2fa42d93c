//! A lock word in shared memory: mutual exclusion among the threads of
//! every process that maps it (one-sided accumulates on a window of a
//! node take the lock of the target's memory, whichever process applies
//! them).
//!
//! A word is 0 when free and 1 when held; an all-zero segment therefore
//! holds free locks and needs no initialization. Taking it is a
//! compare-and-swap with acquire ordering, giving it back a store with
//! release ordering, so what one holder wrote is seen by the next.
//! A waiter spins on plain loads (the line stays shared in the caches
//! until the holder writes it), and yields the CPU between rounds once
//! it has spun a while: on a node whose ranks oversubscribe the cores the
//! holder may be waiting for this very core.
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

/// Bytes a lock word is given (a cache line of its own, so that taking
/// it does not disturb the data next to it).
pub const LOCK_WORD_BYTES: usize = 64;

/// Looks at a held word this many times before yielding the CPU.
const SPINS_BEFORE_YIELD: u32 = 256;

/// A handle on a lock word in shared memory.
#[derive(Debug, Clone, Copy)]
pub struct LockWord {
    word: NonNull<AtomicU32>,
}

// SAFETY: a LockWord reaches its memory only through atomics, and the
// `at` contract keeps the memory mapped while any copy is used.
unsafe impl Send for LockWord {}
// SAFETY: as above; every method takes `&self` and uses atomics only.
unsafe impl Sync for LockWord {}

impl LockWord {
    /// A handle on the lock word at `at` (zero, or in use as a lock word).
    ///
    /// # Safety
    /// `at` must be 4-byte aligned, point to 4 mapped writable bytes that
    /// are used only as a lock word, and stay mapped while the handle or
    /// any copy of it is used.
    ///
    /// # Panics
    /// If `at` is null or misaligned.
    pub unsafe fn at(at: *mut u8) -> LockWord {
        assert_eq!(at as usize % 4, 0, "lock word misaligned");
        LockWord {
            word: NonNull::new(at.cast()).expect("lock word is null"),
        }
    }

    fn word(&self) -> &AtomicU32 {
        // SAFETY: the `at` contract keeps the word mapped and aligned.
        unsafe { self.word.as_ref() }
    }

    /// Takes the lock, waiting for it as long as it is held; it is given
    /// back when the guard drops.
    pub fn lock(&self) -> LockWordGuard {
        let word = self.word();
        let mut spins = 0u32;
        loop {
            if word
                .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return LockWordGuard { lock: *self };
            }
            while word.load(Ordering::Relaxed) != 0 {
                if spins < SPINS_BEFORE_YIELD {
                    spins += 1;
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
    }
}

/// The lock held; dropping it gives it back.
#[derive(Debug)]
#[must_use = "the lock is given back when the guard drops"]
pub struct LockWordGuard {
    lock: LockWord,
}

impl Drop for LockWordGuard {
    fn drop(&mut self) {
        self.lock.word().store(0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::shm::segment::Segment;
    use crate::transport::shm::test_fork::Child;

    #[test]
    fn lock_word_excludes_threads() {
        let mut memory = [0u64; 16];
        // SAFETY: the array is 8-byte aligned, outlives every use of the
        // lock, and its first word is used only as the lock.
        let lock = unsafe { LockWord::at(memory.as_mut_ptr().cast()) };
        let counter = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..20_000 {
                        let _held = lock.lock();
                        // A read-modify-write that is not atomic by itself:
                        // only the lock keeps updates from being lost.
                        let v = counter.load(Ordering::Relaxed);
                        counter.store(v + 1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(counter.load(Ordering::Relaxed), 80_000);
        assert_eq!(memory[0], 0, "free again");
    }

    #[test]
    fn lock_word_excludes_processes() {
        // The lock word and a plain counter in a shared segment; a child
        // and this process each add to the counter under the lock with a
        // plain load and store: without the lock, updates would be lost.
        const ROUNDS: u64 = 50_000;
        let segment = Segment::create_anonymous(4096)
            .or_else(|_| {
                Segment::create(
                    &format!("/oxmpi-test-lockword-{}", std::process::id()),
                    4096,
                )
            })
            .expect("a shared segment");
        let _ = segment.unlink();
        let base = segment.as_ptr();
        // SAFETY: the segment is page-aligned and stays mapped in both
        // processes until they are done; its first line is only the lock.
        let lock = unsafe { LockWord::at(base) };
        // SAFETY: the second line holds the counter, 8-byte aligned.
        let counter = unsafe { base.add(LOCK_WORD_BYTES).cast::<u64>() };
        let add = move || {
            for _ in 0..ROUNDS {
                let _held = lock.lock();
                // SAFETY: the counter lies in the segment; the lock keeps
                // the two processes from touching it at once.
                unsafe { counter.write_volatile(counter.read_volatile() + 1) };
            }
        };
        let child = Child::fork(|| {
            add();
            0
        });
        add();
        assert_eq!(child.wait(), 0);
        // SAFETY: both processes are done with the counter.
        assert_eq!(unsafe { counter.read_volatile() }, 2 * ROUNDS);
    }
}
