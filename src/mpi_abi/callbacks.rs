//! The callback function types of the MPI C interface, as nullable function pointers (`None` is C's `NULL`).
//!
//! The table `mpi_functions.txt` uses these names by value. In C they are function types
//! (`typedef void (MPI_User_function)(...)`, declared in `callbacks.h`, which build.rs puts into
//! include/mpi.h); a parameter `MPI_User_function user_fn` decays to a pointer, so the C and the
//! Rust signatures agree. build.rs keeps these aliases out of cbindgen's output.
#![allow(non_camel_case_types)]

use super::types::*;
use std::os::raw::{c_int, c_void};

// ---- Reduction operations ----
/// `MPI_Op_create`: `(invec, inoutvec, len, datatype)`.
pub type MPI_User_function =
    Option<unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype)>;
/// `MPI_Op_create_c`: the large-count variant.
pub type MPI_User_function_c =
    Option<unsafe extern "C" fn(*mut c_void, *mut c_void, *mut MPI_Count, *mut MPI_Datatype)>;

// ---- Attribute copy and delete callbacks ----
// copy: (object, keyval, extra_state, attribute_val_in, attribute_val_out, flag) -> error code
// delete: (object, keyval, attribute_val, extra_state) -> error code
pub type MPI_Comm_copy_attr_function = Option<
    unsafe extern "C" fn(
        MPI_Comm,
        c_int,
        *mut c_void,
        *mut c_void,
        *mut c_void,
        *mut c_int,
    ) -> c_int,
>;
pub type MPI_Comm_delete_attr_function =
    Option<unsafe extern "C" fn(MPI_Comm, c_int, *mut c_void, *mut c_void) -> c_int>;
pub type MPI_Type_copy_attr_function = Option<
    unsafe extern "C" fn(
        MPI_Datatype,
        c_int,
        *mut c_void,
        *mut c_void,
        *mut c_void,
        *mut c_int,
    ) -> c_int,
>;
pub type MPI_Type_delete_attr_function =
    Option<unsafe extern "C" fn(MPI_Datatype, c_int, *mut c_void, *mut c_void) -> c_int>;
pub type MPI_Win_copy_attr_function = Option<
    unsafe extern "C" fn(
        MPI_Win,
        c_int,
        *mut c_void,
        *mut c_void,
        *mut c_void,
        *mut c_int,
    ) -> c_int,
>;
pub type MPI_Win_delete_attr_function =
    Option<unsafe extern "C" fn(MPI_Win, c_int, *mut c_void, *mut c_void) -> c_int>;
/// MPI-1 `MPI_Keyval_create` (deprecated): same shape as `MPI_Comm_copy_attr_function`.
pub type MPI_Copy_function = Option<
    unsafe extern "C" fn(
        MPI_Comm,
        c_int,
        *mut c_void,
        *mut c_void,
        *mut c_void,
        *mut c_int,
    ) -> c_int,
>;
/// MPI-1 `MPI_Keyval_create` (deprecated): same shape as `MPI_Comm_delete_attr_function`.
pub type MPI_Delete_function =
    Option<unsafe extern "C" fn(MPI_Comm, c_int, *mut c_void, *mut c_void) -> c_int>;

// ---- MPICH's language proxies (libmpichfort.so.12, not in mpi.h) ----
// MPICH's Fortran binding registers a keyval's Fortran copy and delete
// procedures as the C callbacks, then `MPII_Keyval_set_proxy` names two
// functions of its own through which MPI is to call them; `attr_type` is
// MPICH's `MPIR_Attr_type` of the value (0 pointer, 1 address-sized
// integer, 3 `INTEGER`).
/// `(user_function, object, keyval, extra_state, attr_type, value, value_out, flag)`.
pub type MPII_Attr_copy_proxy = Option<
    unsafe extern "C" fn(
        MPI_Comm_copy_attr_function,
        c_int,
        c_int,
        *mut c_void,
        c_int,
        *mut c_void,
        *mut *mut c_void,
        *mut c_int,
    ) -> c_int,
>;
/// `(user_function, object, keyval, attr_type, value, extra_state)`.
pub type MPII_Attr_delete_proxy = Option<
    unsafe extern "C" fn(
        MPI_Comm_delete_attr_function,
        c_int,
        c_int,
        c_int,
        *mut c_void,
        *mut c_void,
    ) -> c_int,
>;

// ---- Error handlers: (object, error code, implementation-specific varargs) ----
pub type MPI_Comm_errhandler_function =
    Option<unsafe extern "C" fn(*mut MPI_Comm, *mut c_int, ...)>;
pub type MPI_File_errhandler_function =
    Option<unsafe extern "C" fn(*mut MPI_File, *mut c_int, ...)>;
pub type MPI_Win_errhandler_function = Option<unsafe extern "C" fn(*mut MPI_Win, *mut c_int, ...)>;
pub type MPI_Session_errhandler_function =
    Option<unsafe extern "C" fn(*mut MPI_Session, *mut c_int, ...)>;
/// MPI-1 name (`MPI_Errhandler_create`), same shape as `MPI_Comm_errhandler_function`.
pub type MPI_Handler_function = Option<unsafe extern "C" fn(*mut MPI_Comm, *mut c_int, ...)>;
/// Names added in MPI-2.0 and deprecated in MPI-2.2 (MPICH keeps them).
pub type MPI_Comm_errhandler_fn = MPI_Comm_errhandler_function;
pub type MPI_File_errhandler_fn = MPI_File_errhandler_function;
pub type MPI_Win_errhandler_fn = MPI_Win_errhandler_function;
pub type MPI_Session_errhandler_fn = MPI_Session_errhandler_function;

// ---- Generalized requests ----
/// `(extra_state, status)`: fills in the status of the completed request.
pub type MPI_Grequest_query_function =
    Option<unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int>;
/// `(extra_state)`.
pub type MPI_Grequest_free_function = Option<unsafe extern "C" fn(*mut c_void) -> c_int>;
/// `(extra_state, complete)`.
pub type MPI_Grequest_cancel_function = Option<unsafe extern "C" fn(*mut c_void, c_int) -> c_int>;
/// MPICH extension: `(extra_state, status)`, drives the request's progress.
pub type MPIX_Grequest_poll_function =
    Option<unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int>;
/// MPICH extension: `(count, array_of_states, timeout, status)`, blocks for completion.
pub type MPIX_Grequest_wait_function =
    Option<unsafe extern "C" fn(c_int, *mut *mut c_void, f64, *mut MPI_Status) -> c_int>;
/// The generalized request callbacks of a Fortran program (MPICH's binding
/// passes them as the C ones, then calls `MPII_Grequest_set_lang_f77`):
/// subroutines taking every argument by reference, with the error code
/// last. Query: `(extra_state, status(MPI_STATUS_SIZE), ierror)`.
pub type MPII_F77_Grequest_query_function =
    Option<unsafe extern "C" fn(*mut c_void, *mut MPI_Fint, *mut MPI_Fint)>;
/// Fortran free: `(extra_state, ierror)`.
pub type MPII_F77_Grequest_free_function = Option<unsafe extern "C" fn(*mut c_void, *mut MPI_Fint)>;
/// Fortran cancel: `(extra_state, complete (LOGICAL), ierror)`.
pub type MPII_F77_Grequest_cancel_function =
    Option<unsafe extern "C" fn(*mut c_void, *mut MPI_Fint, *mut MPI_Fint)>;

// ---- MPI-IO data representations ----
/// `(userbuf, datatype, count, filebuf, position, extra_state)`.
pub type MPI_Datarep_conversion_function = Option<
    unsafe extern "C" fn(
        *mut c_void,
        MPI_Datatype,
        c_int,
        *mut c_void,
        MPI_Offset,
        *mut c_void,
    ) -> c_int,
>;
/// The large-count variant of `MPI_Datarep_conversion_function`.
pub type MPI_Datarep_conversion_function_c = Option<
    unsafe extern "C" fn(
        *mut c_void,
        MPI_Datatype,
        MPI_Count,
        *mut c_void,
        MPI_Offset,
        *mut c_void,
    ) -> c_int,
>;
/// `(datatype, file_extent, extra_state)`.
pub type MPI_Datarep_extent_function =
    Option<unsafe extern "C" fn(MPI_Datatype, *mut MPI_Aint, *mut c_void) -> c_int>;

// ---- MPI_T events ----
/// `(event_instance, event_registration, cb_safety, user_data)`.
pub type MPI_T_event_cb_function = Option<
    unsafe extern "C" fn(
        MPI_T_event_instance,
        MPI_T_event_registration,
        MPI_T_cb_safety,
        *mut c_void,
    ),
>;
/// `(event_registration, cb_safety, user_data)`.
pub type MPI_T_event_free_cb_function =
    Option<unsafe extern "C" fn(MPI_T_event_registration, MPI_T_cb_safety, *mut c_void)>;
/// `(count, event_registration, source_index, cb_safety, user_data)`.
pub type MPI_T_event_dropped_cb_function = Option<
    unsafe extern "C" fn(MPI_Count, MPI_T_event_registration, c_int, MPI_T_cb_safety, *mut c_void),
>;
