//! Conversions between the standard ABI's values and oxmpi's, used by the
//! generated standard-ABI entry points (and the callbacks that go back to
//! the program) at the boundary, in both directions: `*_in` takes a
//! program's value to oxmpi's, `*_out` the other way.
//!
//! Handles: a standard handle below [`PREDEFINED_LIMIT`] is a predefined
//! one, looked up in [`HANDLES`] (an unknown one becomes an invalid
//! handle, which oxmpi reports); any other is oxmpi's int handle
//! zero-extended into the pointer. The standard's predefined values are
//! distinct across kinds, so taking a handle in needs no kind; giving one
//! out does (MPICH's `MPI_REQUEST_NULL` and `MPI_MESSAGE_NULL` are one
//! int).
//!
//! Error codes: an oxmpi code is `class | index << 14` (see
//! `core::error_codes`); its class bits are translated and the index kept,
//! which works because every standard class is below `1 << 14`. Codes of
//! user classes (bit 30 set) pass unchanged.
use std::os::raw::{c_int, c_void};

use super::types as s;
use super::values::{
    HandleKind, IntGroup, ModeGroup, DISPLACEMENT_CURRENT, HANDLES, INTS, MODES, PREDEFINED_LIMIT,
};
use crate::mpi_abi::constants as c;
use crate::mpi_abi::types as m;

/// An int handle no object of any kind has (kind bits "invalid", object
/// bits 0): what an unknown predefined value or an out-of-range pointer
/// becomes, so oxmpi reports the handle as invalid.
const INVALID_HANDLE: c_int = 0;

/// A standard handle's oxmpi int handle.
pub fn handle_in(h: usize) -> c_int {
    if h < PREDEFINED_LIMIT {
        return HANDLES
            .iter()
            .find(|e| e.2 == h)
            .map_or(INVALID_HANDLE, |e| e.3);
    }
    u32::try_from(h).map_or(INVALID_HANDLE, |v| v as c_int)
}

/// The standard handle of an oxmpi int handle of `kind`.
pub fn handle_out(kind: HandleKind, h: c_int) -> usize {
    HANDLES
        .iter()
        .find(|e| e.0 == kind && e.3 == h)
        .map_or(h as u32 as usize, |e| e.2)
}

macro_rules! handle_conversions {
    ($($kind:ident: $std:ident, $internal:ident, $in_fn:ident, $out_fn:ident;)*) => {
        $(
            #[inline]
            pub fn $in_fn(h: s::$std) -> m::$internal {
                handle_in(h as usize)
            }
            #[inline]
            pub fn $out_fn(h: m::$internal) -> s::$std {
                std::ptr::without_provenance_mut(handle_out(HandleKind::$kind, h))
            }
        )*
    };
}

handle_conversions! {
    Comm: MPI_Comm, MPI_Comm, comm_in, comm_out;
    Group: MPI_Group, MPI_Group, group_in, group_out;
    Datatype: MPI_Datatype, MPI_Datatype, datatype_in, datatype_out;
    Op: MPI_Op, MPI_Op, op_in, op_out;
    Errhandler: MPI_Errhandler, MPI_Errhandler, errhandler_in, errhandler_out;
    Info: MPI_Info, MPI_Info, info_in, info_out;
    Win: MPI_Win, MPI_Win, win_in, win_out;
    Request: MPI_Request, MPI_Request, request_in, request_out;
    Message: MPI_Message, MPI_Message, message_in, message_out;
    Session: MPI_Session, MPI_Session, session_in, session_out;
}

/// oxmpi's `MPI_File` is a pointer carrying its file table handle (null
/// for `MPI_FILE_NULL`).
pub fn file_in(h: s::MPI_File) -> m::MPI_File {
    // oxmpi's file handle carries its table handle as its address
    // (`abi::io::to_c`).
    std::ptr::without_provenance_mut(handle_in(h as usize) as u32 as usize)
}

pub fn file_out(h: m::MPI_File) -> s::MPI_File {
    std::ptr::without_provenance_mut(handle_out(HandleKind::File, h as usize as u32 as c_int))
}

/// What a standard-ABI entry point's local file handle starts as: a value
/// oxmpi never writes (its handles are 32-bit table handles, and its
/// `MPI_FILE_NULL` is 0), so that an `MPI_FILE_NULL` written by a failed
/// `MPI_File_open` reaches the program.
pub fn file_unwritten() -> m::MPI_File {
    std::ptr::without_provenance_mut(usize::MAX)
}

/// The standard handle of an oxmpi int handle whose kind its MPICH object
/// bits tell (an attribute callback's object: communicator, datatype or
/// window).
pub fn object_out(h: c_int) -> usize {
    // MPICH's object kind bits (29-26): 1 communicator, 3 datatype, 8
    // window (`core::handles::ObjectKind`).
    let kind = match ((h as u32) >> 26) & 0xf {
        1 => HandleKind::Comm,
        3 => HandleKind::Datatype,
        8 => HandleKind::Win,
        _ => return h as u32 as usize,
    };
    handle_out(kind, h)
}

/// A program's integer constant of `group` in oxmpi's value.
pub fn int_in(group: IntGroup, v: c_int) -> c_int {
    INTS.iter()
        .find(|e| e.0 == group && e.2 == v)
        .map_or(v, |e| e.3)
}

/// oxmpi's integer constant of `group` in the standard's value.
pub fn int_out(group: IntGroup, v: c_int) -> c_int {
    INTS.iter()
        .find(|e| e.0 == group && e.3 == v)
        .map_or(v, |e| e.2)
}

/// A mode bit mask of the program's in oxmpi's bits (unknown bits kept,
/// so that oxmpi rejects them as before).
pub fn mode_in(group: ModeGroup, v: c_int) -> c_int {
    translate_bits(group, v, |e| (e.2, e.3))
}

pub fn mode_out(group: ModeGroup, v: c_int) -> c_int {
    translate_bits(group, v, |e| (e.3, e.2))
}

fn translate_bits(
    group: ModeGroup,
    v: c_int,
    from_to: impl Fn(&(ModeGroup, &str, c_int, c_int)) -> (c_int, c_int),
) -> c_int {
    let mut rest = v;
    let mut out = 0;
    for e in MODES.iter().filter(|e| e.0 == group) {
        let (from, to) = from_to(e);
        if v & from != 0 {
            out |= to;
            rest &= !from;
        }
    }
    out | rest
}

const CLASS_MASK: c_int = (1 << 14) - 1;
/// The bit of oxmpi's user-defined error classes and codes
/// (`core::error_codes::DYNAMIC`, checked equal there).
pub const DYNAMIC: c_int = 0x4000_0000;

/// A program's error code (or class) in oxmpi's encoding.
pub fn code_in(code: c_int) -> c_int {
    if code <= 0 || code & DYNAMIC != 0 {
        return code;
    }
    (code & !CLASS_MASK) | int_in(IntGroup::ErrorClass, code & CLASS_MASK)
}

/// An oxmpi error code (or class) in the standard's classes.
pub fn code_out(code: c_int) -> c_int {
    if code <= 0 || code & DYNAMIC != 0 {
        return code;
    }
    (code & !CLASS_MASK) | int_out(IntGroup::ErrorClass, code & CLASS_MASK)
}

/// A program's status in oxmpi's layout.
pub fn status_in(st: &s::MPI_Status) -> m::MPI_Status {
    m::MPI_Status {
        count_lo: st.MPI_internal[0],
        count_hi_and_cancelled: st.MPI_internal[1],
        MPI_SOURCE: int_in(IntGroup::Rank, st.MPI_SOURCE),
        MPI_TAG: int_in(IntGroup::Tag, st.MPI_TAG),
        MPI_ERROR: code_in(st.MPI_ERROR),
    }
}

/// oxmpi's status in the standard's layout.
pub fn status_out(st: &m::MPI_Status) -> s::MPI_Status {
    s::MPI_Status {
        MPI_SOURCE: int_out(IntGroup::Rank, st.MPI_SOURCE),
        MPI_TAG: int_out(IntGroup::Tag, st.MPI_TAG),
        MPI_ERROR: code_out(st.MPI_ERROR),
        MPI_internal: [st.count_lo, st.count_hi_and_cancelled, 0, 0, 0],
    }
}

/// The `MPI_ERROR` of a status oxmpi did not set (MPI sets it only where
/// a call completing several requests reports `MPI_ERR_IN_STATUS`): the
/// program's field is then left as it was.
const ERROR_UNSET: c_int = c_int::MIN + 0x5a;

/// A status for oxmpi to fill, its `MPI_ERROR` marked unset.
pub fn status_blank() -> m::MPI_Status {
    m::MPI_Status {
        MPI_ERROR: ERROR_UNSET,
        ..Default::default()
    }
}

/// Stores oxmpi's status into the program's: the public fields and the
/// count, and `MPI_ERROR` only if oxmpi set it.
///
/// # Safety
/// `dst` is valid for reads and writes of a status.
pub unsafe fn status_store(dst: *mut s::MPI_Status, st: &m::MPI_Status) {
    let mut out = status_out(st);
    // SAFETY: the function's contract.
    let old = unsafe { *dst };
    if st.MPI_ERROR == ERROR_UNSET {
        out.MPI_ERROR = old.MPI_ERROR;
    }
    out.MPI_internal[2..].copy_from_slice(&old.MPI_internal[2..]);
    // SAFETY: the function's contract.
    unsafe { *dst = out };
}

/// oxmpi's `MPI_STATUS_IGNORE` and `MPI_STATUSES_IGNORE` (the standard's
/// are NULL).
pub fn status_ignore() -> *mut m::MPI_Status {
    std::ptr::without_provenance_mut(1)
}

/// The standard's `MPI_IN_PLACE`.
const STD_IN_PLACE: usize = 1;

/// A collective's buffer argument: the standard's `MPI_IN_PLACE` (1)
/// becomes oxmpi's (-1); `MPI_BOTTOM` is NULL in both.
pub fn buf_in<T>(p: *const T) -> *const T {
    if p as usize == STD_IN_PLACE {
        std::ptr::without_provenance(usize::MAX)
    } else {
        p
    }
}

pub fn buf_in_mut<T>(p: *mut T) -> *mut T {
    buf_in(p).cast_mut()
}

/// The standard's `MPI_UNWEIGHTED` and `MPI_WEIGHTS_EMPTY`.
const STD_UNWEIGHTED: usize = 10;
const STD_WEIGHTS_EMPTY: usize = 11;

/// A weights argument of the distributed graph calls: the standard's
/// sentinels become oxmpi's (addresses of its exported objects).
pub fn weights_in(p: *mut c_int) -> *mut c_int {
    // SAFETY: reading the address of oxmpi's own sentinel statics (never
    // written).
    unsafe {
        match p as usize {
            STD_UNWEIGHTED => crate::mpi_abi::data_symbols::MPI_UNWEIGHTED,
            STD_WEIGHTS_EMPTY => crate::mpi_abi::data_symbols::MPI_WEIGHTS_EMPTY,
            _ => p,
        }
    }
}

/// `MPI_DISPLACEMENT_CURRENT` in a file view's displacement.
pub fn displacement_in(d: m::MPI_Offset) -> m::MPI_Offset {
    if d == DISPLACEMENT_CURRENT {
        m::MPI_Offset::from(c::MPI_DISPLACEMENT_CURRENT)
    } else {
        d
    }
}

pub fn displacement_out(d: m::MPI_Offset) -> m::MPI_Offset {
    if d == m::MPI_Offset::from(c::MPI_DISPLACEMENT_CURRENT) {
        DISPLACEMENT_CURRENT
    } else {
        d
    }
}

/// The standard's `MPI_COMM_DUP_FN` (and the other `*_DUP_FN`s): the
/// function pointer value 1, which becomes oxmpi's copy function.
pub fn copy_fn_in<F: Copy>(f: Option<F>, dup: Option<F>) -> Option<F> {
    match f {
        // SAFETY: `F` is a function pointer type (the callers pass the
        // copy callback types); only its address is read here.
        Some(g) if unsafe { std::mem::transmute_copy::<F, usize>(&g) } == 1 => dup,
        other => other,
    }
}

/// A pointer-sized value that may be a `void *` pointing at a standard
/// handle (an MPI_T object binding).
pub fn opaque_handle_in(p: *mut c_void, local: &mut c_int) -> *mut c_void {
    if p.is_null() {
        return p;
    }
    // SAFETY: MPI_T's contract: a non-NULL object handle points to the
    // handle of the object the variable is bound to.
    *local = handle_in(unsafe { *p.cast::<usize>() });
    (local as *mut c_int).cast()
}

/// `MPI_T_PVAR_ALL_HANDLES` (the pointer value 1 in the standard ABI).
pub fn pvar_handle_in(h: m::MPI_T_pvar_handle) -> m::MPI_T_pvar_handle {
    if h as usize == 1 {
        // SAFETY: reading oxmpi's own constant pointer static.
        unsafe { crate::mpi_abi::data_symbols::MPI_T_PVAR_ALL_HANDLES }
    } else {
        h
    }
}

#[cfg(test)]
mod tests {
    use super::super::values::HEADER_INTS;
    use super::*;

    #[test]
    fn predefined_handles_round_trip() {
        for &(kind, name, std, internal) in HANDLES {
            assert!(std < PREDEFINED_LIMIT, "{name}");
            assert_eq!(handle_in(std), internal, "{name}");
            if internal != c::MPI_DATATYPE_NULL || name == "MPI_DATATYPE_NULL" {
                assert_eq!(handle_out(kind, internal), std, "{name}");
            }
        }
        assert_eq!(comm_in(comm_out(c::MPI_COMM_WORLD)), c::MPI_COMM_WORLD);
        assert_eq!(comm_out(c::MPI_COMM_WORLD) as usize, 0x101);
        // MPICH's MPI_REQUEST_NULL and MPI_MESSAGE_NULL are one int; the
        // kind tells them apart.
        assert_eq!(request_out(c::MPI_REQUEST_NULL) as usize, 0x180);
        assert_eq!(message_out(c::MPI_MESSAGE_NULL) as usize, 0x128);
        assert_eq!(file_out(std::ptr::null_mut()) as usize, 0x118);
        assert!(file_in(std::ptr::without_provenance_mut(0x118)).is_null());
    }

    #[test]
    fn standard_values_are_distinct_and_oxmpi_handles_never_below_the_limit() {
        let mut seen = std::collections::HashSet::new();
        for &(_, name, std, internal) in HANDLES {
            assert!(seen.insert(std), "{name} repeats a value");
            if name != "MPI_FILE_NULL" {
                assert!(internal as u32 as usize >= PREDEFINED_LIMIT, "{name}");
            }
        }
    }

    #[test]
    fn user_handles_round_trip_zero_extended() {
        let h = 0x8c00_0107_u32 as c_int;
        let p = datatype_out(h);
        assert_eq!(p as usize, h as u32 as usize);
        assert_eq!(datatype_in(p), h);
        // Beyond 32 bits no oxmpi handle exists.
        assert_eq!(handle_in(1 << 40), INVALID_HANDLE);
        // An unknown predefined value is invalid.
        assert_eq!(handle_in(0x105), INVALID_HANDLE);
    }

    #[test]
    fn sentinels_and_groups_translate_both_ways() {
        assert_eq!(int_in(IntGroup::Rank, -1), c::MPI_ANY_SOURCE);
        assert_eq!(int_in(IntGroup::Rank, -3), c::MPI_PROC_NULL);
        assert_eq!(int_out(IntGroup::Rank, c::MPI_PROC_NULL), -3);
        assert_eq!(int_in(IntGroup::Rank, 5), 5);
        assert_eq!(int_in(IntGroup::Tag, -2), c::MPI_ANY_TAG);
        assert_eq!(int_out(IntGroup::Thread, c::MPI_THREAD_MULTIPLE), 4096);
        assert_eq!(int_out(IntGroup::Compare, c::MPI_IDENT), 201);
        assert_eq!(
            int_out(IntGroup::Combiner, c::MPI_COMBINER_HVECTOR_INTEGER),
            105
        );
        assert_eq!(int_in(IntGroup::Combiner, 105), c::MPI_COMBINER_HVECTOR);
        for &(group, name, std, internal) in INTS {
            assert_eq!(
                int_in(group, std),
                int_in(group, int_out(group, internal)),
                "{name}"
            );
        }
        let names: Vec<&str> = INTS.iter().map(|e| e.1).collect();
        for (name, _) in HEADER_INTS {
            assert!(!names.contains(name), "{name} is in both tables");
        }
    }

    #[test]
    fn modes_translate_bit_by_bit() {
        let std = 2 | 32; // MPI_MODE_CREATE | MPI_MODE_RDWR
        let ours = mode_in(ModeGroup::File, std);
        assert_eq!(ours, c::MPI_MODE_CREATE | c::MPI_MODE_RDWR);
        assert_eq!(mode_out(ModeGroup::File, ours), std);
        let a = mode_in(ModeGroup::Win, 1024 | 16384);
        assert_eq!(a, c::MPI_MODE_NOCHECK | c::MPI_MODE_NOSUCCEED);
    }

    #[test]
    fn error_codes_keep_their_index() {
        let code = c::MPI_ERR_RANK | (5 << 14);
        let std = code_out(code);
        assert_eq!(std & CLASS_MASK, 6);
        assert_eq!(std >> 14, 5);
        assert_eq!(code_in(std), code);
        assert_eq!(code_out(c::MPI_ERR_UNSUPPORTED_OPERATION), 55);
        assert_eq!(code_out(0), 0);
        let user = DYNAMIC | 128;
        assert_eq!(code_out(user), user);
    }

    #[test]
    fn status_converts_both_ways() {
        let mut ours = m::MPI_Status {
            MPI_SOURCE: c::MPI_PROC_NULL,
            MPI_TAG: c::MPI_ANY_TAG,
            MPI_ERROR: c::MPI_ERR_TRUNCATE,
            ..Default::default()
        };
        ours.set_byte_count((1 << 33) + 3);
        ours.set_cancelled(true);
        let std = status_out(&ours);
        assert_eq!((std.MPI_SOURCE, std.MPI_TAG, std.MPI_ERROR), (-3, -2, 15));
        assert_eq!(status_in(&std), ours);
        assert_eq!(std::mem::size_of::<s::MPI_Status>(), 32);
    }

    #[test]
    fn buffer_and_weight_sentinels() {
        assert_eq!(
            buf_in(std::ptr::without_provenance::<c_void>(1)) as usize,
            usize::MAX
        );
        assert!(buf_in(std::ptr::null::<c_void>()).is_null());
        assert_eq!(
            displacement_in(-1),
            m::MPI_Offset::from(c::MPI_DISPLACEMENT_CURRENT)
        );
        assert_eq!(displacement_out(displacement_in(-1)), -1);
    }
}
