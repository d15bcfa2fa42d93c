//! The arguments of collective calls: buffers (`MPI_IN_PLACE` where the
//! standard allows it, NULL only for empty data of a derived type), counts
//! significant only in some calls (checked where they are), roots, the
//! vectors of the `v` and `w` forms. Shared by the intracommunicator and
//! the intercommunicator builders.
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use crate::abi::args::array;
use crate::abi::count::{self, Counts, Displs};
use crate::core::collective::call::Call;
use crate::core::collective::channel::Channel;
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
/// not NULL unless it may be `MPI_BOTTOM` ([`Datatype::may_be_at_bottom`]).
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
    if buf.is_null() && !dt.may_be_at_bottom(count) {
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
    // SAFETY: `buf` holds `count` elements of `dt` until the collective
    // ends (this function's contract), which is what `UserBuffer::new` asks.
    Ok(unsafe { UserBuffer::new(buf, count, dt.clone()) })
}

/// A checked user buffer of `count * copies` elements of a committed
/// datatype, the way most collective arguments are read (`count_name`
/// names the count in an overflow).
///
/// # Safety
/// As for `user_buffer`.
pub(crate) unsafe fn typed_buffer(
    buf: *const c_void,
    count: usize,
    count_name: &str,
    datatype: MPI_Datatype,
    copies: usize,
    buf_name: &str,
) -> MpiResult<UserBuffer> {
    let dt = datatype::lookup_committed(datatype)?;
    let n = if copies == 1 {
        count
    } else {
        times(count, copies, count_name)?
    };
    // SAFETY: this function's contract is `user_buffer`'s, for the
    // `count * copies` elements in `n`.
    unsafe { user_buffer(buf, n, &dt, buf_name) }
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

/// The communicator's channel (`MPI_ERR_COMM` if the handle is bad).
pub(crate) fn channel(comm: MPI_Comm) -> MpiResult<Channel> {
    Call::channel(comm)
}

pub(crate) fn root_of(root: c_int, p: usize) -> MpiResult<usize> {
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
pub(crate) fn in_place_not_here(what: &str) -> MpiError {
    MpiError::new(MPI_ERR_BUFFER, format!("MPI_IN_PLACE is not valid {what}"))
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
        // SAFETY: the caller's contract makes the `n` elements of `dt` at
        // `base + d * unit` valid memory until the collective ends.
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
    // SAFETY: `counts` is NULL or holds `n` entries (this function's
    // contract); copied out here.
    let counts = unsafe { counts.read(n, &format!("{prefix}counts")) }?;
    // SAFETY: `displs` is NULL or holds `n` entries (this function's
    // contract); copied out here.
    let displs = unsafe { displs.read(n, "displs") }?;
    let name = format!("{prefix}buf");
    // SAFETY: the buffers are valid as `buffers_at` asks (this function's
    // contract).
    unsafe { buffers_at(buf, &counts, &displs, dt.extent(), &[dt], &name) }
}

/// The one-block side of a rooted call (a gather's send buffer, a
/// scatter's receive buffer): `None` for `MPI_IN_PLACE`, which only the
/// root may pass. `prefix` ("send" or "recv") names the arguments.
///
/// # Safety
/// As for `user_buffer`.
pub(crate) unsafe fn block_side(
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
    let n = count::checked(n, &count)?;
    // SAFETY: `buf` holds `n` elements of `datatype` until the collective ends
    // (this function's contract, `user_buffer`'s).
    unsafe { typed_buffer(buf, n, &count, datatype, 1, &name) }.map(Some)
}

/// The send side of an all-to-all style call (`copies` blocks of `n`):
/// `None` for `MPI_IN_PLACE`.
///
/// # Safety
/// Unless it is `MPI_IN_PLACE`, `sendbuf` must hold `copies * n` elements
/// of `sendtype` until the collective ends.
pub(crate) unsafe fn optional_send(
    sendbuf: *const c_void,
    n: i64,
    sendtype: MPI_Datatype,
    copies: usize,
) -> MpiResult<Option<UserBuffer>> {
    if in_place(sendbuf) {
        return Ok(None);
    }
    let n = count::checked(n, "sendcount")?;
    // SAFETY: not MPI_IN_PLACE (checked above), so `sendbuf` holds `copies * n`
    // elements until the collective ends (this function's contract).
    Ok(Some(unsafe {
        typed_buffer(sendbuf, n, "sendcount", sendtype, copies, "sendbuf")
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

/// `MPI_ERR_BUFFER` when the send buffer is this process's own block of
/// the receive buffer (`own`): the data is there already, which only
/// `MPI_IN_PLACE` may say (MPICH's check, for allgathers and at a gather's
/// root: a program passing `&buf[rank]` as the send buffer).
pub(crate) fn check_not_own_block(
    sendbuf: *const c_void,
    own: &UserBuffer,
    send: Option<&UserBuffer>,
) -> MpiResult {
    check_not_aliased(sendbuf, own.address() as *const c_void, send)
}

/// The datatypes of a `w` call: one per peer (`MPI_Alltoallw`), or the
/// one type of a `v` call.
#[derive(Clone, Copy)]
pub(crate) enum Types {
    One(MPI_Datatype),
    PerPeer(*const MPI_Datatype),
}

impl Types {
    /// The committed types, with the displacement unit: the extent for a
    /// `v` call, bytes for a `w` call.
    ///
    /// # Safety
    /// A `PerPeer` array must be NULL or hold `p` handles.
    unsafe fn read(self, p: usize, name: &str) -> MpiResult<(Vec<Arc<Datatype>>, isize)> {
        match self {
            Types::One(h) => {
                let dt = datatype::lookup_committed(h)?;
                let unit = dt.extent();
                Ok((vec![dt], unit))
            }
            Types::PerPeer(handles) => {
                // SAFETY: the array is NULL or holds `p` handles (this
                // function's contract); the slice is used only within this
                // call.
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
    pub(crate) counts: Counts,
    pub(crate) displs: Displs,
    pub(crate) types: Types,
}

impl Side {
    /// The side's buffers, one per peer.
    ///
    /// # Safety
    /// The counts, displacements and per-peer types must be NULL or hold `p`
    /// entries, and the buffers be valid as for `buffers_at`.
    pub(crate) unsafe fn buffers(&self, p: usize, prefix: &str) -> MpiResult<Vec<UserBuffer>> {
        // SAFETY: this function's contract: the types array is NULL or holds
        // `p` handles.
        let (types, unit) = unsafe { self.types.read(p, &format!("{prefix}types")) }?;
        // SAFETY: this function's contract: the counts array is NULL or holds
        // `p` entries.
        let counts = unsafe { self.counts.read(p, &format!("{prefix}counts")) }?;
        // SAFETY: this function's contract: the displacements array is NULL or
        // holds `p` entries.
        let displs = unsafe { self.displs.read(p, &format!("{prefix}displs")) }?;
        // SAFETY: this function's contract: the buffers are valid as
        // `buffers_at` asks; `types` has one entry or `p` (one per count).
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
