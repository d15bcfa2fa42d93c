//! Reduction operations: the predefined ones (`MPI_MAX` ... `MPI_NO_OP`,
//! builtin handles `0x58000001..=0x5800000e`) and user operations made with
//! `MPI_Op_create`, and [`Reduction`], an operation bound to a datatype that
//! the collectives use to combine packed data.
//!
//! User operations are process-level objects (MPI lets them outlive
//! sessions): they live in their own handle table behind their own lock,
//! never the runtime lock. A handle names an `Arc<UserOp>`, so freeing it
//! while a nonblocking reduction still uses the operation is safe.
pub mod extended;
pub mod kernels;
pub mod reduction;
pub mod user;

use std::os::raw::c_int;
use std::sync::{Arc, LazyLock};

use crate::core::locks::{Level, OrderedGuard, OrderedMutex};

use crate::core::error::{MpiError, MpiResult};
use crate::core::handles::{HandleTable, ObjectKind};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::MPI_Op;

pub use reduction::Reduction;
pub use user::{UserFunction, UserOp};

/// The predefined operations, in handle order (`MPI_MAX` is 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuiltinOp {
    Max,
    Min,
    Sum,
    Prod,
    Land,
    Band,
    Lor,
    Bor,
    Lxor,
    Bxor,
    Minloc,
    Maxloc,
    Replace,
    NoOp,
}

impl BuiltinOp {
    pub const ALL: [BuiltinOp; 14] = [
        BuiltinOp::Max,
        BuiltinOp::Min,
        BuiltinOp::Sum,
        BuiltinOp::Prod,
        BuiltinOp::Land,
        BuiltinOp::Band,
        BuiltinOp::Lor,
        BuiltinOp::Bor,
        BuiltinOp::Lxor,
        BuiltinOp::Bxor,
        BuiltinOp::Minloc,
        BuiltinOp::Maxloc,
        BuiltinOp::Replace,
        BuiltinOp::NoOp,
    ];

    pub fn from_handle(h: MPI_Op) -> Option<BuiltinOp> {
        let index = (h as u32).wrapping_sub(MPI_MAX as u32) as usize;
        Self::ALL.get(index).copied()
    }

    pub fn handle(self) -> MPI_Op {
        MPI_MAX + self as MPI_Op
    }

    pub fn name(self) -> &'static str {
        const NAMES: [&str; 14] = [
            "MPI_MAX",
            "MPI_MIN",
            "MPI_SUM",
            "MPI_PROD",
            "MPI_LAND",
            "MPI_BAND",
            "MPI_LOR",
            "MPI_BOR",
            "MPI_LXOR",
            "MPI_BXOR",
            "MPI_MINLOC",
            "MPI_MAXLOC",
            "MPI_REPLACE",
            "MPI_NO_OP",
        ];
        NAMES[self as usize]
    }
}

/// An operation a handle names.
#[derive(Clone)]
pub enum Op {
    Builtin(BuiltinOp),
    User(Arc<UserOp>),
}

impl Op {
    /// Whether the operation may combine operands in any order. The
    /// predefined ones are, except `MPI_REPLACE` and `MPI_NO_OP` (which
    /// only RMA accumulates use), as MPICH answers.
    pub fn is_commutative(&self) -> bool {
        match self {
            Op::Builtin(BuiltinOp::Replace | BuiltinOp::NoOp) => false,
            Op::Builtin(_) => true,
            Op::User(u) => u.commutative,
        }
    }
}

static USER_OPS: LazyLock<OrderedMutex<HandleTable<Arc<UserOp>>>> =
    LazyLock::new(|| OrderedMutex::new(Level::UserOps, HandleTable::new(ObjectKind::Op)));

fn table() -> OrderedGuard<'static, HandleTable<Arc<UserOp>>> {
    USER_OPS.lock()
}

fn invalid(h: MPI_Op) -> MpiError {
    if h == MPI_OP_NULL {
        MpiError::new(MPI_ERR_OP, "MPI_OP_NULL is not a valid operation here")
    } else {
        MpiError::new(
            MPI_ERR_OP,
            format!(
                "handle {:#010x} is not a valid (or a freed) operation",
                h as u32
            ),
        )
    }
}

/// The operation a handle names.
pub fn lookup(h: MPI_Op) -> MpiResult<Op> {
    if let Some(b) = BuiltinOp::from_handle(h) {
        return Ok(Op::Builtin(b));
    }
    table()
        .get(h)
        .cloned()
        .map(Op::User)
        .ok_or_else(|| invalid(h))
}

/// `MPI_Op_create`: a new handle for a user operation.
pub fn create(op: UserOp) -> MPI_Op {
    table().insert(Arc::new(op))
}

/// `MPI_Op_free`: predefined operations cannot be freed.
pub fn free(h: MPI_Op) -> MpiResult {
    if BuiltinOp::from_handle(h).is_some() {
        return Err(MpiError::new(
            MPI_ERR_OP,
            "a predefined operation cannot be freed",
        ));
    }
    table().remove(h).map(|_| ()).ok_or_else(|| invalid(h))
}

/// `MPI_Op_commutative`.
pub fn commutative(h: MPI_Op) -> MpiResult<c_int> {
    Ok(lookup(h)?.is_commutative() as c_int)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_handles_round_trip() {
        for op in BuiltinOp::ALL {
            assert_eq!(BuiltinOp::from_handle(op.handle()), Some(op));
        }
        assert_eq!(BuiltinOp::Max.handle(), MPI_MAX);
        assert_eq!(BuiltinOp::NoOp.handle(), MPI_NO_OP);
        assert_eq!(BuiltinOp::from_handle(MPI_OP_NULL), None);
        assert_eq!(BuiltinOp::from_handle(MPI_NO_OP + 1), None);
        assert!(matches!(lookup(MPI_OP_NULL), Err(e) if e.class == MPI_ERR_OP));
        assert!(free(MPI_SUM).is_err());
        assert_eq!(commutative(MPI_SUM).unwrap(), 1);
        assert_eq!(commutative(MPI_REPLACE).unwrap(), 0);
    }
}
