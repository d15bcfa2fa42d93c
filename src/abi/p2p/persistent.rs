//! Persistent requests: `MPI_Send_init` and its modes, `MPI_Recv_init`,
//! `MPI_Start`, `MPI_Startall`. Arguments are checked once, at init; the
//! request keeps the operation as a template that each start launches
//! again. Completion makes the request inactive (see `abi::completion`).
//! `MPI_Start` and `MPI_Startall` start persistent collectives
//! (`abi::collective`'s `_init` calls make them) and partitioned requests
//! ([`super::partitioned`]) too.
use std::os::raw::{c_int, c_void};

use super::{message_buffer, Mode, Route};
use crate::core::error::{MpiError, MpiResult};
use crate::core::p2p::request::Template;
use crate::core::runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

unsafe fn send_init_in_mode(
    buf: *const c_void,
    n: usize,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: &mut MPI_Request,
    mode: Mode,
) -> MpiResult {
    // SAFETY: MPI's contract for a persistent send: `buf` holds `n` elements of
    // `datatype` while the request exists (every start reads it until that send
    // completes).
    let buf = unsafe { message_buffer(buf, n, datatype) }?;
    let mut rt = runtime::lock();
    let template = match Route::to(&rt, comm, dest)? {
        None => Template::ProcNull,
        Some(route) => Template::Send {
            args: route.send(buf, tag, mode),
            buffered: mode == Mode::Buffered,
        },
    };
    *request = rt.engine().persistent(template);
    Ok(())
}

/// Defines the init call of each send mode.
macro_rules! send_inits {
    ($($name:ident => $mode:expr;)*) => {$(
        pub unsafe fn $name(
            buf: *const c_void,
            n: usize,
            datatype: MPI_Datatype,
            dest: c_int,
            tag: c_int,
            comm: MPI_Comm,
            request: &mut MPI_Request,
        ) -> MpiResult {
            // SAFETY: this MPI_*send_init call's arguments, passed on
            // unchanged: `buf` holds `n` elements of `datatype` while the
            // request exists (MPI's contract).
            unsafe { send_init_in_mode(buf, n, datatype, dest, tag, comm, request, $mode) }
        }
    )*};
}

send_inits! {
    send_init => Mode::Standard;
    ssend_init => Mode::Synchronous;
    rsend_init => Mode::Ready;
    bsend_init => Mode::Buffered;
}

pub unsafe fn recv_init(
    buf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: &mut MPI_Request,
) -> MpiResult {
    // SAFETY: MPI_Recv_init's contract: `buf` has room for `n` elements of
    // `datatype` while the request exists, and is not touched by the program
    // while a start is active.
    let buf = unsafe { message_buffer(buf, n, datatype) }?;
    let mut rt = runtime::lock();
    let template = match super::accepting(&rt, comm, source, tag)? {
        None => Template::ProcNull,
        Some(pattern) => Template::Recv { buf, pattern },
    };
    *request = rt.engine().persistent(template);
    Ok(())
}

fn null_request_error() -> MpiError {
    MpiError::new(MPI_ERR_REQUEST, "MPI_REQUEST_NULL cannot be started")
}

pub unsafe fn start(request: &mut MPI_Request) -> MpiResult {
    if *request == MPI_REQUEST_NULL {
        return Err(null_request_error());
    }
    start_one(*request)
}

/// Starts one persistent request (checked startable or not); a persistent
/// collective's call is made and handed to the collective executor after
/// the runtime lock is released.
fn start_one(request: MPI_Request) -> MpiResult {
    let collective = {
        let mut rt = runtime::lock();
        let (engine, endpoints) = rt.engine_and_endpoints()?;
        engine.start(endpoints, request)?
    };
    match collective {
        Some(calls) => crate::core::collective::persistent::start(request, calls),
        None => Ok(()),
    }
}

/// Starts every request, after checking that all can start, in the order
/// of the array (any order would do: a persistent collective's place in
/// its communicator's sequence was fixed at its init call).
pub unsafe fn startall(n: usize, requests: *mut MPI_Request) -> MpiResult {
    if n == 0 {
        return Ok(());
    }
    if requests.is_null() {
        return Err(MpiError::new(MPI_ERR_ARG, "array_of_requests is NULL"));
    }
    // SAFETY: MPI_Startall's `requests` holds `n` handles (MPI's contract),
    // and is not NULL (checked above); the slice is only read, during this
    // call.
    let handles = unsafe { std::slice::from_raw_parts(requests, n) };
    {
        let mut rt = runtime::lock();
        for (i, &h) in handles.iter().enumerate() {
            if h == MPI_REQUEST_NULL {
                return Err(null_request_error());
            }
            rt.engine().check_startable(h).map_err(|e| {
                MpiError::new(e.class, format!("array_of_requests[{i}]: {}", e.detail))
            })?;
            if handles[..i].contains(&h) {
                return Err(MpiError::new(
                    MPI_ERR_REQUEST,
                    format!("array_of_requests[{i}] repeats an earlier request"),
                ));
            }
        }
    }
    for &h in handles {
        start_one(h)?;
    }
    Ok(())
}
