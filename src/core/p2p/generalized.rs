//! Generalized requests (`MPI_Grequest_start`): operations the program
//! runs itself and completes with `MPI_Grequest_complete`. MPI calls the
//! program's functions: query for the status when the request completes
//! in a wait or test, free when the request goes, cancel on `MPI_Cancel`,
//! and (MPICH's `MPIX_Grequest_start`) poll while waiting.
//!
//! The callbacks may call MPI, so they are called only without the runtime
//! lock held: the engine hands a copy of them out, and the abi layer calls
//! them once it has let go of the lock.
use std::os::raw::{c_int, c_void};

use crate::abi::callbacks::*;
use crate::abi::constants::*;
use crate::abi::types::MPI_Status;
use crate::core::error::MpiError;
use crate::core::error_codes;

use super::request::empty_status;

#[derive(Clone, Copy)]
pub struct Generalized {
    pub query_fn: MPI_Grequest_query_function,
    pub free_fn: MPI_Grequest_free_function,
    pub cancel_fn: MPI_Grequest_cancel_function,
    pub poll_fn: MPIX_Grequest_poll_function,
    pub wait_fn: MPIX_Grequest_wait_function,
    /// The program's `extra_state` pointer, passed back as is.
    pub extra_state: usize,
}

/// A callback's return code as an error (`None` for `MPI_SUCCESS`).
fn callback_error(code: c_int, what: &str) -> Option<MpiError> {
    (code != MPI_SUCCESS).then(|| {
        MpiError::new(
            error_codes::class_of(code).unwrap_or(MPI_ERR_OTHER),
            format!("the generalized request's {what} function returned error code {code}"),
        )
    })
}

impl Generalized {
    fn state(&self) -> *mut c_void {
        self.extra_state as *mut c_void
    }

    /// Calls the query function: the status of the completed request.
    pub fn query(&self) -> (MPI_Status, Option<MpiError>) {
        let mut status = empty_status();
        let Some(query) = self.query_fn else {
            return (status, None);
        };
        // SAFETY: the program's query function with its own extra_state and
        // a valid status, as MPI specifies; no lock is held.
        let code = unsafe { query(self.state(), &mut status) };
        let error = callback_error(code, "query");
        if error.is_some() {
            status.MPI_ERROR = code;
        }
        (status, error)
    }

    /// Calls the free function (the request is gone).
    pub fn free(&self) -> Option<MpiError> {
        let free = self.free_fn?;
        // SAFETY: the program's free function with its own extra_state; it
        // is called once, after the last query; no lock is held.
        callback_error(unsafe { free(self.state()) }, "free")
    }

    /// Calls the cancel function; `complete`: `MPI_Grequest_complete` was
    /// called already.
    pub fn cancel(&self, complete: bool) -> Option<MpiError> {
        let cancel = self.cancel_fn?;
        // SAFETY: the program's cancel function with its own extra_state;
        // no lock is held.
        callback_error(unsafe { cancel(self.state(), complete as c_int) }, "cancel")
    }

    /// Whether the request has a poll (or wait) function to drive it.
    pub fn polls(&self) -> bool {
        self.poll_fn.is_some() || self.wait_fn.is_some()
    }

    /// Lets the program's poll function move the request along (MPICH's
    /// extension; the wait function, given alone, is called with a zero
    /// timeout instead).
    pub fn poll(&self) -> Option<MpiError> {
        let mut status = empty_status();
        if let Some(poll) = self.poll_fn {
            // SAFETY: the program's poll function with its extra_state and
            // a valid status; no lock is held.
            return callback_error(unsafe { poll(self.state(), &mut status) }, "poll");
        }
        let wait = self.wait_fn?;
        let mut state = self.state();
        // SAFETY: the program's wait function with an array of one state,
        // a zero timeout and a valid status; no lock is held.
        callback_error(unsafe { wait(1, &mut state, 0.0, &mut status) }, "wait")
    }
}
