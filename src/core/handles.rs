//! Handle tables: user-created MPI objects addressed by `int` handles in
//! MPICH's encoding (`0x8` DIRECT kind in bits 31-30, the object kind in
//! bits 29-26, an index below). A freed index is reused only after many
//! others were freed, so a stale handle is reported as invalid instead of
//! silently naming a newer object; except in a table made with
//! [`HandleTable::reusing_at_once`] (datatypes), which gives the most
//! recently freed index to the next object, as MPICH does: programs that
//! free a type and make the next one count on getting its handle back
//! (MPICH's own `datatype/indexed_misc` does). A stale handle there is
//! still reported until its index is reused.
use std::collections::VecDeque;
use std::os::raw::c_int;

/// MPICH's object-kind numbers (bits 29-26 of a handle).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum ObjectKind {
    Comm = 0x1,
    Group = 0x2,
    Datatype = 0x3,
    File = 0x4,
    Errhandler = 0x5,
    Op = 0x6,
    Info = 0x7,
    Win = 0x8,
    Keyval = 0x9,
    Request = 0xb,
    Session = 0xe,
}

const KIND_DIRECT: u32 = 0x2 << 30;
const INDEX_MASK: u32 = (1 << 26) - 1;
/// How many freed indexes wait before one is reused.
const REUSE_DELAY: usize = 1024;

/// The object kind a handle value claims (bits 29-26).
pub fn object_kind_bits(handle: c_int) -> u32 {
    ((handle as u32) >> 26) & 0xf
}

/// Whether a handle is a predefined (BUILTIN, `0x4.......`) one.
pub fn is_builtin(handle: c_int) -> bool {
    (handle as u32) >> 30 == 1
}

/// The handle of index `index` in a table of `kind` (the first object
/// inserted into a fresh table has index 0).
pub const fn handle_at(kind: ObjectKind, index: u32) -> c_int {
    (KIND_DIRECT | ((kind as u32) << 26) | index) as c_int
}

pub struct HandleTable<T> {
    kind: ObjectKind,
    slots: Vec<Option<T>>,
    free: VecDeque<u32>,
    live: usize,
    /// Freed indexes reused at once, the latest first.
    at_once: bool,
}

impl<T> HandleTable<T> {
    pub const fn new(kind: ObjectKind) -> Self {
        HandleTable {
            kind,
            slots: Vec::new(),
            free: VecDeque::new(),
            live: 0,
            at_once: false,
        }
    }

    /// A table that reuses the most recently freed index first, at once
    /// (see the module documentation).
    pub const fn reusing_at_once(kind: ObjectKind) -> Self {
        HandleTable {
            kind,
            slots: Vec::new(),
            free: VecDeque::new(),
            live: 0,
            at_once: true,
        }
    }

    fn handle_of(&self, index: u32) -> c_int {
        handle_at(self.kind, index)
    }

    fn index_of(&self, handle: c_int) -> Option<usize> {
        let h = handle as u32;
        if h & !INDEX_MASK != KIND_DIRECT | ((self.kind as u32) << 26) {
            return None;
        }
        Some((h & INDEX_MASK) as usize)
    }

    pub fn insert(&mut self, value: T) -> c_int {
        self.live += 1;
        let reused = if self.at_once {
            self.free.pop_back()
        } else if self.free.len() > REUSE_DELAY {
            self.free.pop_front()
        } else {
            None
        };
        if let Some(index) = reused {
            self.slots[index as usize] = Some(value);
            return self.handle_of(index);
        }
        let index = self.slots.len() as u32;
        assert!(index <= INDEX_MASK, "handle space exhausted");
        self.slots.push(Some(value));
        self.handle_of(index)
    }

    pub fn get(&self, handle: c_int) -> Option<&T> {
        self.slots.get(self.index_of(handle)?)?.as_ref()
    }

    pub fn get_mut(&mut self, handle: c_int) -> Option<&mut T> {
        let index = self.index_of(handle)?;
        self.slots.get_mut(index)?.as_mut()
    }

    /// Removes the object and drops it where it lies (no move out of the
    /// table, unlike [`HandleTable::remove`]); false if there was none.
    pub fn discard(&mut self, handle: c_int) -> bool {
        let Some(slot) = self.index_of(handle).and_then(|i| self.slots.get_mut(i)) else {
            return false;
        };
        if slot.is_none() {
            return false;
        }
        *slot = None;
        self.free.push_back((handle as u32) & INDEX_MASK);
        self.live -= 1;
        true
    }

    pub fn remove(&mut self, handle: c_int) -> Option<T> {
        let index = self.index_of(handle)?;
        let value = self.slots.get_mut(index)?.take()?;
        self.free.push_back(index as u32);
        self.live -= 1;
        Some(value)
    }

    /// Number of live objects.
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Live objects with their handles.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.slots.iter_mut().filter_map(|s| s.as_mut())
    }

    pub fn iter(&self) -> impl Iterator<Item = (c_int, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|v| (self.handle_of(i as u32), v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_reusing_at_once_gives_back_the_latest_freed_handle() {
        let mut t = HandleTable::reusing_at_once(ObjectKind::Datatype);
        let a = t.insert(1);
        let b = t.insert(2);
        let c = t.insert(3);
        assert!(t.discard(a));
        assert!(t.discard(c));
        assert_eq!(t.get(c), None, "a freed handle is invalid until reused");
        assert_eq!(t.insert(4), c);
        assert_eq!(t.insert(5), a);
        assert_eq!(t.get(b), Some(&2));
        assert_eq!(t.len(), 3);
        // The delaying table does not.
        let mut d = HandleTable::new(ObjectKind::Datatype);
        let x = d.insert(1);
        d.discard(x);
        assert_ne!(d.insert(2), x);
    }

    #[test]
    fn handles_use_mpich_direct_encoding_and_reject_other_kinds() {
        let mut t = HandleTable::new(ObjectKind::Info);
        let h = t.insert("a");
        assert_eq!(h as u32, 0x9c00_0000);
        assert_eq!(t.get(h), Some(&"a"));
        assert_eq!(
            t.get(0x8400_0000u32 as c_int),
            None,
            "a comm handle is not an info"
        );
        assert_eq!(t.get(0x5c00_0001), None, "builtins are not in the table");
        assert_eq!(object_kind_bits(h), ObjectKind::Info as u32);
    }

    #[test]
    fn freed_handles_stay_invalid_for_a_while() {
        let mut t = HandleTable::new(ObjectKind::Comm);
        let h = t.insert(1);
        assert_eq!(t.remove(h), Some(1));
        assert_eq!(t.get(h), None);
        assert_eq!(t.remove(h), None, "double free is detected");
        let h2 = t.insert(2);
        assert_ne!(h, h2);
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn discarded_objects_are_dropped_in_place_and_their_handles_reused_late() {
        let mut t = HandleTable::new(ObjectKind::Request);
        let first = t.insert(std::rc::Rc::new(7));
        let watch = t.get(first).cloned().unwrap();
        assert_eq!(std::rc::Rc::strong_count(&watch), 2);
        assert!(t.discard(first));
        assert_eq!(std::rc::Rc::strong_count(&watch), 1, "dropped");
        assert!(!t.discard(first), "twice is refused");
        assert_eq!(t.len(), 0);
        // The freed index waits behind REUSE_DELAY others before it returns.
        let handles: Vec<c_int> = (0..=REUSE_DELAY)
            .map(|_| t.insert(std::rc::Rc::new(0)))
            .collect();
        assert!(!handles.contains(&first));
        for h in handles {
            assert!(t.discard(h));
        }
        assert_eq!(t.insert(std::rc::Rc::new(1)), first);
    }
}
