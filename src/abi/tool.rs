//! The MPI tool information interface (MPI_T). oxmpi exposes no control or
//! performance variables, categories, events or sources yet, so the
//! interface initializes and reports zero of each; lookups by name or index
//! answer as for unknown ones. MPI_T calls never invoke error handlers: the
//! codes are returned (see `boundary::run_tool`).
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicI64, Ordering};

use crate::abi::args::out;
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

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
    INITIALIZED.fetch_sub(1, Ordering::SeqCst);
    Ok(())
}

/// Every `MPI_T_*_get_num`: zero.
pub unsafe fn get_num(num: *mut c_int) -> MpiResult {
    check_initialized()?;
    // SAFETY: `num` is the MPI_T call's output: NULL (rejected by `out`) or
    // valid for writing one `int` during this call.
    *unsafe { out(num, "num") }? = 0;
    Ok(())
}

pub unsafe fn category_changed(update_number: *mut c_int) -> MpiResult {
    check_initialized()?;
    // SAFETY: `update_number` is MPI_T_category_changed's output: NULL
    // (rejected by `out`) or valid for writing one `int` during this call.
    *unsafe { out(update_number, "update_number") }? = 0;
    Ok(())
}

/// `MPI_T_cvar_get_index` and friends: no variable has a name.
pub unsafe fn get_index(name: *const c_char, _index: *mut c_int) -> MpiResult {
    check_initialized()?;
    if name.is_null() {
        return Err(MpiError::new(MPI_T_ERR_INVALID, "name is NULL"));
    }
    Err(MpiError::new(
        MPI_T_ERR_INVALID_NAME,
        "oxmpi exposes no MPI_T variables",
    ))
}

/// `MPI_T_pvar_get_index` takes a variable class too.
pub unsafe fn pvar_get_index(
    name: *const c_char,
    _var_class: c_int,
    index: *mut c_int,
) -> MpiResult {
    // SAFETY: `get_index` only compares `name` with NULL and never touches
    // `index`; both are MPI_T_pvar_get_index's, passed on unchanged.
    unsafe { get_index(name, index) }
}

pub unsafe fn pvar_session_create(session: *mut MPI_T_pvar_session) -> MpiResult {
    check_initialized()?;
    // SAFETY: `session` is MPI_T_pvar_session_create's output: NULL (rejected
    // by `out`) or valid for writing one handle during this call.
    let session = unsafe { out(session, "session") }?;
    // A session holds nothing: any distinct non-null value will do.
    *session = std::ptr::NonNull::<MPIR_T_pvar_session_s>::dangling().as_ptr();
    Ok(())
}

pub unsafe fn pvar_session_free(session: *mut MPI_T_pvar_session) -> MpiResult {
    check_initialized()?;
    // SAFETY: `session` is MPI_T_pvar_session_free's in-out handle: NULL
    // (rejected by `out`) or valid for reads and writes during this call.
    let session = unsafe { out(session, "session") }?;
    *session = std::ptr::null_mut();
    Ok(())
}
