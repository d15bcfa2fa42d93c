//! The all-to-all collectives through the C ABI: `MPI_Barrier`,
//! `MPI_Allgather(v)`, `MPI_Alltoall(v,w)` and their nonblocking forms.
//! `MPI_IN_PLACE` as the send buffer means the receive buffer holds this
//! member's part already (the send count and type are then not read).
use std::os::raw::c_void;

use super::args::*;
use super::blocking_and_nonblocking;
use crate::abi::count::{Counts, Displs};
use crate::core::collective::channel::Channel;
use crate::core::collective::node::{self, Route};
use crate::core::collective::plan::{Collective, Persistent, Plan};
use crate::core::collective::{alltoall, barrier as barrier_algorithm, executor, gather};
use crate::core::error::MpiResult;
use crate::core::p2p::user_buffer::UserBuffer;
use crate::mpi_abi::types::*;

// ---- Barrier ----

/// `MPI_Barrier` (also on an intercommunicator).
pub unsafe fn barrier(comm: MPI_Comm) -> MpiResult {
    if super::inter::is_inter(comm)? {
        return crate::core::collective::executor::block(super::inter::barrier_op(comm)?.once());
    }
    // On the communicator's node board when it has one (see
    // `core::collective::node`), else with messages.
    if let Some(board) = node::board(comm)? {
        return node::barrier(&board);
    }
    let ch = Channel::lookup(comm)?;
    crate::core::collective::algorithms::barrier(&ch)
}

unsafe fn barrier_op(comm: MPI_Comm) -> MpiResult<impl Persistent> {
    Ok(Plan::new(channel(comm)?, (), |call, ()| {
        barrier_algorithm::barrier(call)
    }))
}

/// `MPI_Ibarrier` (also on an intercommunicator).
pub unsafe fn ibarrier(comm: MPI_Comm, request: &mut MPI_Request) -> MpiResult {
    if super::inter::is_inter(comm)? {
        *request =
            crate::core::collective::executor::start(super::inter::barrier_op(comm)?.once())?;
        return Ok(());
    }
    // SAFETY: `barrier_op` reads no memory (a barrier has no buffer).
    let call = unsafe { barrier_op(comm) }?.once();
    *request = crate::core::collective::executor::start(call)?;
    Ok(())
}

/// `MPI_Barrier_init` (also on an intercommunicator).
pub unsafe fn barrier_init(comm: MPI_Comm, info: MPI_Info, request: &mut MPI_Request) -> MpiResult {
    crate::abi::info::check_ignored(&crate::core::runtime::lock(), info)?;
    if super::inter::is_inter(comm)? {
        let plan = super::inter::barrier_op(comm)?;
        *request = crate::core::collective::persistent::init(plan);
        return Ok(());
    }
    // SAFETY: `barrier_op` reads no memory (a barrier has no buffer).
    let plan = unsafe { barrier_op(comm) }?;
    *request = crate::core::collective::persistent::init(plan);
    Ok(())
}

// ---- Allgather, Allgatherv ----

unsafe fn allgather_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let ch = channel(comm)?;
    // SAFETY: unless it is MPI_IN_PLACE, `sendbuf` holds `sendcount` elements
    // of `sendtype` until the allgather completes (MPI's contract, passed on by
    // the caller).
    let send = unsafe { optional_send(sendbuf, sendcount, sendtype, 1) }?;
    // SAFETY: `recvbuf` holds `recvcount` elements of `recvtype` for each of
    // the `ch.size()` members until the allgather completes (MPI's contract).
    let recv = unsafe {
        typed_buffer(
            recvbuf,
            recvcount,
            "recvcount",
            recvtype,
            ch.size(),
            "recvbuf",
        )
    }?;
    check_not_aliased(sendbuf, recvbuf, send.as_ref())?;
    check_not_own_block(
        sendbuf,
        &recv.elements(ch.rank * recvcount, recvcount),
        send.as_ref(),
    )?;
    Ok(Plan::new(ch, (send, recv), |call, (send, recv)| {
        gather::allgather(call, send, recv)
    }))
}

blocking_and_nonblocking!(
    allgather, iallgather, allgather_init(
        sendbuf: *const c_void, sendcount: i64, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: usize, recvtype: MPI_Datatype, comm: MPI_Comm
    ) => inter(comm) allgather_op(
        sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm
    )
);

unsafe fn allgatherv_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: Counts,
    displs: Displs,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let ch = channel(comm)?;
    let p = ch.size();
    // SAFETY: MPI_Allgatherv's contract: `sendbuf` (unless MPI_IN_PLACE)
    // holds `sendcount` elements of `sendtype` until the collective completes.
    let send = unsafe { optional_send(sendbuf, sendcount, sendtype, 1) }?;
    // SAFETY: MPI_Allgatherv's contract: `recvcounts` and `displs` hold `p`
    // entries, read here, and `recvbuf` holds the elements they place until the
    // collective completes.
    let recvs = unsafe { v_buffers(recvbuf, recvcounts, displs, recvtype, p, "recv") }?;
    check_not_aliased(sendbuf, recvbuf, send.as_ref())?;
    check_not_own_block(sendbuf, &recvs[ch.rank], send.as_ref())?;
    Ok(Plan::new(ch, (send, recvs), |call, (send, recvs)| {
        gather::allgatherv(call, send, recvs)
    }))
}

blocking_and_nonblocking!(
    allgatherv, iallgatherv, allgatherv_init(
        sendbuf: *const c_void, sendcount: i64, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcounts: Counts, displs: Displs,
        recvtype: MPI_Datatype, comm: MPI_Comm
    ) => inter(comm) allgatherv_op(
        sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
        comm
    )
);

// ---- Alltoall, Alltoallv, Alltoallw ----

/// An alltoall's checked buffers: the send blocks (`None` for
/// `MPI_IN_PLACE`) and the receive blocks.
///
/// # Safety
/// MPI_Alltoall's contract: unless it is MPI_IN_PLACE, `sendbuf` holds `p`
/// blocks of `sendcount` elements of `sendtype`, and `recvbuf` `p` blocks
/// of `recvcount` elements of `recvtype`, until the alltoall completes.
unsafe fn alltoall_buffers(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: MPI_Datatype,
    p: usize,
) -> MpiResult<(Option<UserBuffer>, UserBuffer)> {
    // SAFETY: this function's contract.
    let send = unsafe { optional_send(sendbuf, sendcount, sendtype, p) }?;
    // SAFETY: this function's contract.
    let recv = unsafe { typed_buffer(recvbuf, recvcount, "recvcount", recvtype, p, "recvbuf") }?;
    check_not_aliased(sendbuf, recvbuf, send.as_ref())?;
    Ok((send, recv))
}

unsafe fn alltoall_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let ch = channel(comm)?;
    // SAFETY: MPI_Alltoall's contract, passed on by the caller.
    let (send, recv) = unsafe {
        alltoall_buffers(
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
            ch.size(),
        )
    }?;
    Ok(alltoall_plan(ch, send, recv))
}

fn alltoall_plan(ch: Channel, send: Option<UserBuffer>, recv: UserBuffer) -> impl Persistent {
    Plan::new(ch, (send, recv), |call, (send, recv)| {
        alltoall::alltoall(call, send, recv)
    })
}

/// `MPI_Alltoall`: on the communicator's node board and stage when it has
/// them and the blocks fit (see `core::collective::node`), else with
/// messages.
pub unsafe fn alltoall(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult {
    let Some(board) = node::board(comm)? else {
        // SAFETY: the MPI call's arguments, passed on unchanged.
        return unsafe {
            alltoall_by_messages(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
            )
        };
    };
    // SAFETY: the MPI call's arguments: the buffers hold their blocks until
    // this call returns, which ends the alltoall first.
    let (send, recv) = unsafe {
        alltoall_buffers(
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
            board.members(),
        )
    }?;
    if node::alltoall(&board, send.as_ref(), &recv)? == Route::Done {
        return Ok(());
    }
    executor::block(alltoall_plan(channel(comm)?, send, recv).once())
}

blocking_and_nonblocking!(
    alltoall_by_messages, ialltoall, alltoall_init(
        sendbuf: *const c_void, sendcount: i64, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: usize, recvtype: MPI_Datatype, comm: MPI_Comm
    ) => inter(comm) alltoall_op(
        sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm
    )
);

unsafe fn alltoallw_op(send: Side, recv: Side, comm: MPI_Comm) -> MpiResult<impl Persistent> {
    let ch = channel(comm)?;
    let p = ch.size();
    let sends = if in_place(send.buf) {
        None
    } else {
        // SAFETY: MPI_Alltoallv/w's contract: the send side's counts,
        // displacements (and types) hold `p` entries, read here, and its buffer
        // the elements they place until the collective completes.
        Some(unsafe { send.buffers(p, "send") }?)
    };
    if in_place(recv.buf) {
        return Err(in_place_not_here("as recvbuf"));
    }
    // SAFETY: the same contract for the receive side: its arrays hold `p`
    // entries and its buffer (not MPI_IN_PLACE, rejected just above) the
    // elements they place until the collective completes.
    let recvs = unsafe { recv.buffers(p, "recv") }?;
    let any_sent = sends
        .as_ref()
        .and_then(|s| s.iter().find(|b| !b.is_empty()));
    check_not_aliased(send.buf, recv.buf, any_sent)?;
    Ok(Plan::new(ch, (sends, recvs), |call, (sends, recvs)| {
        alltoall::alltoallw(call, sends, recvs)
    }))
}

blocking_and_nonblocking!(
    alltoallv, ialltoallv, alltoallv_init(
        sendbuf: *const c_void, sendcounts: Counts, sdispls: Displs,
        sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: Counts,
        rdispls: Displs, recvtype: MPI_Datatype, comm: MPI_Comm
    ) => inter(comm) alltoallw_op(
        Side {
            buf: sendbuf,
            counts: sendcounts,
            displs: sdispls,
            types: Types::One(sendtype),
        },
        Side {
            buf: recvbuf,
            counts: recvcounts,
            displs: rdispls,
            types: Types::One(recvtype),
        },
        comm
    )
);
blocking_and_nonblocking!(
    alltoallw, ialltoallw, alltoallw_init(
        sendbuf: *const c_void, sendcounts: Counts, sdispls: Displs,
        sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: Counts,
        rdispls: Displs, recvtypes: *const MPI_Datatype, comm: MPI_Comm
    ) => inter(comm) alltoallw_op(
        Side {
            buf: sendbuf,
            counts: sendcounts,
            displs: sdispls,
            types: Types::PerPeer(sendtypes),
        },
        Side {
            buf: recvbuf,
            counts: recvcounts,
            displs: rdispls,
            types: Types::PerPeer(recvtypes),
        },
        comm
    )
);
