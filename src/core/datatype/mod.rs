//! Datatypes: the predefined ones, the derived-type constructors, and the
//! streaming pack/unpack that moves a message between a user's buffer and a
//! byte stream in pieces, from any offset.
//!
//! A [`Datatype`] is immutable once built (only its committed flag
//! changes), shared as `Arc<Datatype>`: a derived type holds its parts, an
//! operation in flight holds its type, so freeing a handle never pulls a
//! layout out from under anyone. Datatypes are process-level objects: the
//! handle table ([`registry`]) has its own lock, independent of the runtime
//! lock, sessions and epochs.
//!
//! The interface the rest of oxmpi uses: [`lookup`] / [`lookup_committed`]
//! turn a handle into an `Arc<Datatype>`; [`Datatype::size`], extent and
//! bounds; [`Datatype::is_contiguous`]; [`Datatype::pack_range`] /
//! [`Datatype::unpack_range`] / [`Datatype::for_each_block`] for the data;
//! [`Datatype::elements_in`] and [`Datatype::basic_kind`] for
//! `MPI_Get_elements` and reductions.
pub mod builtin;
pub mod constructors;
pub mod external32;
pub mod pack;
pub mod registry;
pub mod representation;
pub mod signature;
pub mod typemap;

use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use builtin::{BasicKind, BoundMarker};
pub use constructors::Order;
pub use registry::{lookup, lookup_committed, lookup_for_message, predefined, TypeRef};

use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::MPI_Datatype;
use builtin::PrimId;
use signature::Signature;
use typemap::Typemap;

/// How a datatype was made (`MPI_COMBINER_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combiner {
    Named,
    Dup,
    Contiguous,
    Vector,
    Hvector,
    Indexed,
    Hindexed,
    IndexedBlock,
    HindexedBlock,
    Struct,
    Subarray,
    Darray,
    Resized,
    /// `MPI_Type_create_f90_integer`, `_real`, `_complex`.
    F90Integer,
    F90Real,
    F90Complex,
}

impl Combiner {
    pub fn mpi_value(self) -> c_int {
        match self {
            Combiner::Named => MPI_COMBINER_NAMED,
            Combiner::Dup => MPI_COMBINER_DUP,
            Combiner::Contiguous => MPI_COMBINER_CONTIGUOUS,
            Combiner::Vector => MPI_COMBINER_VECTOR,
            Combiner::Hvector => MPI_COMBINER_HVECTOR,
            Combiner::Indexed => MPI_COMBINER_INDEXED,
            Combiner::Hindexed => MPI_COMBINER_HINDEXED,
            Combiner::IndexedBlock => MPI_COMBINER_INDEXED_BLOCK,
            Combiner::HindexedBlock => MPI_COMBINER_HINDEXED_BLOCK,
            Combiner::Struct => MPI_COMBINER_STRUCT,
            Combiner::Subarray => MPI_COMBINER_SUBARRAY,
            Combiner::Darray => MPI_COMBINER_DARRAY,
            Combiner::Resized => MPI_COMBINER_RESIZED,
            Combiner::F90Integer => MPI_COMBINER_F90_INTEGER,
            Combiner::F90Real => MPI_COMBINER_F90_REAL,
            Combiner::F90Complex => MPI_COMBINER_F90_COMPLEX,
        }
    }
}

/// The arguments a derived type was made with, as `MPI_Type_get_contents`
/// returns them. The abi layer fills these in the standard's order.
#[derive(Clone, Debug)]
pub struct Contents {
    pub combiner: Combiner,
    pub integers: Vec<c_int>,
    pub addresses: Vec<isize>,
    pub large_counts: Vec<i64>,
    /// The datatype arguments: their handles when the type was made, and
    /// the types themselves (kept alive here).
    pub types: Vec<(MPI_Datatype, Arc<Datatype>)>,
}

impl Contents {
    pub fn new(combiner: Combiner) -> Contents {
        Contents {
            combiner,
            integers: Vec::new(),
            addresses: Vec::new(),
            large_counts: Vec::new(),
            types: Vec::new(),
        }
    }
}

pub struct Datatype {
    size: usize,
    lb: isize,
    ub: isize,
    true_lb: isize,
    true_ub: isize,
    /// Alignment of the most aligned basic type inside (struct padding).
    align: usize,
    /// Count elements form one block of `count * size` bytes.
    contiguous: bool,
    marker: Option<BoundMarker>,
    predefined: Option<PrimId>,
    typemap: Arc<Typemap>,
    signature: Signature,
    contents: Contents,
    committed: AtomicBool,
}

impl std::fmt::Debug for Datatype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Datatype")
            .field("combiner", &self.contents.combiner)
            .field("size", &self.size)
            .field("lb", &self.lb)
            .field("extent", &self.extent())
            .field("true_lb", &self.true_lb)
            .field("true_extent", &self.true_extent())
            .finish()
    }
}

impl Datatype {
    /// Bytes of data in one element.
    pub fn size(&self) -> usize {
        self.size
    }

    pub fn lb(&self) -> isize {
        self.lb
    }

    pub fn ub(&self) -> isize {
        self.ub
    }

    pub fn extent(&self) -> isize {
        self.ub - self.lb
    }

    /// Lowest byte of data, relative to the buffer address.
    pub fn true_lb(&self) -> isize {
        self.true_lb
    }

    pub fn true_ub(&self) -> isize {
        self.true_ub
    }

    /// Whether a buffer of `count` elements of this type may be at address
    /// 0 (`MPI_BOTTOM`, which is NULL in this ABI): when it holds no data,
    /// or when its data does not start at displacement 0, as in a type
    /// built from `MPI_Get_address` displacements. A predefined type, or a
    /// derived one whose data starts at 0, at NULL is a missing buffer (the
    /// rule MPICH applies).
    pub fn may_be_at_bottom(&self, count: usize) -> bool {
        count == 0 || self.size == 0 || (!self.is_predefined() && self.true_lb != 0)
    }

    pub fn true_extent(&self) -> isize {
        self.true_ub - self.true_lb
    }

    pub fn align(&self) -> usize {
        self.align
    }

    /// Whether `count` elements form one block of `count * size()` bytes
    /// starting at `buf + true_lb()`, for any count: the data of one
    /// element has no holes and the extent equals the size.
    pub fn is_contiguous(&self) -> bool {
        self.contiguous
    }

    /// The one block `(displacement from buf, length)` that `count`
    /// elements occupy, if they occupy one (also when the extent differs
    /// from the size but `count` is 1).
    pub fn contiguous_span(&self, count: usize) -> Option<(isize, usize)> {
        if self.contiguous
            || (count == 1 && self.typemap.single_block().is_some())
            || self.size == 0
        {
            return Some((self.true_lb, count * self.size));
        }
        None
    }

    /// The kind all basic values have, if they have one (reductions).
    pub fn basic_kind(&self) -> Option<BasicKind> {
        self.signature.homogeneous_kind()
    }

    pub fn signature(&self) -> &Signature {
        &self.signature
    }

    pub fn typemap(&self) -> &Arc<Typemap> {
        &self.typemap
    }

    pub fn marker(&self) -> Option<BoundMarker> {
        self.marker
    }

    pub fn contents(&self) -> &Contents {
        &self.contents
    }

    pub fn combiner(&self) -> Combiner {
        self.contents.combiner
    }

    pub fn is_predefined(&self) -> bool {
        self.predefined.is_some()
    }

    /// The predefined type's name (`"MPI_INT"`), if it is one.
    pub fn predefined_name(&self) -> Option<&'static str> {
        self.predefined.map(|id| builtin::by_id(id).name)
    }

    pub fn is_committed(&self) -> bool {
        self.committed.load(Ordering::Acquire)
    }

    pub fn commit(&self) {
        self.committed.store(true, Ordering::Release);
    }

    /// Number of basic elements per element.
    pub fn element_count(&self) -> usize {
        self.signature.element_count()
    }

    /// `MPI_Get_count`: whole elements in `bytes`, or `None` when `bytes`
    /// is not a multiple of the size (a zero-size type: 0 for 0 bytes).
    pub fn count_in(&self, bytes: usize) -> Option<usize> {
        match self.size {
            0 => (bytes == 0).then_some(0),
            size => (bytes % size == 0).then_some(bytes / size),
        }
    }

    /// `MPI_Get_elements`: basic elements in `bytes` of packed data, or
    /// `None` when `bytes` ends inside a basic element.
    pub fn elements_in(&self, bytes: usize) -> Option<usize> {
        if self.size == 0 {
            return (bytes == 0).then_some(0);
        }
        let whole = bytes / self.size;
        let partial = self.signature.elements_in_prefix(bytes % self.size)?;
        whole
            .checked_mul(self.element_count())?
            .checked_add(partial)
    }

    /// The inverse of [`Datatype::elements_in`] (`MPI_Status_set_elements`):
    /// packed bytes of the first `elements` basic elements of a sequence of
    /// this type.
    pub fn bytes_for_elements(&self, elements: usize) -> Option<usize> {
        let per = self.element_count();
        if per == 0 {
            return (elements == 0).then_some(0);
        }
        let partial = self.signature.prefix_bytes(elements % per)?;
        (elements / per)
            .checked_mul(self.size)?
            .checked_add(partial)
    }

    /// Memory the data of `count` elements at `buf` touch: `[lo, hi)`
    /// relative to `buf` (empty when there is no data).
    pub fn data_span(&self, count: usize) -> (isize, isize) {
        if count == 0 || self.size == 0 {
            return (0, 0);
        }
        let last = (count as isize - 1) * self.extent();
        (self.true_lb + last.min(0), self.true_ub + last.max(0))
    }
}

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;
