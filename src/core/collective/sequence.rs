//! Collective call numbers: each communicator (by its collective context
//! id) counts the collective calls made on it, and a call's messages carry
//! a tag derived from its number. The tags are negative (never `-1`, which
//! is `MPI_ANY_TAG`, and below the few fixed internal tags), so they never
//! meet a program's own messages, and they repeat only after 2^30 calls.
//!
//! The counters live here, keyed by context id, rather than in the
//! communicator: context ids are never reused while a process lives (the
//! epoch is in their high bits and the per-epoch numbers only grow), so a
//! counter never outlives its communicator's identity. Counters of older
//! epochs are dropped when a newer epoch's first collective runs.
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::os::raw::c_int;
use std::sync::LazyLock;

use crate::core::epoch::Epoch;
use crate::core::locks::{Level, OrderedMutex};

/// The tag of call number 0; call n uses `FIRST_TAG - (n mod SPAN)`.
pub const FIRST_TAG: c_int = -16;
const SPAN: u32 = 1 << 30;
/// The lowest tag a collective call uses.
pub const LOWEST_TAG: c_int = FIRST_TAG - (SPAN - 1) as c_int;

/// Hashes a context id with one multiplication: the keys are the
/// library's own numbers, not an adversary's, and every collective call
/// looks its counter up (SipHash, the default, was about a tenth of the
/// instructions of an 8-byte `MPI_Bcast` on 16 ranks).
#[derive(Default)]
struct ContextIdHasher(u64);

impl Hasher for ContextIdHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type Counters = HashMap<u64, u32, BuildHasherDefault<ContextIdHasher>>;

static COUNTERS: LazyLock<OrderedMutex<Counters>> =
    LazyLock::new(|| OrderedMutex::new(Level::CollectiveSequences, Counters::default()));

/// The tag of the next collective call on the communicator whose
/// collective context id is `context_id`.
pub fn next_tag(context_id: u64) -> c_int {
    let mut counters = COUNTERS.lock();
    let n = match counters.get_mut(&context_id) {
        Some(n) => n,
        None => {
            // The first call on this communicator: counters of older
            // epochs go.
            let epoch = Epoch::of_context(context_id);
            counters.retain(|&k, _| Epoch::of_context(k) >= epoch);
            counters.entry(context_id).or_insert(0)
        }
    };
    let tag = FIRST_TAG - (*n % SPAN) as c_int;
    *n = n.wrapping_add(1);
    tag
}

/// Forgets a communicator's counter (if context ids ever become reusable,
/// freeing a communicator must call this).
pub fn forget(context_id: u64) {
    COUNTERS.lock().remove(&context_id);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_negative_distinct_and_per_communicator() {
        // Epoch 7: no other test's communicator prunes its counters.
        let epoch = (1..7).fold(Epoch::FIRST, |e, _| e.next());
        let (a, b) = (epoch.context_id(1001), epoch.context_id(1003));
        let t0 = next_tag(a);
        let t1 = next_tag(a);
        assert_eq!((t0, t1), (FIRST_TAG, FIRST_TAG - 1));
        assert_eq!(next_tag(b), FIRST_TAG);
        assert!(t1 < -1);
        forget(a);
        assert_eq!(next_tag(a), FIRST_TAG);
    }
}
