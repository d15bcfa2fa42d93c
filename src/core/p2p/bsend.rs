//! The buffer of buffered-mode sends (`MPI_Buffer_attach`): the space a
//! `MPI_Bsend` packs its message into before sending it from there.
//!
//! Every message takes its packed size plus `MPI_BSEND_OVERHEAD` bytes, the
//! amount MPI tells programs to reserve per message (oxmpi keeps its
//! bookkeeping in Rust, but counts those bytes against the space so a
//! program sized for MPICH fits exactly as it would there). Space is taken
//! first-fit and given back when the message's send completes; regions
//! never overlap.
use std::collections::BTreeMap;

use crate::abi::constants::MPI_BSEND_OVERHEAD;

/// Bytes every buffered message costs beyond its data.
pub const OVERHEAD: usize = MPI_BSEND_OVERHEAD as usize;

pub struct AttachedBuffer {
    base: usize,
    size: usize,
    /// Regions in use: start offset -> end offset (data plus overhead).
    regions: BTreeMap<usize, usize>,
}

impl AttachedBuffer {
    /// The user's `size` bytes at address `base`.
    pub fn new(base: usize, size: usize) -> AttachedBuffer {
        AttachedBuffer {
            base,
            size,
            regions: BTreeMap::new(),
        }
    }

    pub fn base(&self) -> usize {
        self.base
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Reserves room for a message of `len` bytes; returns the offset its
    /// data goes to, or `None` when no gap is large enough.
    pub fn reserve(&mut self, len: usize) -> Option<usize> {
        let need = len.checked_add(OVERHEAD)?;
        // The first gap (between regions, or after the last) that fits.
        let mut start = 0;
        for (&s, &e) in &self.regions {
            if s - start >= need {
                break;
            }
            start = e;
        }
        if start.checked_add(need)? > self.size {
            return None;
        }
        self.regions.insert(start, start + need);
        Some(start)
    }

    /// Gives back the region whose data starts at `offset`.
    pub fn release(&mut self, offset: usize) {
        let released = self.regions.remove(&offset);
        debug_assert!(
            released.is_some(),
            "released a region that was not reserved"
        );
    }

    /// Bytes not reserved (possibly in several gaps).
    pub fn free_bytes(&self) -> usize {
        self.size
            - self
                .regions
                .values()
                .zip(self.regions.keys())
                .map(|(e, s)| e - s)
                .sum::<usize>()
    }

    /// Whether messages still use the buffer.
    pub fn in_use(&self) -> bool {
        !self.regions.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_costs_its_size_plus_the_overhead() {
        let mut b = AttachedBuffer::new(0x1000, 2 * (100 + OVERHEAD));
        assert_eq!(b.reserve(100), Some(0));
        assert_eq!(b.reserve(100), Some(100 + OVERHEAD));
        assert_eq!(
            b.reserve(0),
            None,
            "even an empty message needs the overhead"
        );
        assert_eq!(b.free_bytes(), 0);
        let mut b = AttachedBuffer::new(0, OVERHEAD - 1);
        assert_eq!(b.reserve(0), None);
    }

    #[test]
    fn released_space_is_reused_first_fit() {
        let unit = 10 + OVERHEAD;
        let mut b = AttachedBuffer::new(0, 3 * unit);
        let a = b.reserve(10).unwrap();
        let m = b.reserve(10).unwrap();
        let c = b.reserve(10).unwrap();
        assert_eq!((a, m, c), (0, unit, 2 * unit));
        b.release(m);
        assert_eq!(b.reserve(11), None, "the gap is one unit");
        assert_eq!(b.reserve(10), Some(unit));
        b.release(a);
        b.release(unit);
        assert_eq!(b.reserve(10 + unit), Some(0), "adjacent gaps merge");
        assert!(b.in_use());
        b.release(0);
        b.release(c);
        assert!(!b.in_use());
        assert_eq!(b.free_bytes(), 3 * unit);
    }

    #[test]
    fn huge_requests_do_not_overflow() {
        let mut b = AttachedBuffer::new(0, 1000);
        assert_eq!(b.reserve(usize::MAX), None);
        assert_eq!(b.reserve(usize::MAX - OVERHEAD), None);
    }
}
