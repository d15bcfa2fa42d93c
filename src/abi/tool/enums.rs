//! `MPI_T_enum_*`: the enumerations of enumerated control variables. A
//! handle is the address of its entry in `core::tool::enums::ENUMS`.
use std::os::raw::{c_char, c_int};

use super::{check_initialized, put, put_str};
use crate::abi::args::out;
use crate::core::error::{MpiError, MpiResult};
use crate::core::tool::enums::{index_at, Enumeration, ENUMS};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

fn enumeration(handle: MPI_T_enum) -> MpiResult<&'static Enumeration> {
    index_at(handle.cast::<Enumeration>())
        .map(|i| &ENUMS[i])
        .ok_or_else(|| MpiError::new(MPI_T_ERR_INVALID_HANDLE, "not an MPI_T_enum"))
}

pub unsafe fn get_info(
    enumtype: MPI_T_enum,
    num: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> MpiResult {
    check_initialized()?;
    let e = enumeration(enumtype)?;
    // SAFETY: MPI_T_enum_get_info's outputs: `num` NULL (rejected) or
    // valid; the string NULL or valid for `*name_len` bytes.
    unsafe {
        *out(num, "num")? = e.items.len() as c_int;
        put_str(name, name_len, e.name);
    }
    Ok(())
}

pub unsafe fn get_item(
    enumtype: MPI_T_enum,
    index: c_int,
    value: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> MpiResult {
    check_initialized()?;
    let e = enumeration(enumtype)?;
    let &(item, v) = usize::try_from(index)
        .ok()
        .and_then(|i| e.items.get(i))
        .ok_or_else(|| {
            MpiError::new(
                MPI_T_ERR_INVALID_ITEM,
                format!("{} has no item {index}", e.name),
            )
        })?;
    // SAFETY: MPI_T_enum_get_item's outputs: NULL or valid (strings for
    // `*name_len` bytes).
    unsafe {
        put(value, v);
        put_str(name, name_len, item);
    }
    Ok(())
}
