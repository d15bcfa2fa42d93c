//! Collective calls on intracommunicators through the C ABI, blocking and
//! nonblocking, with `int` and large (`_c`) counts: the arguments are
//! checked and turned into user buffers here, the algorithms are in
//! `core::collective`.
//!
//! Each collective has one builder that checks the arguments the calling
//! member's role makes significant (a non-root's receive arguments are not
//! even read) and returns the algorithm as a future; the blocking form runs
//! it at once, the `I` form makes it a request. So both forms check the
//! same things, and a call with a bad argument fails before it takes a
//! collective sequence number, consistently on every member.
//!
//! `MPI_IN_PLACE` (the address -1) is accepted where MPI 4.1 allows it and
//! is `MPI_ERR_BUFFER` elsewhere. The reductions are in
//! [`super::reduction`]; the blocking calls on an intercommunicator go to
//! [`super::collective_inter`].

use std::future::Future;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use crate::abi::datatype::array;
use crate::abi::p2p::CountArg;
use crate::core::collective::call::Call;
use crate::core::collective::channel::Channel;
use crate::core::collective::{alltoall, barrier, bcast, gather, scatter};
use crate::core::datatype::{self, Datatype};
use crate::core::error::{MpiError, MpiResult};
use crate::core::p2p::user_buffer::UserBuffer;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// Whether a buffer argument is `MPI_IN_PLACE`.
pub(crate) fn in_place(p: *const c_void) -> bool {
    p as usize == usize::MAX
}

/// Checks a buffer argument that must hold data: not `MPI_IN_PLACE`, and
/// not NULL when it holds data of a predefined type (a derived type may
/// address absolute memory from `MPI_BOTTOM`, which is NULL).
pub(crate) fn user_buffer_check(
    buf: *const c_void,
    count: usize,
    dt: &Datatype,
    name: &str,
) -> MpiResult {
    if in_place(buf) {
        return Err(MpiError::new(
            MPI_ERR_BUFFER,
            format!("MPI_IN_PLACE is not valid as {name} here"),
        ));
    }
    if buf.is_null() && count > 0 && dt.size() > 0 && dt.is_predefined() {
        return Err(MpiError::new(
            MPI_ERR_BUFFER,
            format!("{name} is NULL but holds {count} elements"),
        ));
    }
    Ok(())
}

/// A checked user buffer of `count` elements.
///
/// # Safety
/// `buf` must hold `count` elements of `dt` until the collective ends.
pub(crate) unsafe fn user_buffer(
    buf: *const c_void,
    count: usize,
    dt: &Arc<Datatype>,
    name: &str,
) -> MpiResult<UserBuffer> {
    user_buffer_check(buf, count, dt, name)?;
    // SAFETY: the caller's contract is MPI's for collective buffers.
    Ok(unsafe { UserBuffer::new(buf, count, dt.clone()) })
}

/// A checked user buffer of `count * copies` elements of a committed
/// datatype: `typed`, then `times`, then `user_buffer`, the way most
/// collective arguments are read.
///
/// # Safety
/// As for `user_buffer`.
pub(crate) unsafe fn typed_buffer(
    buf: *const c_void,
    count: i64,
    count_name: &str,
    datatype: MPI_Datatype,
    copies: usize,
    buf_name: &str,
) -> MpiResult<UserBuffer> {
    let (n, dt) = typed(count, count_name, datatype)?;
    let n = if copies == 1 {
        n
    } else {
        times(n, copies, count_name)?
    };
    unsafe { user_buffer(buf, n, &dt, buf_name) }
}

/// A count argument (an `int` or an `MPI_Count`, widened): non-negative.
pub(crate) fn count_of(n: i64, name: &str) -> MpiResult<usize> {
    usize::try_from(n)
        .map_err(|_| MpiError::new(MPI_ERR_COUNT, format!("{name} is negative ({n})")))
}

/// `count * times` elements, or `MPI_ERR_COUNT` when that overflows.
pub(crate) fn times(count: usize, times: usize, name: &str) -> MpiResult<usize> {
    count.checked_mul(times).ok_or_else(|| {
        MpiError::new(
            MPI_ERR_COUNT,
            format!("{name} times the communicator size overflows"),
        )
    })
}

/// A count and a committed datatype.
pub(crate) fn typed(
    n: i64,
    count_name: &str,
    datatype: MPI_Datatype,
) -> MpiResult<(usize, Arc<Datatype>)> {
    let n = count_of(n, count_name)?;
    Ok((n, datatype::lookup_committed(datatype)?))
}

/// The communicator's channel (`MPI_ERR_COMM` if the handle is bad).
pub(crate) fn channel(comm: MPI_Comm) -> MpiResult<Channel> {
    Call::channel(comm)
}

fn root_of(root: c_int, p: usize) -> MpiResult<usize> {
    usize::try_from(root)
        .ok()
        .filter(|&r| r < p)
        .ok_or_else(|| {
            MpiError::new(
                MPI_ERR_ROOT,
                format!("root {root} is not a rank of this communicator (size {p})"),
            )
        })
}

/// The error for `MPI_IN_PLACE` where the standard does not allow it.
fn in_place_not_here(what: &str) -> MpiError {
    MpiError::new(MPI_ERR_BUFFER, format!("MPI_IN_PLACE is not valid {what}"))
}

/// An array of counts, `int` or `MPI_Count`: an entry point takes either
/// pointer (`impl Into<Counts>`), so one function serves both forms.
#[derive(Clone, Copy)]
pub enum Counts {
    Int(*const c_int),
    Large(*const MPI_Count),
}

impl Counts {
    /// # Safety
    /// The array must be NULL or hold `n` entries.
    pub(crate) unsafe fn read(self, n: usize, name: &str) -> MpiResult<Vec<usize>> {
        let raw: Vec<i64> = match self {
            Counts::Int(p) => unsafe { array(p, n, name) }?
                .iter()
                .map(|&c| c as i64)
                .collect(),
            Counts::Large(p) => unsafe { array(p, n, name) }?.to_vec(),
        };
        raw.iter()
            .enumerate()
            .map(|(i, &c)| count_of(c, &format!("{name}[{i}]")))
            .collect()
    }
}

impl From<*const c_int> for Counts {
    fn from(p: *const c_int) -> Counts {
        Counts::Int(p)
    }
}

impl From<*const MPI_Count> for Counts {
    fn from(p: *const MPI_Count) -> Counts {
        Counts::Large(p)
    }
}

/// An array of displacements, `int` or `MPI_Aint` (as [`Counts`]).
#[derive(Clone, Copy)]
pub enum Displs {
    Int(*const c_int),
    Aint(*const MPI_Aint),
}

impl Displs {
    /// # Safety
    /// The array must be NULL or hold `n` entries.
    pub(crate) unsafe fn read(self, n: usize, name: &str) -> MpiResult<Vec<isize>> {
        Ok(match self {
            Displs::Int(p) => unsafe { array(p, n, name) }?
                .iter()
                .map(|&d| d as isize)
                .collect(),
            Displs::Aint(p) => unsafe { array(p, n, name) }?
                .iter()
                .map(|&d| d as isize)
                .collect(),
        })
    }
}

impl From<*const c_int> for Displs {
    fn from(p: *const c_int) -> Displs {
        Displs::Int(p)
    }
}

impl From<*const MPI_Aint> for Displs {
    fn from(p: *const MPI_Aint) -> Displs {
        Displs::Aint(p)
    }
}

/// Buffers at `base + displs[i] * unit` with `counts[i]` elements each.
///
/// # Safety
/// Each must be valid memory for its elements (MPI's contract).
pub(crate) unsafe fn buffers_at(
    base: *const c_void,
    counts: &[usize],
    displs: &[isize],
    unit: isize,
    types: &[Arc<Datatype>],
    name: &str,
) -> MpiResult<Vec<UserBuffer>> {
    let mut out = Vec::with_capacity(counts.len());
    for (i, (&n, &d)) in counts.iter().zip(displs).enumerate() {
        let dt = &types[i.min(types.len() - 1)];
        if in_place(base) {
            return Err(in_place_not_here(&format!("as {name}")));
        }
        let at = base.wrapping_byte_offset(d.wrapping_mul(unit));
        user_buffer_check(if n == 0 { base } else { at }, n, dt, name)?;
        // SAFETY: the caller's contract.
        out.push(unsafe { UserBuffer::new(at, n, dt.clone()) });
    }
    Ok(out)
}

/// The vector side of a `v` call (the root's receive buffers of a
/// gatherv, its send buffers of a scatterv, an allgatherv's receive
/// buffers): `counts[i]` elements of `datatype` at `displs[i]` extents
/// from `buf`, for each of `n` peers. `prefix` ("send" or "recv") names
/// the arguments in errors.
///
/// # Safety
/// The arrays must be NULL or hold `n` entries; the buffers as for
/// `buffers_at`.
pub(crate) unsafe fn v_buffers(
    buf: *const c_void,
    counts: Counts,
    displs: Displs,
    datatype: MPI_Datatype,
    n: usize,
    prefix: &str,
) -> MpiResult<Vec<UserBuffer>> {
    let dt = datatype::lookup_committed(datatype)?;
    let counts = unsafe { counts.read(n, &format!("{prefix}counts")) }?;
    let displs = unsafe { displs.read(n, "displs") }?;
    let name = format!("{prefix}buf");
    unsafe { buffers_at(buf, &counts, &displs, dt.extent(), &[dt], &name) }
}

/// The blocking and the nonblocking (`request`) form of a collective from
/// its builder expression.
macro_rules! blocking_and_nonblocking {
    ($blocking:ident, $nonblocking:ident ($($arg:ident: $ty:ty),*) => $build:expr) => {
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $blocking($($arg: $ty),*) -> MpiResult {
            crate::core::collective::executor::block(unsafe { $build }?)
        }

        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $nonblocking($($arg: $ty,)* request: *mut MPI_Request) -> MpiResult {
            let request = unsafe { crate::abi::args::out(request, "request") }?;
            *request = crate::core::collective::executor::start(unsafe { $build }?)?;
            Ok(())
        }
    };
    // A collective intercommunicators have too: the blocking form of an
    // intercommunicator's call goes to the builder of the same name in
    // `collective_inter` (the nonblocking forms are intracommunicator-only).
    ($blocking:ident, $nonblocking:ident ($($arg:ident: $ty:ty),*)
        => inter($comm:ident) $build:ident($($barg:expr),* $(,)?)) => {
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $blocking($($arg: $ty),*) -> MpiResult {
            if crate::abi::collective_inter::is_inter($comm)? {
                return crate::core::collective::executor::block(
                    unsafe { crate::abi::collective_inter::$build($($barg),*) }?,
                );
            }
            crate::core::collective::executor::block(unsafe { $build($($barg),*) }?)
        }

        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $nonblocking($($arg: $ty,)* request: *mut MPI_Request) -> MpiResult {
            let request = unsafe { crate::abi::args::out(request, "request") }?;
            *request = crate::core::collective::executor::start(unsafe { $build($($barg),*) }?)?;
            Ok(())
        }
    };
}
pub(crate) use blocking_and_nonblocking;

// ---- Barrier ----

/// `MPI_Ibarrier` (`MPI_Barrier` is `comm::barrier`).
pub unsafe fn ibarrier(comm: MPI_Comm, request: *mut MPI_Request) -> MpiResult {
    let request = unsafe { crate::abi::args::out(request, "request") }?;
    let ch = channel(comm)?;
    *request = crate::core::collective::executor::start(barrier::barrier(Call::start(ch)))?;
    Ok(())
}

// ---- Bcast ----

unsafe fn bcast_op(
    buffer: *mut c_void,
    n: i64,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<impl Future<Output = MpiResult> + Send + 'static> {
    let ch = channel(comm)?;
    let (n, dt) = typed(n, "count", datatype)?;
    let root = root_of(root, ch.size())?;
    let buf = unsafe { user_buffer(buffer, n, &dt, "buffer") }?;
    Ok(bcast::bcast(Call::start(ch), buf, root))
}

blocking_and_nonblocking!(
    bcast, ibcast(
        buffer: *mut c_void, count: impl CountArg, datatype: MPI_Datatype, root: c_int,
        comm: MPI_Comm
    ) => inter(comm) bcast_op(
        buffer, count.into(), datatype, root, comm
    )
);

// ---- Gather, Gatherv ----

/// The one-block side of a rooted call (a gather's send buffer, a
/// scatter's receive buffer): `None` for `MPI_IN_PLACE`, which only the
/// root may pass. `prefix` ("send" or "recv") names the arguments.
///
/// # Safety
/// As for `user_buffer`.
unsafe fn block_side(
    buf: *const c_void,
    n: i64,
    datatype: MPI_Datatype,
    at_root: bool,
    prefix: &str,
) -> MpiResult<Option<UserBuffer>> {
    if in_place(buf) {
        if !at_root {
            return Err(in_place_not_here(&format!(
                "as {prefix}buf except at the root"
            )));
        }
        return Ok(None);
    }
    let (count, name) = (format!("{prefix}count"), format!("{prefix}buf"));
    unsafe { typed_buffer(buf, n, &count, datatype, 1, &name) }.map(Some)
}

#[allow(clippy::too_many_arguments)]
unsafe fn gather_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<impl Future<Output = MpiResult> + Send + 'static> {
    let ch = channel(comm)?;
    let (p, me) = (ch.size(), ch.rank);
    let root = root_of(root, p)?;
    let recv = if me == root {
        Some(unsafe { typed_buffer(recvbuf, recvcount, "recvcount", recvtype, p, "recvbuf") }?)
    } else {
        None
    };
    let send = unsafe { block_side(sendbuf, sendcount, sendtype, me == root, "send") }?;
    Ok(gather::gather(Call::start(ch), send, recv, root))
}

blocking_and_nonblocking!(
    gather, igather(
        sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: impl CountArg, recvtype: MPI_Datatype, root: c_int,
        comm: MPI_Comm
    ) => inter(comm) gather_op(
        sendbuf, sendcount.into(), sendtype, recvbuf, recvcount.into(), recvtype, root, comm
    )
);

#[allow(clippy::too_many_arguments)]
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
) -> MpiResult<impl Future<Output = MpiResult> + Send + 'static> {
    let ch = channel(comm)?;
    let (p, me) = (ch.size(), ch.rank);
    let root = root_of(root, p)?;
    let recvs = if me == root {
        unsafe { v_buffers(recvbuf, recvcounts, displs, recvtype, p, "recv") }?
    } else {
        Vec::new()
    };
    let send = unsafe { block_side(sendbuf, sendcount, sendtype, me == root, "send") }?;
    Ok(gather::gatherv(Call::start(ch), send, recvs, root))
}

blocking_and_nonblocking!(
    gatherv, igatherv(
        sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcounts: impl Into<Counts>, displs: impl Into<Displs>,
        recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm
    ) => inter(comm) gatherv_op(
        sendbuf, sendcount.into(), sendtype, recvbuf, recvcounts.into(), displs.into(), recvtype,
        root, comm
    )
);

// ---- Scatter, Scatterv ----

#[allow(clippy::too_many_arguments)]
unsafe fn scatter_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<impl Future<Output = MpiResult> + Send + 'static> {
    let ch = channel(comm)?;
    let (p, me) = (ch.size(), ch.rank);
    let root = root_of(root, p)?;
    let send = if me == root {
        Some(unsafe { typed_buffer(sendbuf, sendcount, "sendcount", sendtype, p, "sendbuf") }?)
    } else {
        None
    };
    let recv = unsafe { block_side(recvbuf, recvcount, recvtype, me == root, "recv") }?;
    Ok(scatter::scatter(Call::start(ch), send, recv, root))
}

blocking_and_nonblocking!(
    scatter, iscatter(
        sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: impl CountArg, recvtype: MPI_Datatype, root: c_int,
        comm: MPI_Comm
    ) => inter(comm) scatter_op(
        sendbuf, sendcount.into(), sendtype, recvbuf, recvcount.into(), recvtype, root, comm
    )
);

#[allow(clippy::too_many_arguments)]
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
) -> MpiResult<impl Future<Output = MpiResult> + Send + 'static> {
    let ch = channel(comm)?;
    let (p, me) = (ch.size(), ch.rank);
    let root = root_of(root, p)?;
    let sends = if me == root {
        unsafe { v_buffers(sendbuf, sendcounts, displs, sendtype, p, "send") }?
    } else {
        Vec::new()
    };
    let recv = unsafe { block_side(recvbuf, recvcount, recvtype, me == root, "recv") }?;
    Ok(scatter::scatterv(Call::start(ch), sends, recv, root))
}

blocking_and_nonblocking!(
    scatterv, iscatterv(
        sendbuf: *const c_void, sendcounts: impl Into<Counts>, displs: impl Into<Displs>,
        sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: impl CountArg,
        recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm
    ) => inter(comm) scatterv_op(
        sendbuf, sendcounts.into(), displs.into(), sendtype, recvbuf, recvcount.into(), recvtype,
        root, comm
    )
);

// ---- Allgather, Allgatherv ----

/// The send side of an all-to-all style call: `None` for `MPI_IN_PLACE`.
unsafe fn optional_send(
    sendbuf: *const c_void,
    n: i64,
    sendtype: MPI_Datatype,
    copies: usize,
) -> MpiResult<Option<UserBuffer>> {
    if in_place(sendbuf) {
        return Ok(None);
    }
    let (n, dt) = typed(n, "sendcount", sendtype)?;
    Ok(Some(unsafe {
        user_buffer(sendbuf, times(n, copies, "sendcount")?, &dt, "sendbuf")
    }?))
}

/// `MPI_ERR_BUFFER` when the send and receive buffers are the same
/// memory (which only `MPI_IN_PLACE` may express).
pub(crate) fn check_not_aliased(
    sendbuf: *const c_void,
    recvbuf: *const c_void,
    send: Option<&UserBuffer>,
) -> MpiResult {
    if std::ptr::eq(sendbuf, recvbuf) && !sendbuf.is_null() && send.is_some_and(|s| !s.is_empty()) {
        return Err(MpiError::new(
            MPI_ERR_BUFFER,
            "sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)",
        ));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
unsafe fn allgather_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<impl Future<Output = MpiResult> + Send + 'static> {
    let ch = channel(comm)?;
    let send = unsafe { optional_send(sendbuf, sendcount, sendtype, 1) }?;
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
    Ok(gather::allgather(Call::start(ch), send, recv))
}

blocking_and_nonblocking!(
    allgather, iallgather(
        sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: impl CountArg, recvtype: MPI_Datatype, comm: MPI_Comm
    ) => inter(comm) allgather_op(
        sendbuf, sendcount.into(), sendtype, recvbuf, recvcount.into(), recvtype, comm
    )
);

#[allow(clippy::too_many_arguments)]
unsafe fn allgatherv_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: Counts,
    displs: Displs,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<impl Future<Output = MpiResult> + Send + 'static> {
    let ch = channel(comm)?;
    let p = ch.size();
    let send = unsafe { optional_send(sendbuf, sendcount, sendtype, 1) }?;
    let recvs = unsafe { v_buffers(recvbuf, recvcounts, displs, recvtype, p, "recv") }?;
    check_not_aliased(sendbuf, recvbuf, send.as_ref())?;
    Ok(gather::allgatherv(Call::start(ch), send, recvs))
}

blocking_and_nonblocking!(
    allgatherv, iallgatherv(
        sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcounts: impl Into<Counts>, displs: impl Into<Displs>,
        recvtype: MPI_Datatype, comm: MPI_Comm
    ) => inter(comm) allgatherv_op(
        sendbuf, sendcount.into(), sendtype, recvbuf, recvcounts.into(), displs.into(), recvtype,
        comm
    )
);

// ---- Alltoall, Alltoallv, Alltoallw ----

#[allow(clippy::too_many_arguments)]
unsafe fn alltoall_op(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<impl Future<Output = MpiResult> + Send + 'static> {
    let ch = channel(comm)?;
    let p = ch.size();
    let send = unsafe { optional_send(sendbuf, sendcount, sendtype, p) }?;
    let recv = unsafe { typed_buffer(recvbuf, recvcount, "recvcount", recvtype, p, "recvbuf") }?;
    check_not_aliased(sendbuf, recvbuf, send.as_ref())?;
    Ok(alltoall::alltoall(Call::start(ch), send, recv))
}

blocking_and_nonblocking!(
    alltoall, ialltoall(
        sendbuf: *const c_void, sendcount: impl CountArg, sendtype: MPI_Datatype,
        recvbuf: *mut c_void, recvcount: impl CountArg, recvtype: MPI_Datatype, comm: MPI_Comm
    ) => inter(comm) alltoall_op(
        sendbuf, sendcount.into(), sendtype, recvbuf, recvcount.into(), recvtype, comm
    )
);

/// The datatypes of a `w` call: one per peer (`MPI_Alltoallw`), or the
/// one type of a `v` call.
#[derive(Clone, Copy)]
enum Types {
    One(MPI_Datatype),
    PerPeer(*const MPI_Datatype),
}

impl Types {
    /// The committed types, with the displacement unit: the extent for a
    /// `v` call, bytes for a `w` call.
    unsafe fn read(self, p: usize, name: &str) -> MpiResult<(Vec<Arc<Datatype>>, isize)> {
        match self {
            Types::One(h) => {
                let dt = datatype::lookup_committed(h)?;
                let unit = dt.extent();
                Ok((vec![dt], unit))
            }
            Types::PerPeer(handles) => {
                let handles = unsafe { array(handles, p, name) }?;
                Ok((
                    handles
                        .iter()
                        .map(|&h| datatype::lookup_committed(h))
                        .collect::<MpiResult<_>>()?,
                    1,
                ))
            }
        }
    }
}

/// One side of an alltoallv/w call.
pub(crate) struct Side {
    pub(crate) buf: *const c_void,
    counts: Counts,
    displs: Displs,
    types: Types,
}

impl Side {
    pub(crate) unsafe fn buffers(&self, p: usize, prefix: &str) -> MpiResult<Vec<UserBuffer>> {
        let (types, unit) = unsafe { self.types.read(p, &format!("{prefix}types")) }?;
        let counts = unsafe { self.counts.read(p, &format!("{prefix}counts")) }?;
        let displs = unsafe { self.displs.read(p, &format!("{prefix}displs")) }?;
        unsafe {
            buffers_at(
                self.buf,
                &counts,
                &displs,
                unit,
                &types,
                &format!("{prefix}buf"),
            )
        }
    }
}

unsafe fn alltoallw_op(
    send: Side,
    recv: Side,
    comm: MPI_Comm,
) -> MpiResult<impl Future<Output = MpiResult> + Send + 'static> {
    let ch = channel(comm)?;
    let p = ch.size();
    let sends = if in_place(send.buf) {
        None
    } else {
        Some(unsafe { send.buffers(p, "send") }?)
    };
    if in_place(recv.buf) {
        return Err(in_place_not_here("as recvbuf"));
    }
    let recvs = unsafe { recv.buffers(p, "recv") }?;
    let any_sent = sends
        .as_ref()
        .and_then(|s| s.iter().find(|b| !b.is_empty()));
    check_not_aliased(send.buf, recv.buf, any_sent)?;
    Ok(alltoall::alltoallw(Call::start(ch), sends, recvs))
}

blocking_and_nonblocking!(
    alltoallv, ialltoallv(
        sendbuf: *const c_void, sendcounts: impl Into<Counts>, sdispls: impl Into<Displs>,
        sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: impl Into<Counts>,
        rdispls: impl Into<Displs>, recvtype: MPI_Datatype, comm: MPI_Comm
    ) => inter(comm) alltoallw_op(
        Side {
            buf: sendbuf,
            counts: sendcounts.into(),
            displs: sdispls.into(),
            types: Types::One(sendtype),
        },
        Side {
            buf: recvbuf,
            counts: recvcounts.into(),
            displs: rdispls.into(),
            types: Types::One(recvtype),
        },
        comm
    )
);
blocking_and_nonblocking!(
    alltoallw, ialltoallw(
        sendbuf: *const c_void, sendcounts: impl Into<Counts>, sdispls: impl Into<Displs>,
        sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: impl Into<Counts>,
        rdispls: impl Into<Displs>, recvtypes: *const MPI_Datatype, comm: MPI_Comm
    ) => inter(comm) alltoallw_op(
        Side {
            buf: sendbuf,
            counts: sendcounts.into(),
            displs: sdispls.into(),
            types: Types::PerPeer(sendtypes),
        },
        Side {
            buf: recvbuf,
            counts: recvcounts.into(),
            displs: rdispls.into(),
            types: Types::PerPeer(recvtypes),
        },
        comm
    )
);
