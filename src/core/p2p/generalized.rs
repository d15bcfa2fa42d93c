//! Generalized requests (`MPI_Grequest_start`): operations the program
//! runs itself and completes with `MPI_Grequest_complete`. MPI calls the
//! program's functions: query for the status when the request completes
//! in a wait or test, free when the request goes, cancel on `MPI_Cancel`,
//! and (MPICH's `MPIX_Grequest_start`) poll while waiting.
//!
//! The callbacks may call MPI, so they are called only without the runtime
//! lock held: the engine hands a copy of them out, and the abi layer calls
//! them once it has let go of the lock.
//!
//! A request started from Fortran through MPICH's binding
//! (`MPII_Grequest_set_lang_f77` marks it) has Fortran subroutines for
//! callbacks: every argument by reference, the error code as a last
//! argument instead of a result, and the status as an `INTEGER` array,
//! which has `MPI_Status`'s layout in the MPICH ABI (what MPICH's
//! `MPI_Status_f2c` copies).
use std::os::raw::{c_int, c_void};

use crate::core::error::{MpiError, MpiResult};
use crate::core::error_codes;
use crate::mpi_abi::callbacks::*;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Fint, MPI_Request, MPI_Status};

use super::engine::Engine;
use super::request::{empty_status, Operation, Request};

#[derive(Clone, Copy, Debug)]
pub struct Generalized {
    pub query_fn: MPI_Grequest_query_function,
    pub free_fn: MPI_Grequest_free_function,
    pub cancel_fn: MPI_Grequest_cancel_function,
    pub poll_fn: MPIX_Grequest_poll_function,
    pub wait_fn: MPIX_Grequest_wait_function,
    /// The program's `extra_state` pointer, passed back as is.
    pub extra_state: usize,
    /// The callbacks are Fortran subroutines (see the module's notes).
    pub fortran: bool,
}

/// MPICH's generalized request classes (`MPIX_Grequest_class_create`):
/// the callbacks of a kind of generalized request, kept for the life of
/// the process (MPICH has no call that frees a class), so
/// `MPIX_Grequest_class_allocate` starts a request with them.
pub mod classes {
    use std::sync::Mutex;

    use super::Generalized;
    use crate::core::error::{MpiError, MpiResult};
    use crate::mpi_abi::constants::MPI_ERR_ARG;
    use crate::mpi_abi::types::MPIX_Grequest_class;

    /// Class handles are this plus the class's index, so a stray integer
    /// is rarely taken for a class.
    const FIRST_HANDLE: MPIX_Grequest_class = 0x4c00_0000;

    /// Each class's callbacks (`extra_state` unset).
    static CLASSES: Mutex<Vec<Generalized>> = Mutex::new(Vec::new());

    /// Records a class; returns its handle.
    pub fn create(callbacks: Generalized) -> MpiResult<MPIX_Grequest_class> {
        let mut classes = CLASSES.lock().unwrap_or_else(|e| e.into_inner());
        let handle = i32::try_from(classes.len())
            .ok()
            .and_then(|i| FIRST_HANDLE.checked_add(i))
            .ok_or_else(|| MpiError::new(MPI_ERR_ARG, "too many generalized request classes"))?;
        classes.push(callbacks);
        Ok(handle)
    }

    /// The callbacks of class `handle`, with `extra_state`.
    pub fn instance(handle: MPIX_Grequest_class, extra_state: usize) -> MpiResult<Generalized> {
        let classes = CLASSES.lock().unwrap_or_else(|e| e.into_inner());
        handle
            .checked_sub(FIRST_HANDLE)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| classes.get(i))
            .map(|c| Generalized { extra_state, ..*c })
            .ok_or_else(|| {
                MpiError::new(
                    MPI_ERR_ARG,
                    format!("{handle:#x} is not a generalized request class"),
                )
            })
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn classes_are_found_by_their_handles_only() {
            let g = Generalized {
                query_fn: None,
                free_fn: None,
                cancel_fn: None,
                poll_fn: None,
                wait_fn: None,
                extra_state: 0,
                fortran: false,
            };
            let a = create(g).unwrap();
            let b = create(g).unwrap();
            assert_ne!(a, b);
            assert_eq!(instance(b, 77).unwrap().extra_state, 77);
            assert!(instance(0, 0).is_err());
            assert!(instance(-1, 0).is_err());
            assert!(instance(b + 1000, 0).is_err());
        }
    }
}

/// Calls a C query function on `status`. In the standard-ABI library the
/// program's function takes the standard's `MPI_Status` (stored with
/// oxmpi's function type: same representation), so it fills one in that
/// layout, converted back here, and returns a standard error code.
fn query_c(
    query: unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int,
    state: *mut c_void,
    status: &mut MPI_Status,
) -> c_int {
    #[cfg(not(feature = "standard-abi"))]
    {
        // SAFETY: the program's query function with its own extra_state and
        // a valid status, as MPI specifies; no lock is held.
        unsafe { query(state, status) }
    }
    #[cfg(feature = "standard-abi")]
    {
        use crate::mpi_abi::standard::{convert as cv, types as s};
        let mut standard = cv::status_out(status);
        // SAFETY: as above, with a valid status of the standard's layout,
        // the one the program's function was written for.
        let code = unsafe { query(state, (&mut standard as *mut s::MPI_Status).cast()) };
        *status = cv::status_in(&standard);
        cv::code_in(code)
    }
}

/// A C callback's error code in oxmpi's codes (in the standard-ABI
/// library the program returns standard ones).
fn code_in(code: c_int) -> c_int {
    #[cfg(feature = "standard-abi")]
    return crate::mpi_abi::standard::convert::code_in(code);
    #[cfg(not(feature = "standard-abi"))]
    code
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
        let code = if self.fortran {
            // SAFETY: a Fortran query subroutine stored as the C type (MPICH's
            // binding passes it so); the types differ only in how the
            // arguments are passed, and it is called with its own.
            let query: MPII_F77_Grequest_query_function = unsafe { std::mem::transmute(query) };
            let mut ierr: MPI_Fint = MPI_SUCCESS;
            if let Some(query) = query {
                // SAFETY: its extra_state, `status` as the INTEGER array it
                // fills (MPI_Status is that array in the MPICH ABI) and the
                // error code; no lock is held.
                unsafe {
                    query(
                        self.state(),
                        (&mut status as *mut MPI_Status).cast(),
                        &mut ierr,
                    )
                };
            }
            ierr
        } else {
            query_c(query, self.state(), &mut status)
        };
        let error = callback_error(code, "query");
        if error.is_some() {
            status.MPI_ERROR = code;
        }
        (status, error)
    }

    /// Calls the free function (the request is gone).
    pub fn free(&self) -> Option<MpiError> {
        let free = self.free_fn?;
        if self.fortran {
            // SAFETY: a Fortran free subroutine stored as the C type (see
            // `query`).
            let free: MPII_F77_Grequest_free_function = unsafe { std::mem::transmute(free) };
            let mut ierr: MPI_Fint = MPI_SUCCESS;
            // SAFETY: its extra_state and error code by reference; called
            // once, after the last query; no lock is held.
            unsafe { free?(self.state(), &mut ierr) };
            return callback_error(ierr, "free");
        }
        // SAFETY: the program's free function with its own extra_state; it
        // is called once, after the last query; no lock is held.
        callback_error(code_in(unsafe { free(self.state()) }), "free")
    }

    /// Calls the cancel function; `complete`: `MPI_Grequest_complete` was
    /// called already.
    pub fn cancel(&self, complete: bool) -> Option<MpiError> {
        let cancel = self.cancel_fn?;
        if self.fortran {
            // SAFETY: a Fortran cancel subroutine stored as the C type (see
            // `query`).
            let cancel: MPII_F77_Grequest_cancel_function = unsafe { std::mem::transmute(cancel) };
            let mut complete = MPI_Fint::from(complete);
            let mut ierr: MPI_Fint = MPI_SUCCESS;
            // SAFETY: its extra_state, the LOGICAL `complete` and the error
            // code by reference; no lock is held.
            unsafe { cancel?(self.state(), &mut complete, &mut ierr) };
            return callback_error(ierr, "cancel");
        }
        // SAFETY: the program's cancel function with its own extra_state;
        // no lock is held.
        callback_error(
            code_in(unsafe { cancel(self.state(), complete as c_int) }),
            "cancel",
        )
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

impl Engine {
    /// A generalized request (`MPI_Grequest_start`).
    pub fn grequest_start(&mut self, callbacks: Generalized) -> MPI_Request {
        let mut req = Request::new(Operation::Done);
        self.polling_grequests |= callbacks.polls();
        req.generalized = Some(Box::new(callbacks));
        self.requests.insert(req)
    }

    /// `MPII_Grequest_set_lang_f77`: generalized request `id`'s callbacks
    /// are Fortran subroutines. Other handles are ignored (MPICH's function
    /// returns nothing; its binding calls it right after the start).
    pub fn grequest_set_fortran(&mut self, id: MPI_Request) {
        if let Some(g) = self
            .requests
            .get_mut(id)
            .and_then(|r| r.generalized.as_deref_mut())
        {
            g.fortran = true;
        }
    }

    /// The callbacks of generalized request `id` (`None` for other
    /// requests) and whether it is complete.
    pub fn generalized(&self, id: MPI_Request) -> Option<(Generalized, bool)> {
        let req = self.requests.get(id)?;
        req.generalized.as_ref().map(|g| (**g, req.complete))
    }

    /// `MPI_Grequest_complete`. A request whose handle was freed goes now;
    /// its callbacks are returned (its free function is due).
    pub fn grequest_complete(&mut self, id: MPI_Request) -> MpiResult<Option<Generalized>> {
        let req = match self.requests.get_mut(id) {
            Some(req) if req.generalized.is_some() => req,
            _ => {
                return Err(MpiError::new(
                    MPI_ERR_REQUEST,
                    format!("handle {:#010x} is not a generalized request", id as u32),
                ))
            }
        };
        if req.complete {
            return Err(MpiError::new(
                MPI_ERR_REQUEST,
                "MPI_Grequest_complete called twice",
            ));
        }
        req.finish(empty_status());
        if req.freed {
            return Ok(self
                .remove_request(id)
                .and_then(|r| r.generalized.map(|g| *g)));
        }
        Ok(None)
    }

    /// The generalized requests among `handles` that are still in flight
    /// and have a poll function (MPICH's `MPIX_Grequest_start`).
    pub fn pollers(&self, handles: &[MPI_Request]) -> Vec<Generalized> {
        if !self.polling_grequests {
            return Vec::new();
        }
        handles
            .iter()
            .filter_map(|&h| self.requests.get(h))
            .filter(|r| !r.complete)
            .filter_map(|r| r.generalized.as_deref())
            .filter(|g| g.polls())
            .copied()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicI32, Ordering};

    use super::super::engine::RequestState;
    use super::*;

    static QUERIES: AtomicI32 = AtomicI32::new(0);
    static FREES: AtomicI32 = AtomicI32::new(0);

    unsafe extern "C" fn query(state: *mut c_void, status: *mut MPI_Status) -> c_int {
        QUERIES.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the engine passes a valid status and our own state.
        unsafe {
            (*status).MPI_TAG = *(state as *const c_int);
        }
        MPI_SUCCESS
    }

    unsafe extern "C" fn free(_: *mut c_void) -> c_int {
        FREES.fetch_add(1, Ordering::SeqCst);
        MPI_ERR_OTHER
    }

    #[test]
    fn query_and_free_run_when_the_request_is_taken_or_freed() {
        let mut e = Engine::default();
        let mut tag: c_int = 77;
        let callbacks = Generalized {
            query_fn: Some(query),
            free_fn: Some(free),
            cancel_fn: None,
            poll_fn: None,
            wait_fn: None,
            extra_state: &mut tag as *mut c_int as usize,
            fortran: false,
        };
        let r = e.grequest_start(callbacks);
        assert_eq!(e.state(r).unwrap(), RequestState::Pending);
        assert!(e.pollers(&[r]).is_empty());
        assert!(e.grequest_complete(r).unwrap().is_none());
        assert_eq!(e.grequest_complete(r).unwrap_err().class, MPI_ERR_REQUEST);
        let (status, error) = e.take(r).unwrap().finish();
        assert_eq!(status.MPI_TAG, 77);
        assert_eq!(
            error.map(|e| e.class),
            Some(MPI_ERR_OTHER),
            "the free function's error"
        );
        assert_eq!(
            (QUERIES.load(Ordering::SeqCst), FREES.load(Ordering::SeqCst)),
            (1, 1)
        );
        // Freed first: the free function is due at completion, no query.
        let r = e.grequest_start(callbacks);
        assert!(e.free_request(r).unwrap().is_none());
        let due = e.grequest_complete(r).unwrap().expect("freed and complete");
        assert!(due.free().is_some());
        assert_eq!(
            (QUERIES.load(Ordering::SeqCst), FREES.load(Ordering::SeqCst)),
            (1, 2)
        );
        assert!(e.request_count() == 0);
    }
}
