//! The transport's peers, indexed by process id: a send looks its peer up
//! on every message, so this is a vector, not a hash map.
use super::Peer;
use crate::transport::ProcessId;

/// Process ids from this one on are refused (a hello naming one is
/// dropped): the table grows to the largest id it holds.
pub(super) const MAX_PEERS: usize = 1 << 20;

#[derive(Default)]
pub(super) struct PeerTable {
    slots: Vec<Option<Peer>>,
}

impl PeerTable {
    pub(super) fn get(&self, id: ProcessId) -> Option<&Peer> {
        self.slots.get(id as usize)?.as_ref()
    }

    pub(super) fn get_mut(&mut self, id: ProcessId) -> Option<&mut Peer> {
        self.slots.get_mut(id as usize)?.as_mut()
    }

    /// The peer `id`, added (knowing no address yet) if it is new; `None`
    /// when `id` is not below [`MAX_PEERS`].
    pub(super) fn get_or_add(&mut self, id: ProcessId) -> Option<&mut Peer> {
        let i = id as usize;
        if i >= MAX_PEERS {
            return None;
        }
        if i >= self.slots.len() {
            self.slots.resize_with(i + 1, || None);
        }
        Some(self.slots[i].get_or_insert_with(|| Peer::new(None)))
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &Peer> {
        self.slots.iter().flatten()
    }

    pub(super) fn clear(&mut self) {
        self.slots.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_are_found_by_id_and_ids_beyond_the_limit_are_refused() {
        let mut t = PeerTable::default();
        assert!(t.get(3).is_none());
        t.get_or_add(3).unwrap().failures = 2;
        assert_eq!(t.get(3).map(|p| p.failures), Some(2));
        assert!(t.get(2).is_none() && t.get(4).is_none());
        t.get_or_add(0).unwrap();
        assert_eq!(t.values().count(), 2);
        assert!(t.get_or_add(MAX_PEERS as ProcessId).is_none());
        t.clear();
        assert!(t.get(3).is_none());
    }
}
