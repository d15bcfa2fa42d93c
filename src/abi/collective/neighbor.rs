//! The neighborhood collectives through the C ABI:
//! `MPI_Neighbor_allgather(v)`, `MPI_Neighbor_alltoall(v,w)` and their
//! nonblocking `MPI_Ineighbor_` forms, on a communicator with a topology
//! (`MPI_ERR_TOPOLOGY` otherwise). Receive block i comes from the i-th
//! source of the topology, send block j goes to the j-th destination
//! (`core::topology::Neighbors`); a block of an `MPI_PROC_NULL` neighbour
//! (the edge of a non-periodic grid) is neither sent nor written.
//! `MPI_IN_PLACE` is not valid in these calls (`MPI_ERR_BUFFER`). The
//! persistent `_init` forms (MPI 4) come from the same builders, like
//! those of the other collectives (`super::blocking_and_nonblocking`).
use std::os::raw::c_void;

use super::args::*;
use super::blocking_and_nonblocking;
use crate::abi::count::{Counts, Displs};
use crate::core::collective::channel::Channel;
use crate::core::collective::neighbor::{exchange, Outgoing};
use crate::core::collective::plan::{Persistent, Plan};
use crate::core::datatype;
use crate::core::error::MpiResult;
use crate::core::p2p::user_buffer::UserBuffer;
use crate::core::topology::create::topology;
use crate::core::topology::Neighbors;
use crate::mpi_abi::types::*;

/// The call's channel and this member's neighbours: `MPI_ERR_COMM` for a
/// bad handle, `MPI_ERR_TOPOLOGY` without a topology (which an
/// intercommunicator never has). The call's sequence number is taken once
/// every argument is checked.
fn neighbors_of(comm: MPI_Comm) -> MpiResult<(Channel, Neighbors)> {
    let t = topology(comm)?;
    let ch = channel(comm)?;
    let neighbors = t.neighbors(ch.rank);
    Ok((ch, neighbors))
}

/// `n` blocks of `count` elements of `datatype`, one after the other from
/// `buf` (the send or receive blocks of an allgather or alltoall).
///
/// # Safety
/// `buf` must hold the `n * count` elements until the collective ends.
unsafe fn blocks(
    buf: *const c_void,
    count: usize,
    datatype: MPI_Datatype,
    n: usize,
    name: &str,
) -> MpiResult<Vec<UserBuffer>> {
    let dt = datatype::lookup_committed(datatype)?;
    let counts = vec![count; n];
    let displs: Vec<isize> = (0..n).map(|i| (i * count) as isize).collect();
    // SAFETY: `buf` holds `n` consecutive blocks of `count` elements
    // (this function's contract), which is what `buffers_at` asks.
    unsafe { buffers_at(buf, &counts, &displs, dt.extent(), &[dt], name) }
}

/// The call every neighborhood collective makes: `outgoing` to the
/// destinations, `recvs` from the sources.
fn plan(
    ch: Channel,
    neighbors: Neighbors,
    outgoing: Outgoing,
    recvs: Vec<UserBuffer>,
) -> impl Persistent {
    Plan::new(
        ch,
        (neighbors, outgoing, recvs),
        |call, (neighbors, outgoing, recvs)| exchange(call, neighbors, outgoing, recvs),
    )
}

// ---- Neighbor_allgather, Neighbor_allgatherv ----

unsafe fn allgather_op(
    sendbuf: *const c_void,
    sendcount: usize,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    datatype::lookup_committed(recvtype)?;
    // SAFETY: `sendbuf` holds `sendcount` elements of `sendtype` until the
    // collective ends (MPI's contract).
    let send = unsafe { typed_buffer(sendbuf, sendcount, "sendcount", sendtype, 1, "sendbuf") }?;
    let (ch, neighbors) = neighbors_of(comm)?;
    // SAFETY: `recvbuf` holds one block of `recvcount` elements of
    // `recvtype` per source until the collective ends (MPI's contract).
    let recvs = unsafe {
        blocks(
            recvbuf,
            recvcount,
            recvtype,
            neighbors.sources.len(),
            "recvbuf",
        )
    }?;
    Ok(plan(ch, neighbors, Outgoing::Same(send), recvs))
}

blocking_and_nonblocking!(
    neighbor_allgather, ineighbor_allgather, neighbor_allgather_init(
        sendbuf: *const c_void, sendcount: usize, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: usize, recvtype: MPI_Datatype, comm: MPI_Comm
    ) => allgather_op(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)
);

unsafe fn allgatherv_op(
    sendbuf: *const c_void,
    sendcount: usize,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: Counts,
    displs: Displs,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    datatype::lookup_committed(recvtype)?;
    // SAFETY: `sendbuf` holds `sendcount` elements of `sendtype` until the
    // collective ends (MPI's contract).
    let send = unsafe { typed_buffer(sendbuf, sendcount, "sendcount", sendtype, 1, "sendbuf") }?;
    let (ch, neighbors) = neighbors_of(comm)?;
    // SAFETY: `recvcounts` and `displs` hold one entry per source, read
    // here, and `recvbuf` the elements they place until the collective
    // ends (MPI's contract).
    let recvs = unsafe {
        v_buffers(
            recvbuf,
            recvcounts,
            displs,
            recvtype,
            neighbors.sources.len(),
            "recv",
        )
    }?;
    Ok(plan(ch, neighbors, Outgoing::Same(send), recvs))
}

blocking_and_nonblocking!(
    neighbor_allgatherv, ineighbor_allgatherv, neighbor_allgatherv_init(
        sendbuf: *const c_void, sendcount: usize, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcounts: Counts, displs: Displs,
        recvtype: MPI_Datatype, comm: MPI_Comm
    ) => allgatherv_op(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm)
);

// ---- Neighbor_alltoall, Neighbor_alltoallv, Neighbor_alltoallw ----

unsafe fn alltoall_op(
    sendbuf: *const c_void,
    sendcount: usize,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    datatype::lookup_committed(sendtype)?;
    datatype::lookup_committed(recvtype)?;
    let (ch, neighbors) = neighbors_of(comm)?;
    // SAFETY: `sendbuf` holds one block of `sendcount` elements of
    // `sendtype` per destination until the collective ends (MPI's contract).
    let sends = unsafe {
        blocks(
            sendbuf,
            sendcount,
            sendtype,
            neighbors.destinations.len(),
            "sendbuf",
        )
    }?;
    // SAFETY: `recvbuf` holds one block of `recvcount` elements of
    // `recvtype` per source until the collective ends (MPI's contract).
    let recvs = unsafe {
        blocks(
            recvbuf,
            recvcount,
            recvtype,
            neighbors.sources.len(),
            "recvbuf",
        )
    }?;
    Ok(plan(ch, neighbors, Outgoing::Each(sends), recvs))
}

blocking_and_nonblocking!(
    neighbor_alltoall, ineighbor_alltoall, neighbor_alltoall_init(
        sendbuf: *const c_void, sendcount: usize, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: usize, recvtype: MPI_Datatype, comm: MPI_Comm
    ) => alltoall_op(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)
);

unsafe fn alltoallw_op(send: Side, recv: Side, comm: MPI_Comm) -> MpiResult<impl Persistent> {
    for side in [&send, &recv] {
        if let Types::One(dt) = side.types {
            datatype::lookup_committed(dt)?;
        }
    }
    let (ch, neighbors) = neighbors_of(comm)?;
    // SAFETY: MPI_Neighbor_alltoallv/w's contract: the send side's counts,
    // displacements (and types) hold one entry per destination, read here,
    // and its buffer the elements they place until the collective ends.
    let sends = unsafe { send.buffers(neighbors.destinations.len(), "send") }?;
    // SAFETY: the same for the receive side, one entry per source.
    let recvs = unsafe { recv.buffers(neighbors.sources.len(), "recv") }?;
    Ok(plan(ch, neighbors, Outgoing::Each(sends), recvs))
}

blocking_and_nonblocking!(
    neighbor_alltoallv, ineighbor_alltoallv, neighbor_alltoallv_init(
        sendbuf: *const c_void, sendcounts: Counts, sdispls: Displs,
        sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: Counts,
        rdispls: Displs, recvtype: MPI_Datatype, comm: MPI_Comm
    ) => alltoallw_op(
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
    neighbor_alltoallw, ineighbor_alltoallw, neighbor_alltoallw_init(
        sendbuf: *const c_void, sendcounts: Counts, sdispls: *const MPI_Aint,
        sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: Counts,
        rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm
    ) => alltoallw_op(
        Side {
            buf: sendbuf,
            counts: sendcounts,
            displs: Displs::from(sdispls),
            types: Types::PerPeer(sendtypes),
        },
        Side {
            buf: recvbuf,
            counts: recvcounts,
            displs: Displs::from(rdispls),
            types: Types::PerPeer(recvtypes),
        },
        comm
    )
);
