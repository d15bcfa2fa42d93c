//! Attributes through the C ABI: keyvals, set/get/delete, and the copy and
//! delete callbacks run around `MPI_Comm_dup`/`MPI_Type_dup` and
//! `MPI_Comm_free`/`MPI_Type_free` (always without any lock held: they are
//! user code). One generic implementation over [`AttributeStore`], the place
//! an object kind keeps its attributes: communicators in the runtime,
//! datatypes in their registry (process-level, so type attributes work
//! outside an epoch too).
use std::os::raw::{c_int, c_void};

use crate::abi::args::out;
use crate::core::attributes::{
    is_predefined, is_predefined_win, predefined_value, AttrObject, Attributes, CopyCall,
    DeleteCall, ValueKind,
};
use crate::core::datatype::registry;
use crate::core::error::{MpiError, MpiResult};
use crate::core::runtime;
use crate::mpi_abi::callbacks::*;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// Where the attributes of one kind of object live.
pub trait AttributeStore {
    const KIND: AttrObject;
    /// Runs `f` on the attributes of `object` (its handle checked), with
    /// the runtime lock held (keyvals are under it; a store's own lock
    /// comes after it in the lock order).
    fn with<R>(
        rt: &mut runtime::Runtime,
        object: c_int,
        f: impl FnOnce(&mut Attributes) -> R,
    ) -> MpiResult<R>;
    /// The value of a predefined attribute of `object`.
    fn predefined(
        _rt: &mut runtime::Runtime,
        _object: c_int,
        _keyval: c_int,
    ) -> Option<*mut c_void> {
        None
    }
    /// Whether `keyval` is predefined for this kind (never set or freed by
    /// the program).
    fn is_predefined(_keyval: c_int) -> bool {
        false
    }
    /// The value of a predefined attribute as Fortran gets it: the integer
    /// itself, not its address. `p` is what [`AttributeStore::predefined`]
    /// gave for `keyval`.
    fn predefined_integer(_keyval: c_int, p: *mut c_void) -> isize {
        // SAFETY: the predefined attributes of communicators point at `int`s
        // that live as long as the process (`core::attributes`).
        unsafe { *(p as *const c_int) as isize }
    }
}

pub struct CommStore;

impl AttributeStore for CommStore {
    const KIND: AttrObject = AttrObject::Comm;
    fn with<R>(
        rt: &mut runtime::Runtime,
        comm: c_int,
        f: impl FnOnce(&mut Attributes) -> R,
    ) -> MpiResult<R> {
        Ok(f(&mut rt.comms_mut().get_mut(comm)?.attributes))
    }
    fn predefined(_rt: &mut runtime::Runtime, _comm: c_int, keyval: c_int) -> Option<*mut c_void> {
        predefined_value(keyval)
    }
    fn is_predefined(keyval: c_int) -> bool {
        is_predefined(keyval)
    }
}

pub struct DatatypeStore;

impl AttributeStore for DatatypeStore {
    const KIND: AttrObject = AttrObject::Datatype;
    fn with<R>(
        _rt: &mut runtime::Runtime,
        datatype: c_int,
        f: impl FnOnce(&mut Attributes) -> R,
    ) -> MpiResult<R> {
        registry::with_attributes(datatype, f)
    }
}

pub struct WinStore;

impl AttributeStore for WinStore {
    const KIND: AttrObject = AttrObject::Win;
    fn with<R>(
        rt: &mut runtime::Runtime,
        win: c_int,
        f: impl FnOnce(&mut Attributes) -> R,
    ) -> MpiResult<R> {
        Ok(f(&mut rt.window_mut(win)?.attributes))
    }
    /// `MPI_WIN_BASE` is the base address itself; the others point at the
    /// window's values.
    fn predefined(rt: &mut runtime::Runtime, win: c_int, keyval: c_int) -> Option<*mut c_void> {
        let w = rt.windows_mut().get_mut(win)?;
        let v = &mut *w.predefined;
        Some(match keyval {
            MPI_WIN_BASE => v.base as *mut c_void,
            MPI_WIN_SIZE => (&mut v.size as *mut MPI_Aint).cast(),
            MPI_WIN_DISP_UNIT => (&mut v.disp_unit as *mut c_int).cast(),
            MPI_WIN_CREATE_FLAVOR => (&mut v.flavor as *mut c_int).cast(),
            MPI_WIN_MODEL => (&mut v.model as *mut c_int).cast(),
            _ => return None,
        })
    }
    fn is_predefined(keyval: c_int) -> bool {
        is_predefined_win(keyval)
    }
    /// `MPI_WIN_BASE` is the base address; `MPI_WIN_SIZE` an `MPI_Aint`;
    /// the others `int`s.
    fn predefined_integer(keyval: c_int, p: *mut c_void) -> isize {
        match keyval {
            MPI_WIN_BASE => p as isize,
            // SAFETY: `predefined` gave the address of the window's size, an
            // `MPI_Aint` that lives with the window, read under the lock.
            MPI_WIN_SIZE => unsafe { *(p as *const MPI_Aint) as isize },
            // SAFETY: the window's `int` values, as above.
            _ => unsafe { *(p as *const c_int) as isize },
        }
    }
}

/// MPICH's `MPIR_Attr_type` code for how a value was set (`MPIR_ATTR_PTR`
/// 0, `MPIR_ATTR_AINT` 1, `MPIR_ATTR_INT` 3: bit 0 tells integers from
/// pointers), as its proxies and `MPII_*_attr` functions take it.
pub fn mpich_attr_type(kind: ValueKind) -> c_int {
    match kind {
        ValueKind::Pointer => 0,
        ValueKind::Address => 1,
        ValueKind::Integer => 3,
    }
}

/// The error of a callback that returned `rc`: a user-defined class or
/// code comes back to the caller as it is (MPICH does so, and programs
/// check for their own code and string); another code keeps its class.
fn callback_error(what: &str, keyval: c_int, rc: c_int) -> MpiError {
    let class = crate::core::error_codes::class_of(rc).unwrap_or(MPI_ERR_OTHER);
    let detail = format!("the {what} callback of keyval {keyval:#x} returned {rc}");
    if crate::core::error_codes::is_user_defined(rc) {
        return MpiError::with_code(rc, class, detail);
    }
    MpiError::new(class, detail)
}

/// Runs a delete callback for an attribute of `object`.
pub fn run_delete(object: c_int, call: DeleteCall) -> MpiResult {
    let Some(f) = call.function else {
        return Ok(());
    };
    if let Some(proxy) = call.proxy.and_then(|p| p.delete) {
        // SAFETY: the proxy MPICH's Fortran binding registered for this
        // keyval, called as its type says with the keyval's own (Fortran)
        // delete procedure, the object's handle, the value and how it was
        // set; no lock held.
        let rc = unsafe {
            proxy(
                Some(f),
                object,
                call.keyval,
                mpich_attr_type(call.kind),
                call.value as *mut c_void,
                call.extra_state as *mut c_void,
            )
        };
        if rc != MPI_SUCCESS {
            return Err(callback_error("delete", call.keyval, rc));
        }
        return Ok(());
    }
    #[cfg(feature = "standard-abi")]
    let rc = {
        type StdDelete = unsafe extern "C" fn(usize, c_int, *mut c_void, *mut c_void) -> c_int;
        // SAFETY: the program's delete function, stored with oxmpi's type;
        // the standard ABI's differs only in the handle's width.
        let f: StdDelete = unsafe { std::mem::transmute::<usize, StdDelete>(f as usize) };
        // SAFETY: called as MPI specifies (see below), with the standard
        // handle of the object.
        let rc = unsafe {
            f(
                crate::mpi_abi::standard::convert::object_out(object),
                call.keyval,
                call.value as *mut c_void,
                call.extra_state as *mut c_void,
            )
        };
        crate::mpi_abi::standard::convert::code_in(rc)
    };
    #[cfg(not(feature = "standard-abi"))]
    // SAFETY: the user's delete function, called as MPI specifies with the
    // values given at keyval creation and attribute setting; no lock held.
    let rc = unsafe {
        f(
            object,
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
fn run_copy(old: c_int, call: CopyCall) -> MpiResult<Option<usize>> {
    let Some(f) = call.function else {
        return Ok(None);
    };
    let mut out: *mut c_void = std::ptr::null_mut();
    let mut flag: c_int = 0;
    if let Some(proxy) = call.proxy.and_then(|p| p.copy) {
        // SAFETY: the proxy MPICH's Fortran binding registered for this
        // keyval, called as its type says with the keyval's (Fortran) copy
        // procedure; the output pointers are locals; no lock held.
        let rc = unsafe {
            proxy(
                Some(f),
                old,
                call.keyval,
                call.extra_state as *mut c_void,
                mpich_attr_type(call.kind),
                call.value as *mut c_void,
                &mut out,
                &mut flag,
            )
        };
        if rc != MPI_SUCCESS {
            return Err(callback_error("copy", call.keyval, rc));
        }
        return Ok((flag != 0).then_some(out as usize));
    }
    #[cfg(feature = "standard-abi")]
    let rc = if f as usize == crate::mpi_abi::data_symbols::MPIR_Dup_fn as *const () as usize {
        // SAFETY: oxmpi's own copy function (`MPI_COMM_DUP_FN`); the output
        // pointers are locals.
        unsafe {
            f(
                old,
                call.keyval,
                call.extra_state as *mut c_void,
                call.value as *mut c_void,
                (&mut out as *mut *mut c_void).cast(),
                &mut flag,
            )
        }
    } else {
        type StdCopy = unsafe extern "C" fn(
            usize,
            c_int,
            *mut c_void,
            *mut c_void,
            *mut c_void,
            *mut c_int,
        ) -> c_int;
        // SAFETY: the program's copy function, stored with oxmpi's type;
        // the standard ABI's differs only in the handle's width.
        let f: StdCopy = unsafe { std::mem::transmute::<usize, StdCopy>(f as usize) };
        // SAFETY: called with MPI's arguments and the standard handle; the
        // output pointers are locals; no lock held.
        let rc = unsafe {
            f(
                crate::mpi_abi::standard::convert::object_out(old),
                call.keyval,
                call.extra_state as *mut c_void,
                call.value as *mut c_void,
                (&mut out as *mut *mut c_void).cast(),
                &mut flag,
            )
        };
        crate::mpi_abi::standard::convert::code_in(rc)
    };
    #[cfg(not(feature = "standard-abi"))]
    // SAFETY: the user's copy function with MPI's arguments; the output
    // pointers are locals; no lock held.
    let rc = unsafe {
        f(
            old,
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

/// The copy callbacks due for `old`'s attributes, in their order.
fn copy_calls<S: AttributeStore>(old: c_int) -> MpiResult<Vec<CopyCall>> {
    let mut rt = runtime::lock();
    let entries = S::with(&mut rt, old, |a| a.entries())?;
    Ok(entries
        .into_iter()
        .map(|(k, v, kind)| rt.keyvals().copy_call(k, v, kind))
        .collect())
}

/// Copies `old`'s attributes to `new` through their copy callbacks (the
/// dup calls). If a copy callback fails, the attributes copied so far are
/// deleted again through their callbacks and the callback's error is the
/// result; the caller frees `new`.
pub fn copy_attributes<S: AttributeStore>(old: c_int, new: c_int) -> MpiResult {
    let copied = copy_calls::<S>(old).and_then(|calls| {
        for call in calls {
            if let Some(value) = run_copy(old, call)? {
                let mut rt = runtime::lock();
                rt.keyvals_mut().attach(call.keyval);
                S::with(&mut rt, new, |a| a.set(call.keyval, value, call.kind))?;
            }
        }
        Ok(())
    });
    if copied.is_err() {
        let _ = delete_attributes::<S>(new);
    }
    copied
}

/// Copies `oldcomm`'s attributes to `newcomm` (`MPI_Comm_dup`); if a copy
/// callback fails, `newcomm` is freed and the dup made nothing.
pub fn copy_all(oldcomm: MPI_Comm, newcomm: MPI_Comm) -> MpiResult {
    let copied = copy_attributes::<CommStore>(oldcomm, newcomm);
    if copied.is_err() {
        let _ = runtime::lock().free_comm(newcomm);
    }
    copied
}

/// The first half of [`copy_all`] for `MPI_Comm_idup`: runs `oldcomm`'s
/// copy callbacks now (so the values are those at the time of the call)
/// and takes a use of each copied keyval, so it outlives the wait; the
/// returned `(keyval, value)` pairs go to the new communicator with
/// [`attach_copies`] (or back with [`drop_copies`]).
pub fn prepare_copies(oldcomm: MPI_Comm) -> MpiResult<Vec<(c_int, usize, ValueKind)>> {
    let calls = copy_calls::<CommStore>(oldcomm)?;
    let mut copies = Vec::new();
    for call in calls {
        match run_copy(oldcomm, call) {
            Ok(Some(value)) => {
                runtime::lock().keyvals_mut().attach(call.keyval);
                copies.push((call.keyval, value, call.kind));
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
    copies: Vec<(c_int, usize, ValueKind)>,
) -> MpiResult {
    let c = rt.comms_mut().get_mut(newcomm)?;
    for (keyval, value, kind) in copies {
        c.attributes.set(keyval, value, kind);
    }
    Ok(())
}

/// Gives back the keyval uses of copies that will not be attached (the
/// values themselves are the program's; no delete callback runs, as the
/// attribute never existed on a communicator).
pub fn drop_copies(rt: &mut runtime::Runtime, copies: Vec<(c_int, usize, ValueKind)>) {
    for (keyval, _, _) in copies {
        rt.keyvals_mut().detach(keyval);
    }
}

/// Deletes every attribute of `object` through the delete callbacks, the
/// last set first (`MPI_Comm_free`, `MPI_Type_free`, and `MPI_Finalize`
/// for `MPI_COMM_SELF`, where MPI defines that order). A callback that
/// fails stops it: that attribute and the ones set before it stay, and its
/// error is the result.
pub fn delete_attributes<S: AttributeStore>(object: c_int) -> MpiResult {
    loop {
        let call = {
            let mut rt = runtime::lock();
            match S::with(&mut rt, object, |a| a.last())? {
                Some((keyval, value, kind)) => rt.keyvals().delete_callback(keyval, value, kind),
                None => return Ok(()),
            }
        };
        run_delete(object, call)?;
        forget::<S>(object, call.keyval)?;
    }
}

/// [`delete_attributes`] of a communicator.
pub fn delete_all(comm: MPI_Comm) -> MpiResult {
    delete_attributes::<CommStore>(comm)
}

/// Removes `keyval`'s attribute from `object` once its delete callback
/// succeeded, giving back the keyval's use.
fn forget<S: AttributeStore>(object: c_int, keyval: c_int) -> MpiResult {
    let mut rt = runtime::lock();
    if S::with(&mut rt, object, |a| a.remove(keyval))?.is_some() {
        rt.keyvals_mut().detach(keyval);
    }
    Ok(())
}

fn new_keyval(
    kind: AttrObject,
    copy: MPI_Comm_copy_attr_function,
    delete: MPI_Comm_delete_attr_function,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult {
    // SAFETY: `keyval` is the create call's output: NULL (rejected by
    // `out`) or valid for writing one `int` during this call.
    let keyval = unsafe { out(keyval, "keyval") }?;
    *keyval = runtime::lock()
        .keyvals_mut()
        .create(kind, copy, delete, extra_state as usize);
    Ok(())
}

/// `MPI_Comm_set_attr`/`MPI_Type_set_attr`: a value it replaces goes
/// through the delete callback first; if that fails, the old value stays
/// and the error is the result. `kind`: how the caller gave the value.
pub(crate) fn set<S: AttributeStore>(
    object: c_int,
    keyval: c_int,
    value: *mut c_void,
    kind: ValueKind,
) -> MpiResult {
    if S::is_predefined(keyval) {
        return Err(MpiError::new(
            MPI_ERR_KEYVAL,
            "predefined attributes cannot be set",
        ));
    }
    let replaced = {
        let mut rt = runtime::lock();
        let old = S::with(&mut rt, object, |a| a.stored(keyval))?;
        rt.keyvals().get(keyval, S::KIND)?;
        old.map(|old| rt.keyvals().delete_callback(keyval, old.value, old.kind))
    };
    if let Some(call) = replaced {
        run_delete(object, call)?;
    }
    let mut rt = runtime::lock();
    rt.keyvals().get(keyval, S::KIND)?;
    let old = S::with(&mut rt, object, |a| a.set(keyval, value as usize, kind))?;
    if old.is_none() {
        rt.keyvals_mut().attach(keyval);
    }
    Ok(())
}

/// `*attribute_val` receives the attribute as a caller of kind `want` sees
/// it (MPI 4.1 §20.3.7, as MPICH does it):
/// - C (`want` [`ValueKind::Pointer`]): a value set from C as it is; one set
///   from Fortran as the address of the stored integer; a predefined
///   attribute as the address of its value (`MPI_WIN_BASE`: the base).
/// - Fortran ([`ValueKind::Address`], [`ValueKind::Integer`]): the value as
///   an address-sized integer, whatever set it (a predefined attribute: its
///   value), which MPICH's binding narrows to an `INTEGER` for the latter.
pub(crate) unsafe fn get<S: AttributeStore>(
    object: c_int,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: &mut c_int,
    want: ValueKind,
) -> MpiResult {
    // SAFETY: `attribute_val` is a `void *` that MPI defines as the address of
    // a `void *` the call writes: NULL (rejected by `out`) or valid for that
    // one write during this call.
    let slot = unsafe { out(attribute_val.cast::<*mut c_void>(), "attribute_val") }?;
    let mut rt = runtime::lock();
    let value = S::with(&mut rt, object, |a| a.stored(keyval))?;
    if let Some(p) = S::predefined(&mut rt, object, keyval) {
        *slot = match want {
            ValueKind::Pointer => p,
            ValueKind::Address | ValueKind::Integer => {
                S::predefined_integer(keyval, p) as *mut c_void
            }
        };
        *flag = 1;
        return Ok(());
    }
    if S::is_predefined(keyval) {
        // A predefined attribute without a value (MPI_UNIVERSE_SIZE when
        // the launcher does not know it).
        *flag = 0;
        return Ok(());
    }
    rt.keyvals().existing(keyval, S::KIND)?;
    match value {
        Some(v) => {
            let from_fortran = v.kind != ValueKind::Pointer;
            *slot = if want == ValueKind::Pointer && from_fortran {
                v.address as *mut c_void
            } else {
                v.value as *mut c_void
            };
            *flag = 1;
        }
        None => *flag = 0,
    }
    Ok(())
}

/// `MPI_Comm_delete_attr`/`MPI_Type_delete_attr`: if the delete callback
/// fails, the attribute stays and the error is the result.
fn delete<S: AttributeStore>(object: c_int, keyval: c_int) -> MpiResult {
    let call = {
        let mut rt = runtime::lock();
        let value = S::with(&mut rt, object, |a| a.stored(keyval))?;
        rt.keyvals().existing(keyval, S::KIND)?;
        let value = value.ok_or_else(|| {
            MpiError::new(
                MPI_ERR_KEYVAL,
                format!("keyval {keyval:#x} has no value on this {}", S::KIND.noun()),
            )
        })?;
        rt.keyvals()
            .delete_callback(keyval, value.value, value.kind)
    };
    run_delete(object, call)?;
    forget::<S>(object, keyval)
}

// ---- Communicators ----

pub unsafe fn create_keyval(
    copy: MPI_Comm_copy_attr_function,
    delete: MPI_Comm_delete_attr_function,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult {
    new_keyval(AttrObject::Comm, copy, delete, keyval, extra_state)
}

/// `MPI_Keyval_create` (deprecated): the same callbacks' types.
pub unsafe fn keyval_create(
    copy: MPI_Copy_function,
    delete: MPI_Delete_function,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult {
    new_keyval(AttrObject::Comm, copy, delete, keyval, extra_state)
}

pub unsafe fn free_keyval(keyval: &mut c_int) -> MpiResult {
    runtime::lock()
        .keyvals_mut()
        .free(*keyval, AttrObject::Comm)?;
    *keyval = MPI_KEYVAL_INVALID;
    Ok(())
}

pub unsafe fn set_attr(comm: MPI_Comm, keyval: c_int, value: *mut c_void) -> MpiResult {
    set::<CommStore>(comm, keyval, value, ValueKind::Pointer)
}

pub unsafe fn get_attr(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: &mut c_int,
) -> MpiResult {
    // SAFETY: MPI_Comm_get_attr's arguments, passed on unchanged.
    unsafe { get::<CommStore>(comm, keyval, attribute_val, flag, ValueKind::Pointer) }
}

pub unsafe fn delete_attr(comm: MPI_Comm, keyval: c_int) -> MpiResult {
    delete::<CommStore>(comm, keyval)
}

// ---- Datatypes ----

pub unsafe fn type_create_keyval(
    copy: MPI_Type_copy_attr_function,
    delete: MPI_Type_delete_attr_function,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult {
    new_keyval(AttrObject::Datatype, copy, delete, keyval, extra_state)
}

pub unsafe fn type_free_keyval(keyval: &mut c_int) -> MpiResult {
    runtime::lock()
        .keyvals_mut()
        .free(*keyval, AttrObject::Datatype)?;
    *keyval = MPI_KEYVAL_INVALID;
    Ok(())
}

pub unsafe fn type_set_attr(
    datatype: MPI_Datatype,
    keyval: c_int,
    value: *mut c_void,
) -> MpiResult {
    set::<DatatypeStore>(datatype, keyval, value, ValueKind::Pointer)
}

pub unsafe fn type_get_attr(
    datatype: MPI_Datatype,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: &mut c_int,
) -> MpiResult {
    // SAFETY: MPI_Type_get_attr's arguments, passed on unchanged.
    unsafe { get::<DatatypeStore>(datatype, keyval, attribute_val, flag, ValueKind::Pointer) }
}

pub unsafe fn type_delete_attr(datatype: MPI_Datatype, keyval: c_int) -> MpiResult {
    delete::<DatatypeStore>(datatype, keyval)
}

// ---- Windows ----

pub unsafe fn win_create_keyval(
    copy: MPI_Win_copy_attr_function,
    delete: MPI_Win_delete_attr_function,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> MpiResult {
    new_keyval(AttrObject::Win, copy, delete, keyval, extra_state)
}

pub unsafe fn win_free_keyval(keyval: &mut c_int) -> MpiResult {
    runtime::lock()
        .keyvals_mut()
        .free(*keyval, AttrObject::Win)?;
    *keyval = MPI_KEYVAL_INVALID;
    Ok(())
}

pub unsafe fn win_set_attr(win: MPI_Win, keyval: c_int, value: *mut c_void) -> MpiResult {
    set::<WinStore>(win, keyval, value, ValueKind::Pointer)
}

pub unsafe fn win_get_attr(
    win: MPI_Win,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: &mut c_int,
) -> MpiResult {
    // SAFETY: MPI_Win_get_attr's arguments, passed on unchanged.
    unsafe { get::<WinStore>(win, keyval, attribute_val, flag, ValueKind::Pointer) }
}

pub unsafe fn win_delete_attr(win: MPI_Win, keyval: c_int) -> MpiResult {
    delete::<WinStore>(win, keyval)
}
