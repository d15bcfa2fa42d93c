//! Error handlers and error codes: create/set/get/free/call, strings and
//! classes, user-defined classes and codes.
use std::os::raw::{c_char, c_int};

use crate::abi::args::{in_str, out, write_str};
use crate::abi::boundary;
use crate::core::errhandler::ErrhandlerFunction;
use crate::core::error::{MpiError, MpiResult};
use crate::core::error_codes;
use crate::core::runtime;
use crate::mpi_abi::callbacks::*;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// Creates a user error handler: every `MPI_*_create_errhandler`.
///
/// # Safety
/// `errhandler` is the caller's output argument (NULL is rejected).
pub unsafe fn create_errhandler(
    function: ErrhandlerFunction,
    is_null: bool,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult {
    // SAFETY: `errhandler` is the caller's output argument, NULL (rejected by
    // `out`) or valid for writing one handle during this call (this function's
    // contract).
    let errhandler = unsafe { out(errhandler, "errhandler") }?;
    if is_null {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            "the error handler function is NULL",
        ));
    }
    *errhandler = runtime::lock().errhandlers_mut().create(function);
    Ok(())
}

pub unsafe fn comm_create_errhandler(
    function: MPI_Comm_errhandler_function,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult {
    // SAFETY: MPI_Comm_create_errhandler's `errhandler`, passed on unchanged:
    // NULL or valid for one write during the call, as `create_errhandler` asks.
    unsafe {
        create_errhandler(
            ErrhandlerFunction::Comm(function),
            function.is_none(),
            errhandler,
        )
    }
}

pub unsafe fn comm_set_errhandler(comm: MPI_Comm, errhandler: MPI_Errhandler) -> MpiResult {
    runtime::lock().set_comm_errhandler(comm, errhandler)
}

pub unsafe fn comm_get_errhandler(comm: MPI_Comm, errhandler: &mut MPI_Errhandler) -> MpiResult {
    *errhandler = runtime::lock().comm_errhandler(comm)?;
    Ok(())
}

pub unsafe fn comm_call_errhandler(comm: MPI_Comm, errorcode: c_int) -> MpiResult {
    boundary::call_errhandler_on_comm(comm, errorcode)
}

/// `MPI_Errhandler_free`: drops the user's reference; objects still using
/// the handler keep it alive. Freeing a predefined handler is allowed (a
/// handle from `MPI_Comm_get_errhandler` may be one) and does nothing.
pub unsafe fn errhandler_free(errhandler: &mut MPI_Errhandler) -> MpiResult {
    runtime::lock().errhandlers_mut().release(*errhandler)?;
    *errhandler = MPI_ERRHANDLER_NULL;
    Ok(())
}

pub unsafe fn error_string(
    errorcode: c_int,
    string: *mut c_char,
    resultlen: &mut c_int,
) -> MpiResult {
    let text = error_codes::string_of(errorcode).ok_or_else(|| {
        MpiError::new(
            MPI_ERR_ARG,
            format!("{errorcode} is not a valid error code"),
        )
    })?;
    // SAFETY: MPI_Error_string's contract: `string` has room for
    // MPI_MAX_ERROR_STRING characters, the capacity given; `write_str` rejects
    // NULL.
    let n = unsafe { write_str(string, MPI_MAX_ERROR_STRING as usize, &text, "string") }?;
    *resultlen = n as c_int;
    Ok(())
}

pub unsafe fn error_class(errorcode: c_int, errorclass: &mut c_int) -> MpiResult {
    *errorclass = error_codes::class_of(errorcode).ok_or_else(|| {
        MpiError::new(
            MPI_ERR_ARG,
            format!("{errorcode} is not a valid error code"),
        )
    })?;
    Ok(())
}

pub unsafe fn add_error_class(errorclass: &mut c_int) -> MpiResult {
    *errorclass = error_codes::add_class()?;
    Ok(())
}

pub unsafe fn add_error_code(errorclass: c_int, errorcode: &mut c_int) -> MpiResult {
    *errorcode = error_codes::add_code(errorclass)?;
    Ok(())
}

/// `MPIX_Delete_error_class` (`MPI_Delete_error_class` of MPI 4.1).
pub unsafe fn delete_error_class(errorclass: c_int) -> MpiResult {
    error_codes::delete_class(errorclass)
}

/// `MPIX_Delete_error_code` (`MPI_Delete_error_code` of MPI 4.1).
pub unsafe fn delete_error_code(errorcode: c_int) -> MpiResult {
    error_codes::delete_code(errorcode)
}

/// `MPIX_Delete_error_string` (`MPI_Delete_error_string` of MPI 4.1).
pub unsafe fn delete_error_string(errorcode: c_int) -> MpiResult {
    error_codes::delete_string(errorcode)
}

pub unsafe fn add_error_string(errorcode: c_int, string: *const c_char) -> MpiResult {
    // SAFETY: `string` is MPI_Add_error_string's: NULL (rejected by `in_str`)
    // or NUL-terminated, read only during this call.
    let text = unsafe { in_str(string, "string") }?;
    if text.len() >= MPI_MAX_ERROR_STRING as usize {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!(
                "error string of {} bytes (at most {})",
                text.len(),
                MPI_MAX_ERROR_STRING - 1
            ),
        ));
    }
    error_codes::add_string(errorcode, text)
}
