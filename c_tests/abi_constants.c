/* ABI comparison: prints every constant, type size and layout of mpi.h that the
 * MPICH ABI fixes (docs/reference/mpich-abi-constants.txt), one `NAME VALUE` per line.
 * Built once against oxmpi's include/mpi.h and once with mpicc.mpich; the two
 * outputs must be identical (c_tests/abi_constants.sh). Calls no MPI function and
 * references no library symbol. */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* integer constant: value and C type */
#define TYPENAME(x) _Generic((x), \
    int: "int", unsigned int: "unsigned int", long: "long", unsigned long: "unsigned long", \
    long long: "long long", unsigned long long: "unsigned long long", default: "other")
#define I(name) printf("%s %lld %s\n", #name, (long long)(name), TYPENAME(name))
/* pointer-valued macro */
#define P(name) printf("%s %lld\n", #name, (long long)(intptr_t)(name))
/* string macro */
#define S(name) printf("%s \"%s\"\n", #name, name)
#define SIZE(type) printf("sizeof(%s) %zu\n", #type, sizeof(type))
#define FIELD(type, field) \
    printf("offsetof(%s,%s) %zu size %zu\n", #type, #field, offsetof(type, field), \
           sizeof(((type *)0)->field))
/* the C type a typedef names (for the integer typedefs) */
#define TYPEDEF(type) printf("typedef %s %s\n", #type, TYPENAME((type)0))
#define SIGNED(type) printf("signed(%s) %d\n", #type, (type)-1 < (type)0)

/* preprocessor usability of the version and numeric macros */
#if MPI_VERSION < 4 || MPI_SUBVERSION != 0
#error "MPI_VERSION / MPI_SUBVERSION unusable in #if"
#endif
#if !defined(MPICH) || MPICH_NUMVERSION != 40002300 || MPICH_NAME != 4
#error "MPICH / MPICH_NUMVERSION unusable in #if"
#endif
#if MPI_MAX_PROCESSOR_NAME != 128 || MPI_THREAD_MULTIPLE != 3 || ROMIO_VERSION != 126
#error "numeric macros unusable in #if"
#endif

int main(void)
{
    /* Null handles */
    I(MPI_COMM_NULL);
    I(MPI_GROUP_NULL);
    I(MPI_DATATYPE_NULL);
    I(MPI_REQUEST_NULL);
    I(MPI_OP_NULL);
    I(MPI_ERRHANDLER_NULL);
    I(MPI_INFO_NULL);
    I(MPI_WIN_NULL);
    I(MPI_SESSION_NULL);
    I(MPI_MESSAGE_NULL);
    I(MPI_MESSAGE_NO_PROC);
    I(MPI_KEYVAL_INVALID);
    /* Predefined communicators / groups / info / errhandlers */
    I(MPI_COMM_WORLD);
    I(MPI_COMM_SELF);
    I(MPI_GROUP_EMPTY);
    I(MPI_INFO_ENV);
    I(MPI_ERRORS_ARE_FATAL);
    I(MPI_ERRORS_RETURN);
    I(MPIR_ERRORS_THROW_EXCEPTIONS);
    I(MPI_ERRORS_ABORT);
    /* Datatypes */
    I(MPI_INTEGER16);
    I(MPI_LB);
    I(MPI_UB);
    I(MPI_CHAR);
    I(MPI_UNSIGNED_CHAR);
    I(MPI_BYTE);
    I(MPI_PACKED);
    I(MPI_SIGNED_CHAR);
    I(MPI_CHARACTER);
    I(MPI_INTEGER1);
    I(MPI_CXX_BOOL);
    I(MPI_INT8_T);
    I(MPI_UINT8_T);
    I(MPI_C_BOOL);
    I(MPI_SHORT);
    I(MPI_UNSIGNED_SHORT);
    I(MPI_INTEGER2);
    I(MPI_INT16_T);
    I(MPI_UINT16_T);
    I(MPIX_C_FLOAT16);
    I(MPI_INT);
    I(MPI_UNSIGNED);
    I(MPI_FLOAT);
    I(MPI_WCHAR);
    I(MPI_INTEGER);
    I(MPI_REAL);
    I(MPI_LOGICAL);
    I(MPI_REAL4);
    I(MPI_INTEGER4);
    I(MPI_INT32_T);
    I(MPI_UINT32_T);
    I(MPI_LONG);
    I(MPI_UNSIGNED_LONG);
    I(MPI_LONG_LONG_INT);
    I(MPI_LONG_LONG);
    I(MPI_DOUBLE);
    I(MPI_2INT);
    I(MPI_UNSIGNED_LONG_LONG);
    I(MPI_COMPLEX);
    I(MPI_DOUBLE_PRECISION);
    I(MPI_2INTEGER);
    I(MPI_2REAL);
    I(MPI_COMPLEX8);
    I(MPI_REAL8);
    I(MPI_INTEGER8);
    I(MPI_CXX_FLOAT_COMPLEX);
    I(MPI_INT64_T);
    I(MPI_UINT64_T);
    I(MPI_C_COMPLEX);
    I(MPI_C_FLOAT_COMPLEX);
    I(MPI_AINT);
    I(MPI_OFFSET);
    I(MPI_COUNT);
    I(MPI_LONG_DOUBLE);
    I(MPI_DOUBLE_COMPLEX);
    I(MPI_2DOUBLE_PRECISION);
    I(MPI_COMPLEX16);
    I(MPI_REAL16);
    I(MPI_CXX_DOUBLE_COMPLEX);
    I(MPI_C_DOUBLE_COMPLEX);
    I(MPI_COMPLEX32);
    I(MPI_CXX_LONG_DOUBLE_COMPLEX);
    I(MPI_C_LONG_DOUBLE_COMPLEX);
    /* pair types (DIRECT handles) */
    I(MPI_FLOAT_INT);
    I(MPI_DOUBLE_INT);
    I(MPI_LONG_INT);
    I(MPI_SHORT_INT);
    I(MPI_LONG_DOUBLE_INT);
    /* Reduction ops */
    I(MPI_MAX);
    I(MPI_MIN);
    I(MPI_SUM);
    I(MPI_PROD);
    I(MPI_LAND);
    I(MPI_BAND);
    I(MPI_LOR);
    I(MPI_BOR);
    I(MPI_LXOR);
    I(MPI_BXOR);
    I(MPI_MINLOC);
    I(MPI_MAXLOC);
    I(MPI_REPLACE);
    I(MPI_NO_OP);
    /* Predefined attribute keyvals */
    I(MPI_TAG_UB);
    I(MPI_HOST);
    I(MPI_IO);
    I(MPI_WTIME_IS_GLOBAL);
    I(MPI_UNIVERSE_SIZE);
    I(MPI_LASTUSEDCODE);
    I(MPI_APPNUM);
    I(MPI_WIN_BASE);
    I(MPI_WIN_SIZE);
    I(MPI_WIN_DISP_UNIT);
    I(MPI_WIN_CREATE_FLAVOR);
    I(MPI_WIN_MODEL);
    /* Ranks / tags / sentinels */
    I(MPI_ANY_SOURCE);
    I(MPI_ANY_TAG);
    I(MPI_PROC_NULL);
    I(MPI_ROOT);
    I(MPI_UNDEFINED);
    I(MPI_BSEND_OVERHEAD);
    I(MPI_DISPLACEMENT_CURRENT);
    I(MPI_DISTRIBUTE_DFLT_DARG);
    /* Error classes */
    I(MPI_SUCCESS);
    I(MPI_ERR_BUFFER);
    I(MPI_ERR_COUNT);
    I(MPI_ERR_TYPE);
    I(MPI_ERR_TAG);
    I(MPI_ERR_COMM);
    I(MPI_ERR_RANK);
    I(MPI_ERR_ROOT);
    I(MPI_ERR_GROUP);
    I(MPI_ERR_OP);
    I(MPI_ERR_TOPOLOGY);
    I(MPI_ERR_DIMS);
    I(MPI_ERR_ARG);
    I(MPI_ERR_UNKNOWN);
    I(MPI_ERR_TRUNCATE);
    I(MPI_ERR_OTHER);
    I(MPI_ERR_INTERN);
    I(MPI_ERR_IN_STATUS);
    I(MPI_ERR_PENDING);
    I(MPI_ERR_REQUEST);
    I(MPI_ERR_ACCESS);
    I(MPI_ERR_AMODE);
    I(MPI_ERR_BAD_FILE);
    I(MPI_ERR_CONVERSION);
    I(MPI_ERR_DUP_DATAREP);
    I(MPI_ERR_FILE_EXISTS);
    I(MPI_ERR_FILE_IN_USE);
    I(MPI_ERR_FILE);
    I(MPI_ERR_INFO);
    I(MPI_ERR_INFO_KEY);
    I(MPI_ERR_INFO_VALUE);
    I(MPI_ERR_INFO_NOKEY);
    I(MPI_ERR_IO);
    I(MPI_ERR_NAME);
    I(MPI_ERR_NO_MEM);
    I(MPI_ERR_NOT_SAME);
    I(MPI_ERR_NO_SPACE);
    I(MPI_ERR_NO_SUCH_FILE);
    I(MPI_ERR_PORT);
    I(MPI_ERR_QUOTA);
    I(MPI_ERR_READ_ONLY);
    I(MPI_ERR_SERVICE);
    I(MPI_ERR_SPAWN);
    I(MPI_ERR_UNSUPPORTED_DATAREP);
    I(MPI_ERR_UNSUPPORTED_OPERATION);
    I(MPI_ERR_WIN);
    I(MPI_ERR_BASE);
    I(MPI_ERR_LOCKTYPE);
    I(MPI_ERR_KEYVAL);
    I(MPI_ERR_RMA_CONFLICT);
    I(MPI_ERR_RMA_SYNC);
    I(MPI_ERR_SIZE);
    I(MPI_ERR_DISP);
    I(MPI_ERR_ASSERT);
    I(MPI_ERR_RMA_RANGE);
    I(MPI_ERR_RMA_ATTACH);
    I(MPI_ERR_RMA_SHARED);
    I(MPI_ERR_RMA_FLAVOR);
    I(MPI_T_ERR_MEMORY);
    I(MPI_T_ERR_NOT_INITIALIZED);
    I(MPI_T_ERR_CANNOT_INIT);
    I(MPI_T_ERR_INVALID_INDEX);
    I(MPI_T_ERR_INVALID_ITEM);
    I(MPI_T_ERR_INVALID_HANDLE);
    I(MPI_T_ERR_OUT_OF_HANDLES);
    I(MPI_T_ERR_OUT_OF_SESSIONS);
    I(MPI_T_ERR_INVALID_SESSION);
    I(MPI_T_ERR_CVAR_SET_NOT_NOW);
    I(MPI_T_ERR_CVAR_SET_NEVER);
    I(MPI_T_ERR_PVAR_NO_STARTSTOP);
    I(MPI_T_ERR_PVAR_NO_WRITE);
    I(MPI_T_ERR_PVAR_NO_ATOMIC);
    I(MPI_T_ERR_INVALID_NAME);
    I(MPI_T_ERR_INVALID);
    I(MPI_ERR_SESSION);
    I(MPI_ERR_PROC_ABORTED);
    I(MPI_ERR_VALUE_TOO_LARGE);
    I(MPICH_ERR_LAST_CLASS);
    I(MPI_T_ERR_NOT_SUPPORTED);
    I(MPICH_ERR_FIRST_MPIX);
    I(MPIX_ERR_PROC_FAILED);
    I(MPIX_ERR_PROC_FAILED_PENDING);
    I(MPIX_ERR_REVOKED);
    I(MPIX_ERR_EAGAIN);
    I(MPICH_ERR_LAST_MPIX);
    I(MPIX_ERR_NOREQ);
    I(MPI_ERR_LASTCODE);
    /* Thread levels */
    I(MPI_THREAD_SINGLE);
    I(MPI_THREAD_FUNNELED);
    I(MPI_THREAD_SERIALIZED);
    I(MPI_THREAD_MULTIPLE);
    /* String length limits */
    I(MPI_MAX_DATAREP_STRING);
    I(MPI_MAX_ERROR_STRING);
    I(MPI_MAX_INFO_KEY);
    I(MPI_MAX_INFO_VAL);
    I(MPI_MAX_LIBRARY_VERSION_STRING);
    I(MPI_MAX_OBJECT_NAME);
    I(MPI_MAX_PORT_NAME);
    I(MPI_MAX_PROCESSOR_NAME);
    I(MPI_MAX_PSET_NAME_LEN);
    I(MPI_MAX_STRINGTAG_LEN);
    I(QMPI_MAX_TOOL_NAME_LENGTH);
    /* Comparison results, topology, typeclass, split types */
    I(MPI_IDENT);
    I(MPI_CONGRUENT);
    I(MPI_SIMILAR);
    I(MPI_UNEQUAL);
    I(MPI_TYPECLASS_REAL);
    I(MPI_TYPECLASS_INTEGER);
    I(MPI_TYPECLASS_COMPLEX);
    I(MPI_COMM_TYPE_SHARED);
    I(MPI_COMM_TYPE_HW_GUIDED);
    I(MPI_COMM_TYPE_HW_UNGUIDED);
    I(MPIX_COMM_TYPE_NEIGHBORHOOD);
    I(MPI_LOCK_EXCLUSIVE);
    I(MPI_LOCK_SHARED);
    I(MPI_ORDER_C);
    I(MPI_ORDER_FORTRAN);
    I(MPI_DISTRIBUTE_BLOCK);
    I(MPI_DISTRIBUTE_CYCLIC);
    I(MPI_DISTRIBUTE_NONE);
    /* Mode / seek constants */
    I(MPI_MODE_CREATE);
    I(MPI_MODE_RDONLY);
    I(MPI_MODE_WRONLY);
    I(MPI_MODE_RDWR);
    I(MPI_MODE_DELETE_ON_CLOSE);
    I(MPI_MODE_UNIQUE_OPEN);
    I(MPI_MODE_EXCL);
    I(MPI_MODE_APPEND);
    I(MPI_MODE_SEQUENTIAL);
    I(MPI_SEEK_SET);
    I(MPI_SEEK_CUR);
    I(MPI_SEEK_END);
    I(MPI_MODE_NOCHECK);
    I(MPI_MODE_NOSTORE);
    I(MPI_MODE_NOPUT);
    I(MPI_MODE_NOPRECEDE);
    I(MPI_MODE_NOSUCCEED);
    /* Fortran status indices */
    I(MPI_F_STATUS_SIZE);
    I(MPI_F_SOURCE);
    I(MPI_F_TAG);
    I(MPI_F_ERROR);
    /* Version macros */
    I(MPI_VERSION);
    I(MPI_SUBVERSION);
    I(MPICH_NAME);
    I(MPICH);
    I(MPICH_HAS_C2F);
    I(MPICH_NUMVERSION);
    I(MPICH_RELEASE_TYPE_ALPHA);
    I(MPICH_RELEASE_TYPE_BETA);
    I(MPICH_RELEASE_TYPE_RC);
    I(MPICH_RELEASE_TYPE_PATCH);
    I(ROMIO_VERSION);
    /* Other MPIX */
    I(MPIX_GPU_SUPPORT_CUDA);
    I(MPIX_GPU_SUPPORT_ZE);
    I(MPIX_GPU_SUPPORT_HIP);
    /* enumeration constants (full ranges) */
    I(MPI_WIN_FLAVOR_CREATE);
    I(MPI_WIN_FLAVOR_ALLOCATE);
    I(MPI_WIN_FLAVOR_DYNAMIC);
    I(MPI_WIN_FLAVOR_SHARED);
    I(MPI_WIN_SEPARATE);
    I(MPI_WIN_UNIFIED);
    I(MPI_GRAPH);
    I(MPI_CART);
    I(MPI_DIST_GRAPH);
    I(MPI_COMBINER_NAMED);
    I(MPI_COMBINER_DUP);
    I(MPI_COMBINER_CONTIGUOUS);
    I(MPI_COMBINER_VECTOR);
    I(MPI_COMBINER_HVECTOR_INTEGER);
    I(MPI_COMBINER_HVECTOR);
    I(MPI_COMBINER_INDEXED);
    I(MPI_COMBINER_HINDEXED_INTEGER);
    I(MPI_COMBINER_HINDEXED);
    I(MPI_COMBINER_INDEXED_BLOCK);
    I(MPI_COMBINER_STRUCT_INTEGER);
    I(MPI_COMBINER_STRUCT);
    I(MPI_COMBINER_SUBARRAY);
    I(MPI_COMBINER_DARRAY);
    I(MPI_COMBINER_F90_REAL);
    I(MPI_COMBINER_F90_COMPLEX);
    I(MPI_COMBINER_F90_INTEGER);
    I(MPI_COMBINER_RESIZED);
    I(MPI_COMBINER_HINDEXED_BLOCK);
    I(MPI_T_VERBOSITY_INVALID);
    I(MPI_T_VERBOSITY_USER_BASIC);
    I(MPI_T_VERBOSITY_USER_DETAIL);
    I(MPI_T_VERBOSITY_USER_ALL);
    I(MPI_T_VERBOSITY_TUNER_BASIC);
    I(MPI_T_VERBOSITY_TUNER_DETAIL);
    I(MPI_T_VERBOSITY_TUNER_ALL);
    I(MPI_T_VERBOSITY_MPIDEV_BASIC);
    I(MPI_T_VERBOSITY_MPIDEV_DETAIL);
    I(MPI_T_VERBOSITY_MPIDEV_ALL);
    I(MPI_T_BIND_INVALID);
    I(MPI_T_BIND_NO_OBJECT);
    I(MPI_T_BIND_MPI_COMM);
    I(MPI_T_BIND_MPI_DATATYPE);
    I(MPI_T_BIND_MPI_ERRHANDLER);
    I(MPI_T_BIND_MPI_FILE);
    I(MPI_T_BIND_MPI_GROUP);
    I(MPI_T_BIND_MPI_OP);
    I(MPI_T_BIND_MPI_REQUEST);
    I(MPI_T_BIND_MPI_WIN);
    I(MPI_T_BIND_MPI_MESSAGE);
    I(MPI_T_BIND_MPI_INFO);
    I(MPI_T_SCOPE_INVALID);
    I(MPI_T_SCOPE_CONSTANT);
    I(MPI_T_SCOPE_READONLY);
    I(MPI_T_SCOPE_LOCAL);
    I(MPI_T_SCOPE_GROUP);
    I(MPI_T_SCOPE_GROUP_EQ);
    I(MPI_T_SCOPE_ALL);
    I(MPI_T_SCOPE_ALL_EQ);
    I(MPI_T_PVAR_CLASS_INVALID);
    I(MPI_T_PVAR_CLASS_STATE);
    I(MPI_T_PVAR_CLASS_LEVEL);
    I(MPI_T_PVAR_CLASS_SIZE);
    I(MPI_T_PVAR_CLASS_PERCENTAGE);
    I(MPI_T_PVAR_CLASS_HIGHWATERMARK);
    I(MPI_T_PVAR_CLASS_LOWWATERMARK);
    I(MPI_T_PVAR_CLASS_COUNTER);
    I(MPI_T_PVAR_CLASS_AGGREGATE);
    I(MPI_T_PVAR_CLASS_TIMER);
    I(MPI_T_PVAR_CLASS_GENERIC);
    I(MPI_T_CB_REQUIRE_NONE);
    I(MPI_T_CB_REQUIRE_MPI_RESTRICTED);
    I(MPI_T_CB_REQUIRE_THREAD_SAFE);
    I(MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE);
    I(MPI_T_SOURCE_ORDERED);
    I(MPI_T_SOURCE_UNORDERED);

    /* MPI_CALC_VERSION */
    I(MPICH_CALC_VERSION(4, 0, 2, MPICH_RELEASE_TYPE_PATCH, 0));

    /* string macros */
    S(MPICH_VERSION);
    S(MPI_AINT_FMT_DEC_SPEC);
    S(MPI_AINT_FMT_HEX_SPEC);

    /* pointer-valued macros */
    P(MPI_BOTTOM);
    P(MPI_IN_PLACE);
    P(MPI_STATUS_IGNORE);
    P(MPI_STATUSES_IGNORE);
    P(MPI_ERRCODES_IGNORE);
    P(MPI_ARGV_NULL);
    P(MPI_ARGVS_NULL);
    P(MPI_FILE_NULL);
    P(MPI_NULL_COPY_FN);
    P(MPI_NULL_DELETE_FN);
    P(MPI_COMM_NULL_COPY_FN);
    P(MPI_COMM_NULL_DELETE_FN);
    P(MPI_TYPE_NULL_COPY_FN);
    P(MPI_TYPE_NULL_DELETE_FN);
    P(MPI_WIN_NULL_COPY_FN);
    P(MPI_WIN_NULL_DELETE_FN);
    P(MPI_CONVERSION_FN_NULL);
    P(MPI_CONVERSION_FN_NULL_C);
    P(MPI_T_ENUM_NULL);
    P(MPI_T_CVAR_HANDLE_NULL);
    P(MPI_T_PVAR_HANDLE_NULL);
    P(MPI_T_PVAR_SESSION_NULL);
    /* these name MPIR_Dup_fn, a library address: only check that they exist */
    printf("sizeof(MPI_DUP_FN...) %zu %zu %zu %zu\n", sizeof(&MPI_DUP_FN), sizeof(MPI_COMM_DUP_FN),
           sizeof(MPI_TYPE_DUP_FN), sizeof(MPI_WIN_DUP_FN));

    /* handle conversion macros (MPICH has no functions for these) */
    I(MPI_Comm_c2f(MPI_COMM_WORLD));
    I(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_SELF)));
    I(MPI_Type_c2f(MPI_INT));
    I(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)));
    I(MPI_Group_c2f(MPI_GROUP_EMPTY));
    I(MPI_Group_f2c(0));
    I(MPI_Info_c2f(MPI_INFO_ENV));
    I(MPI_Info_f2c(0));
    I(MPI_Request_c2f(MPI_REQUEST_NULL));
    I(MPI_Request_f2c(0));
    I(MPI_Op_c2f(MPI_SUM));
    I(MPI_Op_f2c(0));
    I(MPI_Errhandler_c2f(MPI_ERRORS_RETURN));
    I(MPI_Errhandler_f2c(0));
    I(MPI_Win_c2f(MPI_WIN_NULL));
    I(MPI_Win_f2c(0));
    I(MPI_Message_c2f(MPI_MESSAGE_NO_PROC));
    I(MPI_Message_f2c(0));
    I(MPI_Session_c2f(MPI_SESSION_NULL));
    I(MPI_Session_f2c(0));
    I(PMPI_Comm_c2f(MPI_COMM_WORLD));
    I(PMPI_Type_f2c(0));

    /* ROMIO compatibility and feature macros */
    SIZE(MPIO_Request);
    P(MPIO_REQUEST_NULL);
    I(MPIIMPL_ADVERTISES_FEATURES);
    I(MPIIMPL_HAVE_MPI_INFO);
    I(MPIIMPL_HAVE_MPI_COMBINER_DARRAY);
    I(MPIIMPL_HAVE_MPI_TYPE_CREATE_DARRAY);
    I(MPIIMPL_HAVE_MPI_COMBINER_SUBARRAY);
    I(MPIIMPL_HAVE_MPI_COMBINER_DUP);
    I(MPIIMPL_HAVE_MPI_GREQUEST);
    I(MPIIMPL_HAVE_STATUS_SET_BYTES);
    I(MPIIMPL_HAVE_STATUS_SET_INFO);

    /* MPI_Status and MPI_F08_status layout */
    SIZE(MPI_Status);
    FIELD(MPI_Status, count_lo);
    FIELD(MPI_Status, count_hi_and_cancelled);
    FIELD(MPI_Status, MPI_SOURCE);
    FIELD(MPI_Status, MPI_TAG);
    FIELD(MPI_Status, MPI_ERROR);
    SIZE(MPI_F08_status);
    FIELD(MPI_F08_status, count_lo);
    FIELD(MPI_F08_status, count_hi_and_cancelled);
    FIELD(MPI_F08_status, MPI_SOURCE);
    FIELD(MPI_F08_status, MPI_TAG);
    FIELD(MPI_F08_status, MPI_ERROR);

    /* typedefs */
    SIZE(MPI_Aint);
    SIZE(MPI_Offset);
    SIZE(MPI_Count);
    SIZE(MPI_Fint);
    SIZE(MPI_Comm);
    SIZE(MPI_Group);
    SIZE(MPI_Datatype);
    SIZE(MPI_Op);
    SIZE(MPI_Errhandler);
    SIZE(MPI_Info);
    SIZE(MPI_Win);
    SIZE(MPI_Request);
    SIZE(MPI_Message);
    SIZE(MPI_Session);
    SIZE(MPIX_Grequest_class);
    SIZE(MPI_File);
    SIZE(MPI_T_enum);
    SIZE(MPI_T_cvar_handle);
    SIZE(MPI_T_pvar_handle);
    SIZE(MPI_T_pvar_session);
    SIZE(MPI_T_event_registration);
    SIZE(MPI_T_event_instance);
    SIZE(MPI_T_cb_safety);
    SIZE(MPI_T_source_order);
    SIZE(MPI_User_function *);
    SIZE(MPI_Comm_errhandler_function *);
    TYPEDEF(MPI_Aint);
    TYPEDEF(MPI_Offset);
    TYPEDEF(MPI_Count);
    TYPEDEF(MPI_Fint);
    TYPEDEF(MPI_Comm);
    TYPEDEF(MPI_Group);
    TYPEDEF(MPI_Datatype);
    TYPEDEF(MPI_Op);
    TYPEDEF(MPI_Errhandler);
    TYPEDEF(MPI_Info);
    TYPEDEF(MPI_Win);
    TYPEDEF(MPI_Request);
    TYPEDEF(MPI_Message);
    TYPEDEF(MPI_Session);
    TYPEDEF(MPIX_Grequest_class);
    SIGNED(MPI_Aint);
    SIGNED(MPI_Offset);
    SIGNED(MPI_Count);
    SIGNED(MPI_Fint);

    /* exported data symbols (sizes only: nothing is linked) */
    printf("sizeof(MPI_UNWEIGHTED) %zu %zu\n", sizeof(MPI_UNWEIGHTED), sizeof(*MPI_UNWEIGHTED));
    printf("sizeof(MPI_WEIGHTS_EMPTY) %zu %zu\n", sizeof(MPI_WEIGHTS_EMPTY), sizeof(*MPI_WEIGHTS_EMPTY));
    printf("sizeof(MPI_F_STATUS_IGNORE) %zu %zu\n", sizeof(MPI_F_STATUS_IGNORE), sizeof(*MPI_F_STATUS_IGNORE));
    printf("sizeof(MPI_F_STATUSES_IGNORE) %zu %zu\n", sizeof(MPI_F_STATUSES_IGNORE),
           sizeof(*MPI_F_STATUSES_IGNORE));
    printf("sizeof(MPI_F08_STATUS_IGNORE) %zu %zu\n", sizeof(MPI_F08_STATUS_IGNORE),
           sizeof(*MPI_F08_STATUS_IGNORE));
    printf("sizeof(MPI_F08_STATUSES_IGNORE) %zu %zu\n", sizeof(MPI_F08_STATUSES_IGNORE),
           sizeof(*MPI_F08_STATUSES_IGNORE));
    printf("sizeof(MPIR_F08_MPI_STATUS_IGNORE_OBJ) %zu\n", sizeof(MPIR_F08_MPI_STATUS_IGNORE_OBJ));
    printf("sizeof(MPIR_F08_MPI_STATUSES_IGNORE_OBJ) %zu\n", sizeof(MPIR_F08_MPI_STATUSES_IGNORE_OBJ));
    printf("sizeof(MPIR_F08_MPI_IN_PLACE) %zu\n", sizeof(MPIR_F08_MPI_IN_PLACE));
    printf("sizeof(MPIR_F08_MPI_BOTTOM) %zu\n", sizeof(MPIR_F08_MPI_BOTTOM));
    printf("sizeof(MPI_T_PVAR_ALL_HANDLES) %zu\n", sizeof(MPI_T_PVAR_ALL_HANDLES));
    return 0;
}
