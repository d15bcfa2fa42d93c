//! Blocking collectives on intercommunicators through the C ABI: the
//! argument checks (by role: a rooted call's root passes `MPI_ROOT`, the
//! rest of its group `MPI_PROC_NULL`, the other group the root's rank in
//! the remote group; counts of the `v`/`w` forms and receive buffers are
//! per member of the remote group), then the algorithm of
//! `core::collective::inter`. `MPI_IN_PLACE` is not valid on an
//! intercommunicator (MPI 4.1 allows it on intracommunicators only), so
//! every buffer check rejects it. The blocking, nonblocking and persistent
//! entry points of [`super::rooted`], [`super::all`] and
//! [`super::reduction`] come here when the communicator is an
//! intercommunicator: each builder returns an `InterPlan`, which takes the
//! call's tag when a call is made (a persistent one at its
//! initialization), as on an intracommunicator.
use std::os::raw::{c_int, c_void};

use super::args::{check_not_aliased, typed_buffer, user_buffer, v_buffers, Side};
use super::reduction::ScatterCounts;
use crate::abi::count::{self, Counts, Displs};
use crate::core::collective::inter::{exchange, rooted, InterChannels, InterPlan, Role};
use crate::core::collective::plan::Persistent;
use crate::core::datatype;
use crate::core::error::{MpiError, MpiResult};
use crate::core::op::Reduction;
use crate::core::p2p::user_buffer::UserBuffer;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// Whether `comm` is an intercommunicator (`MPI_ERR_COMM` if invalid).
pub(crate) fn is_inter(comm: MPI_Comm) -> MpiResult<bool> {
    Ok(InterChannels::lookup(comm)?.is_some())
}

fn channels(comm: MPI_Comm) -> MpiResult<InterChannels> {
    InterChannels::lookup(comm)?.ok_or_else(|| {
        MpiError::new(
            MPI_ERR_COMM,
            "an intercommunicator collective on an intracommunicator",
        )
    })
}

/// The caller's part from the `root` argument.
fn role_of(root: c_int, remote_size: usize) -> MpiResult<Role> {
    match root {
        MPI_ROOT => Ok(Role::Root),
        MPI_PROC_NULL => Ok(Role::Idle),
        r if r >= 0 && (r as usize) < remote_size => Ok(Role::Leaf(r as usize)),
        r => Err(MpiError::new(
            MPI_ERR_ROOT,
            format!(
                "root {r} on an intercommunicator is neither MPI_ROOT, MPI_PROC_NULL nor a rank \
                 of the remote group (size {remote_size})"
            ),
        )),
    }
}

/// `MPI_Barrier` or `MPI_Ibarrier` on an intercommunicator.
pub(crate) fn barrier_op(comm: MPI_Comm) -> MpiResult<impl Persistent> {
    Ok(InterPlan::new(channels(comm)?, (), |inter, ()| {
        exchange::barrier(inter)
    }))
}

pub(crate) unsafe fn bcast_op(
    buffer: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let chs = channels(comm)?;
    let role = role_of(root, chs.remote_size())?;
    let dt = datatype::lookup_committed(datatype)?;
    let buf = if role == Role::Idle {
        // SAFETY: zero elements: an idle member's `buffer` is never read or
        // written.
        unsafe { user_buffer(buffer, 0, &dt, "buffer") }?
    } else {
        // SAFETY: MPI_Bcast's contract: at the root and in the other group
        // `buffer` holds `n` elements of `datatype` until the broadcast
        // completes.
        unsafe { user_buffer(buffer, n, &dt, "buffer") }?
    };
    Ok(InterPlan::new(chs, (buf, role), |inter, (buf, role)| {
        rooted::bcast(inter, buf, role)
    }))
}

/// A buffer argument with its count, datatype and name prefix.
type Raw = (*const c_void, i64, MPI_Datatype, &'static str);

/// The root's buffer (`q` blocks of `count`) and the other group's (one
/// block), by role; `None` where not significant.
///
/// # Safety
/// The buffer significant for `role` must hold its elements until the
/// collective ends.
unsafe fn rooted_buffers(
    at_root: Raw,
    at_leaf: Raw,
    role: Role,
    q: usize,
) -> MpiResult<(Option<UserBuffer>, Option<UserBuffer>)> {
    let side = |(buf, n, dt, prefix): Raw, copies: usize| -> MpiResult<Option<UserBuffer>> {
        let (count, buf_name) = (format!("{prefix}count"), format!("{prefix}buf"));
        let n = count::checked(n, &count)?;
        // SAFETY: only the side significant for `role` is built, and its
        // buffer holds `copies` blocks of `n` elements until the collective
        // ends (this function's contract).
        unsafe { typed_buffer(buf, n, &count, dt, copies, &buf_name) }.map(Some)
    };
    Ok(match role {
        Role::Idle => (None, None),
        Role::Root => (side(at_root, q)?, None),
        Role::Leaf(_) => (None, side(at_leaf, 1)?),
    })
}

pub(crate) unsafe fn gather_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let chs = channels(comm)?;
    let role = role_of(root, chs.remote_size())?;
    // SAFETY: MPI_Gather's contract: the root's `recvbuf` holds `recvcount`
    // elements per remote member, a leaf's `sendbuf` `sendcount` elements,
    // until the gather completes.
    let (at_root, at_leaf) = unsafe {
        rooted_buffers(
            (recvbuf, recvcount, recvtype, "recv"),
            (sendbuf, sendcount, sendtype, "send"),
            role,
            chs.remote_size(),
        )
    }?;
    Ok(InterPlan::new(
        chs,
        (at_leaf, at_root, role),
        |inter, (at_leaf, at_root, role)| rooted::gather(inter, at_leaf, at_root, role),
    ))
}

pub(crate) unsafe fn scatter_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let chs = channels(comm)?;
    let role = role_of(root, chs.remote_size())?;
    // SAFETY: MPI_Scatter's contract: the root's `sendbuf` holds `sendcount`
    // elements per remote member, a leaf's `recvbuf` `recvcount` elements,
    // until the scatter completes.
    let (at_root, at_leaf) = unsafe {
        rooted_buffers(
            (sendbuf, sendcount, sendtype, "send"),
            (recvbuf, recvcount, recvtype, "recv"),
            role,
            chs.remote_size(),
        )
    }?;
    Ok(InterPlan::new(
        chs,
        (at_root, at_leaf, role),
        |inter, (at_root, at_leaf, role)| rooted::scatter(inter, at_root, at_leaf, role),
    ))
}

pub(crate) unsafe fn gatherv_op(
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
    let chs = channels(comm)?;
    let q = chs.remote_size();
    let role = role_of(root, q)?;
    let mut recvs = Vec::new();
    let mut send = None;
    match role {
        Role::Idle => {}
        Role::Root => {
            // SAFETY: MPI_Gatherv's contract: the root's `recvcounts` and
            // `displs` hold one entry per remote member (`q`), read here, and
            // `recvbuf` the elements they place until the gather completes.
            recvs = unsafe { v_buffers(recvbuf, recvcounts, displs, recvtype, q, "recv") }?;
        }
        Role::Leaf(_) => {
            let n = count::checked(sendcount, "sendcount")?;
            // SAFETY: a leaf's `sendbuf` holds `sendcount` elements of
            // `sendtype` until the gather completes (MPI's contract).
            send = Some(unsafe { typed_buffer(sendbuf, n, "sendcount", sendtype, 1, "sendbuf") }?);
        }
    }
    Ok(InterPlan::new(
        chs,
        (send, recvs, role),
        |inter, (send, recvs, role)| rooted::gatherv(inter, send, recvs, role),
    ))
}

pub(crate) unsafe fn scatterv_op(
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
    let chs = channels(comm)?;
    let q = chs.remote_size();
    let role = role_of(root, q)?;
    let mut sends = Vec::new();
    let mut recv = None;
    match role {
        Role::Idle => {}
        Role::Root => {
            // SAFETY: MPI_Scatterv's contract: the root's `sendcounts` and
            // `displs` hold one entry per remote member (`q`), read here, and
            // `sendbuf` the elements they place until the scatter completes.
            sends = unsafe { v_buffers(sendbuf, sendcounts, displs, sendtype, q, "send") }?;
        }
        Role::Leaf(_) => {
            let n = count::checked(recvcount, "recvcount")?;
            // SAFETY: a leaf's `recvbuf` holds `recvcount` elements of
            // `recvtype` until the scatter completes (MPI's contract).
            recv = Some(unsafe { typed_buffer(recvbuf, n, "recvcount", recvtype, 1, "recvbuf") }?);
        }
    }
    Ok(InterPlan::new(
        chs,
        (sends, recv, role),
        |inter, (sends, recv, role)| rooted::scatterv(inter, sends, recv, role),
    ))
}

pub(crate) unsafe fn allgather_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let chs = channels(comm)?;
    let q = chs.remote_size();
    let sendcount = count::checked(sendcount, "sendcount")?;
    // SAFETY: MPI_Allgather's contract: `sendbuf` holds `sendcount` elements of
    // `sendtype` until the collective completes.
    let send = unsafe { typed_buffer(sendbuf, sendcount, "sendcount", sendtype, 1, "sendbuf") }?;
    // SAFETY: `recvbuf` holds `recvcount` elements of `recvtype` per remote
    // member (`q`) until the collective completes (MPI's contract).
    let recv = unsafe { typed_buffer(recvbuf, recvcount, "recvcount", recvtype, q, "recvbuf") }?;
    check_not_aliased(sendbuf, recvbuf, Some(&send))?;
    Ok(InterPlan::new(chs, (send, recv), |inter, (send, recv)| {
        exchange::allgather(inter, send, recv)
    }))
}

pub(crate) unsafe fn allgatherv_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: Counts,
    displs: Displs,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let chs = channels(comm)?;
    let q = chs.remote_size();
    let sendcount = count::checked(sendcount, "sendcount")?;
    // SAFETY: MPI_Allgatherv's contract: `sendbuf` holds `sendcount` elements
    // of `sendtype` until the collective completes.
    let send = unsafe { typed_buffer(sendbuf, sendcount, "sendcount", sendtype, 1, "sendbuf") }?;
    // SAFETY: `recvcounts` and `displs` hold one entry per remote member (`q`),
    // read here, and `recvbuf` the elements they place until the collective
    // completes (MPI's contract).
    let recvs = unsafe { v_buffers(recvbuf, recvcounts, displs, recvtype, q, "recv") }?;
    check_not_aliased(sendbuf, recvbuf, Some(&send))?;
    Ok(InterPlan::new(
        chs,
        (send, recvs),
        |inter, (send, recvs)| exchange::allgatherv(inter, send, recvs),
    ))
}

pub(crate) unsafe fn alltoall_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: usize,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let chs = channels(comm)?;
    let q = chs.remote_size();
    let sendcount = count::checked(sendcount, "sendcount")?;
    // SAFETY: MPI_Alltoall's contract: `sendbuf` holds `sendcount` elements of
    // `sendtype` per remote member (`q`) until the collective completes.
    let send = unsafe { typed_buffer(sendbuf, sendcount, "sendcount", sendtype, q, "sendbuf") }?;
    // SAFETY: `recvbuf` holds `recvcount` elements of `recvtype` per remote
    // member (`q`) until the collective completes (MPI's contract).
    let recv = unsafe { typed_buffer(recvbuf, recvcount, "recvcount", recvtype, q, "recvbuf") }?;
    check_not_aliased(sendbuf, recvbuf, Some(&send))?;
    Ok(InterPlan::new(chs, (send, recv), |inter, (send, recv)| {
        exchange::alltoall(inter, send, recv)
    }))
}

pub(crate) unsafe fn alltoallw_op(
    send: Side,
    recv: Side,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let chs = channels(comm)?;
    let q = chs.remote_size();
    // SAFETY: MPI_Alltoallv/w's contract: the send side's counts, displacements
    // (and types) hold one entry per remote member (`q`), read here, and its
    // buffer the elements they place until the collective completes.
    let sends = unsafe { send.buffers(q, "send") }?;
    // SAFETY: the same contract for the receive side: its arrays hold `q`
    // entries and its buffer the elements they place until the end.
    let recvs = unsafe { recv.buffers(q, "recv") }?;
    let any_sent = sends.iter().find(|b| !b.is_empty());
    check_not_aliased(send.buf, recv.buf, any_sent)?;
    Ok(InterPlan::new(
        chs,
        (sends, recvs),
        |inter, (sends, recvs)| exchange::alltoallw(inter, sends, recvs),
    ))
}

pub(crate) unsafe fn reduce_op(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let chs = channels(comm)?;
    let role = role_of(root, chs.remote_size())?;
    let dt = datatype::lookup_committed(datatype)?;
    // Only the root argument is significant at an MPI_PROC_NULL member
    // (mpi4py passes MPI_BYTE and MPI_SUM there): no check of the op.
    let red = match role {
        Role::Idle => None,
        _ => Some(Reduction::new(op, datatype, dt.clone())?),
    };
    let (contribution, result) = match role {
        Role::Idle => (None, None),
        Role::Root => (
            None,
            // SAFETY: the root's `recvbuf` holds `n` elements of `datatype`
            // until the reduction completes (MPI's contract).
            Some(unsafe { user_buffer(recvbuf, n, &dt, "recvbuf") }?),
        ),
        Role::Leaf(_) => (
            // SAFETY: a leaf's `sendbuf` holds `n` elements of `datatype` until
            // the reduction completes (MPI's contract).
            Some(unsafe { user_buffer(sendbuf, n, &dt, "sendbuf") }?),
            None,
        ),
    };
    Ok(InterPlan::new(
        chs,
        (contribution, result, red, role),
        |inter, (contribution, result, red, role)| {
            rooted::reduce(inter, contribution, result, red, role)
        },
    ))
}

pub(crate) unsafe fn allreduce_op(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: usize,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let chs = channels(comm)?;
    let dt = datatype::lookup_committed(datatype)?;
    let red = Reduction::new(op, datatype, dt.clone())?;
    // SAFETY: MPI_Allreduce's contract: `sendbuf` holds `n` elements of
    // `datatype` until the collective completes.
    let contribution = unsafe { user_buffer(sendbuf, n, &dt, "sendbuf") }?;
    // SAFETY: MPI_Allreduce's contract: `recvbuf` holds `n` elements of
    // `datatype` until the collective completes.
    let result = unsafe { user_buffer(recvbuf, n, &dt, "recvbuf") }?;
    check_not_aliased(sendbuf, recvbuf, Some(&contribution))?;
    Ok(InterPlan::new(
        chs,
        (contribution, result, red),
        |inter, (contribution, result, red)| exchange::allreduce(inter, contribution, result, red),
    ))
}

/// `MPI_Reduce_scatter(_block)`: the counts are per member of the local
/// group (which receives the other group's reduced vector); the vectors
/// hold their sum.
pub(crate) unsafe fn reduce_scatter_op(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: ScatterCounts,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<impl Persistent> {
    let chs = channels(comm)?;
    let p = chs.local_size();
    let (counts, dt) = match counts {
        ScatterCounts::Each(c) => {
            let dt = datatype::lookup_committed(datatype)?;
            // SAFETY: MPI_Reduce_scatter's `recvcounts` holds one entry per
            // member of the local group, `p`; copied out here.
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
    // SAFETY: MPI's contract: `sendbuf` holds the `total` elements the counts
    // add up to until the collective completes.
    let contribution = unsafe { user_buffer(sendbuf, total, &dt, "sendbuf") }?;
    // SAFETY: MPI's contract: `recvbuf` holds this member's
    // `counts[chs.rank()]` elements until the collective completes.
    let result = unsafe { user_buffer(recvbuf, counts[chs.rank()], &dt, "recvbuf") }?;
    check_not_aliased(sendbuf, recvbuf, Some(&contribution))?;
    Ok(InterPlan::new(
        chs,
        (contribution, result, counts, red),
        |inter, (contribution, result, counts, red)| {
            exchange::reduce_scatter(inter, contribution, result, counts, red)
        },
    ))
}
