//! Context numbers: the per-epoch half of a context id (the epoch is the
//! other half, see [`super::epoch::Epoch::context_id`]). Each process hands
//! out its numbers upward from [`FIRST_DYNAMIC_CONTEXT`]; a new
//! communicator's number is agreed by its members (each proposes a number it
//! reserved here, the largest wins, and every member then skips past it), so
//! two live communicators of a process never share one. The numbers start
//! again with every epoch: the epoch bits keep ids of different epochs apart.
//!
//! Numbers below [`FIRST_DYNAMIC_CONTEXT`] belong to the predefined
//! communicators; numbers with [`PRE_CONTEXT_BIT`] set name the channels on
//! which a group agrees on a number before its communicator exists.
use std::collections::HashMap;

use super::comm::ProcessId;

/// The context numbers of the world model's communicators in every epoch.
pub const WORLD_CONTEXT: u64 = 2;
pub const SELF_CONTEXT: u64 = 4;
/// Context numbers below this are reserved for predefined communicators.
pub const FIRST_DYNAMIC_CONTEXT: u64 = 16;

/// Context numbers with this bit set are *pre-contexts*: the channel on
/// which the members of a group agree on a new communicator's context id
/// before the communicator exists (`MPI_Comm_create_from_group`,
/// `MPI_Comm_create_group`, `MPI_Intercomm_create_from_groups`).
const PRE_CONTEXT_BIT: u64 = 1 << 39;

/// The pre-context of a creation, derived from its string tag, its members
/// and how often this (tag, members) pair has made a communicator in this
/// epoch, so concurrent creations from overlapping groups with different
/// tags talk on different contexts, and a tag used again starts a new
/// agreement.
pub fn pre_context_number(tag: &str, members: &[ProcessId], use_count: u64) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    tag.hash(&mut h);
    members.hash(&mut h);
    use_count.hash(&mut h);
    PRE_CONTEXT_BIT | ((h.finish() & ((1 << 37) - 1)) << 1)
}

/// The most user communicators a process keeps alive at once (MPICH's
/// limit is about as many, 65,536 context ids). A creation that would
/// pass it fails at every member, with `MPI_ERR_OTHER`: a member at the
/// limit proposes [`EXHAUSTED`], which wins every agreement.
pub const MAX_LIVE_COMMUNICATORS: usize = 1 << 16;

/// The proposal of a member that may create no more communicators: above
/// every context number (and even, as proposals are: bit 0 carries other
/// news in some agreements).
pub const EXHAUSTED: u64 = !1;

/// The error every member of a creation reports when one of them is at
/// [`MAX_LIVE_COMMUNICATORS`].
pub fn exhausted() -> crate::core::error::MpiError {
    crate::core::error::MpiError::new(
        crate::mpi_abi::constants::MPI_ERR_OTHER,
        format!(
            "too many communicators: a member already has {MAX_LIVE_COMMUNICATORS} alive (free some first)"
        ),
    )
}

/// One epoch's context numbers.
pub struct ContextNumbers {
    /// The lowest number this process has not used in this epoch.
    next: u64,
    /// How often each (string tag, members) pair made a communicator.
    creations: HashMap<(String, Vec<ProcessId>), u64>,
}

impl Default for ContextNumbers {
    fn default() -> ContextNumbers {
        ContextNumbers {
            next: FIRST_DYNAMIC_CONTEXT,
            creations: HashMap::new(),
        }
    }
}

impl ContextNumbers {
    /// Reserves `count` consecutive numbers (2 for an intracommunicator: one
    /// for point-to-point, the next for its collectives; 4 for an
    /// intercommunicator); returns the first.
    pub fn reserve(&mut self, count: u64) -> u64 {
        let n = self.next;
        self.next += count;
        n
    }

    /// After an agreement on `number` (of `count` numbers): this process
    /// never hands out `number..number + count` again.
    pub fn skip_past(&mut self, number: u64, count: u64) {
        self.next = self.next.max(number + count);
    }

    /// Claims the `count` numbers from `number` if they are still free here
    /// (at or above the next free number, or this process's own
    /// `proposal` of as many); returns whether they were.
    pub fn claim(&mut self, number: u64, proposal: u64, count: u64) -> bool {
        let free = number >= self.next || number == proposal;
        if free {
            self.skip_past(number, count);
        }
        free
    }

    /// Counts one more creation from (`tag`, `members`); returns the count.
    pub fn count_creation(&mut self, tag: String, members: Vec<ProcessId>) -> u64 {
        let count = self.creations.entry((tag, members)).or_insert(0);
        *count += 1;
        *count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_numbers_are_never_handed_out_twice() {
        let mut c = ContextNumbers::default();
        let a = c.reserve(2);
        let b = c.reserve(4);
        assert_eq!(a, FIRST_DYNAMIC_CONTEXT);
        assert_eq!(b, a + 2);
        c.skip_past(100, 2);
        assert_eq!(c.reserve(2), 102);
        // Skipping to below the next free number changes nothing.
        c.skip_past(20, 2);
        assert_eq!(c.reserve(2), 104);
    }

    #[test]
    fn a_claim_succeeds_only_on_free_numbers_or_the_own_proposal() {
        let mut c = ContextNumbers::default();
        let proposal = c.reserve(2);
        let other = c.reserve(2);
        assert!(c.claim(proposal, proposal, 2));
        assert!(!c.claim(other, proposal, 2), "given to another creation");
        assert!(c.claim(50, proposal, 2));
        assert_eq!(c.reserve(2), 52);
    }

    #[test]
    fn creations_are_counted_per_tag_and_members() {
        let mut c = ContextNumbers::default();
        assert_eq!(c.count_creation("t".into(), vec![0, 1]), 1);
        assert_eq!(c.count_creation("t".into(), vec![0, 1]), 2);
        assert_eq!(c.count_creation("t".into(), vec![0, 2]), 1);
        assert_eq!(c.count_creation("u".into(), vec![0, 1]), 1);
    }

    #[test]
    fn pre_contexts_are_apart_from_dynamic_numbers_and_from_each_other() {
        let a = pre_context_number("t", &[0, 1], 1);
        let b = pre_context_number("t", &[0, 1], 2);
        let c = pre_context_number("u", &[0, 1], 1);
        for n in [a, b, c] {
            assert_ne!(n & PRE_CONTEXT_BIT, 0);
            assert_eq!(n % 2, 0, "even, so number + 1 is free for collectives");
            assert!(n < 1 << 40, "below the epoch bits");
        }
        assert_ne!(a, b);
        assert_ne!(a, c);
    }
}
