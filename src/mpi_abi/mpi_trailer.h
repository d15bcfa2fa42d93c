/* ---- src/mpi_abi/mpi_trailer.h: what cbindgen cannot express ----
 * Pointer-valued and function-like macros, string macros, the exported data
 * symbols (defined in src/mpi_abi/data_symbols.rs) and the variadic MPI_Pcontrol.
 * Values and types are those of Debian MPICH 4.0.2 (checked by
 * c_tests/abi_constants.sh). cbindgen writes the trailer after the header's
 * include guard and after the closing of its extern "C" block, so this part has
 * its own guard and its own extern "C". */
#ifndef OXMPI_MPI_TRAILER_INCLUDED
#define OXMPI_MPI_TRAILER_INCLUDED

#ifdef __cplusplus
extern "C" {
#endif

/* Version strings */
#define MPICH_VERSION "4.0.2"
#define MPICH_CALC_VERSION(MAJOR, MINOR, REVISION, TYPE, PATCH) \
    (((MAJOR) * 10000000) + ((MINOR) * 100000) + ((REVISION) * 1000) + ((TYPE) * 100) + (PATCH))
/* printf conversions for MPI_Aint (a long) */
#define MPI_AINT_FMT_DEC_SPEC "%ld"
#define MPI_AINT_FMT_HEX_SPEC "%lx"

/* Special buffer and status addresses */
#define MPI_BOTTOM ((void *)0)
#define MPI_IN_PLACE ((void *)-1)
#define MPI_STATUS_IGNORE ((MPI_Status *)1)
#define MPI_STATUSES_IGNORE ((MPI_Status *)1)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)

/* Null file handle (ROMIO's MPI_File is a pointer) */
#define MPI_FILE_NULL ((MPI_File)0)

/* MPI_T null handles */
#define MPI_T_ENUM_NULL ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)

/* Predefined attribute callbacks */
#define MPI_NULL_COPY_FN ((MPI_Copy_function *)0)
#define MPI_NULL_DELETE_FN ((MPI_Delete_function *)0)
#define MPI_COMM_NULL_COPY_FN ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)
#define MPI_TYPE_NULL_COPY_FN ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0)
#define MPI_WIN_NULL_COPY_FN ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function *)0)
/* The copy function that duplicates the attribute value; libmpich exports it as
 * MPIR_Dup_fn, so binaries built with MPICH's header link to oxmpi too. */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag);
#define MPI_DUP_FN MPIR_Dup_fn
#define MPI_COMM_DUP_FN ((MPI_Comm_copy_attr_function *)MPI_DUP_FN)
#define MPI_TYPE_DUP_FN ((MPI_Type_copy_attr_function *)MPI_DUP_FN)
#define MPI_WIN_DUP_FN ((MPI_Win_copy_attr_function *)MPI_DUP_FN)

/* Data representation conversion placeholders */
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)
#define MPI_CONVERSION_FN_NULL_C ((MPI_Datarep_conversion_function_c *)0)

/* Exported data objects (libmpich exports them with these sizes) */
extern int *const MPI_UNWEIGHTED;
extern int *const MPI_WEIGHTS_EMPTY;
extern MPI_Fint *MPI_F_STATUS_IGNORE;
extern MPI_Fint *MPI_F_STATUSES_IGNORE;
extern MPI_F08_status MPIR_F08_MPI_STATUS_IGNORE_OBJ;
extern MPI_F08_status MPIR_F08_MPI_STATUSES_IGNORE_OBJ[1];
extern int MPIR_F08_MPI_IN_PLACE;
extern int MPIR_F08_MPI_BOTTOM;
extern MPI_F08_status *MPI_F08_STATUS_IGNORE;
extern MPI_F08_status *MPI_F08_STATUSES_IGNORE;
extern MPI_T_pvar_handle const MPI_T_PVAR_ALL_HANDLES; /* struct MPIR_T_pvar_handle_s *const */

/* Handle conversions: MPICH's handles are ints, so these are casts (libmpich
 * exports no functions for them, only MPI_File_c2f/f2c and the status ones). */
#define MPI_Comm_c2f(comm) ((MPI_Fint)(comm))
#define MPI_Comm_f2c(comm) ((MPI_Comm)(comm))
#define MPI_Type_c2f(datatype) ((MPI_Fint)(datatype))
#define MPI_Type_f2c(datatype) ((MPI_Datatype)(datatype))
#define MPI_Group_c2f(group) ((MPI_Fint)(group))
#define MPI_Group_f2c(group) ((MPI_Group)(group))
#define MPI_Info_c2f(info) ((MPI_Fint)(info))
#define MPI_Info_f2c(info) ((MPI_Info)(info))
#define MPI_Request_c2f(request) ((MPI_Fint)(request))
#define MPI_Request_f2c(request) ((MPI_Request)(request))
#define MPI_Op_c2f(op) ((MPI_Fint)(op))
#define MPI_Op_f2c(op) ((MPI_Op)(op))
#define MPI_Errhandler_c2f(errhandler) ((MPI_Fint)(errhandler))
#define MPI_Errhandler_f2c(errhandler) ((MPI_Errhandler)(errhandler))
#define MPI_Win_c2f(win) ((MPI_Fint)(win))
#define MPI_Win_f2c(win) ((MPI_Win)(win))
#define MPI_Message_c2f(msg) ((MPI_Fint)(msg))
#define MPI_Message_f2c(msg) ((MPI_Message)(msg))
#define MPI_Session_c2f(session) ((MPI_Fint)(session))
#define MPI_Session_f2c(session) ((MPI_Session)(session))
#define PMPI_Comm_c2f(comm) ((MPI_Fint)(comm))
#define PMPI_Comm_f2c(comm) ((MPI_Comm)(comm))
#define PMPI_Type_c2f(datatype) ((MPI_Fint)(datatype))
#define PMPI_Type_f2c(datatype) ((MPI_Datatype)(datatype))
#define PMPI_Group_c2f(group) ((MPI_Fint)(group))
#define PMPI_Group_f2c(group) ((MPI_Group)(group))
#define PMPI_Info_c2f(info) ((MPI_Fint)(info))
#define PMPI_Info_f2c(info) ((MPI_Info)(info))
#define PMPI_Request_c2f(request) ((MPI_Fint)(request))
#define PMPI_Request_f2c(request) ((MPI_Request)(request))
#define PMPI_Op_c2f(op) ((MPI_Fint)(op))
#define PMPI_Op_f2c(op) ((MPI_Op)(op))
#define PMPI_Errhandler_c2f(errhandler) ((MPI_Fint)(errhandler))
#define PMPI_Errhandler_f2c(errhandler) ((MPI_Errhandler)(errhandler))
#define PMPI_Win_c2f(win) ((MPI_Fint)(win))
#define PMPI_Win_f2c(win) ((MPI_Win)(win))
#define PMPI_Message_c2f(msg) ((MPI_Fint)(msg))
#define PMPI_Message_f2c(msg) ((MPI_Message)(msg))
#define PMPI_Session_c2f(session) ((MPI_Fint)(session))
#define PMPI_Session_f2c(session) ((MPI_Session)(session))

/* ROMIO compatibility names */
#define MPIO_Request MPI_Request
#define MPIO_USES_MPI_REQUEST
#define MPIO_REQUEST_DEFINED
#define MPIO_REQUEST_NULL ((MPIO_Request)0)
#define MPIO_Wait MPI_Wait
#define MPIO_Test MPI_Test
#define PMPIO_Wait PMPI_Wait
#define PMPIO_Test PMPI_Test
#define MPI_FILE_DEFINED

/* Feature advertisement (MPICH's names) */
#define MPIIMPL_ADVERTISES_FEATURES 1
#define MPIIMPL_HAVE_MPI_INFO 1
#define MPIIMPL_HAVE_MPI_COMBINER_DARRAY 1
#define MPIIMPL_HAVE_MPI_TYPE_CREATE_DARRAY 1
#define MPIIMPL_HAVE_MPI_COMBINER_SUBARRAY 1
#define MPIIMPL_HAVE_MPI_COMBINER_DUP 1
#define MPIIMPL_HAVE_MPI_GREQUEST 1
#define MPIIMPL_HAVE_STATUS_SET_BYTES 1
#define MPIIMPL_HAVE_STATUS_SET_INFO 1

/* The variadic profiling control (cbindgen does not write variadic prototypes) */
int MPI_Pcontrol(const int level, ...);
int PMPI_Pcontrol(const int level, ...);

#ifdef __cplusplus
}
#endif

#endif /* OXMPI_MPI_TRAILER_INCLUDED */
