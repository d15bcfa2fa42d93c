//! Attribute caching: keyvals with their copy and delete callbacks (one
//! table for the keyvals of communicators and datatypes, each keyval
//! tagged with the kind of object it is for: a communicator keyval used on
//! a datatype is `MPI_ERR_KEYVAL`), the values cached on each object, and
//! the predefined
//! attributes (`MPI_TAG_UB`, `MPI_HOST`, `MPI_IO`, `MPI_WTIME_IS_GLOBAL`,
//! `MPI_UNIVERSE_SIZE`, `MPI_APPNUM`, `MPI_LASTUSEDCODE`), readable on every
//! communicator. Callbacks are user code: they are called without the
//! runtime lock (the functions here hand them back to the caller instead).
//!
//! Each value remembers how it was set ([`ValueKind`]: a C `void *`, or a
//! Fortran `INTEGER(KIND=MPI_ADDRESS_KIND)` or `INTEGER` given through
//! MPICH's `libmpichfort`), and lives in its own heap cell, so a C get of a
//! Fortran value can return the address of that integer (MPI 4.1 §20.3.7)
//! and the address stays valid while the attribute is not replaced or
//! deleted.
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};

use super::error::{MpiError, MpiResult};
use super::handles::{HandleTable, ObjectKind};
use crate::mpi_abi::callbacks::{
    MPII_Attr_copy_proxy, MPII_Attr_delete_proxy, MPI_Comm_copy_attr_function,
    MPI_Comm_delete_attr_function,
};
use crate::mpi_abi::constants::*;

/// The kind of object a keyval caches values on. The callbacks of every
/// kind have the same C signature in the MPICH ABI (the object handle is an
/// `int`), so one [`Keyval`] shape serves them all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrObject {
    Comm,
    Datatype,
    Win,
}

impl AttrObject {
    pub fn noun(self) -> &'static str {
        match self {
            AttrObject::Comm => "communicator",
            AttrObject::Datatype => "datatype",
            AttrObject::Win => "window",
        }
    }
}

/// How an attribute value was set: the language's view of it, which a get
/// from another language converts (MPICH's `MPIR_Attr_type`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ValueKind {
    /// A C `void *` (`MPI_Comm_set_attr` from C).
    #[default]
    Pointer,
    /// A Fortran `INTEGER(KIND=MPI_ADDRESS_KIND)` (`MPI_Comm_set_attr` from
    /// Fortran), kept as an address-sized integer.
    Address,
    /// A Fortran `INTEGER` (`MPI_Attr_put` from Fortran), kept
    /// sign-extended to an address-sized integer.
    Integer,
}

/// The functions through which MPICH's Fortran binding has a keyval's
/// callbacks called (`MPII_Keyval_set_proxy`): the callbacks stored in the
/// keyval are Fortran procedures, which the proxies call with Fortran's
/// conventions.
#[derive(Clone, Copy)]
pub struct LanguageProxy {
    pub copy: MPII_Attr_copy_proxy,
    pub delete: MPII_Attr_delete_proxy,
}

pub struct Keyval {
    pub kind: AttrObject,
    pub copy: MPI_Comm_copy_attr_function,
    pub delete: MPI_Comm_delete_attr_function,
    pub extra_state: usize,
    /// Set for keyvals made from Fortran: the callbacks are called through
    /// these.
    pub proxy: Option<LanguageProxy>,
    /// `MPI_Comm_free_keyval` was called; the keyval lives while attributes
    /// use it.
    freed: bool,
    uses: usize,
}

/// One cached value, in its own heap cell (see the module's notes).
#[derive(Clone)]
struct Entry {
    keyval: c_int,
    value: Box<usize>,
    kind: ValueKind,
}

/// A value as stored: the value, how it was set, and the address of its
/// cell (valid until the attribute is replaced or deleted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stored {
    pub value: usize,
    pub kind: ValueKind,
    pub address: usize,
}

/// The values cached on one object, by keyval, in the order they were set.
#[derive(Default, Clone)]
pub struct Attributes {
    values: Vec<Entry>,
}

impl Attributes {
    pub fn get(&self, keyval: c_int) -> Option<usize> {
        self.stored(keyval).map(|s| s.value)
    }

    /// The value of `keyval` with how it was set and where it is kept.
    pub fn stored(&self, keyval: c_int) -> Option<Stored> {
        self.values
            .iter()
            .find(|e| e.keyval == keyval)
            .map(|e| Stored {
                value: *e.value,
                kind: e.kind,
                address: &*e.value as *const usize as usize,
            })
    }

    /// Sets a value; returns the one it replaces.
    pub fn set(&mut self, keyval: c_int, value: usize, kind: ValueKind) -> Option<usize> {
        match self.values.iter_mut().find(|e| e.keyval == keyval) {
            Some(entry) => {
                entry.kind = kind;
                Some(std::mem::replace(&mut *entry.value, value))
            }
            None => {
                self.values.push(Entry {
                    keyval,
                    value: Box::new(value),
                    kind,
                });
                None
            }
        }
    }

    pub fn remove(&mut self, keyval: c_int) -> Option<usize> {
        let i = self.values.iter().position(|e| e.keyval == keyval)?;
        Some(*self.values.remove(i).value)
    }

    /// The attribute set last: its keyval, value and kind.
    pub fn last(&self) -> Option<(c_int, usize, ValueKind)> {
        self.values.last().map(|e| (e.keyval, *e.value, e.kind))
    }

    /// Every attribute, in the order they were set.
    pub fn entries(&self) -> Vec<(c_int, usize, ValueKind)> {
        self.values
            .iter()
            .map(|e| (e.keyval, *e.value, e.kind))
            .collect()
    }
}

/// A callback to run (without the lock) for one attribute.
#[derive(Clone, Copy)]
pub struct DeleteCall {
    pub function: MPI_Comm_delete_attr_function,
    pub keyval: c_int,
    pub value: usize,
    pub kind: ValueKind,
    pub extra_state: usize,
    pub proxy: Option<LanguageProxy>,
}

#[derive(Clone, Copy)]
pub struct CopyCall {
    pub function: MPI_Comm_copy_attr_function,
    pub keyval: c_int,
    pub value: usize,
    /// How the value was set; the copy keeps it.
    pub kind: ValueKind,
    pub extra_state: usize,
    pub proxy: Option<LanguageProxy>,
}

pub struct Keyvals {
    table: HandleTable<Keyval>,
}

impl Default for Keyvals {
    fn default() -> Self {
        Keyvals {
            table: HandleTable::new(ObjectKind::Keyval),
        }
    }
}

fn invalid(keyval: c_int, kind: AttrObject) -> MpiError {
    MpiError::new(
        MPI_ERR_KEYVAL,
        format!("{keyval:#x} is not a valid {} keyval", kind.noun()),
    )
}

impl Keyvals {
    pub fn create(
        &mut self,
        kind: AttrObject,
        copy: MPI_Comm_copy_attr_function,
        delete: MPI_Comm_delete_attr_function,
        extra_state: usize,
    ) -> c_int {
        self.table.insert(Keyval {
            kind,
            copy,
            delete,
            extra_state,
            proxy: None,
            freed: false,
            uses: 0,
        })
    }

    /// `MPII_Keyval_set_proxy`: `keyval`'s callbacks are to be called
    /// through `proxy`. An unknown keyval is ignored (MPICH's function
    /// returns nothing; the Fortran binding calls it right after creating
    /// the keyval).
    pub fn set_proxy(&mut self, keyval: c_int, proxy: LanguageProxy) {
        if let Some(k) = self.table.get_mut(keyval) {
            k.proxy = Some(proxy);
        }
    }

    pub fn free(&mut self, keyval: c_int, kind: AttrObject) -> MpiResult {
        if (kind == AttrObject::Comm && is_predefined(keyval))
            || (kind == AttrObject::Win && is_predefined_win(keyval))
        {
            return Err(MpiError::new(
                MPI_ERR_KEYVAL,
                "a predefined keyval cannot be freed",
            ));
        }
        let k = self
            .table
            .get_mut(keyval)
            .filter(|k| k.kind == kind)
            .ok_or_else(|| invalid(keyval, kind))?;
        // Freeing again while attributes still hold it changes nothing
        // (as in MPICH: a delete callback may free the keyval it is
        // called for).
        k.freed = true;
        if k.uses == 0 {
            self.table.remove(keyval);
        }
        Ok(())
    }

    /// A live keyval (not freed by the user) of objects of `kind`.
    pub fn get(&self, keyval: c_int, kind: AttrObject) -> MpiResult<&Keyval> {
        self.table
            .get(keyval)
            .filter(|k| !k.freed && k.kind == kind)
            .ok_or_else(|| invalid(keyval, kind))
    }

    /// A keyval still used by attributes, freed or not.
    fn get_any(&self, keyval: c_int) -> Option<&Keyval> {
        self.table.get(keyval)
    }

    /// A keyval that exists: live, or freed by the user but still used by
    /// attributes, which may be read and deleted through it.
    pub fn existing(&self, keyval: c_int, kind: AttrObject) -> MpiResult<&Keyval> {
        self.get_any(keyval)
            .filter(|k| k.kind == kind)
            .ok_or_else(|| invalid(keyval, kind))
    }

    pub fn attach(&mut self, keyval: c_int) {
        if let Some(k) = self.table.get_mut(keyval) {
            k.uses += 1;
        }
    }

    pub fn detach(&mut self, keyval: c_int) {
        if let Some(k) = self.table.get_mut(keyval) {
            k.uses = k.uses.saturating_sub(1);
            if k.freed && k.uses == 0 {
                self.table.remove(keyval);
            }
        }
    }

    /// The delete callback of an attribute, which stays until the callback
    /// succeeds (then [`Keyvals::detach`]).
    pub fn delete_callback(&self, keyval: c_int, value: usize, kind: ValueKind) -> DeleteCall {
        let k = self.get_any(keyval);
        DeleteCall {
            function: k.and_then(|k| k.delete),
            keyval,
            value,
            kind,
            extra_state: k.map_or(0, |k| k.extra_state),
            proxy: k.and_then(|k| k.proxy),
        }
    }

    pub fn copy_call(&self, keyval: c_int, value: usize, kind: ValueKind) -> CopyCall {
        let k = self.get_any(keyval);
        CopyCall {
            function: k.and_then(|k| k.copy),
            keyval,
            value,
            kind,
            extra_state: k.map_or(0, |k| k.extra_state),
            proxy: k.and_then(|k| k.proxy),
        }
    }
}

pub fn is_predefined(keyval: c_int) -> bool {
    matches!(
        keyval,
        MPI_TAG_UB
            | MPI_HOST
            | MPI_IO
            | MPI_WTIME_IS_GLOBAL
            | MPI_UNIVERSE_SIZE
            | MPI_LASTUSEDCODE
            | MPI_APPNUM
    )
}

/// The predefined window attributes (`MPI_WIN_BASE`...).
pub fn is_predefined_win(keyval: c_int) -> bool {
    matches!(
        keyval,
        MPI_WIN_BASE | MPI_WIN_SIZE | MPI_WIN_DISP_UNIT | MPI_WIN_CREATE_FLAVOR | MPI_WIN_MODEL
    )
}

static TAG_UB_VALUE: AtomicI32 = AtomicI32::new(c_int::MAX);
static HOST_VALUE: AtomicI32 = AtomicI32::new(MPI_PROC_NULL);
static IO_VALUE: AtomicI32 = AtomicI32::new(MPI_ANY_SOURCE);
static WTIME_IS_GLOBAL_VALUE: AtomicI32 = AtomicI32::new(0);
static UNIVERSE_SIZE_VALUE: AtomicI32 = AtomicI32::new(1);
static APPNUM_VALUE: AtomicI32 = AtomicI32::new(0);
static LASTUSEDCODE_VALUE: AtomicI32 = AtomicI32::new(0);

/// Records the job's values for the predefined attributes.
pub fn set_job_values(universe_size: i32, appnum: i32) {
    UNIVERSE_SIZE_VALUE.store(universe_size, Ordering::Relaxed);
    APPNUM_VALUE.store(appnum, Ordering::Relaxed);
}

/// The address of a predefined attribute's value (an `int` that stays
/// valid for the life of the process), as `MPI_Comm_get_attr` returns it.
pub fn predefined_value(keyval: c_int) -> Option<*mut c_void> {
    let cell = match keyval {
        MPI_TAG_UB => &TAG_UB_VALUE,
        MPI_HOST => &HOST_VALUE,
        MPI_IO => &IO_VALUE,
        MPI_WTIME_IS_GLOBAL => &WTIME_IS_GLOBAL_VALUE,
        // Not set when the launcher does not know it (as in MPICH).
        MPI_UNIVERSE_SIZE if UNIVERSE_SIZE_VALUE.load(Ordering::Relaxed) < 0 => return None,
        MPI_UNIVERSE_SIZE => &UNIVERSE_SIZE_VALUE,
        MPI_APPNUM => &APPNUM_VALUE,
        MPI_LASTUSEDCODE => {
            LASTUSEDCODE_VALUE.store(super::error_codes::last_used_code(), Ordering::Relaxed);
            &LASTUSEDCODE_VALUE
        }
        _ => return None,
    };
    Some(cell.as_ptr().cast())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_replace_and_keyvals_live_while_used() {
        let mut a = Attributes::default();
        assert_eq!(a.set(5, 1, ValueKind::Pointer), None);
        let cell = a.stored(5).unwrap().address;
        assert_eq!(a.set(5, 2, ValueKind::Integer), Some(1));
        assert_eq!(a.get(5), Some(2));
        assert_eq!(
            a.stored(5),
            Some(Stored {
                value: 2,
                kind: ValueKind::Integer,
                address: cell
            }),
            "replacing keeps the cell and takes the new kind"
        );
        a.set(6, 3, ValueKind::Address);
        assert_eq!(
            a.stored(5).unwrap().address,
            cell,
            "a cell stays where it is when others are added"
        );
        assert_eq!(a.remove(5), Some(2));
        assert_eq!(a.get(5), None);

        let mut k = Keyvals::default();
        let key = k.create(AttrObject::Comm, None, None, 7);
        k.attach(key);
        k.free(key, AttrObject::Comm).unwrap();
        assert!(
            k.get(key, AttrObject::Comm).is_err(),
            "a freed keyval cannot be used for new attributes"
        );
        assert!(
            k.existing(key, AttrObject::Comm).is_ok(),
            "but its attributes can be reached"
        );
        k.free(key, AttrObject::Comm)
            .expect("freeing again while in use changes nothing");
        assert_eq!(
            k.delete_callback(key, 3, ValueKind::Pointer).extra_state,
            7,
            "but its callbacks still run"
        );
        k.detach(key);
        assert!(
            k.get_any(key).is_none(),
            "and it goes with its last attribute"
        );
        assert!(k.free(key, AttrObject::Comm).is_err(), "then it is gone");
        assert_eq!(
            k.free(MPI_TAG_UB, AttrObject::Comm).unwrap_err().class,
            MPI_ERR_KEYVAL
        );
    }

    #[test]
    fn a_keyval_serves_only_its_kind_of_object() {
        let mut k = Keyvals::default();
        let t = k.create(AttrObject::Datatype, None, None, 0);
        let c = k.create(AttrObject::Comm, None, None, 0);
        assert!(k.get(t, AttrObject::Datatype).is_ok());
        assert_eq!(
            k.get(t, AttrObject::Comm).err().map(|e| e.class),
            Some(MPI_ERR_KEYVAL)
        );
        assert!(k.existing(c, AttrObject::Datatype).is_err());
        assert!(
            k.free(c, AttrObject::Datatype).is_err(),
            "a communicator keyval is not freed as a datatype one"
        );
        assert!(k.free(t, AttrObject::Datatype).is_ok());
    }

    #[test]
    fn predefined_values_point_at_ints() {
        set_job_values(8, 0);
        let p = predefined_value(MPI_UNIVERSE_SIZE).unwrap() as *const c_int;
        // SAFETY: the pointer is to a static AtomicI32 (same layout as int).
        assert_eq!(unsafe { *p }, 8);
        assert!(predefined_value(12345).is_none());
    }
}
