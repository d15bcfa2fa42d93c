//! Completing requests: wait, test and their any/all/some forms,
//! `MPI_Request_free`, `MPI_Request_get_status`, `MPI_Cancel`,
//! `MPI_Test_cancelled`. A completed request's handle becomes
//! `MPI_REQUEST_NULL`; a null handle counts as an empty, complete request.
use std::os::raw::c_int;

use crate::abi::args::{count, out};
use crate::abi::constants::*;
use crate::abi::p2p::status_error;
use crate::abi::status::{empty_status, write_status, StatusOut};
use crate::abi::types::*;
use crate::core::error::{MpiError, MpiResult};
use crate::core::p2p::engine::invalid_request;
use crate::core::progress::block_on;
use crate::core::runtime::{self, Runtime};

/// A finished operation: its status, and its error if it failed.
struct Finished {
    status: MPI_Status,
    error: Option<MpiError>,
}

impl Finished {
    fn result(&self) -> MpiResult {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => status_error(&self.status),
        }
    }

    fn failed(&self) -> bool {
        self.error.is_some() || self.status.MPI_ERROR != MPI_SUCCESS
    }
}

/// Takes a request's result if it is complete (removing it).
fn poll(rt: &mut Runtime, id: MPI_Request) -> MpiResult<Option<Finished>> {
    let req = rt
        .p2p
        .requests
        .get_mut(id)
        .ok_or_else(|| invalid_request(id))?;
    if !req.complete {
        return Ok(None);
    }
    let error = req.error.take();
    let mut status = rt.p2p.take_completed(id)?.expect("the request is complete");
    if let Some(e) = &error {
        status.MPI_ERROR = e.class;
    }
    Ok(Some(Finished { status, error }))
}

/// # Safety
/// `requests` must hold `n` handles.
unsafe fn request_slice<'a>(
    n: c_int,
    requests: *mut MPI_Request,
) -> MpiResult<&'a mut [MPI_Request]> {
    let n = count(n, "count")?;
    if n == 0 {
        return Ok(&mut []);
    }
    if requests.is_null() {
        return Err(MpiError::new(MPI_ERR_ARG, "array_of_requests is NULL"));
    }
    // SAFETY: non-NULL array of n handles (caller).
    Ok(unsafe { std::slice::from_raw_parts_mut(requests, n) })
}

fn check_handles(rt: &Runtime, handles: &[MPI_Request]) -> MpiResult {
    for &h in handles {
        if h != MPI_REQUEST_NULL && rt.p2p.requests.get(h).is_none() {
            return Err(invalid_request(h));
        }
    }
    Ok(())
}

pub unsafe fn wait(request: *mut MPI_Request, status: *mut MPI_Status) -> MpiResult {
    let request = unsafe { out(request, "request") }?;
    let status_out = unsafe { StatusOut::new(status) }?;
    if *request == MPI_REQUEST_NULL {
        unsafe { write_status(status_out, &empty_status()) };
        return Ok(());
    }
    let id = *request;
    let finished = block_on(|rt| poll(rt, id))?;
    *request = MPI_REQUEST_NULL;
    unsafe { write_status(status_out, &finished.status) };
    finished.result()
}

pub unsafe fn test(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult {
    let request = unsafe { out(request, "request") }?;
    let flag = unsafe { out(flag, "flag") }?;
    let status_out = unsafe { StatusOut::new(status) }?;
    if *request == MPI_REQUEST_NULL {
        *flag = 1;
        unsafe { write_status(status_out, &empty_status()) };
        return Ok(());
    }
    let mut rt = runtime::lock();
    rt.progress();
    match poll(&mut rt, *request)? {
        Some(finished) => {
            *request = MPI_REQUEST_NULL;
            *flag = 1;
            unsafe { write_status(status_out, &finished.status) };
            finished.result()
        }
        None => {
            *flag = 0;
            Ok(())
        }
    }
}

/// Completes every request in `handles` that can complete now; writes
/// statuses; returns how many completed and whether any failed.
///
/// # Safety
/// `statuses` as for `StatusOut::nth` with `handles.len()` entries.
unsafe fn collect(
    rt: &mut Runtime,
    handles: &mut [MPI_Request],
    statuses: *mut MPI_Status,
    done: &mut [bool],
) -> MpiResult<bool> {
    let mut any_failed = false;
    for (i, h) in handles.iter_mut().enumerate() {
        if done[i] {
            continue;
        }
        if *h == MPI_REQUEST_NULL {
            done[i] = true;
            unsafe { write_status(StatusOut::nth(statuses, i)?, &empty_status()) };
            continue;
        }
        if let Some(f) = poll(rt, *h)? {
            done[i] = true;
            *h = MPI_REQUEST_NULL;
            any_failed |= f.failed();
            unsafe { write_status(StatusOut::nth(statuses, i)?, &f.status) };
        }
    }
    Ok(any_failed)
}

fn in_status_error() -> MpiError {
    MpiError::new(
        MPI_ERR_IN_STATUS,
        "at least one request failed; see the statuses' MPI_ERROR fields",
    )
}

pub unsafe fn waitall(
    n: c_int,
    requests: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> MpiResult {
    let handles = unsafe { request_slice(n, requests) }?;
    check_handles(&runtime::lock(), handles)?;
    let mut done = vec![false; handles.len()];
    let mut failed = false;
    block_on(|rt| {
        failed |= unsafe { collect(rt, handles, statuses, &mut done) }?;
        Ok(done.iter().all(|d| *d).then_some(()))
    })?;
    if failed {
        return Err(in_status_error());
    }
    Ok(())
}

pub unsafe fn testall(
    n: c_int,
    requests: *mut MPI_Request,
    flag: *mut c_int,
    statuses: *mut MPI_Status,
) -> MpiResult {
    let handles = unsafe { request_slice(n, requests) }?;
    let flag = unsafe { out(flag, "flag") }?;
    let mut rt = runtime::lock();
    check_handles(&rt, handles)?;
    rt.progress();
    // All or nothing: complete only when every request is complete.
    let all = handles
        .iter()
        .all(|&h| h == MPI_REQUEST_NULL || rt.p2p.requests.get(h).is_some_and(|r| r.complete));
    *flag = all as c_int;
    if !all {
        return Ok(());
    }
    let mut done = vec![false; handles.len()];
    if unsafe { collect(&mut rt, handles, statuses, &mut done) }? {
        return Err(in_status_error());
    }
    Ok(())
}

/// The first complete request among `handles`: Some(index) or None; an
/// index of `MPI_UNDEFINED` when none is active.
fn first_complete(rt: &mut Runtime, handles: &[MPI_Request]) -> Option<Option<usize>> {
    if handles.iter().all(|&h| h == MPI_REQUEST_NULL) {
        return Some(None);
    }
    handles
        .iter()
        .position(|&h| h != MPI_REQUEST_NULL && rt.p2p.requests.get(h).is_some_and(|r| r.complete))
        .map(Some)
}

unsafe fn finish_any(
    rt: &mut Runtime,
    handles: &mut [MPI_Request],
    which: Option<usize>,
    index: &mut c_int,
    status_out: StatusOut,
) -> MpiResult {
    match which {
        None => {
            *index = MPI_UNDEFINED;
            unsafe { write_status(status_out, &empty_status()) };
            Ok(())
        }
        Some(i) => {
            let f = poll(rt, handles[i])?.expect("the request is complete");
            handles[i] = MPI_REQUEST_NULL;
            *index = i as c_int;
            unsafe { write_status(status_out, &f.status) };
            f.result()
        }
    }
}

pub unsafe fn waitany(
    n: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult {
    let handles = unsafe { request_slice(n, requests) }?;
    let index = unsafe { out(index, "index") }?;
    let status_out = unsafe { StatusOut::new(status) }?;
    check_handles(&runtime::lock(), handles)?;
    let which = block_on(|rt| Ok(first_complete(rt, handles)))?;
    let mut rt = runtime::lock();
    unsafe { finish_any(&mut rt, handles, which, index, status_out) }
}

pub unsafe fn testany(
    n: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult {
    let handles = unsafe { request_slice(n, requests) }?;
    let index = unsafe { out(index, "index") }?;
    let flag = unsafe { out(flag, "flag") }?;
    let status_out = unsafe { StatusOut::new(status) }?;
    let mut rt = runtime::lock();
    check_handles(&rt, handles)?;
    rt.progress();
    match first_complete(&mut rt, handles) {
        Some(which) => {
            *flag = 1;
            unsafe { finish_any(&mut rt, handles, which, index, status_out) }
        }
        None => {
            *flag = 0;
            *index = MPI_UNDEFINED;
            Ok(())
        }
    }
}

/// Completes all complete requests now; `None` when none is active.
unsafe fn some(
    rt: &mut Runtime,
    handles: &mut [MPI_Request],
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> MpiResult<Option<(usize, bool)>> {
    if handles.iter().all(|&h| h == MPI_REQUEST_NULL) {
        return Ok(None);
    }
    let mut n = 0;
    let mut failed = false;
    for (i, handle) in handles.iter_mut().enumerate() {
        let h = *handle;
        if h == MPI_REQUEST_NULL {
            continue;
        }
        if let Some(f) = poll(rt, h)? {
            *handle = MPI_REQUEST_NULL;
            failed |= f.failed();
            // SAFETY: indices has room for incount entries (caller).
            unsafe { *indices.add(n) = i as c_int };
            unsafe { write_status(StatusOut::nth(statuses, n)?, &f.status) };
            n += 1;
        }
    }
    Ok(Some((n, failed)))
}

unsafe fn some_call(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
    blocking: bool,
) -> MpiResult {
    let handles = unsafe { request_slice(incount, requests) }?;
    let outcount = unsafe { out(outcount, "outcount") }?;
    if indices.is_null() && !handles.is_empty() {
        return Err(MpiError::new(MPI_ERR_ARG, "array_of_indices is NULL"));
    }
    check_handles(&runtime::lock(), handles)?;
    let result = if blocking {
        block_on(
            |rt| match unsafe { some(rt, handles, indices, statuses) }? {
                Some((0, _)) => Ok(None),
                other => Ok(Some(other)),
            },
        )?
    } else {
        let mut rt = runtime::lock();
        rt.progress();
        unsafe { some(&mut rt, handles, indices, statuses) }?
    };
    match result {
        None => *outcount = MPI_UNDEFINED,
        Some((n, failed)) => {
            *outcount = n as c_int;
            if failed {
                return Err(in_status_error());
            }
        }
    }
    Ok(())
}

pub unsafe fn waitsome(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> MpiResult {
    unsafe { some_call(incount, requests, outcount, indices, statuses, true) }
}

pub unsafe fn testsome(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> MpiResult {
    unsafe { some_call(incount, requests, outcount, indices, statuses, false) }
}

pub unsafe fn request_free(request: *mut MPI_Request) -> MpiResult {
    let request = unsafe { out(request, "request") }?;
    if *request == MPI_REQUEST_NULL {
        return Err(MpiError::new(
            MPI_ERR_REQUEST,
            "MPI_REQUEST_NULL cannot be freed",
        ));
    }
    runtime::lock().p2p.free(*request)?;
    *request = MPI_REQUEST_NULL;
    Ok(())
}

/// Like `MPI_Test`, but the request stays (and is not freed).
pub unsafe fn request_get_status(
    request: MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult {
    let flag = unsafe { out(flag, "flag") }?;
    let status_out = unsafe { StatusOut::new(status) }?;
    if request == MPI_REQUEST_NULL {
        *flag = 1;
        unsafe { write_status(status_out, &empty_status()) };
        return Ok(());
    }
    let mut rt = runtime::lock();
    rt.progress();
    let req = rt
        .p2p
        .requests
        .get(request)
        .ok_or_else(|| invalid_request(request))?;
    *flag = req.complete as c_int;
    if req.complete {
        unsafe { write_status(status_out, &req.status) };
    }
    Ok(())
}

pub unsafe fn cancel(request: *mut MPI_Request) -> MpiResult {
    let request = unsafe { out(request, "request") }?;
    if *request == MPI_REQUEST_NULL {
        return Err(MpiError::new(
            MPI_ERR_REQUEST,
            "MPI_REQUEST_NULL cannot be cancelled",
        ));
    }
    runtime::lock().p2p.cancel(*request)
}

pub unsafe fn test_cancelled(status: *const MPI_Status, flag: *mut c_int) -> MpiResult {
    let flag = unsafe { out(flag, "flag") }?;
    // SAFETY: `status` is the caller's input (NULL checked).
    let status =
        unsafe { status.as_ref() }.ok_or_else(|| MpiError::new(MPI_ERR_ARG, "status is NULL"))?;
    *flag = status.cancelled() as c_int;
    Ok(())
}
