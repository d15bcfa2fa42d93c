//! The process-wide locks and the order in which a thread may take them.
//!
//! | level | lock | in | guards |
//! |------:|------|----|--------|
//! | 1 | `RUNTIME` | `runtime` | the process, epochs, MPI objects, the point-to-point engine |
//! | 2 | `COUNTERS` | `collective::sequence` | each communicator's collective call count |
//! | 3 | `PENDING` | `collective::executor` | the pending nonblocking collectives and their worker |
//! | 4 | `USER_OPS` | `op` | user-defined reduction operations |
//! | 5 | `REGISTRY` | `error_codes` | user error classes, codes and strings |
//! | 6 | `REGISTRY` (read/write) | `datatype::registry` | user datatypes |
//! | 7 | `POOL` | `collective::buffer` | the collectives' scratch buffers |
//! | 8 | `SESSIONS` | `tool::sessions` | MPI_T performance-variable sessions and handles |
//!
//! A thread holding a lock may take only locks of a higher level: the
//! runtime first, the leaves (datatypes, scratch buffers) last, and never
//! one lock twice. So no two threads can wait for each other. A lock of
//! levels 2-8 is held only for a short, local step (a table lookup, a
//! counter, a push), never across a call into another module's locking
//! code, a user callback or an error handler; user callbacks and error
//! handlers run with no lock held at all.
//!
//! Every lock is an [`OrderedMutex`] or [`OrderedRwLock`] with its level.
//! In debug builds and unit tests each thread records the levels it holds
//! and taking a lock out of order panics, naming both locks (`make check`
//! runs threaded C tests against a debug build for this); release builds
//! carry no record and no check.
use std::sync::{
    Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError,
};
use std::time::Duration;

/// A lock's place in the order (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Runtime = 1,
    CollectiveSequences = 2,
    PendingCollectives = 3,
    UserOps = 4,
    ErrorCodes = 5,
    Datatypes = 6,
    ScratchBuffers = 7,
    ToolSessions = 8,
}

#[cfg(any(debug_assertions, test))]
mod held {
    use super::Level;
    use std::cell::Cell;

    thread_local! {
        /// Bit `level` is set while this thread holds the lock of `level`.
        static HELD: Cell<u32> = const { Cell::new(0) };
    }

    /// The record that this thread holds the lock of a level; dropping it
    /// clears the record.
    pub struct Held(Level);

    impl Held {
        pub fn take(level: Level) -> Held {
            HELD.with(|held| {
                let bits = held.get();
                if bits != 0 {
                    let highest = 31 - bits.leading_zeros();
                    assert!(
                        highest < level as u32,
                        "lock order violated: taking {level:?} (level {}) while holding level {highest} (see core::locks)",
                        level as u32
                    );
                }
                held.set(bits | 1 << level as u32);
            });
            Held(level)
        }
    }

    impl Drop for Held {
        fn drop(&mut self) {
            HELD.with(|held| held.set(held.get() & !(1 << self.0 as u32)));
        }
    }
}

#[cfg(not(any(debug_assertions, test)))]
mod held {
    use super::Level;

    /// Release builds record nothing.
    pub struct Held;

    impl Held {
        #[inline(always)]
        pub fn take(_level: Level) -> Held {
            Held
        }
    }
}

use held::Held;

/// A mutex with a place in the lock order. A panic while it was held
/// (already reported at the entry point's boundary) does not make it
/// unusable.
pub struct OrderedMutex<T> {
    level: Level,
    inner: Mutex<T>,
}

/// A locked [`OrderedMutex`]. The mutex is unlocked before the record of
/// holding it goes (field order).
pub struct OrderedGuard<'a, T> {
    guard: MutexGuard<'a, T>,
    _held: Held,
}

impl<T> OrderedMutex<T> {
    pub const fn new(level: Level, value: T) -> OrderedMutex<T> {
        OrderedMutex {
            level,
            inner: Mutex::new(value),
        }
    }

    #[inline]
    pub fn lock(&self) -> OrderedGuard<'_, T> {
        let held = Held::take(self.level);
        OrderedGuard {
            guard: self.inner.lock().unwrap_or_else(|e| e.into_inner()),
            _held: held,
        }
    }

    /// The lock if no other thread holds it.
    pub fn try_lock(&self) -> Option<OrderedGuard<'_, T>> {
        let held = Held::take(self.level);
        let guard = match self.inner.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        Some(OrderedGuard { guard, _held: held })
    }
}

impl<'a, T> OrderedGuard<'a, T> {
    /// Waits on `condvar` for at most `timeout`, letting the mutex go
    /// meanwhile; returns the guard and whether the wait timed out. The
    /// thread still counts as holding the lock's level while it waits (it
    /// takes no other lock then).
    pub fn wait_timeout(self, condvar: &Condvar, timeout: Duration) -> (Self, bool) {
        let OrderedGuard { guard, _held } = self;
        let (guard, result) = condvar
            .wait_timeout(guard, timeout)
            .unwrap_or_else(|e| e.into_inner());
        (OrderedGuard { guard, _held }, result.timed_out())
    }
}

impl<T> std::ops::Deref for OrderedGuard<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> std::ops::DerefMut for OrderedGuard<'_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

/// A readers-writer lock with a place in the lock order.
pub struct OrderedRwLock<T> {
    level: Level,
    inner: RwLock<T>,
}

pub struct OrderedReadGuard<'a, T> {
    guard: RwLockReadGuard<'a, T>,
    _held: Held,
}

pub struct OrderedWriteGuard<'a, T> {
    guard: RwLockWriteGuard<'a, T>,
    _held: Held,
}

impl<T> OrderedRwLock<T> {
    pub const fn new(level: Level, value: T) -> OrderedRwLock<T> {
        OrderedRwLock {
            level,
            inner: RwLock::new(value),
        }
    }

    #[inline]
    pub fn read(&self) -> OrderedReadGuard<'_, T> {
        let held = Held::take(self.level);
        OrderedReadGuard {
            guard: self.inner.read().unwrap_or_else(|e| e.into_inner()),
            _held: held,
        }
    }

    pub fn write(&self) -> OrderedWriteGuard<'_, T> {
        let held = Held::take(self.level);
        OrderedWriteGuard {
            guard: self.inner.write().unwrap_or_else(|e| e.into_inner()),
            _held: held,
        }
    }
}

impl<T> std::ops::Deref for OrderedReadGuard<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> std::ops::Deref for OrderedWriteGuard<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> std::ops::DerefMut for OrderedWriteGuard<'_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static OUTER: OrderedMutex<u32> = OrderedMutex::new(Level::Runtime, 0);
    static INNER: OrderedMutex<u32> = OrderedMutex::new(Level::ScratchBuffers, 0);
    static TYPES: OrderedRwLock<u32> = OrderedRwLock::new(Level::Datatypes, 0);

    #[test]
    fn locks_taken_in_order_nest() {
        let mut outer = OUTER.lock();
        let types = TYPES.read();
        let mut inner = INNER.lock();
        *outer += 1;
        *inner += *types + 1;
        drop(inner);
        drop(types);
        // Released: the same level may be taken again.
        let _again = TYPES.write();
    }

    #[test]
    fn a_lock_taken_out_of_order_panics_and_names_it() {
        let result = std::thread::spawn(|| {
            let _inner = INNER.lock();
            let _outer = OUTER.lock();
        })
        .join();
        let message = result
            .expect_err("taking the runtime under the scratch pool must panic")
            .downcast::<String>()
            .expect("a formatted message");
        assert!(message.contains("Runtime"), "{message}");
    }

    #[test]
    fn a_lock_taken_twice_by_one_thread_panics() {
        let result = std::thread::spawn(|| {
            let _a = TYPES.read();
            let _b = TYPES.read();
        })
        .join();
        assert!(result.is_err());
    }

    #[test]
    fn a_condvar_wait_keeps_the_guard_usable() {
        let cv = Condvar::new();
        let guard = INNER.lock();
        let (mut guard, timed_out) = guard.wait_timeout(&cv, Duration::from_millis(1));
        assert!(timed_out);
        *guard += 1;
    }
}
