//! Turning C arguments into Rust values, in one place: pointer checks,
//! strings in and out, counts. Each helper names the argument in its error.
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;

/// A required output argument: `&mut T`, or `MPI_ERR_ARG` when NULL.
///
/// # Safety
/// `p` must be NULL or valid for writes of a `T` for the call's duration.
pub unsafe fn out<'a, T>(p: *mut T, name: &str) -> MpiResult<&'a mut T> {
    // SAFETY: the caller passes a pointer that is NULL or valid (MPI's
    // contract for output arguments); NULL is rejected here.
    unsafe { p.as_mut() }
        .ok_or_else(|| MpiError::new(MPI_ERR_ARG, format!("argument '{name}' is NULL")))
}

/// A required input string.
///
/// # Safety
/// `p` must be NULL or point at a NUL-terminated string.
pub unsafe fn in_str(p: *const c_char, name: &str) -> MpiResult<String> {
    if p.is_null() {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("argument '{name}' is NULL"),
        ));
    }
    // SAFETY: non-NULL and NUL-terminated per the caller's contract.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// An object's new name (`MPI_Comm_set_name`, `MPI_Type_set_name`,
/// `MPI_Win_set_name`): a required string shorter than
/// `MPI_MAX_OBJECT_NAME` (`MPI_ERR_ARG` otherwise).
///
/// # Safety
/// `p` must be NULL or point at a NUL-terminated string.
pub unsafe fn object_name(p: *const c_char, name: &str) -> MpiResult<String> {
    // SAFETY: the caller's contract, `in_str`'s.
    let text = unsafe { in_str(p, name) }?;
    if text.len() >= MPI_MAX_OBJECT_NAME as usize {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!(
                "name of {} bytes (at most {})",
                text.len(),
                MPI_MAX_OBJECT_NAME - 1
            ),
        ));
    }
    Ok(text)
}

/// Copies `s` into a C buffer of `capacity` bytes (NUL included),
/// truncating if needed. Returns the number of bytes copied (no NUL).
///
/// # Safety
/// `dst` must be valid for `capacity` bytes of writes.
pub unsafe fn write_str(
    dst: *mut c_char,
    capacity: usize,
    s: &str,
    name: &str,
) -> MpiResult<usize> {
    if dst.is_null() {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("argument '{name}' is NULL"),
        ));
    }
    if capacity == 0 {
        return Ok(0);
    }
    let n = s.len().min(capacity - 1);
    // SAFETY: dst has room for `capacity` bytes; we write n + 1 <= capacity.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), dst.cast::<u8>(), n);
        *dst.add(n) = 0;
    }
    Ok(n)
}

/// Largest user tag (the `MPI_TAG_UB` attribute); negative tags are
/// reserved for oxmpi's own protocols.
pub const TAG_UB: c_int = c_int::MAX;

/// A send's tag: `0..=TAG_UB` (`MPI_ERR_TAG`).
#[inline(always)]
pub fn tag(tag: c_int, name: &str) -> MpiResult<c_int> {
    if (0..=TAG_UB).contains(&tag) {
        return Ok(tag);
    }
    Err(bad_tag(tag, name))
}

/// A receive's (or probe's) tag: a send's, or `MPI_ANY_TAG`.
#[inline(always)]
pub fn any_tag(tag: c_int, name: &str) -> MpiResult<c_int> {
    if tag == MPI_ANY_TAG || (0..=TAG_UB).contains(&tag) {
        return Ok(tag);
    }
    Err(bad_tag(tag, name))
}

#[cold]
#[inline(never)]
fn bad_tag(tag: c_int, name: &str) -> MpiError {
    MpiError::new(MPI_ERR_TAG, format!("{name} {tag} is not in 0..={TAG_UB}"))
}

/// An input array of `n` elements (`NULL` is fine when `n` is 0).
///
/// # Safety
/// `p` must be NULL or point at `n` readable elements.
pub unsafe fn array<'a, T>(p: *const T, n: usize, name: &str) -> MpiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("argument '{name}' is NULL"),
        ));
    }
    // SAFETY: non-NULL, and MPI's contract gives `n` elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// An input array of `int`s or `MPI_Count`s, widened.
///
/// # Safety
/// As [`array`].
pub unsafe fn wide<T: Copy + Into<i64>>(p: *const T, n: usize, name: &str) -> MpiResult<Vec<i64>> {
    // SAFETY: `p` is NULL or points at `n` readable elements (this
    // function's contract, as `array`'s); the slice is copied out at once.
    Ok(unsafe { array(p, n, name) }?
        .iter()
        .map(|&v| v.into())
        .collect())
}

/// An output array of `n` elements (`NULL` is fine when `n` is 0).
///
/// # Safety
/// `p` must be NULL or point at `n` writable elements, not aliased during
/// the call.
pub unsafe fn array_out<'a, T>(p: *mut T, n: usize, name: &str) -> MpiResult<&'a mut [T]> {
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("argument '{name}' is NULL"),
        ));
    }
    // SAFETY: non-NULL, and MPI's contract gives `n` writable elements.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}
