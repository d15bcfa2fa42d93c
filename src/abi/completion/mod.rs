//! Completing requests: wait, test and their any/all/some forms,
//! `MPI_Request_free`, `MPI_Request_get_status`, `MPI_Cancel`,
//! `MPI_Test_cancelled`, and generalized requests (in `generalized`).
//!
//! A completed request's handle becomes `MPI_REQUEST_NULL`, except a
//! persistent request's, which becomes inactive. A null handle and an
//! inactive request are empty: they complete at once with an empty status
//! in wait, test and the all-forms, and the any- and some-forms skip them
//! (`MPI_UNDEFINED` when every handle is empty).
//!
//! The single-completion calls (wait, test, any) leave a status's
//! `MPI_ERROR` as the program set it and return the error; the all- and
//! some-forms write it in every status they fill: `MPI_SUCCESS`, or each
//! request's error when they return `MPI_ERR_IN_STATUS` (MPI 4.1 section
//! 3.2.5 allows them to; MPICH writes `MPI_SUCCESS` there for partitioned
//! requests, and programs read it).
//!
//! Outcomes are taken under the runtime lock, and statuses are written
//! after it is released: a generalized request's query and free functions
//! (and MPICH's poll functions, between tries) run without the lock, since
//! they may call MPI.
use std::os::raw::c_int;

use crate::abi::args::out;
use crate::abi::p2p::status_error;
use crate::abi::status::{empty_status, write_status, write_status_with_error, StatusOut};
use crate::core::error::{MpiError, MpiResult};
use crate::core::p2p::engine::{Polled, RequestState, Taken, COMPLETED_SEND};
use crate::core::p2p::generalized::Generalized;
use crate::core::progress::block_on;
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

mod generalized;

pub use generalized::{
    grequest_class_allocate, grequest_class_create, grequest_complete, grequest_start,
    mpix_grequest_start,
};

/// What a completion call found behind one handle.
enum Slot {
    /// `MPI_REQUEST_NULL` or an inactive persistent request.
    Empty,
    Pending,
    /// Complete: its outcome, taken out of the table.
    Done(Taken),
}

/// Looks at one handle, taking the outcome of a complete request.
fn poll(rt: &mut Runtime, h: MPI_Request) -> MpiResult<Slot> {
    if h == MPI_REQUEST_NULL {
        return Ok(Slot::Empty);
    }
    if h == COMPLETED_SEND {
        // (No look-up: see `COMPLETED_SEND`.)
        return Ok(Slot::Done(Taken::completed_send()));
    }
    Ok(match rt.engine().poll_take(h)? {
        Polled::Inactive => Slot::Empty,
        Polled::Pending => Slot::Pending,
        Polled::Done(taken) => Slot::Done(taken),
    })
}

/// A finished operation: its status, its error if it failed, and whether
/// its handle stays valid.
struct Finished {
    status: MPI_Status,
    error: Option<MpiError>,
    persists: bool,
}

impl Finished {
    /// Runs a generalized request's query and free functions: call
    /// without the runtime lock.
    fn of(taken: Taken) -> Finished {
        let persists = taken.persists;
        let (status, error) = taken.finish();
        Finished {
            status,
            error,
            persists,
        }
    }

    fn empty() -> Finished {
        Finished {
            status: empty_status(),
            error: None,
            persists: true,
        }
    }

    fn of_slot(slot: Slot) -> Finished {
        match slot {
            Slot::Done(taken) => Finished::of(taken),
            Slot::Empty | Slot::Pending => Finished::empty(),
        }
    }

    fn result(&self) -> MpiResult {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => status_error(&self.status),
        }
    }

    fn failed(&self) -> bool {
        self.error.is_some() || self.status.MPI_ERROR != MPI_SUCCESS
    }

    /// What `MPI_ERROR` says of it in a multiple-completion call's status
    /// (`MPI_SUCCESS` unless it failed).
    fn error_code(&self) -> c_int {
        match &self.error {
            Some(e) => e.class,
            None => self.status.MPI_ERROR,
        }
    }

    /// Clears the handle unless it stays valid.
    fn release(&self, handle: &mut MPI_Request) {
        if !self.persists {
            *handle = MPI_REQUEST_NULL;
        }
    }
}

fn run_pollers(pollers: &[Generalized]) -> MpiResult {
    match pollers.iter().find_map(|g| g.poll()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Makes progress and runs `check` under the lock until it gives a value.
/// Between tries, the poll functions of generalized requests among
/// `handles` run without the lock.
fn wait_for<T>(
    handles: &[MPI_Request],
    mut check: impl FnMut(&mut Runtime) -> MpiResult<Option<T>>,
) -> MpiResult<T> {
    enum Step<T> {
        Ready(T),
        Poll(Vec<Generalized>),
    }
    loop {
        let step = block_on(|rt| {
            if let Some(value) = check(rt)? {
                return Ok(Some(Step::Ready(value)));
            }
            let pollers = rt.engine().pollers(handles);
            Ok((!pollers.is_empty()).then_some(Step::Poll(pollers)))
        })?;
        match step {
            Step::Ready(value) => return Ok(value),
            Step::Poll(pollers) => run_pollers(&pollers)?,
        }
    }
}

/// One try of `check` after progress (the test forms); when it gives
/// nothing and generalized requests have poll functions, they run and
/// `check` gets a second try.
fn test_for<T>(
    handles: &[MPI_Request],
    mut check: impl FnMut(&mut Runtime) -> MpiResult<Option<T>>,
) -> MpiResult<Option<T>> {
    let pollers = {
        let mut rt = runtime::lock();
        rt.progress();
        if let Some(value) = check(&mut rt)? {
            return Ok(Some(value));
        }
        rt.engine().pollers(handles)
    };
    if pollers.is_empty() {
        return Ok(None);
    }
    run_pollers(&pollers)?;
    let mut rt = runtime::lock();
    rt.progress();
    check(&mut rt)
}

/// # Safety
/// `requests` must hold `n` handles.
unsafe fn request_slice<'a>(
    n: usize,
    requests: *mut MPI_Request,
) -> MpiResult<&'a mut [MPI_Request]> {
    if n == 0 {
        return Ok(&mut []);
    }
    if requests.is_null() {
        return Err(MpiError::new(MPI_ERR_ARG, "array_of_requests is NULL"));
    }
    // SAFETY: non-NULL array of n handles (caller).
    Ok(unsafe { std::slice::from_raw_parts_mut(requests, n) })
}

/// Every handle is null or a request the program may complete.
fn check_handles(handles: &[MPI_Request]) -> MpiResult {
    let mut rt = runtime::lock();
    for (i, &h) in handles.iter().enumerate() {
        if h != MPI_REQUEST_NULL {
            rt.engine().state(h).map_err(|e| {
                MpiError::new(e.class, format!("array_of_requests[{i}]: {}", e.detail))
            })?;
        }
    }
    Ok(())
}

/// Checks a status array argument (`MPI_STATUSES_IGNORE` or not NULL).
///
/// # Safety
/// As for `StatusOut::nth`.
unsafe fn check_statuses(statuses: *mut MPI_Status, n: usize) -> MpiResult {
    if n > 0 {
        // SAFETY: `n > 0`, so the array (this function's contract) has an entry
        // 0; `nth` only offsets the pointer, nothing is written.
        unsafe { StatusOut::nth(statuses, 0) }?;
    }
    Ok(())
}

fn in_status_error() -> MpiError {
    MpiError::new(
        MPI_ERR_IN_STATUS,
        "at least one request failed; see the statuses' MPI_ERROR fields",
    )
}

pub unsafe fn wait(request: &mut MPI_Request, status: *mut MPI_Status) -> MpiResult {
    // SAFETY: `status` is MPI_Wait's, MPI_STATUS_IGNORE or valid for one status
    // (MPI's contract); `new` rejects NULL.
    let status_out = unsafe { StatusOut::new(status) }?;
    let id = *request;
    if id == MPI_REQUEST_NULL {
        // SAFETY: `status_out` came from `StatusOut::new` on the caller's
        // `status`, valid for writing one status for this call.
        unsafe { write_status(status_out, &empty_status()) };
        return Ok(());
    }
    let slot = wait_for(&[id], |rt| match poll(rt, id)? {
        Slot::Pending => Ok(None),
        slot => Ok(Some(slot)),
    })?;
    let finished = Finished::of_slot(slot);
    finished.release(request);
    // SAFETY: `status_out` came from `StatusOut::new` on the caller's
    // `status`, valid for writing one status for this call.
    unsafe { write_status(status_out, &finished.status) };
    finished.result()
}

pub unsafe fn test(
    request: &mut MPI_Request,
    flag: &mut c_int,
    status: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: `status` is MPI_Test's, MPI_STATUS_IGNORE or valid for one status
    // (MPI's contract); `new` rejects NULL.
    let status_out = unsafe { StatusOut::new(status) }?;
    let id = *request;
    if id == MPI_REQUEST_NULL {
        *flag = 1;
        // SAFETY: `status_out` came from `StatusOut::new` on the caller's
        // `status`, valid for writing one status for this call.
        unsafe { write_status(status_out, &empty_status()) };
        return Ok(());
    }
    let found = test_for(&[id], |rt| match poll(rt, id)? {
        Slot::Pending => Ok(None),
        slot => Ok(Some(slot)),
    })?;
    *flag = found.is_some() as c_int;
    let Some(slot) = found else { return Ok(()) };
    let finished = Finished::of_slot(slot);
    finished.release(request);
    // SAFETY: `status_out` came from `StatusOut::new` on the caller's
    // `status`, valid for writing one status for this call.
    unsafe { write_status(status_out, &finished.status) };
    finished.result()
}

/// Finishes every slot of an all-form: clears handles, writes statuses;
/// `MPI_ERR_IN_STATUS` if any failed.
///
/// # Safety
/// `statuses` as for `StatusOut::nth` with `handles.len()` entries.
unsafe fn finish_all(
    handles: &mut [MPI_Request],
    slots: Vec<Slot>,
    statuses: *mut MPI_Status,
) -> MpiResult {
    // Plain outcomes that all succeeded (the usual case) are written in one
    // pass; a failure or a generalized request (whose query function gives
    // its status) takes the general path below.
    let plain = slots.iter().all(|slot| match slot {
        Slot::Done(t) => {
            t.generalized.is_none() && t.error.is_none() && t.status.MPI_ERROR == MPI_SUCCESS
        }
        Slot::Empty | Slot::Pending => true,
    });
    if plain {
        for (i, slot) in slots.iter().enumerate() {
            // SAFETY: `i < handles.len()`, the number of entries `statuses`
            // has (this function's contract), so entry `i` is in the array or
            // it is MPI_STATUSES_IGNORE.
            let out = unsafe { StatusOut::nth(statuses, i) }?;
            let status = match slot {
                Slot::Done(t) => {
                    if !t.persists {
                        handles[i] = MPI_REQUEST_NULL;
                    }
                    t.status
                }
                Slot::Empty | Slot::Pending => empty_status(),
            };
            // SAFETY: `out` is entry `i` of the caller's array or the ignore
            // marker, valid for this call.
            unsafe { write_status_with_error(out, &status, MPI_SUCCESS) };
        }
        return Ok(());
    }
    let finished: Vec<Finished> = slots.into_iter().map(Finished::of_slot).collect();
    let failed = finished.iter().any(Finished::failed);
    for (i, f) in finished.iter().enumerate() {
        f.release(&mut handles[i]);
        // SAFETY: `i < handles.len()`, the number of entries `statuses` has
        // (this function's contract), so entry `i` is in the array or it is
        // MPI_STATUSES_IGNORE.
        let out = unsafe { StatusOut::nth(statuses, i) }?;
        // SAFETY: `out` is entry `i` of the caller's array or the ignore
        // marker, valid for this call.
        unsafe { write_status_with_error(out, &f.status, f.error_code()) };
    }
    if failed {
        return Err(in_status_error());
    }
    Ok(())
}

pub unsafe fn waitall(
    n: usize,
    requests: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: MPI_Waitall's contract: `requests` holds `n` handles, which the
    // program does not touch during the call.
    let handles = unsafe { request_slice(n, requests) }?;
    // SAFETY: `statuses` is MPI_STATUSES_IGNORE or holds `n` entries (MPI's
    // contract).
    unsafe { check_statuses(statuses, handles.len()) }?;
    check_handles(handles)?;
    let mut slots: Vec<Slot> = handles.iter().map(|_| Slot::Pending).collect();
    // Requests before `done` are taken; a try stops at the first one still
    // pending (all must finish anyway), so a try costs little however many
    // requests wait.
    let mut done = 0;
    wait_for(handles, |rt| {
        while done < handles.len() {
            slots[done] = poll(rt, handles[done])?;
            if matches!(slots[done], Slot::Pending) {
                return Ok(None);
            }
            done += 1;
        }
        Ok(Some(()))
    })?;
    // SAFETY: `statuses` was checked above and holds `handles.len()` entries
    // (MPI's contract).
    unsafe { finish_all(handles, slots, statuses) }
}

pub unsafe fn testall(
    n: usize,
    requests: *mut MPI_Request,
    flag: &mut c_int,
    statuses: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: MPI_Testall's contract: `requests` holds `n` handles, which the
    // program does not touch during the call.
    let handles = unsafe { request_slice(n, requests) }?;
    // SAFETY: `statuses` is MPI_STATUSES_IGNORE or holds `n` entries (MPI's
    // contract).
    unsafe { check_statuses(statuses, handles.len()) }?;
    check_handles(handles)?;
    // All or nothing: outcomes are taken only when every request is done.
    let found = test_for(handles, |rt| {
        for &h in handles.iter() {
            if h != MPI_REQUEST_NULL && rt.engine().state(h)? == RequestState::Pending {
                return Ok(None);
            }
        }
        let slots: MpiResult<Vec<Slot>> = handles.iter().map(|&h| poll(rt, h)).collect();
        slots.map(Some)
    })?;
    *flag = found.is_some() as c_int;
    match found {
        // SAFETY: `statuses` was checked above and holds `handles.len()`
        // entries (MPI's contract).
        Some(slots) => unsafe { finish_all(handles, slots, statuses) },
        None => Ok(()),
    }
}

/// The first complete request, taken: `Some(Some(..))`; `Some(None)` when
/// no handle is active; `None` while the active ones are all pending.
fn take_any(
    rt: &mut Runtime,
    handles: &[MPI_Request],
) -> MpiResult<Option<Option<(usize, Taken)>>> {
    let mut active = false;
    for (i, &h) in handles.iter().enumerate() {
        match poll(rt, h)? {
            Slot::Empty => {}
            Slot::Pending => active = true,
            Slot::Done(taken) => return Ok(Some(Some((i, taken)))),
        }
    }
    Ok((!active).then_some(None))
}

/// Finishes the request an any-form found.
///
/// # Safety
/// `status_out` as checked by `StatusOut::new`.
unsafe fn finish_any(
    handles: &mut [MPI_Request],
    which: Option<(usize, Taken)>,
    index: &mut c_int,
    status_out: StatusOut,
) -> MpiResult {
    let Some((i, taken)) = which else {
        *index = MPI_UNDEFINED;
        // SAFETY: `status_out` was checked by `StatusOut::new` (this function's
        // contract).
        unsafe { write_status(status_out, &empty_status()) };
        return Ok(());
    };
    let finished = Finished::of(taken);
    finished.release(&mut handles[i]);
    *index = i as c_int;
    // SAFETY: `status_out` was checked by `StatusOut::new` (this function's
    // contract).
    unsafe { write_status(status_out, &finished.status) };
    finished.result()
}

pub unsafe fn waitany(
    n: usize,
    requests: *mut MPI_Request,
    index: &mut c_int,
    status: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: MPI_Waitany's contract: `requests` holds `n` handles, which the
    // program does not touch during the call.
    let handles = unsafe { request_slice(n, requests) }?;
    // SAFETY: `status` is MPI_STATUS_IGNORE or valid for one status (MPI's
    // contract); `new` rejects NULL.
    let status_out = unsafe { StatusOut::new(status) }?;
    check_handles(handles)?;
    let which = wait_for(handles, |rt| take_any(rt, handles))?;
    // SAFETY: `status_out` came from `StatusOut::new` just above.
    unsafe { finish_any(handles, which, index, status_out) }
}

pub unsafe fn testany(
    n: usize,
    requests: *mut MPI_Request,
    index: &mut c_int,
    flag: &mut c_int,
    status: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: MPI_Testany's contract: `requests` holds `n` handles, which the
    // program does not touch during the call.
    let handles = unsafe { request_slice(n, requests) }?;
    // SAFETY: `status` is MPI_STATUS_IGNORE or valid for one status (MPI's
    // contract); `new` rejects NULL.
    let status_out = unsafe { StatusOut::new(status) }?;
    check_handles(handles)?;
    match test_for(handles, |rt| take_any(rt, handles))? {
        Some(which) => {
            *flag = 1;
            // SAFETY: `status_out` came from `StatusOut::new` above.
            unsafe { finish_any(handles, which, index, status_out) }
        }
        None => {
            *flag = 0;
            *index = MPI_UNDEFINED;
            Ok(())
        }
    }
}

/// Every complete request, taken; `Some(None)` when no handle is active,
/// `None` while the active ones are all pending.
#[allow(clippy::type_complexity)]
fn take_some(
    rt: &mut Runtime,
    handles: &[MPI_Request],
) -> MpiResult<Option<Option<Vec<(usize, Taken)>>>> {
    let mut active = false;
    let mut done = Vec::new();
    for (i, &h) in handles.iter().enumerate() {
        match poll(rt, h)? {
            Slot::Empty => {}
            Slot::Pending => active = true,
            Slot::Done(taken) => done.push((i, taken)),
        }
    }
    Ok(match (done.is_empty(), active) {
        (false, _) => Some(Some(done)),
        (true, true) => None,
        (true, false) => Some(None),
    })
}

/// `MPI_Waitsome` (`blocking`) and `MPI_Testsome`.
///
/// # Safety
/// The arguments as MPI requires for those calls: `requests`, `indices`
/// and `statuses` (or `MPI_STATUSES_IGNORE`) with `incount` entries.
unsafe fn some_call(
    incount: usize,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
    blocking: bool,
) -> MpiResult {
    // SAFETY: this function's contract (MPI_Waitsome's and MPI_Testsome's):
    // `requests` holds `incount` handles, untouched by the program during the
    // call.
    let handles = unsafe { request_slice(incount, requests) }?;
    // SAFETY: `outcount` is NULL (rejected by `out`) or valid for one `int`
    // during the call (MPI's contract).
    let outcount = unsafe { out(outcount, "outcount") }?;
    if indices.is_null() && !handles.is_empty() {
        return Err(MpiError::new(MPI_ERR_ARG, "array_of_indices is NULL"));
    }
    // SAFETY: `statuses` is MPI_STATUSES_IGNORE or holds `incount` entries
    // (MPI's contract).
    unsafe { check_statuses(statuses, handles.len()) }?;
    check_handles(handles)?;
    let found = if blocking {
        Some(wait_for(handles, |rt| take_some(rt, handles))?)
    } else {
        test_for(handles, |rt| take_some(rt, handles))?
    };
    let done = match found {
        None => {
            *outcount = 0;
            return Ok(());
        }
        Some(None) => {
            *outcount = MPI_UNDEFINED;
            return Ok(());
        }
        Some(Some(done)) => done,
    };
    *outcount = done.len() as c_int;
    let finished: Vec<(usize, Finished)> = done
        .into_iter()
        .map(|(i, taken)| (i, Finished::of(taken)))
        .collect();
    let failed = finished.iter().any(|(_, f)| f.failed());
    for (k, (i, f)) in finished.iter().enumerate() {
        f.release(&mut handles[*i]);
        // SAFETY: `k < done.len() <= incount`; `indices` is not NULL (checked
        // above, as `done` is not empty) and has room for `incount` entries,
        // `statuses` (checked above) too, per MPI's contract.
        unsafe {
            *indices.add(k) = *i as c_int;
            let out = StatusOut::nth(statuses, k)?;
            write_status_with_error(out, &f.status, f.error_code());
        }
    }
    if failed {
        return Err(in_status_error());
    }
    Ok(())
}

pub unsafe fn waitsome(
    incount: usize,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: MPI_Waitsome's arguments, valid as MPI requires for the call,
    // which is `some_call`'s contract.
    unsafe { some_call(incount, requests, outcount, indices, statuses, true) }
}

pub unsafe fn testsome(
    incount: usize,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: MPI_Testsome's arguments, valid as MPI requires for the call,
    // which is `some_call`'s contract.
    unsafe { some_call(incount, requests, outcount, indices, statuses, false) }
}

/// `MPI_Request_free`: the operation goes on, the handle is gone. A
/// complete generalized request's free function runs now (else at
/// `MPI_Grequest_complete`).
pub unsafe fn request_free(request: &mut MPI_Request) -> MpiResult {
    if *request == MPI_REQUEST_NULL {
        return Err(MpiError::new(
            MPI_ERR_REQUEST,
            "MPI_REQUEST_NULL cannot be freed",
        ));
    }
    let due = runtime::lock().engine().free_request(*request)?;
    *request = MPI_REQUEST_NULL;
    match due.and_then(|g| g.free()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Like `MPI_Test`, but the request stays as it is (not freed, not made
/// inactive); a generalized request's query function gives the status.
pub unsafe fn request_get_status(
    request: MPI_Request,
    flag: &mut c_int,
    status: *mut MPI_Status,
) -> MpiResult {
    enum Seen {
        Status(MPI_Status),
        Query(Generalized),
    }
    // SAFETY: `status` is MPI_STATUS_IGNORE or valid for one status
    // (MPI_Request_get_status's contract); `new` rejects NULL.
    let status_out = unsafe { StatusOut::new(status) }?;
    if request == MPI_REQUEST_NULL {
        *flag = 1;
        // SAFETY: `status_out` came from `StatusOut::new` on the caller's
        // `status`.
        unsafe { write_status(status_out, &empty_status()) };
        return Ok(());
    }
    let seen = test_for(&[request], |rt| match rt.engine().state(request)? {
        RequestState::Pending => Ok(None),
        RequestState::Inactive => Ok(Some(Seen::Status(empty_status()))),
        RequestState::Complete => Ok(Some(match rt.engine().generalized(request) {
            Some((g, _)) => Seen::Query(g),
            None => Seen::Status(
                rt.engine()
                    .requests
                    .get(request)
                    .map_or_else(empty_status, |r| r.status),
            ),
        })),
    })?;
    *flag = seen.is_some() as c_int;
    let (st, error) = match seen {
        None => return Ok(()),
        Some(Seen::Status(st)) => (st, None),
        Some(Seen::Query(g)) => g.query(),
    };
    // SAFETY: `status_out` came from `StatusOut::new` on the caller's
    // `status`, valid for writing one status for this call.
    unsafe { write_status(status_out, &st) };
    match error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `MPI_Cancel`; see `core::p2p::engine` for what can be cancelled. A
/// generalized request's cancel function is called (without the lock).
pub unsafe fn cancel(request: &mut MPI_Request) -> MpiResult {
    if *request == MPI_REQUEST_NULL {
        return Err(MpiError::new(
            MPI_ERR_REQUEST,
            "MPI_REQUEST_NULL cannot be cancelled",
        ));
    }
    let generalized = {
        let mut rt = runtime::lock();
        match rt.engine().generalized(*request) {
            Some(g) => Some(g),
            None => {
                rt.engine().cancel(*request)?;
                None
            }
        }
    };
    match generalized.and_then(|(g, complete)| g.cancel(complete)) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

pub unsafe fn test_cancelled(status: *const MPI_Status, flag: &mut c_int) -> MpiResult {
    if status as usize == 1 {
        return Err(MpiError::new(MPI_ERR_ARG, "status is MPI_STATUS_IGNORE"));
    }
    // SAFETY: `status` is the caller's input (NULL checked).
    let status =
        unsafe { status.as_ref() }.ok_or_else(|| MpiError::new(MPI_ERR_ARG, "status is NULL"))?;
    *flag = status.cancelled() as c_int;
    Ok(())
}
