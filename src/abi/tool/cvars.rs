//! `MPI_T_cvar_*`: control variables. A handle is the address of the
//! variable's entry in `core::tool::cvars::CVARS` (they bind no object, so
//! one handle per variable serves every allocation).
use std::os::raw::{c_char, c_int, c_uint, c_void};

use super::{check_initialized, index, name_arg, put, put_num, put_str, unknown_name};
use crate::abi::args::out;
use crate::core::error::{MpiError, MpiResult};
use crate::core::tool::cvars::{Cvar, CvarType, CvarValue, CVARS};
use crate::core::tool::enums::ENUMS;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

fn datatype(t: CvarType) -> MPI_Datatype {
    match t {
        CvarType::Int => MPI_INT,
        CvarType::Unsigned => MPI_UNSIGNED,
        CvarType::UnsignedLongLong => MPI_UNSIGNED_LONG_LONG,
        CvarType::Char => MPI_CHAR,
    }
}

/// The `MPI_T_enum` of enumeration `e` (`MPI_T_ENUM_NULL` for none).
pub(super) fn enum_handle(e: Option<usize>) -> MPI_T_enum {
    e.map_or(std::ptr::null_mut(), |e| {
        (&raw const ENUMS[e]).cast_mut().cast()
    })
}

/// The variable a handle names (`MPI_T_ERR_INVALID_HANDLE` otherwise).
fn cvar_of(handle: MPI_T_cvar_handle) -> MpiResult<&'static Cvar> {
    CVARS
        .iter()
        .find(|c| std::ptr::eq(*c, handle.cast::<Cvar>()))
        .ok_or_else(|| MpiError::new(MPI_T_ERR_INVALID_HANDLE, "not a cvar handle"))
}

pub unsafe fn get_num(num: *mut c_int) -> MpiResult {
    // SAFETY: the caller's output argument, passed on unchanged.
    unsafe { put_num(num, CVARS.len()) }
}

pub unsafe fn get_info(
    cvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    datatype_out: *mut MPI_Datatype,
    enumtype: *mut MPI_T_enum,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
    scope: *mut c_int,
) -> MpiResult {
    check_initialized()?;
    let cvar = &CVARS[index(cvar_index, CVARS.len(), "control variable")?];
    // SAFETY: each pointer is MPI_T_cvar_get_info's, NULL or valid for its
    // output (strings: `*len` bytes), as `put`/`put_str` require.
    unsafe {
        put_str(name, name_len, cvar.name);
        put(verbosity, cvar.verbosity);
        put(datatype_out, datatype(cvar.datatype));
        put(enumtype, enum_handle(cvar.enumeration));
        put_str(desc, desc_len, cvar.desc);
        put(bind, MPI_T_BIND_NO_OBJECT);
        put(scope, cvar.scope);
    }
    Ok(())
}

pub unsafe fn get_index(name: *const c_char, cvar_index: *mut c_int) -> MpiResult {
    check_initialized()?;
    // SAFETY: MPI_T_cvar_get_index's name: NULL or NUL-terminated.
    let name = unsafe { name_arg(name) }?;
    let i = crate::core::tool::cvars::index_of(&name)
        .ok_or_else(|| unknown_name("control variable", &name))?;
    // SAFETY: MPI_T_cvar_get_index's output: NULL (rejected) or valid.
    *unsafe { out(cvar_index, "cvar_index") }? = i as c_int;
    Ok(())
}

pub unsafe fn handle_alloc(
    cvar_index: c_int,
    _obj_handle: *mut c_void,
    handle: *mut MPI_T_cvar_handle,
    count: *mut c_int,
) -> MpiResult {
    check_initialized()?;
    let cvar = &CVARS[index(cvar_index, CVARS.len(), "control variable")?];
    // SAFETY: MPI_T_cvar_handle_alloc's outputs: NULL (rejected) or valid
    // for writing one value each.
    let (handle, count) = unsafe { (out(handle, "handle")?, out(count, "count")?) };
    *count = (cvar.read)().count() as c_int;
    *handle = (cvar as *const Cvar).cast_mut().cast();
    Ok(())
}

pub unsafe fn handle_free(handle: *mut MPI_T_cvar_handle) -> MpiResult {
    check_initialized()?;
    // SAFETY: MPI_T_cvar_handle_free's in-out handle: NULL (rejected) or
    // valid for reads and writes.
    let handle = unsafe { out(handle, "handle") }?;
    cvar_of(*handle)?;
    *handle = std::ptr::null_mut();
    Ok(())
}

pub unsafe fn read(handle: MPI_T_cvar_handle, buf: *mut c_void) -> MpiResult {
    check_initialized()?;
    let cvar = cvar_of(handle)?;
    if buf.is_null() {
        return Err(MpiError::new(MPI_T_ERR_INVALID, "buf is NULL"));
    }
    // SAFETY: `buf` holds `count` elements of the variable's type (what
    // MPI_T_cvar_handle_alloc returned; MPI's contract): one number, or the
    // string and its NUL.
    unsafe {
        match (cvar.read)() {
            CvarValue::Int(v) => *buf.cast::<c_int>() = v,
            CvarValue::Unsigned(v) => *buf.cast::<c_uint>() = v,
            CvarValue::UnsignedLongLong(v) => *buf.cast::<u64>() = v,
            CvarValue::Text(s) => {
                std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), s.len());
                *buf.cast::<u8>().add(s.len()) = 0;
            }
        }
    }
    Ok(())
}

pub unsafe fn write(handle: MPI_T_cvar_handle, buf: *const c_void) -> MpiResult {
    check_initialized()?;
    let cvar = cvar_of(handle)?;
    let Some(write) = cvar.write else {
        return Err(MpiError::new(
            MPI_T_ERR_CVAR_SET_NEVER,
            format!("{} is fixed once the library is loaded", cvar.name),
        ));
    };
    if buf.is_null() {
        return Err(MpiError::new(MPI_T_ERR_INVALID, "buf is NULL"));
    }
    // SAFETY: `buf` holds one value of the variable's type (MPI's
    // contract); no writable variable is a string.
    let value = unsafe {
        match cvar.datatype {
            CvarType::Int => CvarValue::Int(*buf.cast::<c_int>()),
            CvarType::Unsigned => CvarValue::Unsigned(*buf.cast::<c_uint>()),
            CvarType::UnsignedLongLong => CvarValue::UnsignedLongLong(*buf.cast::<u64>()),
            CvarType::Char => {
                return Err(MpiError::new(
                    MPI_T_ERR_CVAR_SET_NEVER,
                    "no string variable is writable",
                ))
            }
        }
    };
    write(&value)
}
