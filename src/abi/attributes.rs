//! Communicator attributes through the C ABI: keyvals, set/get/delete, and
//! the copy and delete callbacks run around `MPI_Comm_dup` and
//! `MPI_Comm_free` (always without the runtime lock: they are user code).
use std::os::raw::{c_int, c_void};

use crate::abi::args::out;
use crate::core::attributes::{is_predefined, predefined_value, CopyCall, DeleteCall};
use crate::core::error::{MpiError, MpiResult};
use crate::core::runtime;
use crate::mpi_abi::callbacks::*;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

fn callback_error(what: &str, keyval: c_int, rc: c_int) -> MpiError {
    let class = crate::core::error_codes::class_of(rc).unwrap_or(MPI_ERR_OTHER);
    MpiError::new(
        class,
        format!("the {what} callback of keyval {keyval:#x} returned {rc}"),
    )
}

/// Runs a delete callback.
pub fn run_delete(comm: MPI_Comm, call: DeleteCall) -> MpiResult {
    let Some(f) = call.function else {
        return Ok(());
    };
    // SAFETY: the user's delete function, called as MPI specifies with the
    // values given at keyval creation and attribute setting; no lock held.
    let rc = unsafe {
        f(
            comm,
            call.keyval,
            call.value as *mut c_void,
            call.extra_state as *mut c_void,
        )
    };
    if rc != MPI_SUCCESS {
        return Err(callback_error("delete", call.keyval, rc));
    }
    Ok(())
}

/// Runs a copy callback; `Some(value)` when the attribute is to be copied.
fn run_copy(oldcomm: MPI_Comm, call: CopyCall) -> MpiResult<Option<usize>> {
    let Some(f) = call.function else {
        return Ok(None);
    };
    let mut out: *mut c_void = std::ptr::null_mut();
    let mut flag: c_int = 0;
    // SAFETY: the user's copy function with MPI's arguments; the output
    // pointers are locals; no lock held.
    let rc = unsafe {
        f(
            oldcomm,
            call.keyval,
            call.extra_state as *mut c_void,
            call.value as *mut c_void,
            (&mut out as *mut *mut c_void).cast(),
            &mut flag,
        )
    };
    if rc != MPI_SUCCESS {
        return Err(callback_error("copy", call.keyval, rc));
    }
    Ok((flag != 0).then_some(out as usize))
}

/// The copy callbacks due for `oldcomm`'s attributes, in their order.
fn copy_calls(oldcomm: MPI_Comm) -> MpiResult<Vec<CopyCall>> {
    let rt = runtime::lock();
    let c = rt.comms().get(oldcomm)?;
    Ok(c.attributes
        .entries()
        .iter()
        .map(|&(k, v)| rt.keyvals().copy_call(k, v))
        .collect())
}

/// Copies `oldcomm`'s attributes to `newcomm` through their copy callbacks
/// (`MPI_Comm_dup`). If a copy callback fails, `newcomm` is freed (the
/// attributes copied so far deleted through their callbacks) and the
/// callback's error is the result: the dup made nothing.
pub fn copy_all(oldcomm: MPI_Comm, newcomm: MPI_Comm) -> MpiResult {
    let copied = copy_calls(oldcomm).and_then(|calls| {
        for call in calls {
            if let Some(value) = run_copy(oldcomm, call)? {
                let mut rt = runtime::lock();
                rt.keyvals_mut().attach(call.keyval);
                rt.comms_mut()
                    .get_mut(newcomm)?
                    .attributes
                    .set(call.keyval, value);
            }
        }
        Ok(())
    });
    if copied.is_err() {
        let _ = delete_all(newcomm);
        let _ = runtime::lock().free_comm(newcomm);
    }
    copied
}

/// The first half of [`copy_all`] for `MPI_Comm_idup`: runs `oldcomm`'s
/// copy callbacks now (so the values are those at the time of the call)
/// and takes a use of each copied keyval, so it outlives the wait; the
/// returned `(keyval, value)` pairs go to the new communicator with
/// [`attach_copies`] (or back with [`drop_copies`]).
pub fn prepare_copies(oldcomm: MPI_Comm) -> MpiResult<Vec<(c_int, usize)>> {
    let calls = copy_calls(oldcomm)?;
    let mut copies = Vec::new();
    for call in calls {
        match run_copy(oldcomm, call) {
            Ok(Some(value)) => {
                runtime::lock().keyvals_mut().attach(call.keyval);
                copies.push((call.keyval, value));
            }
            Ok(None) => {}
            Err(e) => {
                drop_copies(&mut runtime::lock(), copies);
                return Err(e);
            }
        }
    }
    Ok(copies)
}

/// Sets copies made by [`prepare_copies`] on `newcomm` (their keyval uses
/// pass to it).
pub fn attach_copies(
    rt: &mut runtime::Runtime,
    newcomm: MPI_Comm,
    copies: Vec<(c_int, usize)>,
) -> MpiResult {
    let c = rt.comms_mut().get_mut(newcomm)?;
    for (keyval, value) in copies {
        c.attributes.set(keyval, value);
    }
    Ok(())
}

/// Gives back the keyval uses of copies that will not be attached (the
/// values themselves are the program's; no delete callback runs, as the
/// attribute never existed on a communicator).
pub fn drop_copies(rt: &mut runtime::Runtime, copies: Vec<(c_int, usize)>) {
    for (keyval, _) in copies {
        rt.keyvals_mut().detach(keyval);
    }
}

/// Deletes every attribute of `comm` through the delete callbacks, the
/// last set first (`MPI_Comm_free`, and `MPI_Finalize` for
/// `MPI_COMM_SELF`, where MPI defines that order). A callback that fails
/// stops it: that attribute and the ones set before it stay, and its
/// error is the result.
pub fn delete_all(comm: MPI_Comm) -> MpiResult {
    loop {
        let call = {
            let rt = runtime::lock();
            match rt.comms().get(comm)?.attributes.last() {
                Some((keyval, value)) => rt.keyvals().delete_callback(keyval, value),
                None => return Ok(()),
            }
        };
        run_delete(comm, call)?;
        forget(comm, call.keyval)?;
    }
}

/// Removes `keyval`'s attribute from `comm` once its delete callback
/// succeeded, giving back the keyval's use.
fn forget(comm: MPI_Comm, keyval: c_int) -> MpiResult {
    let mut rt = runtime::lock();
    if rt
        .comms_mut()
        .get_mut(comm)?
        .attributes
        .remove(keyval)
        .is_some()
    {
        rt.keyvals_mut().detach(keyval);
    }
    Ok(())
}

pub unsafe fn create_keyval(
    copy: MPI_Comm_copy_attr_function,
    delete: MPI_Comm_delete_attr_function,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult {
    // SAFETY: `keyval` is MPI_Comm_create_keyval's output: NULL (rejected by
    // `out`) or valid for writing one `int` during this call.
    let keyval = unsafe { out(keyval, "comm_keyval") }?;
    *keyval = runtime::lock()
        .keyvals_mut()
        .create(copy, delete, extra_state as usize);
    Ok(())
}

/// `MPI_Keyval_create` (deprecated): the same callbacks' types.
pub unsafe fn keyval_create(
    copy: MPI_Copy_function,
    delete: MPI_Delete_function,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult {
    // SAFETY: MPI_Keyval_create's arguments, passed on unchanged: `keyval` is
    // NULL or valid for one `int`, which is all `create_keyval` dereferences;
    // the callback types are the same Rust types.
    unsafe { create_keyval(copy, delete, keyval, extra_state) }
}

pub unsafe fn free_keyval(keyval: &mut c_int) -> MpiResult {
    runtime::lock().keyvals_mut().free(*keyval)?;
    *keyval = MPI_KEYVAL_INVALID;
    Ok(())
}

/// `MPI_Comm_set_attr`: a value it replaces goes through the delete
/// callback first; if that fails, the old value stays and the error is the
/// result.
pub unsafe fn set_attr(comm: MPI_Comm, keyval: c_int, value: *mut c_void) -> MpiResult {
    if is_predefined(keyval) {
        return Err(MpiError::new(
            MPI_ERR_KEYVAL,
            "predefined attributes cannot be set",
        ));
    }
    let replaced = {
        let rt = runtime::lock();
        let old = rt.comms().get(comm)?.attributes.get(keyval);
        rt.keyvals().get(keyval)?;
        old.map(|old| rt.keyvals().delete_callback(keyval, old))
    };
    if let Some(call) = replaced {
        run_delete(comm, call)?;
    }
    let mut rt = runtime::lock();
    rt.keyvals().get(keyval)?;
    let old = rt
        .comms_mut()
        .get_mut(comm)?
        .attributes
        .set(keyval, value as usize);
    if old.is_none() {
        rt.keyvals_mut().attach(keyval);
    }
    Ok(())
}

/// `*attribute_val` receives the stored value (for predefined attributes,
/// the address of an `int`).
pub unsafe fn get_attr(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: &mut c_int,
) -> MpiResult {
    // SAFETY: `attribute_val` is a `void *` that MPI defines as the address of
    // a `void *` the call writes: NULL (rejected by `out`) or valid for that
    // one write during this call.
    let slot = unsafe { out(attribute_val.cast::<*mut c_void>(), "attribute_val") }?;
    let rt = runtime::lock();
    let c = rt.comms().get(comm)?;
    if let Some(p) = predefined_value(keyval) {
        *slot = p;
        *flag = 1;
        return Ok(());
    }
    rt.keyvals().existing(keyval)?;
    match c.attributes.get(keyval) {
        Some(v) => {
            *slot = v as *mut c_void;
            *flag = 1;
        }
        None => *flag = 0,
    }
    Ok(())
}

/// `MPI_Comm_delete_attr`: if the delete callback fails, the attribute
/// stays and the error is the result.
pub unsafe fn delete_attr(comm: MPI_Comm, keyval: c_int) -> MpiResult {
    let call = {
        let rt = runtime::lock();
        let value = rt.comms().get(comm)?.attributes.get(keyval);
        rt.keyvals().existing(keyval)?;
        let value = value.ok_or_else(|| {
            MpiError::new(
                MPI_ERR_KEYVAL,
                format!("keyval {keyval:#x} has no value on this communicator"),
            )
        })?;
        rt.keyvals().delete_callback(keyval, value)
    };
    run_delete(comm, call)?;
    forget(comm, keyval)
}
