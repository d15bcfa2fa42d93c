//! `MPI_Status` output arguments: a real pointer, or `MPI_STATUS_IGNORE`
//! / `MPI_STATUSES_IGNORE` (the address 1), checked once at entry.
use crate::abi::constants::*;
use crate::abi::types::MPI_Status;
use crate::core::error::{MpiError, MpiResult};

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

/// Writes `status` unless ignored.
///
/// # Safety
/// A `StatusOut::To` pointer must be valid for writes.
pub unsafe fn write_status(out: StatusOut, status: &MPI_Status) {
    if let StatusOut::To(p) = out {
        // SAFETY: checked non-NULL and not the ignore marker; valid per the
        // caller's contract.
        unsafe { *p = *status };
    }
}

/// The status of an empty (null or inactive) request: source
/// `MPI_ANY_SOURCE`, tag `MPI_ANY_TAG`, count 0, not cancelled.
pub fn empty_status() -> MPI_Status {
    MPI_Status {
        MPI_SOURCE: MPI_ANY_SOURCE,
        MPI_TAG: MPI_ANY_TAG,
        MPI_ERROR: MPI_SUCCESS,
        ..Default::default()
    }
}
