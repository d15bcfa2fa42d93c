//! Reduction operations through the C ABI: `MPI_Op_create(_c)`,
//! `MPI_Op_free`, `MPI_Op_commutative`, `MPI_Reduce_local(_c)`. The
//! operations themselves are in `core::op`.
use std::os::raw::{c_int, c_void};

use crate::abi::collective::args::{in_place, user_buffer_check};
use crate::core::datatype;
use crate::core::error::{MpiError, MpiResult};
use crate::core::op::{self, Reduction, UserFunction, UserOp};
use crate::mpi_abi::callbacks::{MPI_User_function, MPI_User_function_c};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

fn null_function() -> MpiError {
    MpiError::new(MPI_ERR_ARG, "user_fn is NULL")
}

/// A user function of either form: `MPI_User_function` (`MPI_Op_create`)
/// or `MPI_User_function_c` (`MPI_Op_create_c`).
pub trait UserFunctionArg {
    /// The function, `None` for NULL.
    fn function(self) -> Option<UserFunction>;
}

impl UserFunctionArg for MPI_User_function {
    fn function(self) -> Option<UserFunction> {
        self.map(UserFunction::Int)
    }
}

impl UserFunctionArg for MPI_User_function_c {
    fn function(self) -> Option<UserFunction> {
        self.map(UserFunction::Count)
    }
}

/// `MPI_Op_create` and `_c`.
pub unsafe fn create(user_fn: impl UserFunctionArg, commute: c_int, op: &mut MPI_Op) -> MpiResult {
    *op = op::create(UserOp {
        function: user_fn.function().ok_or_else(null_function)?,
        commutative: commute != 0,
    });
    Ok(())
}

pub unsafe fn free(op: &mut MPI_Op) -> MpiResult {
    op::free(*op)?;
    *op = MPI_OP_NULL;
    Ok(())
}

pub unsafe fn commutative(op: MPI_Op, commute: &mut c_int) -> MpiResult {
    *commute = op::commutative(op)?;
    Ok(())
}

/// `MPI_Reduce_local` and `_c`.
pub unsafe fn reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult {
    let dt = datatype::lookup_committed(datatype)?;
    let red = Reduction::new(op, datatype, dt.clone())?;
    if in_place(inbuf) || in_place(inoutbuf) {
        return Err(MpiError::new(
            MPI_ERR_BUFFER,
            "MPI_IN_PLACE is not valid in MPI_Reduce_local",
        ));
    }
    user_buffer_check(inbuf, n, &dt, "inbuf")?;
    user_buffer_check(inoutbuf, n, &dt, "inoutbuf")?;
    if n > 0 && dt.size() > 0 && std::ptr::eq(inbuf, inoutbuf) {
        return Err(MpiError::new(
            MPI_ERR_BUFFER,
            "inbuf and inoutbuf are the same buffer",
        ));
    }
    // SAFETY: the caller's buffers hold `n` elements of the datatype
    // (MPI's contract for MPI_Reduce_local).
    unsafe { red.reduce_local(inbuf.cast(), inoutbuf.cast(), n) };
    Ok(())
}
