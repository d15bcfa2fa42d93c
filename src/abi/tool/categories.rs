//! `MPI_T_category_*`: the categories of `core::tool::categories`. The
//! tables never change, so `MPI_T_category_changed` always gives 0.
use std::os::raw::{c_char, c_int};

use super::{check_initialized, index, name_arg, put, put_indices, put_num, put_str, unknown_name};
use crate::abi::args::out;
use crate::core::error::MpiResult;
use crate::core::tool::categories::{Category, CATEGORIES};

fn category(cat_index: c_int) -> MpiResult<&'static Category> {
    Ok(&CATEGORIES[index(cat_index, CATEGORIES.len(), "category")?])
}

pub unsafe fn get_num(num: *mut c_int) -> MpiResult {
    // SAFETY: the caller's output argument, passed on unchanged.
    unsafe { put_num(num, CATEGORIES.len()) }
}

pub unsafe fn get_info(
    cat_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    num_cvars: *mut c_int,
    num_pvars: *mut c_int,
    num_categories: *mut c_int,
) -> MpiResult {
    check_initialized()?;
    let c = category(cat_index)?;
    // SAFETY: each pointer is MPI_T_category_get_info's, NULL or valid for
    // its output (strings: `*len` bytes), as `put`/`put_str` require.
    unsafe {
        put_str(name, name_len, c.name);
        put_str(desc, desc_len, c.desc);
        put(num_cvars, c.cvar_indices().len() as c_int);
        put(num_pvars, c.pvar_indices().len() as c_int);
        put(num_categories, c.category_indices().len() as c_int);
    }
    Ok(())
}

pub unsafe fn get_index(name: *const c_char, cat_index: *mut c_int) -> MpiResult {
    check_initialized()?;
    // SAFETY: MPI_T_category_get_index's name: NULL or NUL-terminated.
    let name = unsafe { name_arg(name) }?;
    let i = crate::core::tool::categories::index_of(&name)
        .ok_or_else(|| unknown_name("category", &name))?;
    // SAFETY: MPI_T_category_get_index's output: NULL (rejected) or valid.
    *unsafe { out(cat_index, "cat_index") }? = i as c_int;
    Ok(())
}

pub unsafe fn get_cvars(cat_index: c_int, len: c_int, indices: *mut c_int) -> MpiResult {
    check_initialized()?;
    // SAFETY: `indices` is the caller's, NULL or valid for `len` ints.
    unsafe { put_indices(len, indices, &category(cat_index)?.cvar_indices()) }
}

pub unsafe fn get_pvars(cat_index: c_int, len: c_int, indices: *mut c_int) -> MpiResult {
    check_initialized()?;
    // SAFETY: as in `get_cvars`.
    unsafe { put_indices(len, indices, &category(cat_index)?.pvar_indices()) }
}

pub unsafe fn get_categories(cat_index: c_int, len: c_int, indices: *mut c_int) -> MpiResult {
    check_initialized()?;
    // SAFETY: as in `get_cvars`.
    unsafe { put_indices(len, indices, &category(cat_index)?.category_indices()) }
}

/// No category has events (oxmpi has none).
pub unsafe fn get_num_events(cat_index: c_int, num_events: *mut c_int) -> MpiResult {
    check_initialized()?;
    category(cat_index)?;
    // SAFETY: the caller's output argument, passed on unchanged.
    unsafe { put_num(num_events, 0) }
}

pub unsafe fn get_events(cat_index: c_int, len: c_int, indices: *mut c_int) -> MpiResult {
    check_initialized()?;
    category(cat_index)?;
    // SAFETY: as in `get_cvars`.
    unsafe { put_indices(len, indices, &[]) }
}

pub unsafe fn changed(update_number: *mut c_int) -> MpiResult {
    check_initialized()?;
    // SAFETY: MPI_T_category_changed's output: NULL (rejected) or valid.
    *unsafe { out(update_number, "update_number") }? = 0;
    Ok(())
}
