//! The data objects libmpich.so.12 exports, and `MPIR_Dup_fn`.
//!
//! A program built with MPICH's `mpicc` that uses one of these names gets a copy relocation
//! for it, so oxmpi must export each one as a data object of the same size (listed in
//! docs/reference/mpich-abi-constants.txt, "Exported data symbols"). Their C declarations are in
//! `mpi_trailer.h`; cbindgen skips them here.
//!
//! Because of copy relocations a program may read its own copy of a pointer symbol, but the
//! *value* is the same in every copy, so code that recognizes a sentinel (e.g. `weights ==
//! MPI_UNWEIGHTED`) must compare the argument with the sentinel address, through
//! [`is_unweighted`] and friends, never with the address of the symbol.
#![allow(non_upper_case_globals)]

use super::constants::{MPI_ERR_ARG, MPI_ERR_INTERN, MPI_SUCCESS};
use super::types::*;
use std::os::raw::{c_int, c_void};
use std::ptr;

// ---- Sentinel targets (private; only their addresses matter) ----
// The values are MPICH's, which makes a stray read recognizable in a debugger.
static mut UNWEIGHTED_DUMMY: c_int = 0x46618;
static mut WEIGHTS_EMPTY_DUMMY: c_int = 0x022284;
static mut PVAR_ALL_HANDLES_DUMMY: u8 = 0;

const F08_STATUS_ZERO: MPI_F08_status = MPI_F08_status {
    count_lo: 0,
    count_hi_and_cancelled: 0,
    MPI_SOURCE: 0,
    MPI_TAG: 0,
    MPI_ERROR: 0,
};

// ---- Topology weights sentinels (C: `int *const`, 8 bytes) ----
/// cbindgen:ignore
#[no_mangle]
pub static mut MPI_UNWEIGHTED: *mut c_int = &raw mut UNWEIGHTED_DUMMY;
/// cbindgen:ignore
#[no_mangle]
pub static mut MPI_WEIGHTS_EMPTY: *mut c_int = &raw mut WEIGHTS_EMPTY_DUMMY;

// ---- Fortran status sentinels (C: `MPI_Fint *`, 8 bytes, NULL in a C program) ----
/// cbindgen:ignore
#[no_mangle]
pub static mut MPI_F_STATUS_IGNORE: *mut MPI_Fint = ptr::null_mut();
/// cbindgen:ignore
#[no_mangle]
pub static mut MPI_F_STATUSES_IGNORE: *mut MPI_Fint = ptr::null_mut();

// ---- Fortran 2008 binding objects ----
/// cbindgen:ignore
#[no_mangle]
pub static mut MPIR_F08_MPI_STATUS_IGNORE_OBJ: MPI_F08_status = F08_STATUS_ZERO;
/// cbindgen:ignore
#[no_mangle]
pub static mut MPIR_F08_MPI_STATUSES_IGNORE_OBJ: [MPI_F08_status; 1] = [F08_STATUS_ZERO];
/// cbindgen:ignore
#[no_mangle]
pub static mut MPIR_F08_MPI_IN_PLACE: c_int = 0;
/// cbindgen:ignore
#[no_mangle]
pub static mut MPIR_F08_MPI_BOTTOM: c_int = 0;
/// C: `MPI_F08_status *`, points at `MPIR_F08_MPI_STATUS_IGNORE_OBJ`.
///
/// cbindgen:ignore
#[no_mangle]
pub static mut MPI_F08_STATUS_IGNORE: *mut MPI_F08_status = &raw mut MPIR_F08_MPI_STATUS_IGNORE_OBJ;
/// C: `MPI_F08_status *`, points at `MPIR_F08_MPI_STATUSES_IGNORE_OBJ[0]`.
///
/// cbindgen:ignore
#[no_mangle]
pub static mut MPI_F08_STATUSES_IGNORE: *mut MPI_F08_status =
    &raw mut MPIR_F08_MPI_STATUSES_IGNORE_OBJ as *mut MPI_F08_status;
/// Fortran glue copies of the weights sentinels (libmpich exports them; not in mpi.h).
///
/// cbindgen:ignore
#[no_mangle]
pub static mut MPIR_C_MPI_UNWEIGHTED: *mut c_int = &raw mut UNWEIGHTED_DUMMY;
/// cbindgen:ignore
#[no_mangle]
pub static mut MPIR_C_MPI_WEIGHTS_EMPTY: *mut c_int = &raw mut WEIGHTS_EMPTY_DUMMY;

// ---- MPI_T ----
/// C: `struct MPIR_T_pvar_handle_s *const`, a non-null handle distinct from every real one.
///
/// cbindgen:ignore
#[no_mangle]
pub static mut MPI_T_PVAR_ALL_HANDLES: MPI_T_pvar_handle =
    &raw mut PVAR_ALL_HANDLES_DUMMY as MPI_T_pvar_handle;

// ---- Sentinel tests for the entry points ----

/// Whether `weights` is `MPI_UNWEIGHTED`.
pub fn is_unweighted(weights: *const c_int) -> bool {
    ptr::eq(weights, &raw const UNWEIGHTED_DUMMY)
}

/// Whether `weights` is `MPI_WEIGHTS_EMPTY`.
pub fn is_weights_empty(weights: *const c_int) -> bool {
    ptr::eq(weights, &raw const WEIGHTS_EMPTY_DUMMY)
}

/// Whether `handle` is `MPI_T_PVAR_ALL_HANDLES`.
pub fn is_pvar_all_handles(handle: MPI_T_pvar_handle) -> bool {
    ptr::eq(handle as *const u8, &raw const PVAR_ALL_HANDLES_DUMMY)
}

/// Whether `status` is `MPI_F08_STATUS_IGNORE` or `MPI_F08_STATUSES_IGNORE`.
pub fn is_f08_status_ignore(status: *const MPI_F08_status) -> bool {
    ptr::eq(status, &raw const MPIR_F08_MPI_STATUS_IGNORE_OBJ)
        || ptr::eq(
            status,
            &raw const MPIR_F08_MPI_STATUSES_IGNORE_OBJ as *const MPI_F08_status,
        )
}

// ---- MPIR_Dup_fn ----

/// The attribute copy callback behind `MPI_DUP_FN`, `MPI_COMM_DUP_FN`, `MPI_TYPE_DUP_FN` and
/// `MPI_WIN_DUP_FN` (macros in mpi.h that name this symbol, as libmpich does): stores
/// `attribute_val_in` (the attribute's `void *` value) into `*attribute_val_out` and sets
/// `*flag = 1`. Returns `MPI_ERR_ARG` if either output pointer is null.
///
/// # Safety
/// `attribute_val_out` must be null or point to writable storage for a `void *`, and `flag`
/// null or point to a writable `int`.
///
/// cbindgen:ignore
#[no_mangle]
pub unsafe extern "C" fn MPIR_Dup_fn(
    _oldcomm: MPI_Comm,
    _keyval: c_int,
    _extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let out = attribute_val_out as *mut *mut c_void;
    if out.is_null() || flag.is_null() {
        return MPI_ERR_ARG;
    }
    // Raw pointers are not UnwindSafe; the closure only writes through them.
    let copy = std::panic::AssertUnwindSafe(|| {
        // SAFETY: both pointers are non-null, and the caller guarantees they point to writable
        // storage of the right type (the attribute code passes its own locals). Unaligned
        // writes keep a misaligned user pointer from being undefined behaviour.
        unsafe {
            out.write_unaligned(attribute_val_in);
            flag.write_unaligned(1);
        }
    });
    match std::panic::catch_unwind(copy) {
        Ok(()) => MPI_SUCCESS,
        Err(_) => MPI_ERR_INTERN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpi_abi::constants::MPI_COMM_WORLD;

    #[test]
    fn dup_fn_copies_the_value_and_sets_flag() {
        let mut value = 42u64;
        let val_in = &mut value as *mut u64 as *mut c_void;
        let mut val_out: *mut c_void = ptr::null_mut();
        let mut flag: c_int = 0;
        // SAFETY: `val_out` and `flag` are live locals of the types MPIR_Dup_fn
        // writes (a `void *`, an `int`); `val_in` is only copied, never
        // dereferenced.
        let rc = unsafe {
            MPIR_Dup_fn(
                MPI_COMM_WORLD,
                7,
                ptr::null_mut(),
                val_in,
                &mut val_out as *mut *mut c_void as *mut c_void,
                &mut flag,
            )
        };
        assert_eq!(rc, MPI_SUCCESS);
        assert_eq!(flag, 1);
        assert_eq!(val_out, val_in);
    }

    #[test]
    fn dup_fn_rejects_null_outputs() {
        let mut val_out: *mut c_void = ptr::null_mut();
        let mut flag: c_int = 0;
        let out = &mut val_out as *mut *mut c_void as *mut c_void;
        // SAFETY: a NULL `attribute_val_out` is rejected before anything is
        // written; `flag` is a live local `int`.
        let rc = unsafe {
            MPIR_Dup_fn(
                MPI_COMM_WORLD,
                7,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
                &mut flag,
            )
        };
        assert_eq!(rc, MPI_ERR_ARG);
        assert_eq!(flag, 0);
        // SAFETY: `out` points at the live local `val_out`; the NULL `flag` is
        // rejected before anything is written through `out` (only
        // `attribute_val_out` is written, and only when both outputs are
        // valid).
        let rc = unsafe {
            MPIR_Dup_fn(
                MPI_COMM_WORLD,
                7,
                ptr::null_mut(),
                out,
                out,
                ptr::null_mut(),
            )
        };
        assert_eq!(rc, MPI_ERR_ARG);
        assert!(val_out.is_null());
    }

    /// The size of what a pointer points to, without reading it.
    fn size_of_pointee<T>(_: *const T) -> usize {
        std::mem::size_of::<T>()
    }

    #[test]
    fn data_symbols_have_mpich_sizes_and_targets() {
        // SAFETY: only the addresses and sizes are read; no test writes these statics.
        unsafe {
            assert_eq!(size_of_pointee(&raw const MPI_UNWEIGHTED), 8);
            assert_eq!(size_of_pointee(&raw const MPI_T_PVAR_ALL_HANDLES), 8);
            assert_eq!(
                size_of_pointee(&raw const MPIR_F08_MPI_STATUS_IGNORE_OBJ),
                20
            );
            assert_eq!(
                size_of_pointee(&raw const MPIR_F08_MPI_STATUSES_IGNORE_OBJ),
                20
            );
            assert_eq!(size_of_pointee(&raw const MPIR_F08_MPI_IN_PLACE), 4);
            assert!(is_unweighted(MPI_UNWEIGHTED));
            assert!(is_weights_empty(MPI_WEIGHTS_EMPTY));
            assert!(!is_unweighted(MPI_WEIGHTS_EMPTY));
            assert!(!is_unweighted(ptr::null()));
            assert!(is_pvar_all_handles(MPI_T_PVAR_ALL_HANDLES));
            assert!(!is_pvar_all_handles(ptr::null_mut()));
            assert!(is_f08_status_ignore(MPI_F08_STATUS_IGNORE));
            assert!(is_f08_status_ignore(MPI_F08_STATUSES_IGNORE));
            assert!(MPI_F_STATUS_IGNORE.is_null());
        }
    }
}
