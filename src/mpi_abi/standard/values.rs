//! The constant values of the MPI 5.0 standard ABI (the `mpi_abi.h` of the
//! standard's ABI chapter, ABI version 1.0) next to the oxmpi (MPICH ABI)
//! value each one stands for.
//!
//! These tables are facts of the standard, written down here once: the
//! conversion functions of [`super::convert`] read them at run time, and
//! build.rs reads this file as text to write the `#define`s and enums of
//! include/mpi_abi.h (so the header and the conversions cannot disagree).
//! build.rs parses lines of the form `(Kind, "NAME", value, internal),` and
//! `("NAME", value),`; keep one entry per line.
//!
//! Every predefined handle value is below [`PREDEFINED_LIMIT`]; oxmpi's own
//! handles are MPICH-encoded ints whose kind bits make them at least
//! `0x0400_0000`, so a handle below the limit is always a predefined one
//! and one above it always oxmpi's int handle, zero-extended.
#![allow(clippy::unreadable_literal)]

use std::os::raw::c_int;

use crate::mpi_abi::constants as c;

/// Every predefined handle of the standard ABI is below this value.
pub const PREDEFINED_LIMIT: usize = 0x1000;

/// The handle types of the standard ABI (each a pointer to an incomplete
/// struct in C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandleKind {
    Op,
    Comm,
    Group,
    Win,
    File,
    Session,
    Message,
    Info,
    Errhandler,
    Request,
    Datatype,
}

use HandleKind::*;

/// `(kind, name, standard value, oxmpi handle)`. A standard datatype
/// oxmpi does not have maps to `MPI_DATATYPE_NULL` (so using it is an
/// `MPI_ERR_TYPE`); each kind's null handle comes first, so that it is the
/// one an oxmpi null handle converts back to. `MPI_FILE_NULL`'s oxmpi
/// value is the null pointer, given as 0.
#[rustfmt::skip]
pub const HANDLES: &[(HandleKind, &str, usize, c_int)] = &[
    (Op, "MPI_OP_NULL", 0x20, c::MPI_OP_NULL),
    (Op, "MPI_SUM", 0x21, c::MPI_SUM),
    (Op, "MPI_MIN", 0x22, c::MPI_MIN),
    (Op, "MPI_MAX", 0x23, c::MPI_MAX),
    (Op, "MPI_PROD", 0x24, c::MPI_PROD),
    (Op, "MPI_BAND", 0x28, c::MPI_BAND),
    (Op, "MPI_BOR", 0x29, c::MPI_BOR),
    (Op, "MPI_BXOR", 0x2a, c::MPI_BXOR),
    (Op, "MPI_LAND", 0x30, c::MPI_LAND),
    (Op, "MPI_LOR", 0x31, c::MPI_LOR),
    (Op, "MPI_LXOR", 0x32, c::MPI_LXOR),
    (Op, "MPI_MINLOC", 0x38, c::MPI_MINLOC),
    (Op, "MPI_MAXLOC", 0x39, c::MPI_MAXLOC),
    (Op, "MPI_REPLACE", 0x3c, c::MPI_REPLACE),
    (Op, "MPI_NO_OP", 0x3d, c::MPI_NO_OP),
    (Comm, "MPI_COMM_NULL", 0x100, c::MPI_COMM_NULL),
    (Comm, "MPI_COMM_WORLD", 0x101, c::MPI_COMM_WORLD),
    (Comm, "MPI_COMM_SELF", 0x102, c::MPI_COMM_SELF),
    (Group, "MPI_GROUP_NULL", 0x108, c::MPI_GROUP_NULL),
    (Group, "MPI_GROUP_EMPTY", 0x109, c::MPI_GROUP_EMPTY),
    (Win, "MPI_WIN_NULL", 0x110, c::MPI_WIN_NULL),
    (File, "MPI_FILE_NULL", 0x118, 0),
    (Session, "MPI_SESSION_NULL", 0x120, c::MPI_SESSION_NULL),
    (Message, "MPI_MESSAGE_NULL", 0x128, c::MPI_MESSAGE_NULL),
    (Message, "MPI_MESSAGE_NO_PROC", 0x129, c::MPI_MESSAGE_NO_PROC),
    (Info, "MPI_INFO_NULL", 0x130, c::MPI_INFO_NULL),
    (Info, "MPI_INFO_ENV", 0x131, c::MPI_INFO_ENV),
    (Errhandler, "MPI_ERRHANDLER_NULL", 0x140, c::MPI_ERRHANDLER_NULL),
    (Errhandler, "MPI_ERRORS_ARE_FATAL", 0x141, c::MPI_ERRORS_ARE_FATAL),
    (Errhandler, "MPI_ERRORS_RETURN", 0x142, c::MPI_ERRORS_RETURN),
    (Errhandler, "MPI_ERRORS_ABORT", 0x143, c::MPI_ERRORS_ABORT),
    (Request, "MPI_REQUEST_NULL", 0x180, c::MPI_REQUEST_NULL),
    (Datatype, "MPI_DATATYPE_NULL", 0x200, c::MPI_DATATYPE_NULL),
    (Datatype, "MPI_AINT", 0x201, c::MPI_AINT),
    (Datatype, "MPI_COUNT", 0x202, c::MPI_COUNT),
    (Datatype, "MPI_OFFSET", 0x203, c::MPI_OFFSET),
    (Datatype, "MPI_PACKED", 0x207, c::MPI_PACKED),
    (Datatype, "MPI_SHORT", 0x208, c::MPI_SHORT),
    (Datatype, "MPI_INT", 0x209, c::MPI_INT),
    (Datatype, "MPI_LONG", 0x20a, c::MPI_LONG),
    (Datatype, "MPI_LONG_LONG", 0x20b, c::MPI_LONG_LONG),
    (Datatype, "MPI_UNSIGNED_SHORT", 0x20c, c::MPI_UNSIGNED_SHORT),
    (Datatype, "MPI_UNSIGNED", 0x20d, c::MPI_UNSIGNED),
    (Datatype, "MPI_UNSIGNED_LONG", 0x20e, c::MPI_UNSIGNED_LONG),
    (Datatype, "MPI_UNSIGNED_LONG_LONG", 0x20f, c::MPI_UNSIGNED_LONG_LONG),
    (Datatype, "MPI_FLOAT", 0x210, c::MPI_FLOAT),
    (Datatype, "MPI_C_FLOAT_COMPLEX", 0x212, c::MPI_C_FLOAT_COMPLEX),
    (Datatype, "MPI_CXX_FLOAT_COMPLEX", 0x213, c::MPI_CXX_FLOAT_COMPLEX),
    (Datatype, "MPI_DOUBLE", 0x214, c::MPI_DOUBLE),
    (Datatype, "MPI_C_DOUBLE_COMPLEX", 0x216, c::MPI_C_DOUBLE_COMPLEX),
    (Datatype, "MPI_CXX_DOUBLE_COMPLEX", 0x217, c::MPI_CXX_DOUBLE_COMPLEX),
    (Datatype, "MPI_LOGICAL", 0x218, c::MPI_LOGICAL),
    (Datatype, "MPI_INTEGER", 0x219, c::MPI_INTEGER),
    (Datatype, "MPI_REAL", 0x21a, c::MPI_REAL),
    (Datatype, "MPI_COMPLEX", 0x21b, c::MPI_COMPLEX),
    (Datatype, "MPI_DOUBLE_PRECISION", 0x21c, c::MPI_DOUBLE_PRECISION),
    (Datatype, "MPI_DOUBLE_COMPLEX", 0x21d, c::MPI_DOUBLE_COMPLEX),
    (Datatype, "MPI_CHARACTER", 0x21e, c::MPI_CHARACTER),
    (Datatype, "MPI_LONG_DOUBLE", 0x220, c::MPI_LONG_DOUBLE),
    (Datatype, "MPI_C_LONG_DOUBLE_COMPLEX", 0x224, c::MPI_C_LONG_DOUBLE_COMPLEX),
    (Datatype, "MPI_CXX_LONG_DOUBLE_COMPLEX", 0x225, c::MPI_CXX_LONG_DOUBLE_COMPLEX),
    (Datatype, "MPI_FLOAT_INT", 0x228, c::MPI_FLOAT_INT),
    (Datatype, "MPI_DOUBLE_INT", 0x229, c::MPI_DOUBLE_INT),
    (Datatype, "MPI_LONG_INT", 0x22a, c::MPI_LONG_INT),
    (Datatype, "MPI_2INT", 0x22b, c::MPI_2INT),
    (Datatype, "MPI_SHORT_INT", 0x22c, c::MPI_SHORT_INT),
    (Datatype, "MPI_LONG_DOUBLE_INT", 0x22d, c::MPI_LONG_DOUBLE_INT),
    (Datatype, "MPI_2REAL", 0x230, c::MPI_2REAL),
    (Datatype, "MPI_2DOUBLE_PRECISION", 0x231, c::MPI_2DOUBLE_PRECISION),
    (Datatype, "MPI_2INTEGER", 0x232, c::MPI_2INTEGER),
    (Datatype, "MPI_C_BOOL", 0x238, c::MPI_C_BOOL),
    (Datatype, "MPI_CXX_BOOL", 0x239, c::MPI_CXX_BOOL),
    (Datatype, "MPI_WCHAR", 0x23c, c::MPI_WCHAR),
    (Datatype, "MPI_INT8_T", 0x240, c::MPI_INT8_T),
    (Datatype, "MPI_UINT8_T", 0x241, c::MPI_UINT8_T),
    (Datatype, "MPI_CHAR", 0x243, c::MPI_CHAR),
    (Datatype, "MPI_SIGNED_CHAR", 0x244, c::MPI_SIGNED_CHAR),
    (Datatype, "MPI_UNSIGNED_CHAR", 0x245, c::MPI_UNSIGNED_CHAR),
    (Datatype, "MPI_BYTE", 0x247, c::MPI_BYTE),
    (Datatype, "MPI_INT16_T", 0x248, c::MPI_INT16_T),
    (Datatype, "MPI_UINT16_T", 0x249, c::MPI_UINT16_T),
    (Datatype, "MPI_INT32_T", 0x250, c::MPI_INT32_T),
    (Datatype, "MPI_UINT32_T", 0x251, c::MPI_UINT32_T),
    (Datatype, "MPI_INT64_T", 0x258, c::MPI_INT64_T),
    (Datatype, "MPI_UINT64_T", 0x259, c::MPI_UINT64_T),
    (Datatype, "MPI_LOGICAL1", 0x2c0, c::MPI_DATATYPE_NULL),
    (Datatype, "MPI_INTEGER1", 0x2c1, c::MPI_INTEGER1),
    (Datatype, "MPI_LOGICAL2", 0x2c8, c::MPI_DATATYPE_NULL),
    (Datatype, "MPI_INTEGER2", 0x2c9, c::MPI_INTEGER2),
    (Datatype, "MPI_REAL2", 0x2ca, c::MPI_DATATYPE_NULL),
    (Datatype, "MPI_LOGICAL4", 0x2d0, c::MPI_DATATYPE_NULL),
    (Datatype, "MPI_INTEGER4", 0x2d1, c::MPI_INTEGER4),
    (Datatype, "MPI_REAL4", 0x2d2, c::MPI_REAL4),
    (Datatype, "MPI_COMPLEX4", 0x2d3, c::MPI_DATATYPE_NULL),
    (Datatype, "MPI_LOGICAL8", 0x2d8, c::MPI_DATATYPE_NULL),
    (Datatype, "MPI_INTEGER8", 0x2d9, c::MPI_INTEGER8),
    (Datatype, "MPI_REAL8", 0x2da, c::MPI_REAL8),
    (Datatype, "MPI_COMPLEX8", 0x2db, c::MPI_COMPLEX8),
    (Datatype, "MPI_LOGICAL16", 0x2e0, c::MPI_DATATYPE_NULL),
    (Datatype, "MPI_INTEGER16", 0x2e1, c::MPI_INTEGER16),
    (Datatype, "MPI_REAL16", 0x2e2, c::MPI_REAL16),
    (Datatype, "MPI_COMPLEX16", 0x2e3, c::MPI_COMPLEX16),
    (Datatype, "MPI_COMPLEX32", 0x2eb, c::MPI_COMPLEX32),
];

/// The groups of integer constants whose values differ between the two
/// ABIs; an argument of a group is translated through its table, a value
/// not in the table passes unchanged (a rank, a user keyval, a count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntGroup {
    /// Rank sentinels (source, dest, root, `MPI_Status.MPI_SOURCE`).
    Rank,
    /// `MPI_ANY_TAG`.
    Tag,
    /// Thread support levels.
    Thread,
    /// Group and communicator comparison results.
    Compare,
    /// `MPI_Topo_test` results.
    Topo,
    /// `MPI_Comm_split_type` split types.
    SplitType,
    /// Datatype combiners.
    Combiner,
    /// `MPI_Type_match_size` type classes.
    Typeclass,
    /// Window lock types.
    Lock,
    /// Window create flavors (`MPI_WIN_CREATE_FLAVOR` attribute).
    Flavor,
    /// Window memory models (`MPI_WIN_MODEL` attribute).
    Model,
    /// `MPI_File_seek` whence.
    Whence,
    /// Array orders (subarray, darray).
    Order,
    /// Darray distributions.
    Distrib,
    /// Darray distribution arguments.
    Darg,
    /// Attribute keys (predefined keyvals and `MPI_KEYVAL_INVALID`).
    Keyval,
    /// Error classes (the low 14 bits of an error code, see `convert`).
    ErrorClass,
    /// MPI_T verbosity levels.
    Verbosity,
    /// MPI_T object bindings.
    Bind,
    /// MPI_T variable scopes.
    Scope,
    /// MPI_T performance variable classes.
    PvarClass,
    /// MPI_T callback safety levels.
    CbSafety,
    /// MPI_T event source orderings.
    SourceOrder,
}

use IntGroup::*;

/// `(group, name, standard value, oxmpi value)`. Where several oxmpi values
/// map to one standard value (MPICH's `MPI_COMBINER_HVECTOR_INTEGER`), the
/// first entry of a standard value is the one it converts to.
#[rustfmt::skip]
pub const INTS: &[(IntGroup, &str, c_int, c_int)] = &[
    (Rank, "MPI_ANY_SOURCE", -1, c::MPI_ANY_SOURCE),
    (Rank, "MPI_PROC_NULL", -3, c::MPI_PROC_NULL),
    (Rank, "MPI_ROOT", -4, c::MPI_ROOT),
    (Tag, "MPI_ANY_TAG", -2, c::MPI_ANY_TAG),
    (Thread, "MPI_THREAD_SINGLE", 0, c::MPI_THREAD_SINGLE),
    (Thread, "MPI_THREAD_FUNNELED", 1024, c::MPI_THREAD_FUNNELED),
    (Thread, "MPI_THREAD_SERIALIZED", 2048, c::MPI_THREAD_SERIALIZED),
    (Thread, "MPI_THREAD_MULTIPLE", 4096, c::MPI_THREAD_MULTIPLE),
    (Compare, "MPI_IDENT", 201, c::MPI_IDENT),
    (Compare, "MPI_CONGRUENT", 202, c::MPI_CONGRUENT),
    (Compare, "MPI_SIMILAR", 203, c::MPI_SIMILAR),
    (Compare, "MPI_UNEQUAL", 204, c::MPI_UNEQUAL),
    (Topo, "MPI_CART", 211, c::MPI_CART),
    (Topo, "MPI_GRAPH", 212, c::MPI_GRAPH),
    (Topo, "MPI_DIST_GRAPH", 213, c::MPI_DIST_GRAPH),
    (SplitType, "MPI_COMM_TYPE_SHARED", 221, c::MPI_COMM_TYPE_SHARED),
    (SplitType, "MPI_COMM_TYPE_HW_UNGUIDED", 222, c::MPI_COMM_TYPE_HW_UNGUIDED),
    (SplitType, "MPI_COMM_TYPE_HW_GUIDED", 223, c::MPI_COMM_TYPE_HW_GUIDED),
    (Combiner, "MPI_COMBINER_NAMED", 101, c::MPI_COMBINER_NAMED),
    (Combiner, "MPI_COMBINER_DUP", 102, c::MPI_COMBINER_DUP),
    (Combiner, "MPI_COMBINER_CONTIGUOUS", 103, c::MPI_COMBINER_CONTIGUOUS),
    (Combiner, "MPI_COMBINER_VECTOR", 104, c::MPI_COMBINER_VECTOR),
    (Combiner, "MPI_COMBINER_HVECTOR", 105, c::MPI_COMBINER_HVECTOR),
    (Combiner, "MPI_COMBINER_HVECTOR", 105, c::MPI_COMBINER_HVECTOR_INTEGER),
    (Combiner, "MPI_COMBINER_INDEXED", 106, c::MPI_COMBINER_INDEXED),
    (Combiner, "MPI_COMBINER_HINDEXED", 107, c::MPI_COMBINER_HINDEXED),
    (Combiner, "MPI_COMBINER_HINDEXED", 107, c::MPI_COMBINER_HINDEXED_INTEGER),
    (Combiner, "MPI_COMBINER_INDEXED_BLOCK", 108, c::MPI_COMBINER_INDEXED_BLOCK),
    (Combiner, "MPI_COMBINER_HINDEXED_BLOCK", 109, c::MPI_COMBINER_HINDEXED_BLOCK),
    (Combiner, "MPI_COMBINER_STRUCT", 110, c::MPI_COMBINER_STRUCT),
    (Combiner, "MPI_COMBINER_STRUCT", 110, c::MPI_COMBINER_STRUCT_INTEGER),
    (Combiner, "MPI_COMBINER_SUBARRAY", 111, c::MPI_COMBINER_SUBARRAY),
    (Combiner, "MPI_COMBINER_DARRAY", 112, c::MPI_COMBINER_DARRAY),
    (Combiner, "MPI_COMBINER_F90_INTEGER", 113, c::MPI_COMBINER_F90_INTEGER),
    (Combiner, "MPI_COMBINER_F90_REAL", 114, c::MPI_COMBINER_F90_REAL),
    (Combiner, "MPI_COMBINER_F90_COMPLEX", 115, c::MPI_COMBINER_F90_COMPLEX),
    (Combiner, "MPI_COMBINER_RESIZED", 116, c::MPI_COMBINER_RESIZED),
    (Typeclass, "MPI_TYPECLASS_INTEGER", 192, c::MPI_TYPECLASS_INTEGER),
    (Typeclass, "MPI_TYPECLASS_REAL", 193, c::MPI_TYPECLASS_REAL),
    (Typeclass, "MPI_TYPECLASS_COMPLEX", 194, c::MPI_TYPECLASS_COMPLEX),
    (Lock, "MPI_LOCK_EXCLUSIVE", 301, c::MPI_LOCK_EXCLUSIVE),
    (Lock, "MPI_LOCK_SHARED", 302, c::MPI_LOCK_SHARED),
    (Flavor, "MPI_WIN_FLAVOR_CREATE", 311, c::MPI_WIN_FLAVOR_CREATE),
    (Flavor, "MPI_WIN_FLAVOR_ALLOCATE", 312, c::MPI_WIN_FLAVOR_ALLOCATE),
    (Flavor, "MPI_WIN_FLAVOR_DYNAMIC", 313, c::MPI_WIN_FLAVOR_DYNAMIC),
    (Flavor, "MPI_WIN_FLAVOR_SHARED", 314, c::MPI_WIN_FLAVOR_SHARED),
    (Model, "MPI_WIN_UNIFIED", 321, c::MPI_WIN_UNIFIED),
    (Model, "MPI_WIN_SEPARATE", 322, c::MPI_WIN_SEPARATE),
    (Whence, "MPI_SEEK_SET", 401, c::MPI_SEEK_SET),
    (Whence, "MPI_SEEK_CUR", 402, c::MPI_SEEK_CUR),
    (Whence, "MPI_SEEK_END", 403, c::MPI_SEEK_END),
    (Order, "MPI_ORDER_C", 12, c::MPI_ORDER_C),
    (Order, "MPI_ORDER_FORTRAN", 15, c::MPI_ORDER_FORTRAN),
    (Distrib, "MPI_DISTRIBUTE_NONE", 16, c::MPI_DISTRIBUTE_NONE),
    (Distrib, "MPI_DISTRIBUTE_BLOCK", 17, c::MPI_DISTRIBUTE_BLOCK),
    (Distrib, "MPI_DISTRIBUTE_CYCLIC", 18, c::MPI_DISTRIBUTE_CYCLIC),
    (Darg, "MPI_DISTRIBUTE_DFLT_DARG", 19, c::MPI_DISTRIBUTE_DFLT_DARG),
    (Keyval, "MPI_KEYVAL_INVALID", 0, c::MPI_KEYVAL_INVALID),
    (Keyval, "MPI_TAG_UB", 501, c::MPI_TAG_UB),
    (Keyval, "MPI_IO", 502, c::MPI_IO),
    (Keyval, "MPI_HOST", 503, c::MPI_HOST),
    (Keyval, "MPI_WTIME_IS_GLOBAL", 504, c::MPI_WTIME_IS_GLOBAL),
    (Keyval, "MPI_UNIVERSE_SIZE", 505, c::MPI_UNIVERSE_SIZE),
    (Keyval, "MPI_APPNUM", 506, c::MPI_APPNUM),
    (Keyval, "MPI_LASTUSEDCODE", 507, c::MPI_LASTUSEDCODE),
    (Keyval, "MPI_WIN_BASE", 601, c::MPI_WIN_BASE),
    (Keyval, "MPI_WIN_DISP_UNIT", 602, c::MPI_WIN_DISP_UNIT),
    (Keyval, "MPI_WIN_SIZE", 603, c::MPI_WIN_SIZE),
    (Keyval, "MPI_WIN_CREATE_FLAVOR", 604, c::MPI_WIN_CREATE_FLAVOR),
    (Keyval, "MPI_WIN_MODEL", 605, c::MPI_WIN_MODEL),
    (ErrorClass, "MPI_SUCCESS", 0, c::MPI_SUCCESS),
    (ErrorClass, "MPI_ERR_BUFFER", 1, c::MPI_ERR_BUFFER),
    (ErrorClass, "MPI_ERR_COUNT", 2, c::MPI_ERR_COUNT),
    (ErrorClass, "MPI_ERR_TYPE", 3, c::MPI_ERR_TYPE),
    (ErrorClass, "MPI_ERR_TAG", 4, c::MPI_ERR_TAG),
    (ErrorClass, "MPI_ERR_COMM", 5, c::MPI_ERR_COMM),
    (ErrorClass, "MPI_ERR_RANK", 6, c::MPI_ERR_RANK),
    (ErrorClass, "MPI_ERR_REQUEST", 7, c::MPI_ERR_REQUEST),
    (ErrorClass, "MPI_ERR_ROOT", 8, c::MPI_ERR_ROOT),
    (ErrorClass, "MPI_ERR_GROUP", 9, c::MPI_ERR_GROUP),
    (ErrorClass, "MPI_ERR_OP", 10, c::MPI_ERR_OP),
    (ErrorClass, "MPI_ERR_TOPOLOGY", 11, c::MPI_ERR_TOPOLOGY),
    (ErrorClass, "MPI_ERR_DIMS", 12, c::MPI_ERR_DIMS),
    (ErrorClass, "MPI_ERR_ARG", 13, c::MPI_ERR_ARG),
    (ErrorClass, "MPI_ERR_UNKNOWN", 14, c::MPI_ERR_UNKNOWN),
    (ErrorClass, "MPI_ERR_TRUNCATE", 15, c::MPI_ERR_TRUNCATE),
    (ErrorClass, "MPI_ERR_OTHER", 16, c::MPI_ERR_OTHER),
    (ErrorClass, "MPI_ERR_INTERN", 17, c::MPI_ERR_INTERN),
    (ErrorClass, "MPI_ERR_PENDING", 18, c::MPI_ERR_PENDING),
    (ErrorClass, "MPI_ERR_IN_STATUS", 19, c::MPI_ERR_IN_STATUS),
    (ErrorClass, "MPI_ERR_ACCESS", 20, c::MPI_ERR_ACCESS),
    (ErrorClass, "MPI_ERR_AMODE", 21, c::MPI_ERR_AMODE),
    (ErrorClass, "MPI_ERR_ASSERT", 22, c::MPI_ERR_ASSERT),
    (ErrorClass, "MPI_ERR_BAD_FILE", 23, c::MPI_ERR_BAD_FILE),
    (ErrorClass, "MPI_ERR_BASE", 24, c::MPI_ERR_BASE),
    (ErrorClass, "MPI_ERR_CONVERSION", 25, c::MPI_ERR_CONVERSION),
    (ErrorClass, "MPI_ERR_DISP", 26, c::MPI_ERR_DISP),
    (ErrorClass, "MPI_ERR_DUP_DATAREP", 27, c::MPI_ERR_DUP_DATAREP),
    (ErrorClass, "MPI_ERR_FILE_EXISTS", 28, c::MPI_ERR_FILE_EXISTS),
    (ErrorClass, "MPI_ERR_FILE_IN_USE", 29, c::MPI_ERR_FILE_IN_USE),
    (ErrorClass, "MPI_ERR_FILE", 30, c::MPI_ERR_FILE),
    (ErrorClass, "MPI_ERR_INFO_KEY", 31, c::MPI_ERR_INFO_KEY),
    (ErrorClass, "MPI_ERR_INFO_NOKEY", 32, c::MPI_ERR_INFO_NOKEY),
    (ErrorClass, "MPI_ERR_INFO_VALUE", 33, c::MPI_ERR_INFO_VALUE),
    (ErrorClass, "MPI_ERR_INFO", 34, c::MPI_ERR_INFO),
    (ErrorClass, "MPI_ERR_IO", 35, c::MPI_ERR_IO),
    (ErrorClass, "MPI_ERR_KEYVAL", 36, c::MPI_ERR_KEYVAL),
    (ErrorClass, "MPI_ERR_LOCKTYPE", 37, c::MPI_ERR_LOCKTYPE),
    (ErrorClass, "MPI_ERR_NAME", 38, c::MPI_ERR_NAME),
    (ErrorClass, "MPI_ERR_NO_MEM", 39, c::MPI_ERR_NO_MEM),
    (ErrorClass, "MPI_ERR_NOT_SAME", 40, c::MPI_ERR_NOT_SAME),
    (ErrorClass, "MPI_ERR_NO_SPACE", 41, c::MPI_ERR_NO_SPACE),
    (ErrorClass, "MPI_ERR_NO_SUCH_FILE", 42, c::MPI_ERR_NO_SUCH_FILE),
    (ErrorClass, "MPI_ERR_PORT", 43, c::MPI_ERR_PORT),
    (ErrorClass, "MPI_ERR_QUOTA", 44, c::MPI_ERR_QUOTA),
    (ErrorClass, "MPI_ERR_READ_ONLY", 45, c::MPI_ERR_READ_ONLY),
    (ErrorClass, "MPI_ERR_RMA_ATTACH", 46, c::MPI_ERR_RMA_ATTACH),
    (ErrorClass, "MPI_ERR_RMA_CONFLICT", 47, c::MPI_ERR_RMA_CONFLICT),
    (ErrorClass, "MPI_ERR_RMA_RANGE", 48, c::MPI_ERR_RMA_RANGE),
    (ErrorClass, "MPI_ERR_RMA_SHARED", 49, c::MPI_ERR_RMA_SHARED),
    (ErrorClass, "MPI_ERR_RMA_SYNC", 50, c::MPI_ERR_RMA_SYNC),
    (ErrorClass, "MPI_ERR_SERVICE", 51, c::MPI_ERR_SERVICE),
    (ErrorClass, "MPI_ERR_SIZE", 52, c::MPI_ERR_SIZE),
    (ErrorClass, "MPI_ERR_SPAWN", 53, c::MPI_ERR_SPAWN),
    (ErrorClass, "MPI_ERR_UNSUPPORTED_DATAREP", 54, c::MPI_ERR_UNSUPPORTED_DATAREP),
    (ErrorClass, "MPI_ERR_UNSUPPORTED_OPERATION", 55, c::MPI_ERR_UNSUPPORTED_OPERATION),
    (ErrorClass, "MPI_ERR_WIN", 56, c::MPI_ERR_WIN),
    (ErrorClass, "MPI_ERR_RMA_FLAVOR", 57, c::MPI_ERR_RMA_FLAVOR),
    (ErrorClass, "MPI_ERR_PROC_ABORTED", 58, c::MPI_ERR_PROC_ABORTED),
    (ErrorClass, "MPI_ERR_VALUE_TOO_LARGE", 59, c::MPI_ERR_VALUE_TOO_LARGE),
    (ErrorClass, "MPI_ERR_SESSION", 60, c::MPI_ERR_SESSION),
    (ErrorClass, "MPI_ERR_ERRHANDLER", 61, c::MPI_ERR_ARG),
    (ErrorClass, "MPI_ERR_ABI", 62, c::MPI_ERR_OTHER),
    (ErrorClass, "MPI_T_ERR_CANNOT_INIT", 1001, c::MPI_T_ERR_CANNOT_INIT),
    (ErrorClass, "MPI_T_ERR_NOT_ACCESSIBLE", 1002, c::MPI_ERR_OTHER),
    (ErrorClass, "MPI_T_ERR_NOT_INITIALIZED", 1003, c::MPI_T_ERR_NOT_INITIALIZED),
    (ErrorClass, "MPI_T_ERR_NOT_SUPPORTED", 1004, c::MPI_T_ERR_NOT_SUPPORTED),
    (ErrorClass, "MPI_T_ERR_MEMORY", 1005, c::MPI_T_ERR_MEMORY),
    (ErrorClass, "MPI_T_ERR_INVALID", 1006, c::MPI_T_ERR_INVALID),
    (ErrorClass, "MPI_T_ERR_INVALID_INDEX", 1007, c::MPI_T_ERR_INVALID_INDEX),
    (ErrorClass, "MPI_T_ERR_INVALID_ITEM", 1008, c::MPI_T_ERR_INVALID_ITEM),
    (ErrorClass, "MPI_T_ERR_INVALID_SESSION", 1009, c::MPI_T_ERR_INVALID_SESSION),
    (ErrorClass, "MPI_T_ERR_INVALID_HANDLE", 1010, c::MPI_T_ERR_INVALID_HANDLE),
    (ErrorClass, "MPI_T_ERR_INVALID_NAME", 1011, c::MPI_T_ERR_INVALID_NAME),
    (ErrorClass, "MPI_T_ERR_OUT_OF_HANDLES", 1012, c::MPI_T_ERR_OUT_OF_HANDLES),
    (ErrorClass, "MPI_T_ERR_OUT_OF_SESSIONS", 1013, c::MPI_T_ERR_OUT_OF_SESSIONS),
    (ErrorClass, "MPI_T_ERR_CVAR_SET_NOT_NOW", 1014, c::MPI_T_ERR_CVAR_SET_NOT_NOW),
    (ErrorClass, "MPI_T_ERR_CVAR_SET_NEVER", 1015, c::MPI_T_ERR_CVAR_SET_NEVER),
    (ErrorClass, "MPI_T_ERR_PVAR_NO_WRITE", 1016, c::MPI_T_ERR_PVAR_NO_WRITE),
    (ErrorClass, "MPI_T_ERR_PVAR_NO_STARTSTOP", 1017, c::MPI_T_ERR_PVAR_NO_STARTSTOP),
    (ErrorClass, "MPI_T_ERR_PVAR_NO_ATOMIC", 1018, c::MPI_T_ERR_PVAR_NO_ATOMIC),
    (Verbosity, "MPI_T_VERBOSITY_USER_BASIC", 0x09, c::MPI_T_VERBOSITY_USER_BASIC),
    (Verbosity, "MPI_T_VERBOSITY_USER_DETAIL", 0x0a, c::MPI_T_VERBOSITY_USER_DETAIL),
    (Verbosity, "MPI_T_VERBOSITY_USER_ALL", 0x0c, c::MPI_T_VERBOSITY_USER_ALL),
    (Verbosity, "MPI_T_VERBOSITY_TUNER_BASIC", 0x11, c::MPI_T_VERBOSITY_TUNER_BASIC),
    (Verbosity, "MPI_T_VERBOSITY_TUNER_DETAIL", 0x12, c::MPI_T_VERBOSITY_TUNER_DETAIL),
    (Verbosity, "MPI_T_VERBOSITY_TUNER_ALL", 0x14, c::MPI_T_VERBOSITY_TUNER_ALL),
    (Verbosity, "MPI_T_VERBOSITY_MPIDEV_BASIC", 0x21, c::MPI_T_VERBOSITY_MPIDEV_BASIC),
    (Verbosity, "MPI_T_VERBOSITY_MPIDEV_DETAIL", 0x22, c::MPI_T_VERBOSITY_MPIDEV_DETAIL),
    (Verbosity, "MPI_T_VERBOSITY_MPIDEV_ALL", 0x24, c::MPI_T_VERBOSITY_MPIDEV_ALL),
    (Bind, "MPI_T_BIND_NO_OBJECT", 1, c::MPI_T_BIND_NO_OBJECT),
    (Bind, "MPI_T_BIND_MPI_COMM", 2, c::MPI_T_BIND_MPI_COMM),
    (Bind, "MPI_T_BIND_MPI_DATATYPE", 3, c::MPI_T_BIND_MPI_DATATYPE),
    (Bind, "MPI_T_BIND_MPI_ERRHANDLER", 4, c::MPI_T_BIND_MPI_ERRHANDLER),
    (Bind, "MPI_T_BIND_MPI_FILE", 5, c::MPI_T_BIND_MPI_FILE),
    (Bind, "MPI_T_BIND_MPI_GROUP", 6, c::MPI_T_BIND_MPI_GROUP),
    (Bind, "MPI_T_BIND_MPI_OP", 7, c::MPI_T_BIND_MPI_OP),
    (Bind, "MPI_T_BIND_MPI_REQUEST", 8, c::MPI_T_BIND_MPI_REQUEST),
    (Bind, "MPI_T_BIND_MPI_WIN", 9, c::MPI_T_BIND_MPI_WIN),
    (Bind, "MPI_T_BIND_MPI_MESSAGE", 10, c::MPI_T_BIND_MPI_MESSAGE),
    (Bind, "MPI_T_BIND_MPI_INFO", 11, c::MPI_T_BIND_MPI_INFO),
    (Scope, "MPI_T_SCOPE_CONSTANT", 1, c::MPI_T_SCOPE_CONSTANT),
    (Scope, "MPI_T_SCOPE_READONLY", 2, c::MPI_T_SCOPE_READONLY),
    (Scope, "MPI_T_SCOPE_LOCAL", 3, c::MPI_T_SCOPE_LOCAL),
    (Scope, "MPI_T_SCOPE_GROUP", 4, c::MPI_T_SCOPE_GROUP),
    (Scope, "MPI_T_SCOPE_GROUP_EQ", 5, c::MPI_T_SCOPE_GROUP_EQ),
    (Scope, "MPI_T_SCOPE_ALL", 6, c::MPI_T_SCOPE_ALL),
    (Scope, "MPI_T_SCOPE_ALL_EQ", 7, c::MPI_T_SCOPE_ALL_EQ),
    (PvarClass, "MPI_T_PVAR_CLASS_STATE", 1, c::MPI_T_PVAR_CLASS_STATE),
    (PvarClass, "MPI_T_PVAR_CLASS_LEVEL", 2, c::MPI_T_PVAR_CLASS_LEVEL),
    (PvarClass, "MPI_T_PVAR_CLASS_SIZE", 3, c::MPI_T_PVAR_CLASS_SIZE),
    (PvarClass, "MPI_T_PVAR_CLASS_PERCENTAGE", 4, c::MPI_T_PVAR_CLASS_PERCENTAGE),
    (PvarClass, "MPI_T_PVAR_CLASS_HIGHWATERMARK", 5, c::MPI_T_PVAR_CLASS_HIGHWATERMARK),
    (PvarClass, "MPI_T_PVAR_CLASS_LOWWATERMARK", 6, c::MPI_T_PVAR_CLASS_LOWWATERMARK),
    (PvarClass, "MPI_T_PVAR_CLASS_COUNTER", 7, c::MPI_T_PVAR_CLASS_COUNTER),
    (PvarClass, "MPI_T_PVAR_CLASS_AGGREGATE", 8, c::MPI_T_PVAR_CLASS_AGGREGATE),
    (PvarClass, "MPI_T_PVAR_CLASS_TIMER", 9, c::MPI_T_PVAR_CLASS_TIMER),
    (PvarClass, "MPI_T_PVAR_CLASS_GENERIC", 10, c::MPI_T_PVAR_CLASS_GENERIC),
    (CbSafety, "MPI_T_CB_REQUIRE_NONE", 0x00, c::MPI_T_CB_REQUIRE_NONE),
    (CbSafety, "MPI_T_CB_REQUIRE_MPI_RESTRICTED", 0x03, c::MPI_T_CB_REQUIRE_MPI_RESTRICTED),
    (CbSafety, "MPI_T_CB_REQUIRE_THREAD_SAFE", 0x0f, c::MPI_T_CB_REQUIRE_THREAD_SAFE),
    (CbSafety, "MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE", 0x3f, c::MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE),
    (SourceOrder, "MPI_T_SOURCE_ORDERED", 1, c::MPI_T_SOURCE_ORDERED),
    (SourceOrder, "MPI_T_SOURCE_UNORDERED", 2, c::MPI_T_SOURCE_UNORDERED),
];

/// Bit masks: `(group, name, standard bit, oxmpi bit)`; a mode argument
/// is translated bit by bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeGroup {
    /// File access modes (`MPI_File_open`, `MPI_File_get_amode`).
    File,
    /// RMA assertions (`MPI_Win_fence`, `MPI_Win_lock`...).
    Win,
}

#[rustfmt::skip]
pub const MODES: &[(ModeGroup, &str, c_int, c_int)] = &[
    (ModeGroup::File, "MPI_MODE_APPEND", 1, c::MPI_MODE_APPEND),
    (ModeGroup::File, "MPI_MODE_CREATE", 2, c::MPI_MODE_CREATE),
    (ModeGroup::File, "MPI_MODE_DELETE_ON_CLOSE", 4, c::MPI_MODE_DELETE_ON_CLOSE),
    (ModeGroup::File, "MPI_MODE_EXCL", 8, c::MPI_MODE_EXCL),
    (ModeGroup::File, "MPI_MODE_RDONLY", 16, c::MPI_MODE_RDONLY),
    (ModeGroup::File, "MPI_MODE_RDWR", 32, c::MPI_MODE_RDWR),
    (ModeGroup::File, "MPI_MODE_SEQUENTIAL", 64, c::MPI_MODE_SEQUENTIAL),
    (ModeGroup::File, "MPI_MODE_UNIQUE_OPEN", 128, c::MPI_MODE_UNIQUE_OPEN),
    (ModeGroup::File, "MPI_MODE_WRONLY", 256, c::MPI_MODE_WRONLY),
    (ModeGroup::Win, "MPI_MODE_NOCHECK", 1024, c::MPI_MODE_NOCHECK),
    (ModeGroup::Win, "MPI_MODE_NOPRECEDE", 2048, c::MPI_MODE_NOPRECEDE),
    (ModeGroup::Win, "MPI_MODE_NOPUT", 4096, c::MPI_MODE_NOPUT),
    (ModeGroup::Win, "MPI_MODE_NOSTORE", 8192, c::MPI_MODE_NOSTORE),
    (ModeGroup::Win, "MPI_MODE_NOSUCCEED", 16384, c::MPI_MODE_NOSUCCEED),
];

/// `MPI_DISPLACEMENT_CURRENT`: `((MPI_Offset)-1)` in the standard ABI.
pub const DISPLACEMENT_CURRENT: i64 = -1;

/// Integer constants of the header with no oxmpi counterpart to convert
/// (or the same value in both ABIs): `(name, value)`.
#[rustfmt::skip]
pub const HEADER_INTS: &[(&str, c_int)] = &[
    // The MPI version oxmpi implements (as `MPI_Get_version` reports it),
    // not the standard ABI header's 5.0: oxmpi is an MPI 4.0 library with
    // the standard ABI.
    ("MPI_VERSION", 4),
    ("MPI_SUBVERSION", 0),
    ("MPI_ABI_VERSION", 1),
    ("MPI_ABI_SUBVERSION", 0),
    ("MPI_UNDEFINED", -32766),
    ("MPI_ERR_LASTCODE", 0x3fff),
    ("MPI_COMM_TYPE_RESOURCE_GUIDED", 224),
    ("MPI_COMBINER_VALUE_INDEX", 117),
    ("MPI_T_BIND_MPI_SESSION", 12),
    ("MPI_F_STATUS_SIZE", 8),
    ("MPI_F_SOURCE", 0),
    ("MPI_F_TAG", 1),
    ("MPI_F_ERROR", 2),
    ("MPI_MAX_DATAREP_STRING", 128),
    ("MPI_MAX_ERROR_STRING", 512),
    ("MPI_MAX_INFO_KEY", 256),
    ("MPI_MAX_INFO_VAL", 1024),
    ("MPI_MAX_LIBRARY_VERSION_STRING", 8192),
    ("MPI_MAX_OBJECT_NAME", 128),
    ("MPI_MAX_PORT_NAME", 1024),
    ("MPI_MAX_PROCESSOR_NAME", 256),
    ("MPI_MAX_STRINGTAG_LEN", 1024),
    ("MPI_MAX_PSET_NAME_LEN", 1024),
    ("MPI_BSEND_OVERHEAD", 512),
];

/// The longest info key of the library being built: `MPI_MAX_INFO_KEY`,
/// 256 in the standard ABI (programs size their buffers with it), 255 in
/// MPICH's.
pub const MAX_INFO_KEY: c_int = if cfg!(feature = "standard-abi") {
    256
} else {
    c::MPI_MAX_INFO_KEY
};

/// `MPI_BSEND_OVERHEAD` of the library being built: the bytes a buffered
/// message costs beyond its data, 512 in the standard ABI, 96 in MPICH's
/// (programs size their attached buffers with the header's value).
pub const BSEND_OVERHEAD: c_int = if cfg!(feature = "standard-abi") {
    512
} else {
    c::MPI_BSEND_OVERHEAD
};

/// The standard ABI's version, as `MPI_Abi_get_version` reports it.
pub const ABI_VERSION: (c_int, c_int) = (1, 0);
