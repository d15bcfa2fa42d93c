//! The type signature of a datatype: the sequence of predefined values one
//! element holds, in stream order. `MPI_Get_elements`, the reductions and
//! the external32 conversion read it.
//!
//! It is kept as the constructors built it (a sequence of "n times this
//! sub-signature"), shared between types, so a million-element vector of a
//! struct costs one entry, not a million. Each node caches its packed size,
//! basic-element count and (if all its values have one kind) that kind.
use std::sync::Arc;

use super::builtin::{self, BasicKind, PrimId};

#[derive(Clone, Debug)]
pub struct Signature {
    node: Arc<Node>,
}

#[derive(Debug)]
struct Node {
    shape: Shape,
    /// Packed bytes.
    bytes: usize,
    /// Basic elements (a pair type counts two).
    elements: usize,
    kind: Option<BasicKind>,
}

#[derive(Debug)]
enum Shape {
    Value(PrimId),
    /// `(times, sub-signature)` in order; no entry is empty.
    Sequence(Vec<(usize, Signature)>),
}

impl Signature {
    /// One value of a predefined type (nothing for `MPI_LB`/`MPI_UB`).
    pub fn of_builtin(id: PrimId) -> Signature {
        match builtin::by_id(id).kind {
            Some(kind) => Signature {
                node: Arc::new(Node {
                    shape: Shape::Value(id),
                    bytes: kind.size(),
                    elements: kind.element_sizes().len(),
                    kind: Some(kind),
                }),
            },
            None => Signature::empty(),
        }
    }

    pub fn empty() -> Signature {
        SignatureBuilder::default().finish()
    }

    pub fn bytes(&self) -> usize {
        self.node.bytes
    }

    pub fn element_count(&self) -> usize {
        self.node.elements
    }

    /// The kind all values have, if they have one (`None` when empty).
    pub fn homogeneous_kind(&self) -> Option<BasicKind> {
        self.node.kind
    }

    /// Basic elements in the first `bytes` packed bytes (at most
    /// [`Signature::bytes`]), or `None` when `bytes` ends inside one.
    pub fn elements_in_prefix(&self, bytes: usize) -> Option<usize> {
        if bytes == self.node.bytes {
            return Some(self.node.elements);
        }
        match &self.node.shape {
            Shape::Value(id) => {
                let mut left = bytes;
                let mut elements = 0;
                for &part in builtin::by_id(*id).kind?.element_sizes() {
                    if left == 0 {
                        break;
                    }
                    if left < part {
                        return None;
                    }
                    left -= part;
                    elements += 1;
                }
                (left == 0).then_some(elements)
            }
            Shape::Sequence(items) => {
                let mut left = bytes;
                let mut elements = 0;
                for (times, sub) in items {
                    if left == 0 {
                        break;
                    }
                    let whole = (left / sub.bytes()).min(*times);
                    elements += whole * sub.element_count();
                    left -= whole * sub.bytes();
                    if whole < *times {
                        return sub.elements_in_prefix(left).map(|e| elements + e);
                    }
                }
                (left == 0).then_some(elements)
            }
        }
    }

    /// Packed bytes of the first `elements` basic elements (at most
    /// [`Signature::element_count`]): the inverse of `elements_in_prefix`.
    pub fn prefix_bytes(&self, elements: usize) -> Option<usize> {
        if elements == self.node.elements {
            return Some(self.node.bytes);
        }
        match &self.node.shape {
            Shape::Value(id) => {
                let parts = builtin::by_id(*id).kind?.element_sizes();
                (elements <= parts.len()).then(|| parts[..elements].iter().sum())
            }
            Shape::Sequence(items) => {
                let mut left = elements;
                let mut bytes = 0;
                for (times, sub) in items {
                    if left == 0 {
                        break;
                    }
                    let per = sub.element_count();
                    let whole = left.checked_div(per).map_or(*times, |w| w.min(*times));
                    bytes += whole * sub.bytes();
                    left -= whole * per;
                    if whole < *times {
                        return sub.prefix_bytes(left).map(|b| bytes + b);
                    }
                }
                (left == 0).then_some(bytes)
            }
        }
    }

    /// Calls `f(predefined type, how many in a row)` for the values in
    /// order (runs of one type may be split).
    pub fn for_each_value(&self, f: &mut impl FnMut(PrimId, usize)) {
        match &self.node.shape {
            Shape::Value(id) => f(*id, 1),
            Shape::Sequence(items) => {
                for (times, sub) in items {
                    if let Shape::Value(id) = sub.node.shape {
                        f(id, *times);
                    } else {
                        for _ in 0..*times {
                            sub.for_each_value(f);
                        }
                    }
                }
            }
        }
    }

    fn same(&self, other: &Signature) -> bool {
        if Arc::ptr_eq(&self.node, &other.node) {
            return true;
        }
        matches!((&self.node.shape, &other.node.shape), (Shape::Value(a), Shape::Value(b)) if a == b)
    }
}

/// Builds a signature from `(times, sub-signature)` items in order.
#[derive(Default)]
pub struct SignatureBuilder {
    items: Vec<(usize, Signature)>,
}

impl SignatureBuilder {
    pub fn push(&mut self, times: usize, sig: &Signature) {
        if times == 0 || sig.bytes() == 0 {
            return;
        }
        // A sequence of one item is that item repeated: flatten it.
        if let Shape::Sequence(items) = &sig.node.shape {
            if let [(inner_times, inner)] = items.as_slice() {
                return self.push(times * inner_times, &inner.clone());
            }
        }
        match self.items.last_mut() {
            Some((n, last)) if last.same(sig) => *n += times,
            _ => self.items.push((times, sig.clone())),
        }
    }

    pub fn finish(self) -> Signature {
        if let [(1, only)] = self.items.as_slice() {
            return only.clone();
        }
        let bytes = self.items.iter().map(|(t, s)| t * s.bytes()).sum();
        let elements = self.items.iter().map(|(t, s)| t * s.element_count()).sum();
        let mut kinds = self.items.iter().map(|(_, s)| s.homogeneous_kind());
        let kind = match kinds.next() {
            Some(Some(first)) if kinds.all(|k| k == Some(first)) => Some(first),
            _ => None,
        };
        Signature {
            node: Arc::new(Node {
                shape: Shape::Sequence(self.items),
                bytes,
                elements,
                kind,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpi_abi::constants::*;

    fn sig(h: crate::mpi_abi::types::MPI_Datatype) -> Signature {
        Signature::of_builtin(builtin::find(h).unwrap().0)
    }

    fn seq(items: &[(usize, &Signature)]) -> Signature {
        let mut b = SignatureBuilder::default();
        for (t, s) in items {
            b.push(*t, s);
        }
        b.finish()
    }

    #[test]
    fn counts_partial_elements_and_rejects_split_values() {
        // struct { double; char } with 3 copies: 9 bytes, 2 elements each.
        let s = seq(&[(1, &sig(MPI_DOUBLE)), (1, &sig(MPI_CHAR))]);
        let three = seq(&[(3, &s)]);
        assert_eq!((three.bytes(), three.element_count()), (27, 6));
        assert_eq!(three.elements_in_prefix(0), Some(0));
        assert_eq!(three.elements_in_prefix(8), Some(1));
        assert_eq!(three.elements_in_prefix(9), Some(2));
        assert_eq!(three.elements_in_prefix(17), Some(3));
        assert_eq!(three.elements_in_prefix(10), None);
        assert_eq!(three.prefix_bytes(3), Some(17));
        assert_eq!(three.prefix_bytes(6), Some(27));
        assert_eq!(three.prefix_bytes(7), None);
        assert_eq!(three.homogeneous_kind(), None);
    }

    #[test]
    fn pair_values_are_two_elements() {
        let p = sig(MPI_DOUBLE_INT);
        assert_eq!(p.element_count(), 2);
        assert_eq!(p.elements_in_prefix(8), Some(1));
        assert_eq!(p.elements_in_prefix(4), None);
        assert_eq!(p.prefix_bytes(1), Some(8));
        assert_eq!(p.homogeneous_kind(), Some(BasicKind::DoubleInt));
    }

    #[test]
    fn repeated_signatures_stay_small_and_keep_their_kind() {
        let int = sig(MPI_INT);
        let v = seq(&[(1_000_000, &int)]);
        let vv = seq(&[(1_000_000, &v)]);
        assert_eq!(vv.bytes(), 4_000_000_000_000);
        assert_eq!(vv.homogeneous_kind(), Some(BasicKind::Int32));
        assert_eq!(vv.elements_in_prefix(4 * 1_234_567), Some(1_234_567));
        let mut runs = Vec::new();
        seq(&[(2, &sig(MPI_INT)), (3, &sig(MPI_INT)), (1, &sig(MPI_CHAR))])
            .for_each_value(&mut |id, n| runs.push((builtin::by_id(id).name, n)));
        assert_eq!(runs, vec![("MPI_INT", 5), ("MPI_CHAR", 1)]);
    }
}
