//! The reduction collectives through the C ABI, blocking and nonblocking:
//! `MPI_Reduce`, `MPI_Allreduce`, `MPI_Reduce_scatter(_block)`,
//! `MPI_Scan`, `MPI_Exscan`. Arguments are checked here (see
//! [`super`] for the scheme); an operation that is not defined for the
//! datatype is `MPI_ERR_OP`.

use std::os::raw::{c_int, c_void};

use super::args::{channel, check_not_aliased, in_place, user_buffer};
use super::blocking_and_nonblocking;
use crate::abi::count::Counts;
use crate::core::collective::channel::Channel;
use crate::core::collective::node::{self, Route};
use crate::core::collective::plan::{Collective, Persistent, Plan};
use crate::core::collective::scan::{self, Prefix};
use crate::core::collective::{executor, reduce};
use crate::core::datatype;
use crate::core::error::{MpiError, MpiResult};
use crate::core::op::Reduction;
use crate::core::p2p::user_buffer::UserBuffer;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// Input and output buffers of `n` elements: the input is the output for
/// `MPI_IN_PLACE`.
///
/// # Safety
/// Until the collective ends, `recvbuf` must hold `n_out` elements of `dt`
/// (and `n_in` for `MPI_IN_PLACE`), `sendbuf` otherwise `n_in`.
unsafe fn in_out(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n_in: usize,
    n_out: usize,
    dt: &std::sync::Arc<crate::core::datatype::Datatype>,
) -> MpiResult<(UserBuffer, UserBuffer)> {
    // SAFETY: `recvbuf` holds `n_out` elements of `dt` until the collective
    // ends (this function's contract).
    let result = unsafe { user_buffer(recvbuf, n_out, dt, "recvbuf") }?;
    let contribution = if in_place(sendbuf) {
        // SAFETY: with MPI_IN_PLACE the input is read from `recvbuf`, which
        // then holds `n_in` elements (this function's contract).
        unsafe { user_buffer(recvbuf, n_in, dt, "recvbuf") }?
    } else {
        // SAFETY: not MPI_IN_PLACE, so `sendbuf` holds `n_in` elements of `dt`
        // until the collective ends (this function's contract).
        let send = unsafe { user_buffer(sendbuf, n_in, dt, "sendbuf") }?;
        check_not_aliased(sendbuf, recvbuf, Some(&send))?;
        send
    };
    Ok((contribution, result))
}

unsafe fn reduce_op(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let ch = channel(comm)?;
    let dt = datatype::lookup_committed(datatype)?;
    let red = Reduction::new(op, datatype, dt.clone())?;
    let p = ch.size();
    let root = usize::try_from(root)
        .ok()
        .filter(|&r| r < p)
        .ok_or_else(|| {
            MpiError::new(
                MPI_ERR_ROOT,
                format!("root {root} is not a rank of this communicator (size {p})"),
            )
        })?;
    let (contribution, result) = if ch.rank == root {
        // SAFETY: at the root MPI_Reduce's contract gives `n` elements in
        // `recvbuf` and in `sendbuf` (or MPI_IN_PLACE) until the reduction
        // completes.
        let (c, r) = unsafe { in_out(sendbuf, recvbuf, n, n, &dt) }?;
        (c, Some(r))
    } else if in_place(sendbuf) {
        return Err(MpiError::new(
            MPI_ERR_BUFFER,
            "MPI_IN_PLACE is not valid as sendbuf except at the root",
        ));
    } else {
        // SAFETY: off the root only `sendbuf` is significant; not MPI_IN_PLACE
        // (rejected above), it holds `n` elements until the reduction completes
        // (MPI's contract).
        (unsafe { user_buffer(sendbuf, n, &dt, "sendbuf") }?, None)
    };
    Ok(Plan::new(
        ch,
        (contribution, result, red, root),
        |call, (contribution, result, red, root)| {
            reduce::reduce(call, contribution, result, red, root)
        },
    ))
}

blocking_and_nonblocking!(
    reduce, ireduce, reduce_init(
        sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, datatype: MPI_Datatype,
        op: MPI_Op, root: c_int, comm: MPI_Comm
    ) => inter(comm) reduce_op(
        sendbuf, recvbuf, count, datatype, op, root, comm
    )
);

/// An allreduce's checked buffers and reduction.
type AllreduceParts = (UserBuffer, UserBuffer, Reduction);

/// # Safety
/// MPI_Allreduce's contract: `sendbuf` (or MPI_IN_PLACE) and `recvbuf`
/// hold `n` elements of `datatype` until the collective completes.
unsafe fn allreduce_parts(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult<AllreduceParts> {
    let dt = datatype::lookup_committed(datatype)?;
    let red = Reduction::new(op, datatype, dt.clone())?;
    // SAFETY: this function's contract.
    let (contribution, result) = unsafe { in_out(sendbuf, recvbuf, n, n, &dt) }?;
    Ok((contribution, result, red))
}

fn allreduce_plan(ch: Channel, parts: AllreduceParts) -> impl Persistent {
    Plan::new(ch, parts, |call, (contribution, result, red)| {
        reduce::allreduce(call, contribution, result, red)
    })
}

unsafe fn allreduce_op(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let ch = channel(comm)?;
    // SAFETY: MPI_Allreduce's contract, passed on by the caller.
    let parts = unsafe { allreduce_parts(sendbuf, recvbuf, n, datatype, op) }?;
    Ok(allreduce_plan(ch, parts))
}

/// `MPI_Allreduce`: on the communicator's node board when it has one (see
/// `core::collective::node`), else with messages.
pub unsafe fn allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: usize,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult {
    let Some(board) = node::board(comm)? else {
        // SAFETY: the MPI call's arguments, passed on unchanged.
        return unsafe { allreduce_by_messages(sendbuf, recvbuf, count, datatype, op, comm) };
    };
    // SAFETY: the MPI call's arguments: the buffers hold `count` elements
    // of `datatype` until this call returns, which ends the allreduce first.
    let parts = unsafe { allreduce_parts(sendbuf, recvbuf, count, datatype, op) }?;
    let (contribution, result, red) = &parts;
    if node::allreduce(&board, contribution, result, red)? == Route::Done {
        return Ok(());
    }
    executor::block(allreduce_plan(channel(comm)?, parts).once())
}

blocking_and_nonblocking!(
    allreduce_by_messages, iallreduce, allreduce_init(
        sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, datatype: MPI_Datatype,
        op: MPI_Op, comm: MPI_Comm
    ) => inter(comm) allreduce_op(
        sendbuf, recvbuf, count, datatype, op, comm
    )
);

/// Per-member counts: an array, or one count for everyone (`_block`).
#[derive(Clone, Copy)]
pub(crate) enum ScatterCounts {
    Each(Counts),
    Block(usize),
}

unsafe fn reduce_scatter_op(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: ScatterCounts,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let ch = channel(comm)?;
    let p = ch.size();
    let (counts, dt) = match counts {
        ScatterCounts::Each(c) => {
            let dt = crate::core::datatype::lookup_committed(datatype)?;
            // SAFETY: MPI_Reduce_scatter's `recvcounts` holds one entry per
            // member, `p`; copied out here.
            (unsafe { c.read(p, "recvcounts") }?, dt)
        }
        ScatterCounts::Block(n) => (vec![n; p], datatype::lookup_committed(datatype)?),
    };
    let total = counts
        .iter()
        .try_fold(0usize, |a, &c| a.checked_add(c))
        .ok_or_else(|| {
            MpiError::new(MPI_ERR_COUNT, "the counts add up to more than memory holds")
        })?;
    let red = Reduction::new(op, datatype, dt.clone())?;
    // SAFETY: MPI's contract: `sendbuf` (or `recvbuf` for MPI_IN_PLACE) holds
    // the `total` elements to reduce, `recvbuf` this member's
    // `counts[ch.rank]`, until the collective completes.
    let (contribution, result) = unsafe { in_out(sendbuf, recvbuf, total, counts[ch.rank], &dt) }?;
    Ok(Plan::new(
        ch,
        (contribution, result, counts, red),
        |call, (contribution, result, counts, red)| {
            reduce::reduce_scatter(call, contribution, result, counts, red)
        },
    ))
}

blocking_and_nonblocking!(
    reduce_scatter, ireduce_scatter, reduce_scatter_init(
        sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: Counts,
        datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm
    ) => inter(comm) reduce_scatter_op(
        sendbuf, recvbuf, ScatterCounts::Each(recvcounts), datatype, op, comm
    )
);
blocking_and_nonblocking!(
    reduce_scatter_block, ireduce_scatter_block, reduce_scatter_block_init(
        sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: usize, datatype: MPI_Datatype,
        op: MPI_Op, comm: MPI_Comm
    ) => inter(comm) reduce_scatter_op(
        sendbuf, recvbuf, ScatterCounts::Block(recvcount), datatype, op, comm
    )
);

unsafe fn scan_op(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    prefix: Prefix,
) -> MpiResult<impl Persistent> {
    let ch = channel(comm)?;
    let dt = datatype::lookup_committed(datatype)?;
    let red = Reduction::new(op, datatype, dt.clone())?;
    // SAFETY: MPI_Scan/Exscan's contract: `sendbuf` (or MPI_IN_PLACE) and
    // `recvbuf` hold `n` elements of `dt` until the collective completes.
    let (contribution, result) = unsafe { in_out(sendbuf, recvbuf, n, n, &dt) }?;
    Ok(Plan::new(
        ch,
        (contribution, result, red, prefix),
        |call, (contribution, result, red, prefix)| {
            scan::scan(call, contribution, result, red, prefix)
        },
    ))
}

blocking_and_nonblocking!(
    scan, iscan, scan_init(
        sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, datatype: MPI_Datatype,
        op: MPI_Op, comm: MPI_Comm
    ) => scan_op(
        sendbuf, recvbuf, count, datatype, op, comm, Prefix::Inclusive
    )
);
blocking_and_nonblocking!(
    exscan, iexscan, exscan_init(
        sendbuf: *const c_void, recvbuf: *mut c_void, count: usize, datatype: MPI_Datatype,
        op: MPI_Op, comm: MPI_Comm
    ) => scan_op(
        sendbuf, recvbuf, count, datatype, op, comm, Prefix::Exclusive
    )
);
