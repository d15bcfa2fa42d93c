//! The internal libmpich functions that MPICH's Fortran binding
//! (`libmpichfort.so.12`, which a program built with `mpif90.mpich` links
//! on top of libmpich.so.12) calls for attributes, keyvals and generalized
//! requests. Exported by the MPICH-ABI build only. Their shapes are MPICH
//! 4.0.2's (`mpir_attr_generic.h`), checked against the binding's machine
//! code:
//!
//! - `MPII_{Comm,Type,Win}_set_attr(object, keyval, value, attr_type)`:
//!   `MPI_*_set_attr` from Fortran passes the `INTEGER(KIND=MPI_ADDRESS_KIND)`
//!   value itself with `attr_type` 1 (`MPIR_ATTR_AINT`); `MPI_Attr_put` the
//!   `INTEGER` sign-extended to a pointer with 3 (`MPIR_ATTR_INT`). The
//!   value is kept with that kind ([`ValueKind`]).
//! - `MPII_{Comm,Type,Win}_get_attr(object, keyval, &slot, &flag, attr_type)`:
//!   the binding passes an address-sized local as `slot` and copies it out
//!   (its low 32 bits for `MPI_Attr_get`), so a Fortran get writes the value
//!   as an address-sized integer, predefined attributes included (their
//!   value, not its address, as MPI wants for Fortran). What each language
//!   sees of a value set from the other is in `attributes::get`.
//! - Fortran spells the predefined keyvals one above C (`MPI_TAG_UB` is
//!   `0x64400002` in `mpif.h`, `0x64400001` in `mpi.h`); both name the
//!   same attribute here.
//! - `MPII_Keyval_set_proxy(keyval, copy_proxy, delete_proxy)`: called right
//!   after `MPI_*_create_keyval`/`MPI_Keyval_create`, which the binding
//!   gives the Fortran procedures as the C callbacks (`MPI_COMM_DUP_FN` and
//!   `MPI_COMM_NULL_COPY_FN` of Fortran are such procedures too). From then
//!   on the keyval's callbacks run through the proxies, with the procedure,
//!   the object's handle, the keyval, the value, its `MPIR_Attr_type` code
//!   and the `extra_state` pointer (the address of the Fortran variable).
//! - `MPII_Grequest_set_lang_f77(request)`: called right after
//!   `MPI_Grequest_start`; the request's callbacks are Fortran subroutines
//!   (see `core::p2p::generalized`).
#![allow(non_snake_case)]

use std::os::raw::{c_int, c_void};

use crate::abi::args::out;
use crate::abi::attributes::{
    get, mpich_attr_type, set, AttributeStore, CommStore, DatatypeStore, WinStore,
};
use crate::abi::boundary::{run, run_value, Scope};
use crate::core::attributes::{is_predefined, is_predefined_win, LanguageProxy, ValueKind};
use crate::core::error::{MpiError, MpiResult};
use crate::core::runtime;
use crate::mpi_abi::callbacks::{MPII_Attr_copy_proxy, MPII_Attr_delete_proxy};
use crate::mpi_abi::constants::MPI_ERR_ARG;
use crate::mpi_abi::types::*;

/// The kind of value an `MPIR_Attr_type` code names.
fn value_kind(attr_type: c_int) -> MpiResult<ValueKind> {
    [ValueKind::Pointer, ValueKind::Address, ValueKind::Integer]
        .into_iter()
        .find(|&k| mpich_attr_type(k) == attr_type)
        .ok_or_else(|| MpiError::new(MPI_ERR_ARG, format!("{attr_type} is not an attribute type")))
}

/// The C keyval of a predefined attribute spelled the Fortran way (one
/// above); any other keyval as it is.
fn c_keyval(keyval: c_int) -> c_int {
    let below = keyval.wrapping_sub(1);
    if keyval & 1 == 0 && (is_predefined(below) || is_predefined_win(below)) {
        below
    } else {
        keyval
    }
}

fn set_attr<S: AttributeStore>(
    object: c_int,
    keyval: c_int,
    value: *mut c_void,
    attr_type: c_int,
) -> MpiResult {
    set::<S>(object, c_keyval(keyval), value, value_kind(attr_type)?)
}

/// # Safety
/// `attribute_val` and `flag`: NULL or valid for writing a `void *` and an
/// `int` during the call.
unsafe fn get_attr<S: AttributeStore>(
    object: c_int,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
    attr_type: c_int,
) -> MpiResult {
    // SAFETY: the caller's contract: NULL (rejected) or valid for writing.
    let flag = unsafe { out(flag, "flag") }?;
    let want = value_kind(attr_type)?;
    // SAFETY: as above for `attribute_val`.
    unsafe { get::<S>(object, c_keyval(keyval), attribute_val, flag, want) }
}

/// `MPI_Comm_set_attr`/`MPI_Attr_put` from Fortran.
#[no_mangle]
pub extern "C" fn MPII_Comm_set_attr(
    comm: MPI_Comm,
    keyval: c_int,
    value: *mut c_void,
    attr_type: c_int,
) -> c_int {
    run(Scope::Comm(comm), "MPI_Comm_set_attr", || {
        set_attr::<CommStore>(comm, keyval, value, attr_type)
    })
}

/// `MPI_Comm_get_attr`/`MPI_Attr_get` from Fortran.
///
/// # Safety
/// See `get_attr`.
#[no_mangle]
pub unsafe extern "C" fn MPII_Comm_get_attr(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
    attr_type: c_int,
) -> c_int {
    run(Scope::Comm(comm), "MPI_Comm_get_attr", || {
        // SAFETY: the caller's arguments, passed on.
        unsafe { get_attr::<CommStore>(comm, keyval, attribute_val, flag, attr_type) }
    })
}

/// `MPI_Type_set_attr` from Fortran.
#[no_mangle]
pub extern "C" fn MPII_Type_set_attr(
    datatype: MPI_Datatype,
    keyval: c_int,
    value: *mut c_void,
    attr_type: c_int,
) -> c_int {
    run(Scope::Default, "MPI_Type_set_attr", || {
        set_attr::<DatatypeStore>(datatype, keyval, value, attr_type)
    })
}

/// `MPI_Type_get_attr` from Fortran.
///
/// # Safety
/// See `get_attr`.
#[no_mangle]
pub unsafe extern "C" fn MPII_Type_get_attr(
    datatype: MPI_Datatype,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
    attr_type: c_int,
) -> c_int {
    run(Scope::Default, "MPI_Type_get_attr", || {
        // SAFETY: the caller's arguments, passed on.
        unsafe { get_attr::<DatatypeStore>(datatype, keyval, attribute_val, flag, attr_type) }
    })
}

/// `MPI_Win_set_attr` from Fortran.
#[no_mangle]
pub extern "C" fn MPII_Win_set_attr(
    win: MPI_Win,
    keyval: c_int,
    value: *mut c_void,
    attr_type: c_int,
) -> c_int {
    run(Scope::Win(win), "MPI_Win_set_attr", || {
        set_attr::<WinStore>(win, keyval, value, attr_type)
    })
}

/// `MPI_Win_get_attr` from Fortran.
///
/// # Safety
/// See `get_attr`.
#[no_mangle]
pub unsafe extern "C" fn MPII_Win_get_attr(
    win: MPI_Win,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
    attr_type: c_int,
) -> c_int {
    run(Scope::Win(win), "MPI_Win_get_attr", || {
        // SAFETY: the caller's arguments, passed on.
        unsafe { get_attr::<WinStore>(win, keyval, attribute_val, flag, attr_type) }
    })
}

/// `keyval`'s callbacks are Fortran procedures, to be called through
/// these proxies. Returns nothing, as in MPICH (an unknown keyval is
/// ignored).
#[no_mangle]
pub extern "C" fn MPII_Keyval_set_proxy(
    keyval: c_int,
    copy_proxy: MPII_Attr_copy_proxy,
    delete_proxy: MPII_Attr_delete_proxy,
) {
    run_value("MPII_Keyval_set_proxy", || {
        runtime::lock().keyvals_mut().set_proxy(
            keyval,
            LanguageProxy {
                copy: copy_proxy,
                delete: delete_proxy,
            },
        )
    })
}

/// Generalized request `request`'s callbacks are Fortran subroutines.
/// Returns nothing, as in MPICH (another handle is ignored).
#[no_mangle]
pub extern "C" fn MPII_Grequest_set_lang_f77(request: MPI_Request) {
    run_value("MPII_Grequest_set_lang_f77", || {
        runtime::lock().engine().grequest_set_fortran(request)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpi_abi::constants::{MPI_TAG_UB, MPI_WIN_SIZE};

    #[test]
    fn attribute_type_codes_are_mpichs() {
        assert_eq!(value_kind(0).unwrap(), ValueKind::Pointer);
        assert_eq!(value_kind(1).unwrap(), ValueKind::Address);
        assert_eq!(value_kind(3).unwrap(), ValueKind::Integer);
        assert_eq!(value_kind(2).unwrap_err().class, MPI_ERR_ARG);
    }

    #[test]
    fn fortran_predefined_keyvals_name_the_c_ones() {
        assert_eq!(c_keyval(MPI_TAG_UB + 1), MPI_TAG_UB);
        assert_eq!(c_keyval(MPI_WIN_SIZE + 1), MPI_WIN_SIZE);
        assert_eq!(c_keyval(MPI_TAG_UB), MPI_TAG_UB);
        assert_eq!(c_keyval(0x1234), 0x1234);
    }
}
