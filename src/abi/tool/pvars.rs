//! `MPI_T_pvar_*`: performance variables, their sessions and handles
//! (`core::tool::sessions`). A session or handle is its id as a pointer
//! value (ids start at 1, so never NULL, and stay far below the address of
//! `MPI_T_PVAR_ALL_HANDLES`). Every variable is an `unsigned long long`.
use std::os::raw::{c_char, c_int, c_void};

use super::{check_initialized, index, name_arg, put, put_num, put_str, unknown_name};
use crate::abi::args::out;
use crate::core::error::{MpiError, MpiResult};
use crate::core::tool::pvars::PVARS;
use crate::core::tool::sessions::{self, Target};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::data_symbols::is_pvar_all_handles;
use crate::mpi_abi::types::*;

fn session_id(session: MPI_T_pvar_session) -> MpiResult<u64> {
    match session as usize as u64 {
        0 => Err(MpiError::new(
            MPI_T_ERR_INVALID_SESSION,
            "MPI_T_PVAR_SESSION_NULL",
        )),
        id => Ok(id),
    }
}

fn target(handle: MPI_T_pvar_handle) -> MpiResult<Target> {
    if is_pvar_all_handles(handle) {
        return Ok(Target::All);
    }
    match handle as usize as u64 {
        0 => Err(MpiError::new(
            MPI_T_ERR_INVALID_HANDLE,
            "MPI_T_PVAR_HANDLE_NULL",
        )),
        id => Ok(Target::One(id)),
    }
}

fn buf_arg<T>(buf: *mut T) -> MpiResult<*mut u64> {
    if buf.is_null() {
        return Err(MpiError::new(MPI_T_ERR_INVALID, "buf is NULL"));
    }
    Ok(buf.cast())
}

pub unsafe fn get_num(num: *mut c_int) -> MpiResult {
    // SAFETY: the caller's output argument, passed on unchanged.
    unsafe { put_num(num, PVARS.len()) }
}

pub unsafe fn get_info(
    pvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    var_class: *mut c_int,
    datatype: *mut MPI_Datatype,
    enumtype: *mut MPI_T_enum,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
    readonly: *mut c_int,
    continuous: *mut c_int,
    atomic: *mut c_int,
) -> MpiResult {
    check_initialized()?;
    let pvar = &PVARS[index(pvar_index, PVARS.len(), "performance variable")?];
    // SAFETY: each pointer is MPI_T_pvar_get_info's, NULL or valid for its
    // output (strings: `*len` bytes), as `put`/`put_str` require.
    unsafe {
        put_str(name, name_len, pvar.name);
        put(verbosity, pvar.verbosity);
        put(var_class, pvar.class);
        put(datatype, MPI_UNSIGNED_LONG_LONG);
        put(enumtype, std::ptr::null_mut());
        put_str(desc, desc_len, pvar.desc);
        put(bind, MPI_T_BIND_NO_OBJECT);
        put(readonly, pvar.readonly as c_int);
        put(continuous, 1);
        // A read-and-reset takes one value of the counter: nothing counted
        // meanwhile is lost.
        put(atomic, !pvar.readonly as c_int);
    }
    Ok(())
}

pub unsafe fn get_index(
    name: *const c_char,
    var_class: c_int,
    pvar_index: *mut c_int,
) -> MpiResult {
    check_initialized()?;
    // SAFETY: MPI_T_pvar_get_index's name: NULL or NUL-terminated.
    let name = unsafe { name_arg(name) }?;
    let i = crate::core::tool::pvars::index_of(&name, var_class)
        .ok_or_else(|| unknown_name("performance variable of that class", &name))?;
    // SAFETY: MPI_T_pvar_get_index's output: NULL (rejected) or valid.
    *unsafe { out(pvar_index, "pvar_index") }? = i as c_int;
    Ok(())
}

pub unsafe fn session_create(session: *mut MPI_T_pvar_session) -> MpiResult {
    check_initialized()?;
    // SAFETY: MPI_T_pvar_session_create's output: NULL (rejected) or valid.
    let session = unsafe { out(session, "session") }?;
    *session = sessions::create() as usize as MPI_T_pvar_session;
    Ok(())
}

pub unsafe fn session_free(session: *mut MPI_T_pvar_session) -> MpiResult {
    check_initialized()?;
    // SAFETY: MPI_T_pvar_session_free's in-out handle: NULL (rejected) or
    // valid for reads and writes.
    let session = unsafe { out(session, "session") }?;
    sessions::free(session_id(*session)?)?;
    *session = std::ptr::null_mut();
    Ok(())
}

pub unsafe fn handle_alloc(
    session: MPI_T_pvar_session,
    pvar_index: c_int,
    _obj_handle: *mut c_void,
    handle: *mut MPI_T_pvar_handle,
    count: *mut c_int,
) -> MpiResult {
    check_initialized()?;
    let session = session_id(session)?;
    let pvar = index(pvar_index, PVARS.len(), "performance variable")?;
    // SAFETY: MPI_T_pvar_handle_alloc's outputs: NULL (rejected) or valid
    // for writing one value each.
    let (handle, count) = unsafe { (out(handle, "handle")?, out(count, "count")?) };
    *handle = sessions::alloc(session, pvar)? as usize as MPI_T_pvar_handle;
    *count = 1;
    Ok(())
}

pub unsafe fn handle_free(
    session: MPI_T_pvar_session,
    handle: *mut MPI_T_pvar_handle,
) -> MpiResult {
    check_initialized()?;
    let session = session_id(session)?;
    // SAFETY: MPI_T_pvar_handle_free's in-out handle: NULL (rejected) or
    // valid for reads and writes.
    let handle = unsafe { out(handle, "handle") }?;
    match target(*handle)? {
        Target::One(id) => sessions::free_handle(session, id)?,
        Target::All => {
            return Err(MpiError::new(
                MPI_T_ERR_INVALID_HANDLE,
                "MPI_T_PVAR_ALL_HANDLES cannot be freed",
            ))
        }
    }
    *handle = std::ptr::null_mut();
    Ok(())
}

pub unsafe fn start(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle) -> MpiResult {
    check_initialized()?;
    sessions::start_stop(session_id(session)?, target(handle)?)
}

pub unsafe fn stop(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle) -> MpiResult {
    check_initialized()?;
    sessions::start_stop(session_id(session)?, target(handle)?)
}

pub unsafe fn read(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *mut c_void,
) -> MpiResult {
    // SAFETY: MPI_T_pvar_read's `buf` (MPI's contract).
    unsafe { read_into(session, handle, buf, sessions::read) }
}

/// Reads a handle's value with `how` into `buf`.
///
/// # Safety
/// `buf` must be NULL (rejected) or hold the handle's `count` (1)
/// unsigned long long.
unsafe fn read_into(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *mut c_void,
    how: impl FnOnce(u64, Target) -> MpiResult<u64>,
) -> MpiResult {
    check_initialized()?;
    let buf = buf_arg(buf)?;
    let value = how(session_id(session)?, target(handle)?)?;
    // SAFETY: `buf` holds one unsigned long long (this function's
    // contract); not NULL (checked).
    unsafe { *buf = value };
    Ok(())
}

pub unsafe fn readreset(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *mut c_void,
) -> MpiResult {
    // SAFETY: MPI_T_pvar_readreset's `buf` (MPI's contract).
    unsafe { read_into(session, handle, buf, sessions::read_reset) }
}

pub unsafe fn reset(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle) -> MpiResult {
    check_initialized()?;
    sessions::reset(session_id(session)?, target(handle)?)
}

pub unsafe fn write(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *const c_void,
) -> MpiResult {
    check_initialized()?;
    let session = session_id(session)?;
    let target = target(handle)?;
    let buf = buf_arg(buf.cast_mut())?;
    // SAFETY: `buf` holds one unsigned long long (MPI's contract); not
    // NULL (checked).
    let value = unsafe { *buf };
    sessions::write(session, target, value)
}
