//! The MPI tool information interface (MPI_T): init/finalize and the C
//! side of the tables in `core::tool` (control and performance variables,
//! categories, enumerations; no events or sources). MPI_T calls never
//! invoke error handlers: the codes are returned (see `boundary::run_tool`).
//! Output arguments of the `get_info` calls may be NULL (that value is not
//! returned); strings follow MPI_T's length protocol (`core::tool::text`).
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicI64, Ordering};

use crate::abi::args::{in_str, out};
use crate::core::error::{MpiError, MpiResult};
use crate::core::tool::text::Fit;
use crate::mpi_abi::constants::*;

pub mod categories;
pub mod cvars;
pub mod enums;
pub mod events;
pub mod pvars;

/// `MPI_T_init_thread` calls not yet matched by `MPI_T_finalize`.
static INITIALIZED: AtomicI64 = AtomicI64::new(0);

fn check_initialized() -> MpiResult {
    if INITIALIZED.load(Ordering::SeqCst) <= 0 {
        return Err(MpiError::new(
            MPI_T_ERR_NOT_INITIALIZED,
            "MPI_T is not initialized",
        ));
    }
    Ok(())
}

pub unsafe fn init_thread(required: c_int, provided: &mut c_int) -> MpiResult {
    if !(MPI_THREAD_SINGLE..=MPI_THREAD_MULTIPLE).contains(&required) {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("required thread level {required}"),
        ));
    }
    INITIALIZED.fetch_add(1, Ordering::SeqCst);
    *provided = required;
    Ok(())
}

pub unsafe fn finalize() -> MpiResult {
    check_initialized()?;
    if INITIALIZED.fetch_sub(1, Ordering::SeqCst) == 1 {
        // The last finalize: every session and handle is gone (MPI 4.1
        // section 15.3.7).
        crate::core::tool::sessions::free_all();
    }
    Ok(())
}

/// Every `MPI_T_*_get_num` of a kind oxmpi has none of (events, sources).
pub unsafe fn get_none(num: *mut c_int) -> MpiResult {
    // SAFETY: `num` is the caller's output argument, passed on unchanged.
    unsafe { put_num(num, 0) }
}

/// Writes `n` to a required count output (`MPI_T_*_get_num`).
///
/// # Safety
/// `num` must be NULL or valid for writing one `int`.
unsafe fn put_num(num: *mut c_int, n: usize) -> MpiResult {
    check_initialized()?;
    // SAFETY: NULL (rejected by `out`) or valid for writing one `int`
    // (this function's contract).
    *unsafe { out(num, "num") }? = n as c_int;
    Ok(())
}

/// Writes `value` to an optional output argument (nothing for NULL).
///
/// # Safety
/// `p` must be NULL or valid for writing one `T`.
unsafe fn put<T>(p: *mut T, value: T) {
    // SAFETY: NULL (skipped) or valid for writes (this function's contract).
    if let Some(p) = unsafe { p.as_mut() } {
        *p = value;
    }
}

/// Returns `s` through `buf`/`len` by MPI_T's length protocol: nothing
/// when `len` is NULL; the needed length when `buf` is NULL or `*len` 0;
/// else the string, truncated to `*len` bytes with its NUL.
///
/// # Safety
/// `len` must be NULL or valid for reads and writes of one `int`; `buf`
/// NULL or valid for writing `*len` bytes.
unsafe fn put_str(buf: *mut c_char, len: *mut c_int, s: &str) {
    // SAFETY: NULL (nothing to do) or valid (this function's contract).
    let Some(len) = (unsafe { len.as_mut() }) else {
        return;
    };
    let capacity = (!buf.is_null()).then(|| (*len).max(0) as usize);
    let fit = Fit::new(s.len(), capacity);
    if let Fit::Copy(n) = fit {
        // SAFETY: `buf` holds `*len` >= n + 1 bytes (the contract; `Fit`
        // leaves room for the NUL).
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
    }
    *len = fit.reported() as c_int;
}

/// An index into a table of `n` entries (`MPI_T_ERR_INVALID_INDEX`).
fn index(i: c_int, n: usize, what: &str) -> MpiResult<usize> {
    usize::try_from(i)
        .ok()
        .filter(|&i| i < n)
        .ok_or_else(|| MpiError::new(MPI_T_ERR_INVALID_INDEX, format!("no {what} {i}")))
}

/// A name to look up (`MPI_T_ERR_INVALID` when NULL).
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string.
unsafe fn name_arg(name: *const c_char) -> MpiResult<String> {
    // SAFETY: NULL (rejected) or NUL-terminated (this function's contract).
    unsafe { in_str(name, "name") }.map_err(|_| MpiError::new(MPI_T_ERR_INVALID, "name is NULL"))
}

fn unknown_name(what: &str, name: &str) -> MpiError {
    MpiError::new(MPI_T_ERR_INVALID_NAME, format!("no {what} called {name:?}"))
}

/// Writes the indices `all` into `indices` (at most `len` of them): the
/// `MPI_T_category_get_cvars` family.
///
/// # Safety
/// `indices` must be NULL or valid for writing `len` `int`s.
unsafe fn put_indices(len: c_int, indices: *mut c_int, all: &[usize]) -> MpiResult {
    if len < 0 {
        return Err(MpiError::new(MPI_T_ERR_INVALID, format!("len {len}")));
    }
    let n = all.len().min(len as usize);
    if n == 0 {
        return Ok(());
    }
    if indices.is_null() {
        return Err(MpiError::new(MPI_T_ERR_INVALID, "indices is NULL"));
    }
    for (k, &i) in all[..n].iter().enumerate() {
        // SAFETY: `indices` holds `len` >= n ints (the contract).
        unsafe { *indices.add(k) = i as c_int };
    }
    Ok(())
}
