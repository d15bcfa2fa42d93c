//! `MPI_Status` output arguments: a real pointer, or `MPI_STATUS_IGNORE`
//! / `MPI_STATUSES_IGNORE` (the address 1), checked once at entry.
use std::os::raw::c_int;

use crate::abi::args::{array, out};
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Fint, MPI_Status};

/// Where a status goes.
#[derive(Clone, Copy)]
pub enum StatusOut {
    Ignore,
    To(*mut MPI_Status),
}

/// `MPI_STATUS_IGNORE` and `MPI_STATUSES_IGNORE` as an address.
const IGNORE_ADDRESS: usize = 1;

impl StatusOut {
    /// # Safety
    /// `status` must be `MPI_STATUS_IGNORE`, NULL (rejected) or valid for
    /// writing one status.
    pub unsafe fn new(status: *mut MPI_Status) -> MpiResult<StatusOut> {
        match status as usize {
            0 => Err(MpiError::new(
                MPI_ERR_ARG,
                "status is NULL (use MPI_STATUS_IGNORE)",
            )),
            IGNORE_ADDRESS => Ok(StatusOut::Ignore),
            _ => Ok(StatusOut::To(status)),
        }
    }

    /// The `i`-th entry of a status array (or ignore).
    ///
    /// # Safety
    /// As for `new`, for an array of at least `i + 1` statuses.
    pub unsafe fn nth(statuses: *mut MPI_Status, i: usize) -> MpiResult<StatusOut> {
        match statuses as usize {
            0 => Err(MpiError::new(
                MPI_ERR_ARG,
                "array_of_statuses is NULL (use MPI_STATUSES_IGNORE)",
            )),
            IGNORE_ADDRESS => Ok(StatusOut::Ignore),
            // SAFETY: the array has at least i + 1 entries (caller).
            _ => Ok(StatusOut::To(unsafe { statuses.add(i) })),
        }
    }
}

/// Writes `status` unless ignored: every field but `MPI_ERROR`, which a
/// single-completion call leaves as the program set it (MPI 4.1, section
/// 3.2.5: it reports its error as its return code); the multiple-completion
/// calls write it, see [`write_status_with_error`]. An empty status (of a
/// null or inactive request) is written whole: MPI 4.1 section 3.7.3
/// defines it with `MPI_ERROR` = `MPI_SUCCESS`.
///
/// # Safety
/// A `StatusOut::To` pointer must be valid for reads and writes.
pub unsafe fn write_status(out: StatusOut, status: &MPI_Status) {
    if let StatusOut::To(p) = out {
        let empty = *status == crate::core::p2p::request::empty_status();
        // SAFETY: checked non-NULL and not the ignore marker; valid per the
        // caller's contract.
        unsafe {
            let error = (*p).MPI_ERROR;
            *p = *status;
            if !empty {
                (*p).MPI_ERROR = error;
            }
        }
    }
}

/// Writes `status` with `error` in its `MPI_ERROR` field: a
/// multiple-completion call (`MPI_Waitall`, `MPI_Testsome`...) says there
/// how each request ended (`MPI_SUCCESS`, or its error with
/// `MPI_ERR_IN_STATUS`).
///
/// # Safety
/// As for [`write_status`].
pub unsafe fn write_status_with_error(out: StatusOut, status: &MPI_Status, error: c_int) {
    if let StatusOut::To(p) = out {
        // SAFETY: as in `write_status`.
        unsafe {
            *p = *status;
            (*p).MPI_ERROR = error;
        }
    }
}

pub use crate::core::p2p::request::empty_status;

/// `MPI_Status_set_cancelled` (for generalized requests' query functions).
///
/// # Safety
/// `status` must be NULL, `MPI_STATUS_IGNORE` (both rejected) or valid for
/// writing one status.
pub unsafe fn set_cancelled(status: *mut MPI_Status, flag: c_int) -> MpiResult {
    // SAFETY: `status` is NULL, MPI_STATUS_IGNORE or valid for one status (this
    // function's contract, as `new` asks); `new` only classifies the address.
    match unsafe { StatusOut::new(status) }? {
        // SAFETY: `new` excluded NULL and the ignore marker, so `p` is the
        // caller's status, valid for writes during this call.
        StatusOut::To(p) => unsafe { (*p).set_cancelled(flag != 0) },
        StatusOut::Ignore => return Err(MpiError::new(MPI_ERR_ARG, "status is MPI_STATUS_IGNORE")),
    }
    Ok(())
}

/// The Fortran `INTEGER` words of a status: MPICH's `MPI_STATUS_SIZE` (5),
/// the C struct's five `int`s in their order.
const FORTRAN_STATUS_WORDS: usize =
    std::mem::size_of::<MPI_Status>() / std::mem::size_of::<MPI_Fint>();

/// `MPI_Status_c2f`: the same words, as MPICH lays a Fortran status out.
pub unsafe fn status_c2f(c_status: *const MPI_Status, f_status: *mut MPI_Fint) -> MpiResult {
    if c_status as usize == IGNORE_ADDRESS {
        return Err(MpiError::new(
            MPI_ERR_OTHER,
            "MPI_STATUS_IGNORE cannot be converted to a Fortran status",
        ));
    }
    // SAFETY: MPI_Status_c2f's arguments: `c_status` is a status the program
    // passes (NULL rejected by `array`), `f_status` an array of
    // MPI_STATUS_SIZE integers (NULL rejected by `out`).
    let c = unsafe { array(c_status, 1, "c_status") }?[0];
    // SAFETY: as above.
    let f = unsafe {
        out(
            f_status.cast::<[MPI_Fint; FORTRAN_STATUS_WORDS]>(),
            "f_status",
        )
    }?;
    *f = [
        c.count_lo,
        c.count_hi_and_cancelled,
        c.MPI_SOURCE,
        c.MPI_TAG,
        c.MPI_ERROR,
    ];
    Ok(())
}

/// `MPI_Status_f2c`.
pub unsafe fn status_f2c(f_status: *const MPI_Fint, c_status: *mut MPI_Status) -> MpiResult {
    // SAFETY: MPI_Status_f2c's arguments: `f_status` is an array of
    // MPI_STATUS_SIZE integers (NULL rejected by `array`), `c_status` a
    // status to write (NULL rejected by `out`).
    let f = unsafe { array(f_status, FORTRAN_STATUS_WORDS, "f_status") }?;
    if c_status as usize == IGNORE_ADDRESS {
        return Err(MpiError::new(
            MPI_ERR_OTHER,
            "MPI_STATUS_IGNORE cannot receive a status",
        ));
    }
    // SAFETY: as above.
    let c = unsafe { out(c_status, "c_status") }?;
    *c = MPI_Status {
        count_lo: f[0],
        count_hi_and_cancelled: f[1],
        MPI_SOURCE: f[2],
        MPI_TAG: f[3],
        MPI_ERROR: f[4],
    };
    Ok(())
}
