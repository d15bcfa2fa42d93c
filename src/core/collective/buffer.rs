//! Scratch byte buffers for collectives, recycled through a small
//! process-wide pool. Large collectives allocate several message-sized
//! buffers per call; taking fresh memory from the system each time costs
//! a page fault per page (more than the copy itself), so buffers of at
//! least [`POOLED_MIN`] bytes go back to the pool when dropped, up to
//! [`POOL_MAX`] bytes in all. [`release_pool`] empties it (the end of an
//! epoch).
use std::ops::{Deref, DerefMut};

use crate::core::locks::{Level, OrderedGuard, OrderedMutex};

/// Buffers smaller than this are not worth keeping.
pub const POOLED_MIN: usize = 64 * 1024;
/// The most memory the pool holds.
pub const POOL_MAX: usize = 32 * 1024 * 1024;

static POOL: OrderedMutex<Vec<Vec<u8>>> = OrderedMutex::new(Level::ScratchBuffers, Vec::new());

fn pool() -> OrderedGuard<'static, Vec<Vec<u8>>> {
    POOL.lock()
}

/// A byte vector that returns to the pool when dropped.
#[derive(Default)]
pub struct Buffer(Vec<u8>);

impl Buffer {
    /// A buffer with room for `capacity` bytes, of any length and content.
    fn recycled(capacity: usize) -> Buffer {
        if capacity >= POOLED_MIN {
            let mut p = pool();
            // The smallest pooled buffer that is large enough.
            let best = p
                .iter()
                .enumerate()
                .filter(|(_, b)| b.capacity() >= capacity)
                .min_by_key(|(_, b)| b.capacity())
                .map(|(i, _)| i);
            if let Some(i) = best {
                return Buffer(p.swap_remove(i));
            }
        }
        Buffer(Vec::with_capacity(capacity))
    }

    /// An empty buffer with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Buffer {
        let mut b = Buffer::recycled(capacity);
        b.0.clear();
        b
    }

    /// `len` bytes to be overwritten (a receive buffer): their values are
    /// unspecified (a recycled buffer keeps its old bytes; only memory it
    /// never held is zeroed), which saves clearing megabytes per call.
    pub fn scratch(len: usize) -> Buffer {
        let mut b = Buffer::recycled(len);
        b.0.truncate(len);
        b.0.resize(len, 0);
        b
    }
}

impl Deref for Buffer {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.0
    }
}

impl DerefMut for Buffer {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.0
    }
}

impl Clone for Buffer {
    fn clone(&self) -> Buffer {
        let mut b = Buffer::with_capacity(self.len());
        b.extend_from_slice(self);
        b
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let v = std::mem::take(&mut self.0);
        if v.capacity() < POOLED_MIN {
            return;
        }
        let mut p = pool();
        let held: usize = p.iter().map(|b| b.capacity()).sum();
        if held + v.capacity() <= POOL_MAX {
            p.push(v);
        }
    }
}

/// Frees the pooled buffers.
pub fn release_pool() {
    pool().clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_buffers_are_reused() {
        let mut a = Buffer::scratch(POOLED_MIN * 2);
        a[5] = 7;
        drop(a);
        let b = Buffer::scratch(POOLED_MIN * 2 - 1);
        assert_eq!(b.len(), POOLED_MIN * 2 - 1);
        let c = Buffer::with_capacity(POOLED_MIN);
        assert!(c.is_empty() && c.capacity() >= POOLED_MIN);
        assert_eq!(Buffer::scratch(10).len(), 10);
    }
}
