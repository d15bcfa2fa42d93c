//! Probes: `MPI_Probe` and `MPI_Iprobe` (the matched probes, which take
//! the message, are in `matched_probe`).
use std::os::raw::c_int;

use super::accepting;
use crate::abi::status::{write_status, StatusOut};
use crate::core::error::MpiResult;
use crate::core::matching::Pattern;
use crate::core::p2p::request::proc_null_status;
use crate::core::progress::block_on;
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::types::*;

/// What a probe looks for; `None` for `MPI_PROC_NULL`.
pub(super) fn probe_pattern(
    rt: &Runtime,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<Option<Pattern>> {
    accepting(rt, comm, source, tag)
}

pub unsafe fn iprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: &mut c_int,
    status: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: `status` is NULL (rejected), MPI_STATUS_IGNORE or valid for
    // writing one status during this call (MPI's contract for MPI_Iprobe);
    // `new` only classifies the address.
    let status_out = unsafe { StatusOut::new(status) }?;
    let mut rt = runtime::lock();
    rt.progress();
    let found = match probe_pattern(&rt, source, tag, comm)? {
        None => Some(proc_null_status()),
        Some(pattern) => rt.engine().iprobe(&pattern),
    };
    *flag = found.is_some() as c_int;
    if let Some(st) = found {
        // SAFETY: `status_out` came from `StatusOut::new` on the caller's
        // `status`, valid for writing one status during this call.
        unsafe { write_status(status_out, &st) };
    }
    Ok(())
}

pub unsafe fn probe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult {
    // SAFETY: `status` is NULL (rejected), MPI_STATUS_IGNORE or valid for
    // writing one status during this call (MPI's contract for MPI_Probe); `new`
    // only classifies the address.
    let status_out = unsafe { StatusOut::new(status) }?;
    let st = block_on(|rt| match probe_pattern(rt, source, tag, comm)? {
        None => Ok(Some(proc_null_status())),
        Some(pattern) => match rt.engine().iprobe(&pattern) {
            Some(st) => Ok(Some(st)),
            None => rt.check_source_alive(&pattern).map(|()| None),
        },
    })?;
    // SAFETY: `status_out` came from `StatusOut::new` on the caller's `status`,
    // valid for writing one status during this call.
    unsafe { write_status(status_out, &st) };
    Ok(())
}
