//! The rooted collectives through the C ABI: `MPI_Bcast`, `MPI_Gather(v)`,
//! `MPI_Scatter(v)` and their nonblocking forms. Only the root reads its
//! vector arguments; `MPI_IN_PLACE` is the root's alone.
use std::os::raw::{c_int, c_void};

use super::args::*;
use super::blocking_and_nonblocking;
use crate::abi::count::{Counts, Displs};
use crate::core::collective::channel::Channel;
use crate::core::collective::node::{self, Route};
use crate::core::collective::plan::{Collective, Persistent, Plan};
use crate::core::collective::{bcast, executor, gather, scatter};
use crate::core::error::MpiResult;
use crate::core::p2p::user_buffer::UserBuffer;
use crate::mpi_abi::types::*;

// ---- Bcast ----

/// A broadcast's checked root (among `p` members) and buffer.
///
/// # Safety
/// MPI_Bcast's contract: `buffer` holds `n` elements of `datatype` until the
/// broadcast completes.
unsafe fn bcast_args(
    buffer: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    root: c_int,
    p: usize,
) -> MpiResult<(UserBuffer, usize)> {
    let root = root_of(root, p)?;
    // SAFETY: this function's contract.
    let buf = unsafe { typed_buffer(buffer, n, "count", datatype, 1, "buffer") }?;
    Ok((buf, root))
}

fn bcast_plan(ch: Channel, buf: UserBuffer, root: usize) -> impl Persistent {
    Plan::new(ch, (buf, root), |call, (buf, root)| {
        bcast::bcast(call, buf, root)
    })
}

unsafe fn bcast_op(
    buffer: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let ch = channel(comm)?;
    // SAFETY: MPI_Bcast's contract, passed on by the caller.
    let (buf, root) = unsafe { bcast_args(buffer, n, datatype, root, ch.size()) }?;
    Ok(bcast_plan(ch, buf, root))
}

/// `MPI_Bcast`: on the communicator's node board when it has one (see
/// `core::collective::node`), else with messages.
pub unsafe fn bcast(
    buffer: *mut c_void,
    count: usize,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult {
    let Some(board) = node::board(comm)? else {
        // SAFETY: the MPI call's arguments, passed on unchanged.
        return unsafe { bcast_by_messages(buffer, count, datatype, root, comm) };
    };
    // SAFETY: the MPI call's arguments: `buffer` holds `count` elements of
    // `datatype` until this call returns, which ends the broadcast first.
    let (buf, root) = unsafe { bcast_args(buffer, count, datatype, root, board.members()) }?;
    if node::bcast(&board, &buf, root)? == Route::Done {
        return Ok(());
    }
    executor::block(bcast_plan(channel(comm)?, buf, root).once())
}

blocking_and_nonblocking!(
    bcast_by_messages, ibcast, bcast_init(
        buffer: *mut c_void, count: usize, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm
    ) => inter(comm) bcast_op(
        buffer, count, datatype, root, comm
    )
);

// ---- Gather, Gatherv ----

unsafe fn gather_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let ch = channel(comm)?;
    let (p, me) = (ch.size(), ch.rank);
    let root = root_of(root, p)?;
    let recv = if me == root {
        let n = crate::abi::count::checked(recvcount, "recvcount")?;
        // SAFETY: at the root MPI_Gather's `recvbuf` holds `recvcount` elements
        // of `recvtype` for each of the `p` members until the gather completes
        // (MPI's contract).
        Some(unsafe { typed_buffer(recvbuf, n, "recvcount", recvtype, p, "recvbuf") }?)
    } else {
        None
    };
    // SAFETY: MPI_Gather's contract: `sendbuf` (or MPI_IN_PLACE at the root)
    // holds `sendcount` elements of `sendtype` until the gather completes.
    let send = unsafe { block_side(sendbuf, sendcount, sendtype, me == root, "send") }?;
    if me == root {
        check_not_aliased(sendbuf, recvbuf, send.as_ref())?;
    }
    Ok(Plan::new(
        ch,
        (send, recv, root),
        |call, (send, recv, root)| gather::gather(call, send, recv, root),
    ))
}

blocking_and_nonblocking!(
    gather, igather, gather_init(
        sendbuf: *const c_void, sendcount: i64, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: i64, recvtype: MPI_Datatype, root: c_int,
        comm: MPI_Comm
    ) => inter(comm) gather_op(
        sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm
    )
);

unsafe fn gatherv_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: Counts,
    displs: Displs,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let ch = channel(comm)?;
    let (p, me) = (ch.size(), ch.rank);
    let root = root_of(root, p)?;
    let recvs = if me == root {
        // SAFETY: at the root MPI_Gatherv's `recvcounts` and `displs` hold `p`
        // entries, read here, and `recvbuf` the elements they place until the
        // gather completes (MPI's contract).
        unsafe { v_buffers(recvbuf, recvcounts, displs, recvtype, p, "recv") }?
    } else {
        Vec::new()
    };
    // SAFETY: MPI_Gatherv's contract: `sendbuf` (or MPI_IN_PLACE at the root)
    // holds `sendcount` elements of `sendtype` until the gather completes.
    let send = unsafe { block_side(sendbuf, sendcount, sendtype, me == root, "send") }?;
    if me == root {
        check_not_aliased(sendbuf, recvbuf, send.as_ref())?;
    }
    Ok(Plan::new(
        ch,
        (send, recvs, root),
        |call, (send, recvs, root)| gather::gatherv(call, send, recvs, root),
    ))
}

blocking_and_nonblocking!(
    gatherv, igatherv, gatherv_init(
        sendbuf: *const c_void, sendcount: i64, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcounts: Counts, displs: Displs,
        recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm
    ) => inter(comm) gatherv_op(
        sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
        root, comm
    )
);

// ---- Scatter, Scatterv ----

unsafe fn scatter_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let ch = channel(comm)?;
    let (p, me) = (ch.size(), ch.rank);
    let root = root_of(root, p)?;
    let send = if me == root {
        let n = crate::abi::count::checked(sendcount, "sendcount")?;
        // SAFETY: at the root MPI_Scatter's `sendbuf` holds `sendcount`
        // elements of `sendtype` for each of the `p` members until the scatter
        // completes (MPI's contract).
        Some(unsafe { typed_buffer(sendbuf, n, "sendcount", sendtype, p, "sendbuf") }?)
    } else {
        None
    };
    // SAFETY: MPI_Scatter's contract: `recvbuf` (or MPI_IN_PLACE at the root)
    // holds `recvcount` elements of `recvtype` until the scatter completes.
    let recv = unsafe { block_side(recvbuf, recvcount, recvtype, me == root, "recv") }?;
    if me == root {
        check_not_aliased(sendbuf, recvbuf, recv.as_ref())?;
    }
    Ok(Plan::new(
        ch,
        (send, recv, root),
        |call, (send, recv, root)| scatter::scatter(call, send, recv, root),
    ))
}

blocking_and_nonblocking!(
    scatter, iscatter, scatter_init(
        sendbuf: *const c_void, sendcount: i64, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: i64, recvtype: MPI_Datatype, root: c_int,
        comm: MPI_Comm
    ) => inter(comm) scatter_op(
        sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm
    )
);

unsafe fn scatterv_op(
    sendbuf: *const c_void,
    sendcounts: Counts,
    displs: Displs,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let ch = channel(comm)?;
    let (p, me) = (ch.size(), ch.rank);
    let root = root_of(root, p)?;
    let sends = if me == root {
        // SAFETY: at the root MPI_Scatterv's `sendcounts` and `displs` hold `p`
        // entries, read here, and `sendbuf` the elements they place until the
        // scatter completes (MPI's contract).
        unsafe { v_buffers(sendbuf, sendcounts, displs, sendtype, p, "send") }?
    } else {
        Vec::new()
    };
    // SAFETY: MPI_Scatterv's contract: `recvbuf` (or MPI_IN_PLACE at the root)
    // holds `recvcount` elements of `recvtype` until the scatter completes.
    let recv = unsafe { block_side(recvbuf, recvcount, recvtype, me == root, "recv") }?;
    if me == root {
        check_not_aliased(sendbuf, recvbuf, recv.as_ref())?;
    }
    Ok(Plan::new(
        ch,
        (sends, recv, root),
        |call, (sends, recv, root)| scatter::scatterv(call, sends, recv, root),
    ))
}

blocking_and_nonblocking!(
    scatterv, iscatterv, scatterv_init(
        sendbuf: *const c_void, sendcounts: Counts, displs: Displs,
        sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: i64,
        recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm
    ) => inter(comm) scatterv_op(
        sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
        root, comm
    )
);
