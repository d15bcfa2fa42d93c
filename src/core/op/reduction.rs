//! An operation bound to the datatype of one reduction call. Collectives
//! move reduction data packed; [`Reduction::combine`] combines two packed
//! runs of whole elements: a predefined operation element by element of
//! the datatype's basic kind (so a contiguous or vector type of `MPI_INT`
//! reduces like that many `MPI_INT`s), a user operation through the user's
//! layout (see [`super::user`]).
use std::sync::Arc;

use super::{kernels, lookup, BuiltinOp, Op};
use crate::core::datatype::{BasicKind, Datatype};
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Datatype, MPI_Op};

#[derive(Clone)]
pub struct Reduction {
    op: Op,
    datatype: Arc<Datatype>,
    /// The handle the program passed (user functions receive it).
    handle: MPI_Datatype,
    /// The basic kind a predefined operation works on.
    kind: Option<BasicKind>,
}

fn type_name(datatype: &Datatype) -> String {
    match datatype.predefined_name() {
        Some(name) => name.to_string(),
        None => match datatype.basic_kind() {
            Some(kind) => format!("a derived datatype of {kind:?} values"),
            None => "a derived datatype of mixed basic types".to_string(),
        },
    }
}

impl Reduction {
    /// Checks that `op` can reduce `datatype` in a collective or
    /// `MPI_Reduce_local` (`MPI_ERR_OP` if not).
    pub fn new(op: MPI_Op, handle: MPI_Datatype, datatype: Arc<Datatype>) -> MpiResult<Reduction> {
        let op = lookup(op)?;
        let mut kind = None;
        if let Op::Builtin(b) = &op {
            if matches!(b, BuiltinOp::Replace | BuiltinOp::NoOp) {
                return Err(MpiError::new(
                    MPI_ERR_OP,
                    format!("{} is only for RMA accumulate operations", b.name()),
                ));
            }
            if datatype.size() > 0 {
                match datatype.basic_kind() {
                    Some(k) if kernels::supports(*b, k) => kind = Some(k),
                    _ => {
                        return Err(MpiError::new(
                            MPI_ERR_OP,
                            format!("{} is not defined for {}", b.name(), type_name(&datatype)),
                        ))
                    }
                }
            }
        }
        Ok(Reduction {
            op,
            datatype,
            handle,
            kind,
        })
    }

    pub fn is_commutative(&self) -> bool {
        self.op.is_commutative()
    }

    /// Packed bytes of one element of the datatype.
    pub fn element_size(&self) -> usize {
        self.datatype.size()
    }

    /// `inout = input op inout` on packed data (the same whole number of
    /// elements in each).
    pub fn combine(&self, input: &[u8], inout: &mut [u8]) {
        debug_assert_eq!(input.len(), inout.len());
        if input.is_empty() {
            return;
        }
        match &self.op {
            Op::Builtin(b) => {
                if let Some(kind) = self.kind {
                    kernels::apply(*b, kind, input, inout);
                }
            }
            Op::User(u) => u.combine_packed(&self.datatype, self.handle, input, inout),
        }
    }

    /// `MPI_Reduce_local`: `inout = input op inout` on `count` elements in
    /// the user's buffers. A user function is called on the buffers
    /// themselves.
    ///
    /// # Safety
    /// `input` and `inout` must each hold `count` elements of the datatype.
    pub unsafe fn reduce_local(&self, input: *const u8, inout: *mut u8, count: usize) {
        match &self.op {
            Op::User(u) => {
                // SAFETY: the caller's buffers, as the contract says.
                unsafe { u.call(input.cast_mut(), inout, count, &self.datatype, self.handle) }
            }
            Op::Builtin(_) if self.datatype.is_contiguous() => {
                let bytes = count * self.datatype.size();
                let shift = self.datatype.true_lb();
                // SAFETY: a contiguous type's `count` elements are one block
                // of `bytes` bytes at `buf + true_lb` (the caller's contract
                // gives both buffers; MPI requires them not to overlap).
                let (a, b) = unsafe {
                    (
                        std::slice::from_raw_parts(input.wrapping_offset(shift), bytes),
                        std::slice::from_raw_parts_mut(inout.wrapping_offset(shift), bytes),
                    )
                };
                self.combine(a, b);
            }
            Op::Builtin(_) => {
                let bytes = count * self.datatype.size();
                let mut a = vec![0u8; bytes];
                let mut b = vec![0u8; bytes];
                // SAFETY: the caller's buffers, as the contract says.
                unsafe {
                    self.datatype.pack_range(input, count, 0, &mut a);
                    self.datatype.pack_range(inout, count, 0, &mut b);
                }
                self.combine(&a, &mut b);
                // SAFETY: as above.
                unsafe { self.datatype.unpack_range(inout, count, 0, &b) };
            }
        }
    }
}
