//! Frames waiting to leave this process, per peer and in order, with the
//! peers that have some: queues are indexed by rank (no hashing on the
//! send path) and a flush visits only the peers listed as waiting.
//!
//! Invariant: every peer with a non-empty queue is in `waiting` (a listed
//! peer's queue may have become empty since; [`Outbox::prune`] drops it).
use std::collections::VecDeque;

use crate::transport::ProcessId;

pub struct Outbox<T> {
    queues: Vec<VecDeque<T>>,
    waiting: Vec<ProcessId>,
}

impl<T> Default for Outbox<T> {
    fn default() -> Self {
        Outbox {
            queues: Vec::new(),
            waiting: Vec::new(),
        }
    }
}

impl<T> Outbox<T> {
    /// Whether no peer may have a frame waiting (the cheap test of the
    /// fast path).
    #[inline]
    pub fn is_idle(&self) -> bool {
        self.waiting.is_empty()
    }

    /// Whether a frame waits for `peer`.
    #[inline]
    pub fn has_queued(&self, peer: ProcessId) -> bool {
        !self.is_idle()
            && self
                .queues
                .get(peer as usize)
                .is_some_and(|q| !q.is_empty())
    }

    /// Whether a frame waits for anyone.
    pub fn has_any(&self) -> bool {
        self.waiting
            .iter()
            .any(|&p| !self.queues[p as usize].is_empty())
    }

    /// Queues `item` for `peer` behind what waits already.
    pub fn push(&mut self, peer: ProcessId, item: T) {
        let index = peer as usize;
        if self.queues.len() <= index {
            self.queues.resize_with(index + 1, VecDeque::new);
        }
        let queue = &mut self.queues[index];
        if queue.is_empty() && !self.waiting.contains(&peer) {
            self.waiting.push(peer);
        }
        queue.push_back(item);
    }

    /// `peer`'s queue, if it ever had one.
    pub fn queue_mut(&mut self, peer: ProcessId) -> Option<&mut VecDeque<T>> {
        self.queues.get_mut(peer as usize)
    }

    /// The queues of the waiting peers.
    pub fn waiting_queues_mut(&mut self) -> impl Iterator<Item = &mut VecDeque<T>> {
        let waiting = &self.waiting;
        self.queues
            .iter_mut()
            .enumerate()
            .filter(move |(p, _)| waiting.contains(&(*p as ProcessId)))
            .map(|(_, q)| q)
    }

    /// The `i`-th waiting peer (peers pushed during a flush come last).
    pub fn waiting_peer(&self, i: usize) -> Option<ProcessId> {
        self.waiting.get(i).copied()
    }

    /// Drops the `i`-th waiting peer if its queue is empty; returns
    /// whether it did (the next peer then has index `i`).
    pub fn prune(&mut self, i: usize) -> bool {
        let peer = self.waiting[i];
        if self.queues[peer as usize].is_empty() {
            self.waiting.swap_remove(i);
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_keep_order_per_peer_and_list_each_waiting_peer_once() {
        let mut o: Outbox<u32> = Outbox::default();
        assert!(o.is_idle() && !o.has_any());
        o.push(5, 1);
        o.push(2, 2);
        o.push(5, 3);
        assert!(o.has_queued(5) && o.has_queued(2) && !o.has_queued(3) && !o.has_queued(99));
        assert_eq!(
            (o.waiting_peer(0), o.waiting_peer(1), o.waiting_peer(2)),
            (Some(5), Some(2), None)
        );
        assert_eq!(
            o.queue_mut(5).unwrap().iter().copied().collect::<Vec<_>>(),
            [1, 3]
        );
        // A peer whose queue still holds frames is not pruned.
        assert!(!o.prune(0));
        o.queue_mut(5).unwrap().clear();
        assert!(o.has_any());
        assert!(o.prune(0));
        assert_eq!(o.waiting_peer(0), Some(2));
        o.queue_mut(2).unwrap().pop_front();
        assert!(!o.has_any());
        assert!(o.prune(0));
        assert!(o.is_idle());
        // Pushing to a peer that was listed and emptied, but not pruned yet,
        // does not list it twice.
        o.push(7, 1);
        o.queue_mut(7).unwrap().clear();
        o.push(7, 2);
        assert_eq!((o.waiting_peer(0), o.waiting_peer(1)), (Some(7), None));
        assert_eq!(o.waiting_queues_mut().count(), 1);
    }
}
