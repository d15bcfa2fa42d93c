/* Prototype check: compiled with -Wall -Werror -c against oxmpi's include/mpi.h and with
 * mpicc.mpich (c_tests/abi_constants.sh). Each line assigns an MPI function to a pointer
 * whose type is spelled from the MPI standard's C binding (with MPICH 4.0.2's const-ness
 * where it differs), so a wrong argument type, count, const-ness or return type in the
 * header is a compile error. Callback types are checked by assigning functions of the
 * standard's callback signatures. Nothing is called; nothing needs to be linked. */
#include <mpi.h>

/* ---- user callbacks with the standard's signatures ---- */
static void user_op(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype)
{
    (void)invec, (void)inoutvec, (void)len, (void)datatype;
}
static void user_op_c(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype *datatype)
{
    (void)invec, (void)inoutvec, (void)len, (void)datatype;
}
static int comm_copy(MPI_Comm comm, int keyval, void *extra_state, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval, (void)extra_state, (void)in, (void)out, (void)flag;
    return MPI_SUCCESS;
}
static int comm_delete(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state)
{
    (void)comm, (void)keyval, (void)attribute_val, (void)extra_state;
    return MPI_SUCCESS;
}
static int type_copy(MPI_Datatype t, int keyval, void *extra_state, void *in, void *out, int *flag)
{
    (void)t, (void)keyval, (void)extra_state, (void)in, (void)out, (void)flag;
    return MPI_SUCCESS;
}
static int win_delete(MPI_Win win, int keyval, void *attribute_val, void *extra_state)
{
    (void)win, (void)keyval, (void)attribute_val, (void)extra_state;
    return MPI_SUCCESS;
}
static void comm_errh(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
}
static void win_errh(MPI_Win *win, int *code, ...)
{
    (void)win, (void)code;
}
static void file_errh(MPI_File *file, int *code, ...)
{
    (void)file, (void)code;
}
static void session_errh(MPI_Session *session, int *code, ...)
{
    (void)session, (void)code;
}
static int greq_query(void *extra_state, MPI_Status *status)
{
    (void)extra_state, (void)status;
    return MPI_SUCCESS;
}
static int greq_free(void *extra_state)
{
    (void)extra_state;
    return MPI_SUCCESS;
}
static int greq_cancel(void *extra_state, int complete)
{
    (void)extra_state, (void)complete;
    return MPI_SUCCESS;
}
static int greq_wait(int count, void **states, double timeout, MPI_Status *status)
{
    (void)count, (void)states, (void)timeout, (void)status;
    return MPI_SUCCESS;
}
static int datarep_conv(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                        MPI_Offset position, void *extra_state)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position, (void)extra_state;
    return MPI_SUCCESS;
}
static int datarep_extent(MPI_Datatype datatype, MPI_Aint *extent, void *extra_state)
{
    (void)datatype, (void)extent, (void)extra_state;
    return MPI_SUCCESS;
}
static void event_cb(MPI_T_event_instance event_instance, MPI_T_event_registration registration,
                     MPI_T_cb_safety cb_safety, void *user_data)
{
    (void)event_instance, (void)registration, (void)cb_safety, (void)user_data;
}
static void event_free_cb(MPI_T_event_registration registration, MPI_T_cb_safety cb_safety,
                          void *user_data)
{
    (void)registration, (void)cb_safety, (void)user_data;
}
static void event_dropped_cb(MPI_Count count, MPI_T_event_registration registration,
                             int source_index, MPI_T_cb_safety cb_safety, void *user_data)
{
    (void)count, (void)registration, (void)source_index, (void)cb_safety, (void)user_data;
}

MPI_User_function *cb_user_op = user_op;
MPI_User_function_c *cb_user_op_c = user_op_c;
MPI_Comm_copy_attr_function *cb_comm_copy = comm_copy;
MPI_Comm_delete_attr_function *cb_comm_delete = comm_delete;
MPI_Copy_function *cb_copy = comm_copy;
MPI_Delete_function *cb_delete = comm_delete;
MPI_Type_copy_attr_function *cb_type_copy = type_copy;
MPI_Win_delete_attr_function *cb_win_delete = win_delete;
MPI_Comm_errhandler_function *cb_comm_errh = comm_errh;
MPI_Comm_errhandler_fn *cb_comm_errh_fn = comm_errh;
MPI_Handler_function *cb_handler = comm_errh;
MPI_Win_errhandler_function *cb_win_errh = win_errh;
MPI_File_errhandler_function *cb_file_errh = file_errh;
MPI_Session_errhandler_function *cb_session_errh = session_errh;
MPI_Grequest_query_function *cb_greq_query = greq_query;
MPI_Grequest_free_function *cb_greq_free = greq_free;
MPI_Grequest_cancel_function *cb_greq_cancel = greq_cancel;
MPIX_Grequest_poll_function *cb_greq_poll = greq_query;
MPIX_Grequest_wait_function *cb_greq_wait = greq_wait;
MPI_Datarep_conversion_function *cb_datarep_conv = datarep_conv;
MPI_Datarep_extent_function *cb_datarep_extent = datarep_extent;
MPI_T_event_cb_function *cb_event = event_cb;
MPI_T_event_free_cb_function *cb_event_free = event_free_cb;
MPI_T_event_dropped_cb_function *cb_event_dropped = event_dropped_cb;

/* predefined callbacks */
MPI_Comm_copy_attr_function *pre_comm_dup = MPI_COMM_DUP_FN;
MPI_Comm_copy_attr_function *pre_comm_null_copy = MPI_COMM_NULL_COPY_FN;
MPI_Comm_delete_attr_function *pre_comm_null_delete = MPI_COMM_NULL_DELETE_FN;
MPI_Type_copy_attr_function *pre_type_dup = MPI_TYPE_DUP_FN;
MPI_Type_delete_attr_function *pre_type_null_delete = MPI_TYPE_NULL_DELETE_FN;
MPI_Win_copy_attr_function *pre_win_dup = MPI_WIN_DUP_FN;
MPI_Win_delete_attr_function *pre_win_null_delete = MPI_WIN_NULL_DELETE_FN;
MPI_Copy_function *pre_dup = MPI_DUP_FN;
MPI_Copy_function *pre_null_copy = MPI_NULL_COPY_FN;
MPI_Delete_function *pre_null_delete = MPI_NULL_DELETE_FN;
MPI_Datarep_conversion_function *pre_conv_null = MPI_CONVERSION_FN_NULL;
MPI_Datarep_conversion_function_c *pre_conv_null_c = MPI_CONVERSION_FN_NULL_C;

/* ---- initialization and environment ---- */
int (*p_init)(int *, char ***) = MPI_Init;
int (*p_init_thread)(int *, char ***, int, int *) = MPI_Init_thread;
int (*p_finalize)(void) = MPI_Finalize;
int (*p_initialized)(int *) = MPI_Initialized;
int (*p_abort)(MPI_Comm, int) = MPI_Abort;
int (*p_get_library_version)(char *, int *) = MPI_Get_library_version;
int (*p_get_processor_name)(char *, int *) = MPI_Get_processor_name;
int (*p_query_thread)(int *) = MPI_Query_thread;
double (*p_wtime)(void) = MPI_Wtime;
double (*p_wtick)(void) = MPI_Wtick;
int (*p_pcontrol)(const int, ...) = MPI_Pcontrol;
int (*pp_pcontrol)(const int, ...) = PMPI_Pcontrol;

/* ---- communicators and groups ---- */
int (*p_comm_size)(MPI_Comm, int *) = MPI_Comm_size;
int (*p_comm_rank)(MPI_Comm, int *) = MPI_Comm_rank;
int (*p_comm_dup)(MPI_Comm, MPI_Comm *) = MPI_Comm_dup;
int (*p_comm_split_type)(MPI_Comm, int, int, MPI_Info, MPI_Comm *) = MPI_Comm_split_type;
int (*p_comm_free)(MPI_Comm *) = MPI_Comm_free;
int (*p_comm_set_name)(MPI_Comm, const char *) = MPI_Comm_set_name;
int (*p_comm_create_from_group)(MPI_Group, const char *, MPI_Info, MPI_Errhandler, MPI_Comm *) =
    MPI_Comm_create_from_group;
int (*p_comm_spawn_multiple)(int, char *[], char **[], const int[], const MPI_Info[], int, MPI_Comm,
                             MPI_Comm *, int[]) = MPI_Comm_spawn_multiple;
int (*p_comm_group)(MPI_Comm, MPI_Group *) = MPI_Comm_group;
int (*p_group_incl)(MPI_Group, int, const int[], MPI_Group *) = MPI_Group_incl;
int (*p_group_range_incl)(MPI_Group, int, int[][3], MPI_Group *) = MPI_Group_range_incl;
int (*p_group_translate_ranks)(MPI_Group, int, const int[], MPI_Group, int[]) =
    MPI_Group_translate_ranks;

/* ---- point-to-point ---- */
int (*p_send)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = MPI_Send;
int (*pp_send)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = PMPI_Send;
int (*p_send_c)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm) = MPI_Send_c;
int (*p_recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *) = MPI_Recv;
int (*p_recv_c)(void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Status *) = MPI_Recv_c;
int (*p_isend)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) = MPI_Isend;
int (*p_irecv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) = MPI_Irecv;
int (*p_wait)(MPI_Request *, MPI_Status *) = MPI_Wait;
int (*p_waitall)(int, MPI_Request[], MPI_Status[]) = MPI_Waitall;
int (*p_testany)(int, MPI_Request[], int *, int *, MPI_Status *) = MPI_Testany;
int (*p_sendrecv)(const void *, int, MPI_Datatype, int, int, void *, int, MPI_Datatype, int, int,
                  MPI_Comm, MPI_Status *) = MPI_Sendrecv;
int (*p_mprobe)(int, int, MPI_Comm, MPI_Message *, MPI_Status *) = MPI_Mprobe;
int (*p_get_count)(const MPI_Status *, MPI_Datatype, int *) = MPI_Get_count;
int (*p_get_count_c)(const MPI_Status *, MPI_Datatype, MPI_Count *) = MPI_Get_count_c;
int (*p_buffer_attach)(void *, int) = MPI_Buffer_attach;
int (*p_buffer_detach)(void *, int *) = MPI_Buffer_detach;
int (*p_psend_init)(const void *, int, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Info,
                    MPI_Request *) = MPI_Psend_init;
/* MPICH 4.0.2: array_of_partitions is not const (MPI 4.0 added const) */
int (*p_pready_list)(int, int[], MPI_Request) = MPI_Pready_list;
int (*p_grequest_start)(MPI_Grequest_query_function *, MPI_Grequest_free_function *,
                        MPI_Grequest_cancel_function *, void *, MPI_Request *) = MPI_Grequest_start;
int (*p_xgrequest_start)(MPI_Grequest_query_function *, MPI_Grequest_free_function *,
                         MPI_Grequest_cancel_function *, MPIX_Grequest_poll_function *,
                         MPIX_Grequest_wait_function *, void *, MPI_Request *) = MPIX_Grequest_start;
int (*p_status_set_elements_x)(MPI_Status *, MPI_Datatype, MPI_Count) = MPI_Status_set_elements_x;
int (*p_status_c2f)(const MPI_Status *, MPI_Fint *) = MPI_Status_c2f;

/* ---- collectives ---- */
int (*p_barrier)(MPI_Comm) = MPI_Barrier;
int (*p_bcast)(void *, int, MPI_Datatype, int, MPI_Comm) = MPI_Bcast;
int (*p_allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm) = MPI_Allreduce;
int (*p_allreduce_c)(const void *, void *, MPI_Count, MPI_Datatype, MPI_Op, MPI_Comm) =
    MPI_Allreduce_c;
int (*p_alltoallv)(const void *, const int[], const int[], MPI_Datatype, void *, const int[],
                   const int[], MPI_Datatype, MPI_Comm) = MPI_Alltoallv;
int (*p_alltoallw)(const void *, const int[], const int[], const MPI_Datatype[], void *,
                   const int[], const int[], const MPI_Datatype[], MPI_Comm) = MPI_Alltoallw;
int (*p_neighbor_alltoallw_c)(const void *, const MPI_Count[], const MPI_Aint[],
                              const MPI_Datatype[], void *, const MPI_Count[], const MPI_Aint[],
                              const MPI_Datatype[], MPI_Comm) = MPI_Neighbor_alltoallw_c;
int (*p_ibarrier)(MPI_Comm, MPI_Request *) = MPI_Ibarrier;
int (*p_bcast_init)(void *, int, MPI_Datatype, int, MPI_Comm, MPI_Info, MPI_Request *) =
    MPI_Bcast_init;
int (*p_reduce_local)(const void *, void *, int, MPI_Datatype, MPI_Op) = MPI_Reduce_local;

/* ---- datatypes ---- */
int (*p_type_contiguous)(int, MPI_Datatype, MPI_Datatype *) = MPI_Type_contiguous;
int (*p_type_create_struct)(int, const int[], const MPI_Aint[], const MPI_Datatype[],
                            MPI_Datatype *) = MPI_Type_create_struct;
int (*p_type_create_hindexed)(int, const int[], const MPI_Aint[], MPI_Datatype, MPI_Datatype *) =
    MPI_Type_create_hindexed;
int (*p_type_struct)(int, int[], MPI_Aint[], MPI_Datatype[], MPI_Datatype *) = MPI_Type_struct;
int (*p_address)(void *, MPI_Aint *) = MPI_Address;
int (*p_type_commit)(MPI_Datatype *) = MPI_Type_commit;
int (*p_type_size_c)(MPI_Datatype, MPI_Count *) = MPI_Type_size_c;
int (*p_type_get_extent_c)(MPI_Datatype, MPI_Count *, MPI_Count *) = MPI_Type_get_extent_c;
int (*p_get_address)(const void *, MPI_Aint *) = MPI_Get_address;
MPI_Aint (*p_aint_add)(MPI_Aint, MPI_Aint) = MPI_Aint_add;
MPI_Aint (*p_aint_diff)(MPI_Aint, MPI_Aint) = MPI_Aint_diff;
int (*p_pack)(const void *, int, MPI_Datatype, void *, int, int *, MPI_Comm) = MPI_Pack;
int (*p_unpack_external)(const char[], const void *, MPI_Aint, MPI_Aint *, void *, int,
                         MPI_Datatype) = MPI_Unpack_external;

/* ---- operations ---- */
int (*p_op_create)(MPI_User_function *, int, MPI_Op *) = MPI_Op_create;
int (*p_op_create_c)(MPI_User_function_c *, int, MPI_Op *) = MPI_Op_create_c;
int (*p_op_free)(MPI_Op *) = MPI_Op_free;

/* ---- attributes ---- */
int (*p_comm_create_keyval)(MPI_Comm_copy_attr_function *, MPI_Comm_delete_attr_function *, int *,
                            void *) = MPI_Comm_create_keyval;
int (*p_type_create_keyval)(MPI_Type_copy_attr_function *, MPI_Type_delete_attr_function *, int *,
                            void *) = MPI_Type_create_keyval;
int (*p_win_create_keyval)(MPI_Win_copy_attr_function *, MPI_Win_delete_attr_function *, int *,
                           void *) = MPI_Win_create_keyval;
int (*p_keyval_create)(MPI_Copy_function *, MPI_Delete_function *, int *, void *) =
    MPI_Keyval_create;
int (*p_comm_set_attr)(MPI_Comm, int, void *) = MPI_Comm_set_attr;
int (*p_comm_get_attr)(MPI_Comm, int, void *, int *) = MPI_Comm_get_attr;
int (*p_attr_get)(MPI_Comm, int, void *, int *) = MPI_Attr_get;
int (*p_comm_free_keyval)(int *) = MPI_Comm_free_keyval;

/* ---- error handling ---- */
int (*p_comm_create_errhandler)(MPI_Comm_errhandler_function *, MPI_Errhandler *) =
    MPI_Comm_create_errhandler;
int (*p_errhandler_create)(MPI_Comm_errhandler_function *, MPI_Errhandler *) =
    MPI_Errhandler_create;
int (*p_win_create_errhandler)(MPI_Win_errhandler_function *, MPI_Errhandler *) =
    MPI_Win_create_errhandler;
int (*p_file_create_errhandler)(MPI_File_errhandler_function *, MPI_Errhandler *) =
    MPI_File_create_errhandler;
int (*p_session_create_errhandler)(MPI_Session_errhandler_function *, MPI_Errhandler *) =
    MPI_Session_create_errhandler;
int (*p_comm_set_errhandler)(MPI_Comm, MPI_Errhandler) = MPI_Comm_set_errhandler;
int (*p_comm_call_errhandler)(MPI_Comm, int) = MPI_Comm_call_errhandler;
int (*p_errhandler_free)(MPI_Errhandler *) = MPI_Errhandler_free;
int (*p_error_string)(int, char *, int *) = MPI_Error_string;
int (*p_error_class)(int, int *) = MPI_Error_class;

/* ---- sessions and info ---- */
int (*p_session_init)(MPI_Info, MPI_Errhandler, MPI_Session *) = MPI_Session_init;
int (*p_session_finalize)(MPI_Session *) = MPI_Session_finalize;
int (*p_session_get_num_psets)(MPI_Session, MPI_Info, int *) = MPI_Session_get_num_psets;
int (*p_session_get_nth_pset)(MPI_Session, MPI_Info, int, int *, char *) =
    MPI_Session_get_nth_pset;
int (*p_group_from_session_pset)(MPI_Session, const char *, MPI_Group *) =
    MPI_Group_from_session_pset;
int (*p_info_create)(MPI_Info *) = MPI_Info_create;
int (*p_info_set)(MPI_Info, const char *, const char *) = MPI_Info_set;
int (*p_info_get_string)(MPI_Info, const char *, int *, char *, int *) = MPI_Info_get_string;
int (*p_info_create_env)(int, char *[], MPI_Info *) = MPI_Info_create_env;

/* ---- one-sided ---- */
int (*p_win_create)(void *, MPI_Aint, int, MPI_Info, MPI_Comm, MPI_Win *) = MPI_Win_create;
int (*p_win_allocate)(MPI_Aint, int, MPI_Info, MPI_Comm, void *, MPI_Win *) = MPI_Win_allocate;
int (*p_win_shared_query)(MPI_Win, int, MPI_Aint *, int *, void *) = MPI_Win_shared_query;
int (*p_put)(const void *, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype, MPI_Win) = MPI_Put;
int (*p_accumulate)(const void *, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype, MPI_Op,
                    MPI_Win) = MPI_Accumulate;
int (*p_win_fence)(int, MPI_Win) = MPI_Win_fence;
int (*p_win_free)(MPI_Win *) = MPI_Win_free;

/* ---- I/O ---- */
int (*p_file_open)(MPI_Comm, const char *, int, MPI_Info, MPI_File *) = MPI_File_open;
int (*p_file_close)(MPI_File *) = MPI_File_close;
int (*p_file_write_at)(MPI_File, MPI_Offset, const void *, int, MPI_Datatype, MPI_Status *) =
    MPI_File_write_at;
int (*p_file_set_view)(MPI_File, MPI_Offset, MPI_Datatype, MPI_Datatype, const char *, MPI_Info) =
    MPI_File_set_view;
MPI_Fint (*p_file_c2f)(MPI_File) = MPI_File_c2f;
MPI_File (*p_file_f2c)(MPI_Fint) = MPI_File_f2c;
int (*p_register_datarep)(const char *, MPI_Datarep_conversion_function *,
                          MPI_Datarep_conversion_function *, MPI_Datarep_extent_function *,
                          void *) = MPI_Register_datarep;
int (*p_register_datarep_c)(const char *, MPI_Datarep_conversion_function_c *,
                            MPI_Datarep_conversion_function_c *, MPI_Datarep_extent_function *,
                            void *) = MPI_Register_datarep_c;

/* ---- tool interface ---- */
int (*p_t_init_thread)(int, int *) = MPI_T_init_thread;
int (*p_t_finalize)(void) = MPI_T_finalize;
int (*p_t_cvar_get_info)(int, char *, int *, int *, MPI_Datatype *, MPI_T_enum *, char *, int *,
                         int *, int *) = MPI_T_cvar_get_info;
int (*p_t_cvar_handle_alloc)(int, void *, MPI_T_cvar_handle *, int *) = MPI_T_cvar_handle_alloc;
int (*p_t_pvar_session_create)(MPI_T_pvar_session *) = MPI_T_pvar_session_create;
int (*p_t_pvar_start)(MPI_T_pvar_session, MPI_T_pvar_handle) = MPI_T_pvar_start;
int (*p_t_source_get_info)(int, char *, int *, char *, int *, MPI_T_source_order *, MPI_Count *,
                           MPI_Count *, MPI_Info *) = MPI_T_source_get_info;
int (*p_t_event_register_callback)(MPI_T_event_registration, MPI_T_cb_safety, MPI_Info, void *,
                                   MPI_T_event_cb_function *) = MPI_T_event_register_callback;
int (*p_t_event_handle_free)(MPI_T_event_registration, void *, MPI_T_event_free_cb_function *) =
    MPI_T_event_handle_free;
int (*p_t_event_set_dropped_handler)(MPI_T_event_registration, MPI_T_event_dropped_cb_function *) =
    MPI_T_event_set_dropped_handler;

/* ---- MPICH extensions ---- */
int (*p_x_comm_agree)(MPI_Comm, int *) = MPIX_Comm_agree;
int (*p_x_gpu_query_support)(int, int *) = MPIX_GPU_query_support;
int (*p_x_query_cuda_support)(void) = MPIX_Query_cuda_support;
