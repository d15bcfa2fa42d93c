//! The integer-valued constants of the MPICH ABI (Debian MPICH 4.0.2), as
//! listed in docs/reference/mpich-abi-constants.txt. cbindgen renders each one as a
//! `#define` in include/mpi.h; the C test `c_tests/abi_constants.sh` compares
//! them with MPICH's own header. Pointer-valued macros, data symbols and string
//! macros are in `mpi_trailer.h` / `data_symbols.rs` (cbindgen 0.29 cannot
//! render them).
//!
//! Handle encoding (MPICH `mpir_objects.h`): bits 31-30 handle kind (0 invalid,
//! 1 builtin, 2 direct, 3 indirect), bits 29-26 object kind, bits 25-0 index.
//! Builtin datatypes are `0x4c00SSII` with SS = size in bytes.
#![allow(non_upper_case_globals)]

use super::types::*;
use std::os::raw::c_int;

// ---- Null handles ----
// Kind INVALID with only the object-kind bits set.
pub const MPI_COMM_NULL: MPI_Comm = 0x04000000;
pub const MPI_GROUP_NULL: MPI_Group = 0x08000000;
pub const MPI_DATATYPE_NULL: MPI_Datatype = 0x0c000000;
pub const MPI_REQUEST_NULL: MPI_Request = 0x2c000000;
pub const MPI_OP_NULL: MPI_Op = 0x18000000;
pub const MPI_ERRHANDLER_NULL: MPI_Errhandler = 0x14000000;
pub const MPI_INFO_NULL: MPI_Info = 0x1c000000;
pub const MPI_WIN_NULL: MPI_Win = 0x20000000;
pub const MPI_SESSION_NULL: MPI_Session = 0x38000000;
pub const MPI_MESSAGE_NULL: MPI_Message = 0x2c000000;
pub const MPI_MESSAGE_NO_PROC: MPI_Message = 0x6c000000;
pub const MPI_KEYVAL_INVALID: c_int = 0x24000000;

// ---- Predefined communicators, groups, info, error handlers ----
pub const MPI_COMM_WORLD: MPI_Comm = 0x44000000;
pub const MPI_COMM_SELF: MPI_Comm = 0x44000001;
pub const MPI_GROUP_EMPTY: MPI_Group = 0x48000000;
pub const MPI_INFO_ENV: MPI_Info = 0x5c000001;
pub const MPI_ERRORS_ARE_FATAL: MPI_Errhandler = 0x54000000;
pub const MPI_ERRORS_RETURN: MPI_Errhandler = 0x54000001;
pub const MPIR_ERRORS_THROW_EXCEPTIONS: MPI_Errhandler = 0x54000002;
pub const MPI_ERRORS_ABORT: MPI_Errhandler = 0x54000003;

// ---- Datatypes ----
// Builtin: 0x4c00SSII (SS = size in bytes, II = index); MPI_LB/MPI_UB have size 0.
// Sorted by size, then index. MPI_INTEGER16 is not supported (= MPI_DATATYPE_NULL).
pub const MPI_INTEGER16: MPI_Datatype = MPI_DATATYPE_NULL;
pub const MPI_LB: MPI_Datatype = 0x4c000010;
pub const MPI_UB: MPI_Datatype = 0x4c000011;
pub const MPI_CHAR: MPI_Datatype = 0x4c000101;
pub const MPI_UNSIGNED_CHAR: MPI_Datatype = 0x4c000102;
pub const MPI_BYTE: MPI_Datatype = 0x4c00010d;
pub const MPI_PACKED: MPI_Datatype = 0x4c00010f;
pub const MPI_SIGNED_CHAR: MPI_Datatype = 0x4c000118;
pub const MPI_CHARACTER: MPI_Datatype = 0x4c00011a;
pub const MPI_INTEGER1: MPI_Datatype = 0x4c00012d;
pub const MPI_CXX_BOOL: MPI_Datatype = 0x4c000133;
pub const MPI_INT8_T: MPI_Datatype = 0x4c000137;
pub const MPI_UINT8_T: MPI_Datatype = 0x4c00013b;
pub const MPI_C_BOOL: MPI_Datatype = 0x4c00013f;
pub const MPI_SHORT: MPI_Datatype = 0x4c000203;
pub const MPI_UNSIGNED_SHORT: MPI_Datatype = 0x4c000204;
pub const MPI_INTEGER2: MPI_Datatype = 0x4c00022f;
pub const MPI_INT16_T: MPI_Datatype = 0x4c000238;
pub const MPI_UINT16_T: MPI_Datatype = 0x4c00023c;
pub const MPIX_C_FLOAT16: MPI_Datatype = 0x4c000246;
pub const MPI_INT: MPI_Datatype = 0x4c000405;
pub const MPI_UNSIGNED: MPI_Datatype = 0x4c000406;
pub const MPI_FLOAT: MPI_Datatype = 0x4c00040a;
pub const MPI_WCHAR: MPI_Datatype = 0x4c00040e;
pub const MPI_INTEGER: MPI_Datatype = 0x4c00041b;
pub const MPI_REAL: MPI_Datatype = 0x4c00041c;
pub const MPI_LOGICAL: MPI_Datatype = 0x4c00041d;
pub const MPI_REAL4: MPI_Datatype = 0x4c000427;
pub const MPI_INTEGER4: MPI_Datatype = 0x4c000430;
pub const MPI_INT32_T: MPI_Datatype = 0x4c000439;
pub const MPI_UINT32_T: MPI_Datatype = 0x4c00043d;
pub const MPI_LONG: MPI_Datatype = 0x4c000807;
pub const MPI_UNSIGNED_LONG: MPI_Datatype = 0x4c000808;
pub const MPI_LONG_LONG_INT: MPI_Datatype = 0x4c000809;
pub const MPI_LONG_LONG: MPI_Datatype = MPI_LONG_LONG_INT;
pub const MPI_DOUBLE: MPI_Datatype = 0x4c00080b;
pub const MPI_2INT: MPI_Datatype = 0x4c000816;
pub const MPI_UNSIGNED_LONG_LONG: MPI_Datatype = 0x4c000819;
pub const MPI_COMPLEX: MPI_Datatype = 0x4c00081e;
pub const MPI_DOUBLE_PRECISION: MPI_Datatype = 0x4c00081f;
pub const MPI_2INTEGER: MPI_Datatype = 0x4c000820;
pub const MPI_2REAL: MPI_Datatype = 0x4c000821;
pub const MPI_COMPLEX8: MPI_Datatype = 0x4c000828;
pub const MPI_REAL8: MPI_Datatype = 0x4c000829;
pub const MPI_INTEGER8: MPI_Datatype = 0x4c000831;
pub const MPI_CXX_FLOAT_COMPLEX: MPI_Datatype = 0x4c000834;
pub const MPI_INT64_T: MPI_Datatype = 0x4c00083a;
pub const MPI_UINT64_T: MPI_Datatype = 0x4c00083e;
pub const MPI_C_COMPLEX: MPI_Datatype = MPI_C_FLOAT_COMPLEX;
pub const MPI_C_FLOAT_COMPLEX: MPI_Datatype = 0x4c000840;
pub const MPI_AINT: MPI_Datatype = 0x4c000843;
pub const MPI_OFFSET: MPI_Datatype = 0x4c000844;
pub const MPI_COUNT: MPI_Datatype = 0x4c000845;
pub const MPI_LONG_DOUBLE: MPI_Datatype = 0x4c00100c;
pub const MPI_DOUBLE_COMPLEX: MPI_Datatype = 0x4c001022;
pub const MPI_2DOUBLE_PRECISION: MPI_Datatype = 0x4c001023;
pub const MPI_COMPLEX16: MPI_Datatype = 0x4c00102a;
pub const MPI_REAL16: MPI_Datatype = 0x4c00102b;
pub const MPI_CXX_DOUBLE_COMPLEX: MPI_Datatype = 0x4c001035;
pub const MPI_C_DOUBLE_COMPLEX: MPI_Datatype = 0x4c001041;
pub const MPI_COMPLEX32: MPI_Datatype = 0x4c00202c;
pub const MPI_CXX_LONG_DOUBLE_COMPLEX: MPI_Datatype = 0x4c002036;
pub const MPI_C_LONG_DOUBLE_COMPLEX: MPI_Datatype = 0x4c002042;

// Pair types for MINLOC/MAXLOC: DIRECT handles 0x8c00000N (no size bits).
pub const MPI_FLOAT_INT: MPI_Datatype = 0x8c000000_u32 as MPI_Datatype;
pub const MPI_DOUBLE_INT: MPI_Datatype = 0x8c000001_u32 as MPI_Datatype;
pub const MPI_LONG_INT: MPI_Datatype = 0x8c000002_u32 as MPI_Datatype;
pub const MPI_SHORT_INT: MPI_Datatype = 0x8c000003_u32 as MPI_Datatype;
pub const MPI_LONG_DOUBLE_INT: MPI_Datatype = 0x8c000004_u32 as MPI_Datatype;

// ---- Reduction operations ----
// Builtin ops 0x580000NN.
pub const MPI_MAX: MPI_Op = 0x58000001;
pub const MPI_MIN: MPI_Op = 0x58000002;
pub const MPI_SUM: MPI_Op = 0x58000003;
pub const MPI_PROD: MPI_Op = 0x58000004;
pub const MPI_LAND: MPI_Op = 0x58000005;
pub const MPI_BAND: MPI_Op = 0x58000006;
pub const MPI_LOR: MPI_Op = 0x58000007;
pub const MPI_BOR: MPI_Op = 0x58000008;
pub const MPI_LXOR: MPI_Op = 0x58000009;
pub const MPI_BXOR: MPI_Op = 0x5800000a;
pub const MPI_MINLOC: MPI_Op = 0x5800000b;
pub const MPI_MAXLOC: MPI_Op = 0x5800000c;
pub const MPI_REPLACE: MPI_Op = 0x5800000d;
pub const MPI_NO_OP: MPI_Op = 0x5800000e;

// ---- Predefined attribute keyvals ----
// Builtin keyvals; bits 25-22 = object kind (1 comm, 8 win). Fortran value = C value + 1.
pub const MPI_TAG_UB: c_int = 0x64400001;
pub const MPI_HOST: c_int = 0x64400003;
pub const MPI_IO: c_int = 0x64400005;
pub const MPI_WTIME_IS_GLOBAL: c_int = 0x64400007;
pub const MPI_UNIVERSE_SIZE: c_int = 0x64400009;
pub const MPI_LASTUSEDCODE: c_int = 0x6440000b;
pub const MPI_APPNUM: c_int = 0x6440000d;
pub const MPI_WIN_BASE: c_int = 0x66000001;
pub const MPI_WIN_SIZE: c_int = 0x66000003;
pub const MPI_WIN_DISP_UNIT: c_int = 0x66000005;
pub const MPI_WIN_CREATE_FLAVOR: c_int = 0x66000007;
pub const MPI_WIN_MODEL: c_int = 0x66000009;

// ---- Ranks, tags and other sentinels ----
pub const MPI_ANY_SOURCE: c_int = -2;
pub const MPI_ANY_TAG: c_int = -1;
pub const MPI_PROC_NULL: c_int = -1;
pub const MPI_ROOT: c_int = -3;
pub const MPI_UNDEFINED: c_int = -32766;
pub const MPI_BSEND_OVERHEAD: c_int = 96;
pub const MPI_DISPLACEMENT_CURRENT: c_int = -54278278;
pub const MPI_DISTRIBUTE_DFLT_DARG: c_int = -49767;

// ---- Error classes ----
pub const MPI_SUCCESS: c_int = 0;
pub const MPI_ERR_BUFFER: c_int = 1;
pub const MPI_ERR_COUNT: c_int = 2;
pub const MPI_ERR_TYPE: c_int = 3;
pub const MPI_ERR_TAG: c_int = 4;
pub const MPI_ERR_COMM: c_int = 5;
pub const MPI_ERR_RANK: c_int = 6;
pub const MPI_ERR_ROOT: c_int = 7;
pub const MPI_ERR_GROUP: c_int = 8;
pub const MPI_ERR_OP: c_int = 9;
pub const MPI_ERR_TOPOLOGY: c_int = 10;
pub const MPI_ERR_DIMS: c_int = 11;
pub const MPI_ERR_ARG: c_int = 12;
pub const MPI_ERR_UNKNOWN: c_int = 13;
pub const MPI_ERR_TRUNCATE: c_int = 14;
pub const MPI_ERR_OTHER: c_int = 15;
pub const MPI_ERR_INTERN: c_int = 16;
pub const MPI_ERR_IN_STATUS: c_int = 17;
pub const MPI_ERR_PENDING: c_int = 18;
pub const MPI_ERR_REQUEST: c_int = 19;
pub const MPI_ERR_ACCESS: c_int = 20;
pub const MPI_ERR_AMODE: c_int = 21;
pub const MPI_ERR_BAD_FILE: c_int = 22;
pub const MPI_ERR_CONVERSION: c_int = 23;
pub const MPI_ERR_DUP_DATAREP: c_int = 24;
pub const MPI_ERR_FILE_EXISTS: c_int = 25;
pub const MPI_ERR_FILE_IN_USE: c_int = 26;
pub const MPI_ERR_FILE: c_int = 27;
pub const MPI_ERR_INFO: c_int = 28;
pub const MPI_ERR_INFO_KEY: c_int = 29;
pub const MPI_ERR_INFO_VALUE: c_int = 30;
pub const MPI_ERR_INFO_NOKEY: c_int = 31;
pub const MPI_ERR_IO: c_int = 32;
pub const MPI_ERR_NAME: c_int = 33;
pub const MPI_ERR_NO_MEM: c_int = 34;
pub const MPI_ERR_NOT_SAME: c_int = 35;
pub const MPI_ERR_NO_SPACE: c_int = 36;
pub const MPI_ERR_NO_SUCH_FILE: c_int = 37;
pub const MPI_ERR_PORT: c_int = 38;
pub const MPI_ERR_QUOTA: c_int = 39;
pub const MPI_ERR_READ_ONLY: c_int = 40;
pub const MPI_ERR_SERVICE: c_int = 41;
pub const MPI_ERR_SPAWN: c_int = 42;
pub const MPI_ERR_UNSUPPORTED_DATAREP: c_int = 43;
pub const MPI_ERR_UNSUPPORTED_OPERATION: c_int = 44;
pub const MPI_ERR_WIN: c_int = 45;
pub const MPI_ERR_BASE: c_int = 46;
pub const MPI_ERR_LOCKTYPE: c_int = 47;
pub const MPI_ERR_KEYVAL: c_int = 48;
pub const MPI_ERR_RMA_CONFLICT: c_int = 49;
pub const MPI_ERR_RMA_SYNC: c_int = 50;
pub const MPI_ERR_SIZE: c_int = 51;
pub const MPI_ERR_DISP: c_int = 52;
pub const MPI_ERR_ASSERT: c_int = 53;
pub const MPI_ERR_RMA_RANGE: c_int = 55;
pub const MPI_ERR_RMA_ATTACH: c_int = 56;
pub const MPI_ERR_RMA_SHARED: c_int = 57;
pub const MPI_ERR_RMA_FLAVOR: c_int = 58;
pub const MPI_T_ERR_MEMORY: c_int = 59;
pub const MPI_T_ERR_NOT_INITIALIZED: c_int = 60;
pub const MPI_T_ERR_CANNOT_INIT: c_int = 61;
pub const MPI_T_ERR_INVALID_INDEX: c_int = 62;
pub const MPI_T_ERR_INVALID_ITEM: c_int = 63;
pub const MPI_T_ERR_INVALID_HANDLE: c_int = 64;
pub const MPI_T_ERR_OUT_OF_HANDLES: c_int = 65;
pub const MPI_T_ERR_OUT_OF_SESSIONS: c_int = 66;
pub const MPI_T_ERR_INVALID_SESSION: c_int = 67;
pub const MPI_T_ERR_CVAR_SET_NOT_NOW: c_int = 68;
pub const MPI_T_ERR_CVAR_SET_NEVER: c_int = 69;
pub const MPI_T_ERR_PVAR_NO_STARTSTOP: c_int = 70;
pub const MPI_T_ERR_PVAR_NO_WRITE: c_int = 71;
pub const MPI_T_ERR_PVAR_NO_ATOMIC: c_int = 72;
pub const MPI_T_ERR_INVALID_NAME: c_int = 73;
pub const MPI_T_ERR_INVALID: c_int = 74;
pub const MPI_ERR_SESSION: c_int = 75;
pub const MPI_ERR_PROC_ABORTED: c_int = 76;
pub const MPI_ERR_VALUE_TOO_LARGE: c_int = 77;
pub const MPICH_ERR_LAST_CLASS: c_int = 78;
pub const MPI_T_ERR_NOT_SUPPORTED: c_int = 78;
pub const MPICH_ERR_FIRST_MPIX: c_int = 100;
pub const MPIX_ERR_PROC_FAILED: c_int = MPICH_ERR_FIRST_MPIX + 1;
pub const MPIX_ERR_PROC_FAILED_PENDING: c_int = MPICH_ERR_FIRST_MPIX + 2;
pub const MPIX_ERR_REVOKED: c_int = MPICH_ERR_FIRST_MPIX + 3;
pub const MPIX_ERR_EAGAIN: c_int = MPICH_ERR_FIRST_MPIX + 4;
pub const MPICH_ERR_LAST_MPIX: c_int = MPICH_ERR_FIRST_MPIX + 5;
pub const MPIX_ERR_NOREQ: c_int = MPICH_ERR_FIRST_MPIX + 5;
pub const MPI_ERR_LASTCODE: c_int = 0x3fffffff;

// ---- Thread levels ----
pub const MPI_THREAD_SINGLE: c_int = 0;
pub const MPI_THREAD_FUNNELED: c_int = 1;
pub const MPI_THREAD_SERIALIZED: c_int = 2;
pub const MPI_THREAD_MULTIPLE: c_int = 3;

// ---- String length limits ----
pub const MPI_MAX_DATAREP_STRING: c_int = 128;
pub const MPI_MAX_ERROR_STRING: c_int = 512;
pub const MPI_MAX_INFO_KEY: c_int = 255;
pub const MPI_MAX_INFO_VAL: c_int = 1024;
pub const MPI_MAX_LIBRARY_VERSION_STRING: c_int = 8192;
pub const MPI_MAX_OBJECT_NAME: c_int = 128;
pub const MPI_MAX_PORT_NAME: c_int = 256;
pub const MPI_MAX_PROCESSOR_NAME: c_int = 128;
pub const MPI_MAX_PSET_NAME_LEN: c_int = 256;
pub const MPI_MAX_STRINGTAG_LEN: c_int = 256;
pub const QMPI_MAX_TOOL_NAME_LENGTH: c_int = 256;

// ---- Comparison results, type classes, split types, locks, array orders and distributions ----
pub const MPI_IDENT: c_int = 0;
pub const MPI_CONGRUENT: c_int = 1;
pub const MPI_SIMILAR: c_int = 2;
pub const MPI_UNEQUAL: c_int = 3;
pub const MPI_TYPECLASS_REAL: c_int = 1;
pub const MPI_TYPECLASS_INTEGER: c_int = 2;
pub const MPI_TYPECLASS_COMPLEX: c_int = 3;
pub const MPI_COMM_TYPE_SHARED: c_int = 1;
pub const MPI_COMM_TYPE_HW_GUIDED: c_int = 2;
pub const MPI_COMM_TYPE_HW_UNGUIDED: c_int = 3;
pub const MPIX_COMM_TYPE_NEIGHBORHOOD: c_int = 4;
pub const MPI_LOCK_EXCLUSIVE: c_int = 234;
pub const MPI_LOCK_SHARED: c_int = 235;
pub const MPI_ORDER_C: c_int = 56;
pub const MPI_ORDER_FORTRAN: c_int = 57;
pub const MPI_DISTRIBUTE_BLOCK: c_int = 121;
pub const MPI_DISTRIBUTE_CYCLIC: c_int = 122;
pub const MPI_DISTRIBUTE_NONE: c_int = 123;

// ---- File access modes, seek whence, RMA assertion modes ----
pub const MPI_MODE_CREATE: c_int = 0x00000001;
pub const MPI_MODE_RDONLY: c_int = 0x00000002;
pub const MPI_MODE_WRONLY: c_int = 0x00000004;
pub const MPI_MODE_RDWR: c_int = 0x00000008;
pub const MPI_MODE_DELETE_ON_CLOSE: c_int = 0x00000010;
pub const MPI_MODE_UNIQUE_OPEN: c_int = 0x00000020;
pub const MPI_MODE_EXCL: c_int = 0x00000040;
pub const MPI_MODE_APPEND: c_int = 0x00000080;
pub const MPI_MODE_SEQUENTIAL: c_int = 0x00000100;
pub const MPI_SEEK_SET: c_int = 600;
pub const MPI_SEEK_CUR: c_int = 602;
pub const MPI_SEEK_END: c_int = 604;
pub const MPI_MODE_NOCHECK: c_int = 0x00000400;
pub const MPI_MODE_NOSTORE: c_int = 0x00000800;
pub const MPI_MODE_NOPUT: c_int = 0x00001000;
pub const MPI_MODE_NOPRECEDE: c_int = 0x00002000;
pub const MPI_MODE_NOSUCCEED: c_int = 0x00004000;

// ---- Fortran status indices (MPI-4) ----
pub const MPI_F_STATUS_SIZE: c_int = 5;
pub const MPI_F_SOURCE: c_int = 2;
pub const MPI_F_TAG: c_int = 3;
pub const MPI_F_ERROR: c_int = 4;

// ---- Version macros ----
// The string macros (MPICH_VERSION, MPI_AINT_FMT_*_SPEC) are in mpi_trailer.h.
pub const MPI_VERSION: c_int = 4;
pub const MPI_SUBVERSION: c_int = 0;
pub const MPICH_NAME: c_int = 4;
pub const MPICH: c_int = 1;
pub const MPICH_HAS_C2F: c_int = 1;
pub const MPICH_NUMVERSION: c_int = 40002300;
pub const MPICH_RELEASE_TYPE_ALPHA: c_int = 0;
pub const MPICH_RELEASE_TYPE_BETA: c_int = 1;
pub const MPICH_RELEASE_TYPE_RC: c_int = 2;
pub const MPICH_RELEASE_TYPE_PATCH: c_int = 3;
pub const ROMIO_VERSION: c_int = 126;

// ---- MPICH extensions ----
pub const MPIX_GPU_SUPPORT_CUDA: c_int = 0;
pub const MPIX_GPU_SUPPORT_ZE: c_int = 1;
pub const MPIX_GPU_SUPPORT_HIP: c_int = 2;

// ---- Enumeration constants ----
// C enums in MPICH's header; here plain ints with the same values.
// Window flavors (MPI_WIN_CREATE_FLAVOR attribute)
pub const MPI_WIN_FLAVOR_CREATE: c_int = 1;
pub const MPI_WIN_FLAVOR_ALLOCATE: c_int = 2;
pub const MPI_WIN_FLAVOR_DYNAMIC: c_int = 3;
pub const MPI_WIN_FLAVOR_SHARED: c_int = 4;
// Window memory models (MPI_WIN_MODEL attribute)
pub const MPI_WIN_SEPARATE: c_int = 1;
pub const MPI_WIN_UNIFIED: c_int = 2;
// Topology types
pub const MPI_GRAPH: c_int = 1;
pub const MPI_CART: c_int = 2;
pub const MPI_DIST_GRAPH: c_int = 3;
// Datatype combiners
pub const MPI_COMBINER_NAMED: c_int = 1;
pub const MPI_COMBINER_DUP: c_int = 2;
pub const MPI_COMBINER_CONTIGUOUS: c_int = 3;
pub const MPI_COMBINER_VECTOR: c_int = 4;
pub const MPI_COMBINER_HVECTOR_INTEGER: c_int = 5;
pub const MPI_COMBINER_HVECTOR: c_int = 6;
pub const MPI_COMBINER_INDEXED: c_int = 7;
pub const MPI_COMBINER_HINDEXED_INTEGER: c_int = 8;
pub const MPI_COMBINER_HINDEXED: c_int = 9;
pub const MPI_COMBINER_INDEXED_BLOCK: c_int = 10;
pub const MPI_COMBINER_STRUCT_INTEGER: c_int = 11;
pub const MPI_COMBINER_STRUCT: c_int = 12;
pub const MPI_COMBINER_SUBARRAY: c_int = 13;
pub const MPI_COMBINER_DARRAY: c_int = 14;
pub const MPI_COMBINER_F90_REAL: c_int = 15;
pub const MPI_COMBINER_F90_COMPLEX: c_int = 16;
pub const MPI_COMBINER_F90_INTEGER: c_int = 17;
pub const MPI_COMBINER_RESIZED: c_int = 18;
pub const MPI_COMBINER_HINDEXED_BLOCK: c_int = 19;
// MPI_T verbosity levels (MPI_T_VERBOSITY_INVALID is an MPICH extension)
pub const MPI_T_VERBOSITY_INVALID: c_int = 0;
pub const MPI_T_VERBOSITY_USER_BASIC: c_int = 221;
pub const MPI_T_VERBOSITY_USER_DETAIL: c_int = 222;
pub const MPI_T_VERBOSITY_USER_ALL: c_int = 223;
pub const MPI_T_VERBOSITY_TUNER_BASIC: c_int = 224;
pub const MPI_T_VERBOSITY_TUNER_DETAIL: c_int = 225;
pub const MPI_T_VERBOSITY_TUNER_ALL: c_int = 226;
pub const MPI_T_VERBOSITY_MPIDEV_BASIC: c_int = 227;
pub const MPI_T_VERBOSITY_MPIDEV_DETAIL: c_int = 228;
pub const MPI_T_VERBOSITY_MPIDEV_ALL: c_int = 229;
// MPI_T binding objects
pub const MPI_T_BIND_INVALID: c_int = 0;
pub const MPI_T_BIND_NO_OBJECT: c_int = 9700;
pub const MPI_T_BIND_MPI_COMM: c_int = 9701;
pub const MPI_T_BIND_MPI_DATATYPE: c_int = 9702;
pub const MPI_T_BIND_MPI_ERRHANDLER: c_int = 9703;
pub const MPI_T_BIND_MPI_FILE: c_int = 9704;
pub const MPI_T_BIND_MPI_GROUP: c_int = 9705;
pub const MPI_T_BIND_MPI_OP: c_int = 9706;
pub const MPI_T_BIND_MPI_REQUEST: c_int = 9707;
pub const MPI_T_BIND_MPI_WIN: c_int = 9708;
pub const MPI_T_BIND_MPI_MESSAGE: c_int = 9709;
pub const MPI_T_BIND_MPI_INFO: c_int = 9710;
// MPI_T scopes
pub const MPI_T_SCOPE_INVALID: c_int = 0;
pub const MPI_T_SCOPE_CONSTANT: c_int = 60438;
pub const MPI_T_SCOPE_READONLY: c_int = 60439;
pub const MPI_T_SCOPE_LOCAL: c_int = 60440;
pub const MPI_T_SCOPE_GROUP: c_int = 60441;
pub const MPI_T_SCOPE_GROUP_EQ: c_int = 60442;
pub const MPI_T_SCOPE_ALL: c_int = 60443;
pub const MPI_T_SCOPE_ALL_EQ: c_int = 60444;
// MPI_T performance variable classes
pub const MPI_T_PVAR_CLASS_INVALID: c_int = 0;
pub const MPI_T_PVAR_CLASS_STATE: c_int = 240;
pub const MPI_T_PVAR_CLASS_LEVEL: c_int = 241;
pub const MPI_T_PVAR_CLASS_SIZE: c_int = 242;
pub const MPI_T_PVAR_CLASS_PERCENTAGE: c_int = 243;
pub const MPI_T_PVAR_CLASS_HIGHWATERMARK: c_int = 244;
pub const MPI_T_PVAR_CLASS_LOWWATERMARK: c_int = 245;
pub const MPI_T_PVAR_CLASS_COUNTER: c_int = 246;
pub const MPI_T_PVAR_CLASS_AGGREGATE: c_int = 247;
pub const MPI_T_PVAR_CLASS_TIMER: c_int = 248;
pub const MPI_T_PVAR_CLASS_GENERIC: c_int = 249;
// MPI_T callback safety levels (type MPI_T_cb_safety)
pub const MPI_T_CB_REQUIRE_NONE: MPI_T_cb_safety = 0;
pub const MPI_T_CB_REQUIRE_MPI_RESTRICTED: MPI_T_cb_safety = 1;
pub const MPI_T_CB_REQUIRE_THREAD_SAFE: MPI_T_cb_safety = 2;
pub const MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE: MPI_T_cb_safety = 3;
// MPI_T event source ordering (type MPI_T_source_order)
pub const MPI_T_SOURCE_ORDERED: MPI_T_source_order = 0;
pub const MPI_T_SOURCE_UNORDERED: MPI_T_source_order = 1;

// ---- String macros ----
// cbindgen 0.29 cannot render string constants (it skips `&str` consts), so
// mpi_trailer.h defines the C macros; these are the Rust-side copies.
/// cbindgen:ignore
pub const MPICH_VERSION: &str = "4.0.2";
/// cbindgen:ignore
pub const MPI_AINT_FMT_DEC_SPEC: &str = "%ld";
/// cbindgen:ignore
pub const MPI_AINT_FMT_HEX_SPEC: &str = "%lx";
/// The oxmpi crate version.
///
/// cbindgen:ignore
pub const OXMPI_VERSION: &str = env!("CARGO_PKG_VERSION");

#[cfg(test)]
mod tests {
    use super::*;

    const KIND_BUILTIN: u32 = 1;
    const OBJ_COMM: u32 = 1;
    const OBJ_GROUP: u32 = 2;
    const OBJ_DATATYPE: u32 = 3;
    const OBJ_ERRHANDLER: u32 = 5;
    const OBJ_OP: u32 = 6;
    const OBJ_INFO: u32 = 7;
    const OBJ_WIN: u32 = 8;
    const OBJ_KEYVAL: u32 = 9;
    const OBJ_REQUEST: u32 = 0xb;
    const OBJ_SESSION: u32 = 0xe;

    fn handle_kind(h: c_int) -> u32 {
        (h as u32) >> 30
    }
    fn obj_kind(h: c_int) -> u32 {
        ((h as u32) & 0x3c00_0000) >> 26
    }
    fn basic_size(h: c_int) -> usize {
        (((h as u32) & 0xff00) >> 8) as usize
    }

    /// Every builtin datatype with its size in bytes as listed in the
    /// reference (x86_64 Debian MPICH 4.0.2).
    const BUILTIN_SIZES: &[(&str, MPI_Datatype, usize)] = &[
        ("MPI_LB", MPI_LB, 0),
        ("MPI_UB", MPI_UB, 0),
        ("MPI_CHAR", MPI_CHAR, 1),
        ("MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, 1),
        ("MPI_BYTE", MPI_BYTE, 1),
        ("MPI_PACKED", MPI_PACKED, 1),
        ("MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, 1),
        ("MPI_CHARACTER", MPI_CHARACTER, 1),
        ("MPI_INTEGER1", MPI_INTEGER1, 1),
        ("MPI_CXX_BOOL", MPI_CXX_BOOL, 1),
        ("MPI_INT8_T", MPI_INT8_T, 1),
        ("MPI_UINT8_T", MPI_UINT8_T, 1),
        ("MPI_C_BOOL", MPI_C_BOOL, 1),
        ("MPI_SHORT", MPI_SHORT, 2),
        ("MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, 2),
        ("MPI_INTEGER2", MPI_INTEGER2, 2),
        ("MPI_INT16_T", MPI_INT16_T, 2),
        ("MPI_UINT16_T", MPI_UINT16_T, 2),
        ("MPIX_C_FLOAT16", MPIX_C_FLOAT16, 2),
        ("MPI_INT", MPI_INT, 4),
        ("MPI_UNSIGNED", MPI_UNSIGNED, 4),
        ("MPI_FLOAT", MPI_FLOAT, 4),
        ("MPI_WCHAR", MPI_WCHAR, 4),
        ("MPI_INTEGER", MPI_INTEGER, 4),
        ("MPI_REAL", MPI_REAL, 4),
        ("MPI_LOGICAL", MPI_LOGICAL, 4),
        ("MPI_REAL4", MPI_REAL4, 4),
        ("MPI_INTEGER4", MPI_INTEGER4, 4),
        ("MPI_INT32_T", MPI_INT32_T, 4),
        ("MPI_UINT32_T", MPI_UINT32_T, 4),
        ("MPI_LONG", MPI_LONG, 8),
        ("MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, 8),
        ("MPI_LONG_LONG_INT", MPI_LONG_LONG_INT, 8),
        ("MPI_LONG_LONG", MPI_LONG_LONG, 8),
        ("MPI_DOUBLE", MPI_DOUBLE, 8),
        ("MPI_2INT", MPI_2INT, 8),
        ("MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, 8),
        ("MPI_COMPLEX", MPI_COMPLEX, 8),
        ("MPI_DOUBLE_PRECISION", MPI_DOUBLE_PRECISION, 8),
        ("MPI_2INTEGER", MPI_2INTEGER, 8),
        ("MPI_2REAL", MPI_2REAL, 8),
        ("MPI_COMPLEX8", MPI_COMPLEX8, 8),
        ("MPI_REAL8", MPI_REAL8, 8),
        ("MPI_INTEGER8", MPI_INTEGER8, 8),
        ("MPI_CXX_FLOAT_COMPLEX", MPI_CXX_FLOAT_COMPLEX, 8),
        ("MPI_INT64_T", MPI_INT64_T, 8),
        ("MPI_UINT64_T", MPI_UINT64_T, 8),
        ("MPI_C_COMPLEX", MPI_C_COMPLEX, 8),
        ("MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, 8),
        ("MPI_AINT", MPI_AINT, 8),
        ("MPI_OFFSET", MPI_OFFSET, 8),
        ("MPI_COUNT", MPI_COUNT, 8),
        ("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, 16),
        ("MPI_DOUBLE_COMPLEX", MPI_DOUBLE_COMPLEX, 16),
        ("MPI_2DOUBLE_PRECISION", MPI_2DOUBLE_PRECISION, 16),
        ("MPI_COMPLEX16", MPI_COMPLEX16, 16),
        ("MPI_REAL16", MPI_REAL16, 16),
        ("MPI_CXX_DOUBLE_COMPLEX", MPI_CXX_DOUBLE_COMPLEX, 16),
        ("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, 16),
        ("MPI_COMPLEX32", MPI_COMPLEX32, 32),
        (
            "MPI_CXX_LONG_DOUBLE_COMPLEX",
            MPI_CXX_LONG_DOUBLE_COMPLEX,
            32,
        ),
        ("MPI_C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX, 32),
    ];

    #[test]
    fn builtin_datatypes_encode_their_reference_size() {
        assert_eq!(BUILTIN_SIZES.len(), 62);
        for &(name, h, size) in BUILTIN_SIZES {
            assert_eq!(handle_kind(h), KIND_BUILTIN, "{name} is not BUILTIN");
            assert_eq!(obj_kind(h), OBJ_DATATYPE, "{name} is not a datatype");
            assert_eq!(
                basic_size(h),
                size,
                "{name}: size bits disagree with the reference"
            );
        }
        // The C types whose size Rust knows agree with the encoded sizes.
        use std::mem::size_of;
        use std::os::raw::{c_char, c_double, c_float, c_long, c_longlong, c_short};
        assert_eq!(basic_size(MPI_CHAR), size_of::<c_char>());
        assert_eq!(basic_size(MPI_SHORT), size_of::<c_short>());
        assert_eq!(basic_size(MPI_INT), size_of::<c_int>());
        assert_eq!(basic_size(MPI_LONG), size_of::<c_long>());
        assert_eq!(basic_size(MPI_LONG_LONG_INT), size_of::<c_longlong>());
        assert_eq!(basic_size(MPI_FLOAT), size_of::<c_float>());
        assert_eq!(basic_size(MPI_DOUBLE), size_of::<c_double>());
        assert_eq!(basic_size(MPI_AINT), size_of::<MPI_Aint>());
        assert_eq!(basic_size(MPI_OFFSET), size_of::<MPI_Offset>());
        assert_eq!(basic_size(MPI_COUNT), size_of::<MPI_Count>());
        // Builtin indices are unique (aliases share a value, so dedupe by value).
        let mut idx: Vec<(c_int, c_int)> = BUILTIN_SIZES
            .iter()
            .map(|&(_, h, _)| (h & 0xff, h))
            .collect();
        idx.sort();
        idx.dedup();
        for w in idx.windows(2) {
            assert_ne!(
                w[0].0, w[1].0,
                "two builtin datatypes share index {:#x}",
                w[0].0
            );
        }
    }

    #[test]
    fn pair_types_are_direct_datatypes() {
        for (i, h) in [
            MPI_FLOAT_INT,
            MPI_DOUBLE_INT,
            MPI_LONG_INT,
            MPI_SHORT_INT,
            MPI_LONG_DOUBLE_INT,
        ]
        .into_iter()
        .enumerate()
        {
            assert_eq!(handle_kind(h), 2);
            assert_eq!(obj_kind(h), OBJ_DATATYPE);
            assert_eq!(h as u32 & 0x03ff_ffff, i as u32);
        }
        assert_eq!(MPI_INTEGER16, MPI_DATATYPE_NULL);
    }

    #[test]
    fn null_and_predefined_handles_carry_their_object_kind() {
        let nulls = [
            (MPI_COMM_NULL, OBJ_COMM),
            (MPI_GROUP_NULL, OBJ_GROUP),
            (MPI_DATATYPE_NULL, OBJ_DATATYPE),
            (MPI_REQUEST_NULL, OBJ_REQUEST),
            (MPI_MESSAGE_NULL, OBJ_REQUEST),
            (MPI_OP_NULL, OBJ_OP),
            (MPI_ERRHANDLER_NULL, OBJ_ERRHANDLER),
            (MPI_INFO_NULL, OBJ_INFO),
            (MPI_WIN_NULL, OBJ_WIN),
            (MPI_SESSION_NULL, OBJ_SESSION),
            (MPI_KEYVAL_INVALID, OBJ_KEYVAL),
        ];
        for (h, obj) in nulls {
            assert_eq!(handle_kind(h), 0, "{h:#x}");
            assert_eq!(obj_kind(h), obj, "{h:#x}");
            assert_eq!(h as u32 & 0x03ff_ffff, 0);
        }
        let builtins = [
            (MPI_COMM_WORLD, OBJ_COMM),
            (MPI_COMM_SELF, OBJ_COMM),
            (MPI_GROUP_EMPTY, OBJ_GROUP),
            (MPI_INFO_ENV, OBJ_INFO),
            (MPI_ERRORS_ARE_FATAL, OBJ_ERRHANDLER),
            (MPI_ERRORS_RETURN, OBJ_ERRHANDLER),
            (MPI_ERRORS_ABORT, OBJ_ERRHANDLER),
            (MPI_MESSAGE_NO_PROC, OBJ_REQUEST),
            (MPI_MAX, OBJ_OP),
            (MPI_NO_OP, OBJ_OP),
            (MPI_TAG_UB, OBJ_KEYVAL),
            (MPI_WIN_MODEL, OBJ_KEYVAL),
        ];
        for (h, obj) in builtins {
            assert_eq!(handle_kind(h), KIND_BUILTIN, "{h:#x}");
            assert_eq!(obj_kind(h), obj, "{h:#x}");
        }
        // Builtin ops are numbered 1..=14 in declaration order.
        let ops = [
            MPI_MAX,
            MPI_MIN,
            MPI_SUM,
            MPI_PROD,
            MPI_LAND,
            MPI_BAND,
            MPI_LOR,
            MPI_BOR,
            MPI_LXOR,
            MPI_BXOR,
            MPI_MINLOC,
            MPI_MAXLOC,
            MPI_REPLACE,
            MPI_NO_OP,
        ];
        for (i, op) in ops.into_iter().enumerate() {
            assert_eq!(op & 0xff, i as c_int + 1);
        }
        // C keyvals are odd (Fortran value = C + 1); comm keyvals carry 1, win keyvals 8 in bits 25-22.
        for k in [
            MPI_TAG_UB,
            MPI_HOST,
            MPI_IO,
            MPI_WTIME_IS_GLOBAL,
            MPI_UNIVERSE_SIZE,
            MPI_LASTUSEDCODE,
            MPI_APPNUM,
        ] {
            assert_eq!(k & 1, 1);
            assert_eq!((k >> 22) & 0xf, 1);
        }
        for k in [
            MPI_WIN_BASE,
            MPI_WIN_SIZE,
            MPI_WIN_DISP_UNIT,
            MPI_WIN_CREATE_FLAVOR,
            MPI_WIN_MODEL,
        ] {
            assert_eq!(k & 1, 1);
            assert_eq!((k >> 22) & 0xf, 8);
        }
    }

    #[test]
    fn error_classes_and_sentinels() {
        assert_eq!(MPI_SUCCESS, 0);
        assert_eq!(MPI_ERR_RMA_FLAVOR, 58);
        assert_eq!(MPI_ERR_VALUE_TOO_LARGE, 77);
        assert_eq!(MPICH_ERR_LAST_CLASS, MPI_T_ERR_NOT_SUPPORTED);
        assert_eq!(MPIX_ERR_NOREQ, 105);
        assert_eq!(MPICH_ERR_LAST_MPIX, MPIX_ERR_NOREQ);
        assert_eq!(MPI_ERR_LASTCODE, 0x3fff_ffff);
        assert_eq!(MPI_ANY_TAG, -1);
        assert_eq!(MPI_PROC_NULL, -1);
        assert_eq!(MPI_ANY_SOURCE, -2);
        assert_eq!(MPI_ROOT, -3);
        assert_eq!(MPI_UNDEFINED, -32766);
        assert_eq!(MPICH_NUMVERSION, 40002300);
        assert_eq!(MPI_T_VERBOSITY_MPIDEV_ALL, 229);
        assert_eq!(MPI_T_BIND_MPI_INFO, 9710);
        assert_eq!(MPI_T_SCOPE_ALL_EQ, 60444);
        assert_eq!(MPI_T_PVAR_CLASS_GENERIC, 249);
    }
}
