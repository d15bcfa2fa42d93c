//! `MPI_Pack` / `MPI_Unpack` / `MPI_Pack_size` and the external32 forms,
//! through the C ABI. The packed form is the datatype's stream (its data in
//! typemap order, nothing added), so `MPI_Pack_size` is exact. A buffer too
//! small for the data is `MPI_ERR_TRUNCATE`.
#![allow(clippy::missing_safety_doc)] // each function's contract is its MPI function's.

use std::os::raw::{c_char, c_void};

use crate::abi::args::in_str;
use crate::abi::count::CountOut;
use crate::core::datatype;
use crate::core::error::{MpiError, MpiResult};
use crate::core::runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

fn check_comm(comm: MPI_Comm) -> MpiResult {
    runtime::lock().comms().get(comm).map(|_| ())
}

/// A buffer size argument: non-negative.
fn buffer_size(n: i64, name: &str) -> MpiResult<usize> {
    usize::try_from(n).map_err(|_| MpiError::new(MPI_ERR_ARG, format!("{name} is negative ({n})")))
}

/// Checks `*position` against a buffer of `size` bytes that must take (or
/// hold) `need` more bytes; returns the position.
fn room(position: i64, size: usize, need: usize, what: &str) -> MpiResult<usize> {
    let at = usize::try_from(position).ok().filter(|&p| p <= size);
    let at = at.ok_or_else(|| {
        MpiError::new(
            MPI_ERR_ARG,
            format!("position {position} is outside the {size}-byte buffer"),
        )
    })?;
    if size - at < need {
        return Err(MpiError::new(
            MPI_ERR_TRUNCATE,
            format!(
                "{what} needs {need} bytes, the buffer has {} left after position {at}",
                size - at
            ),
        ));
    }
    Ok(at)
}

/// Packs `count` elements and returns the new position.
///
/// The checks `MPI_Pack` and `MPI_Unpack` share: the communicator, the
/// committed type, and room in the packed buffer of `size` bytes at
/// `buffer` (named `name`; NULL only when nothing is packed). Returns the
/// type, where the data starts in the packed buffer and its length.
fn packed_span(
    comm: MPI_Comm,
    n: usize,
    dt: MPI_Datatype,
    position: i64,
    size: usize,
    buffer: *const c_void,
    name: &str,
) -> MpiResult<(std::sync::Arc<datatype::Datatype>, usize, usize)> {
    check_comm(comm)?;
    let t = datatype::lookup_committed(dt)?;
    let need = n
        .checked_mul(t.size())
        .ok_or_else(|| MpiError::new(MPI_ERR_COUNT, "the packed size overflows"))?;
    let at = room(position, size, need, &format!("the data in {name}"))?;
    if need > 0 && buffer.is_null() {
        return Err(MpiError::new(MPI_ERR_BUFFER, format!("{name} is NULL")));
    }
    Ok((t, at, need))
}

/// # Safety
/// MPI's contract for `MPI_Pack`'s buffers.
unsafe fn pack_any(
    inbuf: *const c_void,
    n: usize,
    dt: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: usize,
    position: i64,
    comm: MPI_Comm,
) -> MpiResult<usize> {
    let (t, at, need) = packed_span(
        comm,
        n,
        dt,
        position,
        outsize,
        outbuf.cast_const(),
        "outbuf",
    )?;
    if need > 0 {
        // SAFETY: `outbuf` has `outsize >= at + need` bytes (MPI's contract,
        // checked against `outsize` above); `inbuf` holds the elements.
        unsafe {
            let dst = std::slice::from_raw_parts_mut(outbuf.cast::<u8>().add(at), need);
            t.pack_range(inbuf.cast(), n, 0, dst);
        }
    }
    Ok(at + need)
}

/// Unpacks `count` elements and returns the new position.
///
/// # Safety
/// MPI's contract for `MPI_Unpack`'s buffers.
unsafe fn unpack_any(
    inbuf: *const c_void,
    insize: usize,
    position: i64,
    outbuf: *mut c_void,
    n: usize,
    dt: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<usize> {
    let (t, at, need) = packed_span(comm, n, dt, position, insize, inbuf, "inbuf")?;
    if need > 0 {
        // SAFETY: `inbuf` has `insize >= at + need` bytes; `outbuf` has room
        // for the elements (MPI's contract).
        unsafe {
            let src = std::slice::from_raw_parts(inbuf.cast::<u8>().add(at), need);
            t.unpack_range(outbuf.cast(), n, 0, src);
        }
    }
    Ok(at + need)
}

/// `MPI_Pack` and `MPI_Pack_c`.
pub unsafe fn pack<T: CountOut>(
    inbuf: *const c_void,
    incount: usize,
    dt: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: i64,
    position: &mut T,
    comm: MPI_Comm,
) -> MpiResult {
    let size = buffer_size(outsize, "outsize")?;
    // SAFETY: MPI_Pack's contract, which is `pack_any`'s: `inbuf` holds
    // `incount` elements of `dt` and `outbuf` has `outsize` bytes, during this
    // call.
    let at = unsafe { pack_any(inbuf, incount, dt, outbuf, size, (*position).into(), comm) }?;
    *position = new_position(at)?;
    Ok(())
}

/// `MPI_Unpack` and `MPI_Unpack_c`.
pub unsafe fn unpack<T: CountOut>(
    inbuf: *const c_void,
    insize: i64,
    position: &mut T,
    outbuf: *mut c_void,
    outcount: usize,
    dt: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult {
    let size = buffer_size(insize, "insize")?;
    // SAFETY: MPI_Unpack's contract, which is `unpack_any`'s: `inbuf` has
    // `insize` bytes and `outbuf` room for `outcount` elements of `dt`, during
    // this call.
    let at = unsafe { unpack_any(inbuf, size, (*position).into(), outbuf, outcount, dt, comm) }?;
    *position = new_position(at)?;
    Ok(())
}

/// The position after packing or unpacking: at most the buffer's size,
/// itself given as a `T`, so it always fits.
fn new_position<T: CountOut>(at: usize) -> MpiResult<T> {
    T::fit(at).ok_or_else(|| {
        MpiError::new(
            MPI_ERR_ARG,
            format!("position {at} does not fit in the position argument"),
        )
    })
}

fn packed_size(n: usize, dt: MPI_Datatype, comm: MPI_Comm) -> MpiResult<usize> {
    check_comm(comm)?;
    let t = datatype::lookup_committed(dt)?;
    n.checked_mul(t.size())
        .ok_or_else(|| MpiError::new(MPI_ERR_COUNT, "the packed size overflows"))
}

/// `MPI_Pack_size` and `MPI_Pack_size_c`.
pub unsafe fn pack_size<T: CountOut>(
    incount: usize,
    dt: MPI_Datatype,
    comm: MPI_Comm,
    size: &mut T,
) -> MpiResult {
    let bytes = packed_size(incount, dt, comm)?;
    *size = T::fit(bytes).ok_or_else(|| {
        MpiError::new(
            MPI_ERR_VALUE_TOO_LARGE,
            format!("the packed size {bytes} does not fit in an int (use MPI_Pack_size_c)"),
        )
    })?;
    Ok(())
}

/// Only "external32" is a defined data representation.
///
/// # Safety
/// `datarep` must be NULL or a NUL-terminated string.
unsafe fn check_datarep(datarep: *const c_char) -> MpiResult {
    // SAFETY: `datarep` is NULL (rejected by `in_str`) or NUL-terminated (this
    // function's contract), read only here.
    let rep = unsafe { in_str(datarep, "datarep") }?;
    if rep != "external32" {
        return Err(MpiError::new(
            MPI_ERR_UNSUPPORTED_DATAREP,
            format!("data representation '{rep}' (only \"external32\" is supported)"),
        ));
    }
    Ok(())
}

/// The external32 size of `n` elements of `dt`.
///
/// # Safety
/// As for `check_datarep`.
unsafe fn external_size(datarep: *const c_char, n: usize, dt: MPI_Datatype) -> MpiResult<usize> {
    // SAFETY: `datarep` is NULL or NUL-terminated (this function's contract,
    // `check_datarep`'s).
    unsafe { check_datarep(datarep) }?;
    datatype::lookup_committed(dt)?.external32_size(n)
}

/// `MPI_Pack_external_size` and `_c` (`MPI_Aint` is `MPI_Count`'s type).
pub unsafe fn pack_external_size(
    datarep: *const c_char,
    incount: usize,
    dt: MPI_Datatype,
    size: &mut MPI_Count,
) -> MpiResult {
    // SAFETY: MPI_Pack_external_size's `datarep` is NULL (rejected) or a
    // NUL-terminated string (MPI's contract).
    *size = unsafe { external_size(datarep, incount, dt) }? as MPI_Count;
    Ok(())
}

/// # Safety
/// MPI's contract for `MPI_Pack_external`'s buffers.
unsafe fn pack_external_any(
    datarep: *const c_char,
    inbuf: *const c_void,
    n: usize,
    dt: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: usize,
    position: i64,
) -> MpiResult<usize> {
    // SAFETY: `datarep` is NULL (rejected) or NUL-terminated:
    // MPI_Pack_external's contract, this function's.
    let need = unsafe { external_size(datarep, n, dt) }?;
    let t = datatype::lookup_committed(dt)?;
    let at = room(position, outsize, need, "the packed data")?;
    if need > 0 && outbuf.is_null() {
        return Err(MpiError::new(MPI_ERR_BUFFER, "outbuf is NULL"));
    }
    if need > 0 {
        // SAFETY: `outbuf` is not NULL (checked above) and has `outsize`
        // bytes, of which `room` left `at + need <= outsize`; `inbuf` holds
        // the `n` elements (MPI's contract) and does not overlap `outbuf`.
        unsafe {
            let dst = std::slice::from_raw_parts_mut(outbuf.cast::<u8>().add(at), need);
            t.pack_external32(inbuf.cast(), n, dst);
        }
    }
    Ok(at + need)
}

/// # Safety
/// MPI's contract for `MPI_Unpack_external`'s buffers.
unsafe fn unpack_external_any(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: usize,
    position: i64,
    outbuf: *mut c_void,
    n: usize,
    dt: MPI_Datatype,
) -> MpiResult<usize> {
    // SAFETY: `datarep` is NULL (rejected) or NUL-terminated:
    // MPI_Unpack_external's contract, this function's.
    let need = unsafe { external_size(datarep, n, dt) }?;
    let t = datatype::lookup_committed(dt)?;
    let at = room(position, insize, need, "unpacking")?;
    if need > 0 && inbuf.is_null() {
        return Err(MpiError::new(MPI_ERR_BUFFER, "inbuf is NULL"));
    }
    if need > 0 {
        // SAFETY: `inbuf` is not NULL (checked above) and has `insize`
        // bytes, of which `room` left `at + need <= insize`; `outbuf` has
        // room for the `n` elements (MPI's contract) and does not overlap.
        unsafe {
            let src = std::slice::from_raw_parts(inbuf.cast::<u8>().add(at), need);
            t.unpack_external32(outbuf.cast(), n, src);
        }
    }
    Ok(at + need)
}

/// `MPI_Pack_external` and `_c`: only the count's width differs
/// (`MPI_Aint` is `MPI_Count`'s type).
pub unsafe fn pack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    n: usize,
    dt: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: MPI_Count,
    position: &mut MPI_Count,
) -> MpiResult {
    let size = buffer_size(outsize, "outsize")?;
    // SAFETY: MPI_Pack_external's contract, `pack_external_any`'s: `inbuf`
    // holds `n` elements of `dt`, `outbuf` has `outsize` bytes, `datarep` is
    // a string.
    *position =
        unsafe { pack_external_any(datarep, inbuf, n, dt, outbuf, size, *position) }? as MPI_Count;
    Ok(())
}

/// `MPI_Unpack_external` and `_c`.
pub unsafe fn unpack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: MPI_Count,
    position: &mut MPI_Count,
    outbuf: *mut c_void,
    n: usize,
    dt: MPI_Datatype,
) -> MpiResult {
    let size = buffer_size(insize, "insize")?;
    // SAFETY: MPI_Unpack_external's contract, `unpack_external_any`'s: `inbuf`
    // has `insize` bytes, `outbuf` room for `n` elements of `dt`, `datarep` is
    // a string.
    *position = unsafe { unpack_external_any(datarep, inbuf, size, *position, outbuf, n, dt) }?
        as MPI_Count;
    Ok(())
}
