//! Datatype handles: the predefined types (a fixed table, read without any
//! lock) and user types in a handle table behind their own `RwLock`, never
//! the runtime lock, so datatype calls work before init, after finalize and
//! from any thread while communication runs.
//!
//! A user handle names an `Arc<Datatype>`; freeing the handle drops only
//! the table's reference, so derived types and operations in flight that
//! hold the type keep it. `MPI_Type_get_contents` hands out the same
//! handle again while it is live (counting one more reference, as MPICH
//! does: each returned handle is freed once), or a new one after it was
//! freed.
use std::collections::HashMap;
use std::os::raw::c_int;
use std::sync::{Arc, LazyLock};

use crate::core::locks::{Level, OrderedReadGuard, OrderedRwLock, OrderedWriteGuard};

use super::builtin::{self, PrimId, BUILTINS, PAIR_HANDLE_COUNT};
use super::Datatype;
use crate::core::attributes::Attributes;
use crate::core::error::{MpiError, MpiResult};
use crate::core::handles::{HandleTable, ObjectKind};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::MPI_Datatype;

struct Entry {
    datatype: Arc<Datatype>,
    name: String,
    /// Cached attributes (`MPI_Type_set_attr`), shared by the handles
    /// `get_contents` gave out for the same type.
    attributes: Attributes,
    /// Handle references: 1, plus one per `get_contents` that returned it.
    refs: usize,
}

struct Registry {
    user: HandleTable<Entry>,
    /// Names set on predefined types with `MPI_Type_set_name`.
    renamed: HashMap<MPI_Datatype, String>,
    /// Attributes cached on predefined types.
    predefined_attributes: HashMap<MPI_Datatype, Attributes>,
    /// The types `MPI_Type_create_f90_*` returned, one per combiner and
    /// parameters: like predefined types they live as long as the
    /// process and cannot be freed.
    f90: HashMap<(c_int, c_int, c_int), MPI_Datatype>,
}

/// The predefined types, indexed like `BUILTINS`.
static PREDEFINED: LazyLock<Vec<Arc<Datatype>>> = LazyLock::new(|| {
    (0..BUILTINS.len())
        .map(|i| Arc::new(Datatype::predefined(i as PrimId)))
        .collect()
});

static REGISTRY: LazyLock<OrderedRwLock<Registry>> = LazyLock::new(|| {
    let mut user = HandleTable::reusing_at_once(ObjectKind::Datatype);
    // The pair types own DIRECT indexes 0..=4; park their rows there so
    // no user type ever gets one of those handles.
    for i in 0..PAIR_HANDLE_COUNT {
        let handle = MPI_FLOAT_INT + i as MPI_Datatype;
        let (id, _) = builtin::find(handle).expect("pair types are in the builtin table");
        let parked = user.insert(Entry {
            datatype: PREDEFINED[id as usize].clone(),
            name: String::new(),
            attributes: Attributes::default(),
            refs: 1,
        });
        assert_eq!(parked, handle);
    }
    OrderedRwLock::new(
        Level::Datatypes,
        Registry {
            user,
            renamed: HashMap::new(),
            predefined_attributes: HashMap::new(),
            f90: HashMap::new(),
        },
    )
});

fn read() -> OrderedReadGuard<'static, Registry> {
    REGISTRY.read()
}

fn write() -> OrderedWriteGuard<'static, Registry> {
    REGISTRY.write()
}

fn invalid(h: MPI_Datatype) -> MpiError {
    if h == MPI_DATATYPE_NULL {
        MpiError::new(
            MPI_ERR_TYPE,
            "MPI_DATATYPE_NULL is not a valid datatype here",
        )
    } else {
        MpiError::new(
            MPI_ERR_TYPE,
            format!(
                "handle {:#010x} is not a valid (or a freed) datatype",
                h as u32
            ),
        )
    }
}

/// The predefined type of a handle, without locking.
#[inline]
pub fn predefined(h: MPI_Datatype) -> Option<&'static Arc<Datatype>> {
    let (id, _) = builtin::find(h)?;
    Some(&PREDEFINED[id as usize])
}

/// Whether `h` is a predefined datatype handle.
pub fn is_predefined(h: MPI_Datatype) -> bool {
    predefined(h).is_some()
}

/// The datatype a handle names: predefined or user, committed or not.
pub fn lookup(h: MPI_Datatype) -> MpiResult<Arc<Datatype>> {
    if let Some(t) = predefined(h) {
        return Ok(t.clone());
    }
    read()
        .user
        .get(h)
        .map(|e| e.datatype.clone())
        .ok_or_else(|| invalid(h))
}

/// A datatype as an operation holds it: a predefined type by reference
/// (no reference count to touch on the path of every message), any other
/// shared.
#[derive(Clone)]
pub enum TypeRef {
    Predefined(&'static Datatype),
    Derived(Arc<Datatype>),
}

impl std::ops::Deref for TypeRef {
    type Target = Datatype;

    fn deref(&self) -> &Datatype {
        match self {
            TypeRef::Predefined(t) => t,
            TypeRef::Derived(t) => t,
        }
    }
}

impl From<Arc<Datatype>> for TypeRef {
    fn from(t: Arc<Datatype>) -> TypeRef {
        TypeRef::Derived(t)
    }
}

/// As [`lookup_committed`], without touching a predefined type's count.
#[inline(always)]
pub fn lookup_for_message(h: MPI_Datatype) -> MpiResult<TypeRef> {
    match predefined(h) {
        Some(t) => Ok(TypeRef::Predefined(t)),
        None => lookup_committed(h).map(TypeRef::Derived),
    }
}

/// As [`lookup`], for communication: a derived type must be committed.
pub fn lookup_committed(h: MPI_Datatype) -> MpiResult<Arc<Datatype>> {
    let t = lookup(h)?;
    if !t.is_committed() {
        return Err(MpiError::new(
            MPI_ERR_TYPE,
            format!(
                "datatype {:#010x} is not committed (call MPI_Type_commit first)",
                h as u32
            ),
        ));
    }
    Ok(t)
}

/// Gives a new type a handle.
pub fn register(t: Datatype) -> MPI_Datatype {
    write().user.insert(Entry {
        datatype: Arc::new(t),
        name: String::new(),
        attributes: Attributes::default(),
        refs: 1,
    })
}

/// The handle of the `MPI_Type_create_f90_*` type keyed by its combiner
/// and parameters (`key`): the same every time, made by `make` the first.
pub fn f90_type(key: (c_int, c_int, c_int), make: impl FnOnce() -> Datatype) -> MPI_Datatype {
    let mut reg = write();
    if let Some(&h) = reg.f90.get(&key) {
        return h;
    }
    let h = reg.user.insert(Entry {
        datatype: Arc::new(make()),
        name: String::new(),
        attributes: Attributes::default(),
        refs: 1,
    });
    reg.f90.insert(key, h);
    h
}

/// Runs `f` on the attributes cached on the type `h` names.
pub fn with_attributes<R>(h: MPI_Datatype, f: impl FnOnce(&mut Attributes) -> R) -> MpiResult<R> {
    let mut reg = write();
    if is_predefined(h) {
        return Ok(f(reg.predefined_attributes.entry(h).or_default()));
    }
    let entry = reg.user.get_mut(h).ok_or_else(|| invalid(h))?;
    Ok(f(&mut entry.attributes))
}

/// Whether freeing `h` drops its last handle reference (the type's
/// attributes are deleted first then).
pub fn is_last_reference(h: MPI_Datatype) -> MpiResult<bool> {
    if is_predefined(h) {
        return Ok(false);
    }
    read()
        .user
        .get(h)
        .map(|e| e.refs == 1)
        .ok_or_else(|| invalid(h))
}

/// `MPI_Type_free`: drops one handle reference.
pub fn free(h: MPI_Datatype) -> MpiResult {
    if is_predefined(h) {
        return Err(MpiError::new(
            MPI_ERR_TYPE,
            "a predefined datatype cannot be freed",
        ));
    }
    let mut reg = write();
    if reg.f90.values().any(|&f| f == h) {
        return Err(MpiError::new(
            MPI_ERR_TYPE,
            "a type of MPI_Type_create_f90_* is predefined and cannot be freed",
        ));
    }
    let entry = reg.user.get_mut(h).ok_or_else(|| invalid(h))?;
    entry.refs -= 1;
    if entry.refs == 0 {
        reg.user.remove(h);
    }
    Ok(())
}

/// A handle for `t`, which a type's contents name as `h`: `h` itself while
/// it still names `t` (one more reference), else a new handle.
pub fn handle_for(h: MPI_Datatype, t: &Arc<Datatype>) -> MPI_Datatype {
    if is_predefined(h) {
        return h;
    }
    let mut reg = write();
    if let Some(entry) = reg.user.get_mut(h) {
        if Arc::ptr_eq(&entry.datatype, t) {
            entry.refs += 1;
            return h;
        }
    }
    reg.user.insert(Entry {
        datatype: t.clone(),
        name: String::new(),
        attributes: Attributes::default(),
        refs: 1,
    })
}

pub fn set_name(h: MPI_Datatype, name: &str) -> MpiResult {
    if is_predefined(h) {
        write().renamed.insert(h, name.to_string());
        return Ok(());
    }
    let mut reg = write();
    reg.user.get_mut(h).ok_or_else(|| invalid(h))?.name = name.to_string();
    Ok(())
}

/// The type's name: set by the program, else the predefined name, else "".
pub fn name(h: MPI_Datatype) -> MpiResult<String> {
    let reg = read();
    if let Some(t) = predefined(h) {
        let name = reg
            .renamed
            .get(&h)
            .map(String::as_str)
            .or(t.predefined_name())
            .unwrap_or("");
        return Ok(name.to_string());
    }
    reg.user
        .get(h)
        .map(|e| e.name.clone())
        .ok_or_else(|| invalid(h))
}
