//! The functions the standard ABI adds: its version and properties
//! (`MPI_Abi_get_version`, `MPI_Abi_get_info`, `MPI_Abi_get_fortran_info`),
//! the handle-to-integer conversions that replace `MPI_*_c2f`/`_f2c`
//! (`MPI_Comm_toint`, `MPI_Comm_fromint`...) and the `MPI_Status` field
//! accessors of MPI 5.0. Written by hand; exported only by the
//! standard-ABI build.
#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::os::raw::{c_char, c_int};

use super::support as cv;
use crate::mpi_abi::constants as c;
use crate::mpi_abi::standard::types as s;
use crate::mpi_abi::standard::values::ABI_VERSION;

fn arg_error(call: &'static str) -> c_int {
    cv::code_out(crate::abi::boundary::invalid_argument(call))
}

/// `MPI_Abi_get_version`: the standard ABI version this library provides.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Abi_get_version(major: *mut c_int, minor: *mut c_int) -> c_int {
    if major.is_null() || minor.is_null() {
        return arg_error("MPI_Abi_get_version");
    }
    // SAFETY: non-NULL outputs, valid for writes (MPI's contract).
    unsafe {
        *major = ABI_VERSION.0;
        *minor = ABI_VERSION.1;
    }
    c::MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Abi_get_version(major: *mut c_int, minor: *mut c_int) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { PMPI_Abi_get_version(major, minor) }
}

/// The keys `MPI_Abi_get_info` reports: the sizes of the C types the
/// standard leaves to the platform.
const ABI_INFO: &[(&str, &str)] = &[
    ("mpi_aint_size", "8\0"),
    ("mpi_count_size", "8\0"),
    ("mpi_offset_size", "8\0"),
];

unsafe fn new_info(call: &'static str, info: *mut s::MPI_Info, keys: &[(&str, &str)]) -> c_int {
    if info.is_null() {
        return arg_error(call);
    }
    let mut h: c_int = c::MPI_INFO_NULL;
    // SAFETY: `h` is a local.
    let rc = unsafe { crate::abi::entry_points::PMPI_Info_create(&mut h) };
    if rc != c::MPI_SUCCESS {
        return cv::code_out(rc);
    }
    for (key, value) in keys {
        let key = format!("{key}\0");
        // SAFETY: NUL-terminated strings that live through the call.
        let rc = unsafe {
            crate::abi::entry_points::PMPI_Info_set(
                h,
                key.as_ptr().cast::<c_char>(),
                value.as_ptr().cast::<c_char>(),
            )
        };
        if rc != c::MPI_SUCCESS {
            return cv::code_out(rc);
        }
    }
    // SAFETY: non-NULL output, valid for writes.
    unsafe { *info = cv::info_out(h) };
    c::MPI_SUCCESS
}

/// `MPI_Abi_get_info`: a new info object describing the ABI's platform
/// choices.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Abi_get_info(info: *mut s::MPI_Info) -> c_int {
    // SAFETY: the caller's output argument.
    cv::guard(|| unsafe { new_info("MPI_Abi_get_info", info, ABI_INFO) })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Abi_get_info(info: *mut s::MPI_Info) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { PMPI_Abi_get_info(info) }
}

/// `MPI_Abi_get_fortran_info`: oxmpi has no Fortran bindings, so there is
/// nothing to describe: `MPI_INFO_NULL`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Abi_get_fortran_info(info: *mut s::MPI_Info) -> c_int {
    if info.is_null() {
        return arg_error("MPI_Abi_get_fortran_info");
    }
    // SAFETY: non-NULL output, valid for writes.
    unsafe { *info = cv::info_out(c::MPI_INFO_NULL) };
    c::MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Abi_get_fortran_info(info: *mut s::MPI_Info) -> c_int {
    // SAFETY: the caller's arguments, passed on.
    unsafe { PMPI_Abi_get_fortran_info(info) }
}

/// `MPI_<T>_toint` and `MPI_<T>_fromint`: a standard handle's integer is
/// its value (predefined handles are small, oxmpi's other handles are its
/// 32-bit int handles zero-extended), so both are exact round trips.
macro_rules! int_conversions {
    ($($ty:ident: $toint:ident, $ptoint:ident, $fromint:ident, $pfromint:ident;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $ptoint(h: s::$ty) -> c_int {
            h as usize as u32 as c_int
        }
        #[no_mangle]
        pub extern "C" fn $toint(h: s::$ty) -> c_int {
            $ptoint(h)
        }
        #[no_mangle]
        pub extern "C" fn $pfromint(i: c_int) -> s::$ty {
            std::ptr::without_provenance_mut(i as u32 as usize)
        }
        #[no_mangle]
        pub extern "C" fn $fromint(i: c_int) -> s::$ty {
            $pfromint(i)
        }
    )*};
}

int_conversions! {
    MPI_Comm: MPI_Comm_toint, PMPI_Comm_toint, MPI_Comm_fromint, PMPI_Comm_fromint;
    MPI_Errhandler: MPI_Errhandler_toint, PMPI_Errhandler_toint, MPI_Errhandler_fromint, PMPI_Errhandler_fromint;
    MPI_File: MPI_File_toint, PMPI_File_toint, MPI_File_fromint, PMPI_File_fromint;
    MPI_Group: MPI_Group_toint, PMPI_Group_toint, MPI_Group_fromint, PMPI_Group_fromint;
    MPI_Info: MPI_Info_toint, PMPI_Info_toint, MPI_Info_fromint, PMPI_Info_fromint;
    MPI_Message: MPI_Message_toint, PMPI_Message_toint, MPI_Message_fromint, PMPI_Message_fromint;
    MPI_Op: MPI_Op_toint, PMPI_Op_toint, MPI_Op_fromint, PMPI_Op_fromint;
    MPI_Request: MPI_Request_toint, PMPI_Request_toint, MPI_Request_fromint, PMPI_Request_fromint;
    MPI_Session: MPI_Session_toint, PMPI_Session_toint, MPI_Session_fromint, PMPI_Session_fromint;
    MPI_Datatype: MPI_Type_toint, PMPI_Type_toint, MPI_Type_fromint, PMPI_Type_fromint;
    MPI_Win: MPI_Win_toint, PMPI_Win_toint, MPI_Win_fromint, PMPI_Win_fromint;
}

/// The MPI 5.0 status accessors: plain field reads and writes of the
/// program's status (source and tag in the standard's values already).
macro_rules! status_field {
    ($($get:ident, $pget:ident, $set:ident, $pset:ident, $field:ident;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $pget(status: *const s::MPI_Status, v: *mut c_int) -> c_int {
            if status.is_null() || v.is_null() {
                return arg_error(stringify!($get));
            }
            // SAFETY: non-NULL, valid as MPI requires.
            unsafe { *v = (*status).$field };
            c::MPI_SUCCESS
        }
        #[no_mangle]
        pub unsafe extern "C" fn $get(status: *const s::MPI_Status, v: *mut c_int) -> c_int {
            // SAFETY: the caller's arguments, passed on.
            unsafe { $pget(status, v) }
        }
        #[no_mangle]
        pub unsafe extern "C" fn $pset(status: *mut s::MPI_Status, v: c_int) -> c_int {
            if status.is_null() {
                return arg_error(stringify!($set));
            }
            // SAFETY: non-NULL, valid for writes as MPI requires.
            unsafe { (*status).$field = v };
            c::MPI_SUCCESS
        }
        #[no_mangle]
        pub unsafe extern "C" fn $set(status: *mut s::MPI_Status, v: c_int) -> c_int {
            // SAFETY: the caller's arguments, passed on.
            unsafe { $pset(status, v) }
        }
    )*};
}

status_field! {
    MPI_Status_get_source, PMPI_Status_get_source, MPI_Status_set_source, PMPI_Status_set_source, MPI_SOURCE;
    MPI_Status_get_tag, PMPI_Status_get_tag, MPI_Status_set_tag, PMPI_Status_set_tag, MPI_TAG;
    MPI_Status_get_error, PMPI_Status_get_error, MPI_Status_set_error, PMPI_Status_set_error, MPI_ERROR;
}
