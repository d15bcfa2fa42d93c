/* The MPI 5.0 standard ABI (mpicc -mpi-abi, libmpi_abi.so.1): the sizes and
 * layouts of its types, values of its constants, the handle <-> integer
 * conversions, MPI_Abi_get_version/get_info, and values that cross the
 * boundary converted (statuses, sentinels, comparison results, thread
 * levels, error classes, combiners, window attributes). Built only with
 * -mpi-abi (testlist entry abi:abi_standard). */
#include <stddef.h>
#include <stdint.h>

#include "mpitest.h"

#ifndef MPI_ABI_VERSION
#error "not built against the standard ABI header (mpicc -mpi-abi)"
#endif

static int type_sizes(void) {
    CHECK(sizeof(MPI_Comm) == sizeof(void *), "sizeof(MPI_Comm) %zu", sizeof(MPI_Comm));
    CHECK(sizeof(MPI_Comm) == 8, "sizeof(MPI_Comm) %zu", sizeof(MPI_Comm));
    CHECK(sizeof(MPI_Datatype) == 8 && sizeof(MPI_Request) == 8 && sizeof(MPI_File) == 8,
          "handle sizes");
    CHECK(sizeof(MPI_Aint) == sizeof(intptr_t), "MPI_Aint");
    CHECK(sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8, "MPI_Offset/MPI_Count");
    CHECK(sizeof(MPI_Status) == 32, "sizeof(MPI_Status) %zu", sizeof(MPI_Status));
    CHECK(offsetof(MPI_Status, MPI_SOURCE) == 0, "MPI_SOURCE offset");
    CHECK(offsetof(MPI_Status, MPI_TAG) == 4, "MPI_TAG offset");
    CHECK(offsetof(MPI_Status, MPI_ERROR) == 8, "MPI_ERROR offset");
    CHECK(MPI_ABI_VERSION == 1 && MPI_ABI_SUBVERSION == 0, "MPI_ABI_VERSION");
    CHECK((uintptr_t)MPI_COMM_WORLD == 0x101 && (uintptr_t)MPI_INT == 0x209, "handle values");
    CHECK(MPI_ANY_SOURCE == -1 && MPI_ANY_TAG == -2 && MPI_PROC_NULL == -3 && MPI_ROOT == -4,
          "sentinels");
    CHECK(MPI_THREAD_MULTIPLE == 4096 && MPI_ERR_UNSUPPORTED_OPERATION == 55, "enums");
    return 0;
}

static void versions(void) {
    int major = -1, minor = -1;
    CHECK(MPI_Abi_get_version(&major, &minor) == MPI_SUCCESS, "MPI_Abi_get_version");
    CHECK(major == 1 && minor == 0, "ABI version %d.%d", major, minor);
    MPI_Info info = MPI_INFO_NULL;
    CHECK(MPI_Abi_get_info(&info) == MPI_SUCCESS, "MPI_Abi_get_info");
    char value[MPI_MAX_INFO_VAL];
    int flag = 0;
    MPI_Info_get_string(info, "mpi_aint_size", &(int){MPI_MAX_INFO_VAL}, value, &flag);
    CHECK(flag && strcmp(value, "8") == 0, "mpi_aint_size: flag %d value %s", flag, value);
    MPI_Info_free(&info);
    CHECK(info == MPI_INFO_NULL, "MPI_Info_free sets MPI_INFO_NULL");
}

static void handles(void) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK((uintptr_t)dup >= 0x1000, "user handle %p in the predefined range", (void *)dup);
    int i = MPI_Comm_toint(dup);
    CHECK(MPI_Comm_fromint(i) == dup, "Comm toint/fromint round trip");
    CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "world round trip");
    CHECK(MPI_Type_fromint(MPI_Type_toint(MPI_DOUBLE)) == MPI_DOUBLE, "type round trip");
    CHECK(MPI_Op_fromint(MPI_Op_toint(MPI_SUM)) == MPI_SUM, "op round trip");
    int result = -1;
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
    CHECK(result == MPI_CONGRUENT, "compare gave %d", result);
    MPI_Comm_compare(dup, dup, &result);
    CHECK(result == MPI_IDENT, "compare gave %d", result);
    MPI_Comm_free(&dup);
    CHECK(dup == MPI_COMM_NULL, "MPI_Comm_free sets MPI_COMM_NULL (%p)", (void *)dup);

    MPI_Datatype vec, contig;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_contiguous(3, vec, &contig);
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(contig, &ni, &na, &nd, &combiner);
    CHECK(combiner == MPI_COMBINER_CONTIGUOUS && ni == 1 && nd == 1, "envelope %d", combiner);
    int ints[1];
    MPI_Aint addrs[1];
    MPI_Datatype types[1];
    MPI_Type_get_contents(contig, 1, 0, 1, ints, addrs, types);
    CHECK(ints[0] == 3 && types[0] == vec, "contents: %d", ints[0]);
    MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &combiner);
    CHECK(combiner == MPI_COMBINER_NAMED, "MPI_INT's combiner %d", combiner);
    int sizes[2] = {4, 4}, sub[2] = {2, 2}, starts[2] = {1, 1};
    MPI_Datatype subarray;
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_INT, &subarray);
    int sints[8];
    MPI_Type_get_contents(subarray, 8, 0, 1, sints, addrs, types);
    CHECK(sints[0] == 2 && sints[7] == MPI_ORDER_FORTRAN, "subarray order %d", sints[7]);
    CHECK(types[0] == MPI_INT, "subarray oldtype");
    MPI_Type_free(&subarray);
    MPI_Type_free(&contig);
    MPI_Type_free(&vec);
    CHECK(vec == MPI_DATATYPE_NULL, "MPI_Type_free sets MPI_DATATYPE_NULL");
}

static void statuses(int rank, int size) {
    MPI_Status st;
    memset(&st, 0x5a, sizeof st);
    int buf = 0;
    MPI_Recv(&buf, 1, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "PROC_NULL status %d %d",
          st.MPI_SOURCE, st.MPI_TAG);
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0, "count %d", count);
    if (size >= 2 && rank < 2) {
        int peer = 1 - rank;
        int out[3] = {rank, rank + 1, rank + 2}, in[3] = {0};
        MPI_Request reqs[2];
        MPI_Status sts[2];
        MPI_Irecv(in, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(out, 3, MPI_INT, peer, 40 + rank, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, sts);
        CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "requests freed");
        CHECK(sts[0].MPI_SOURCE == peer && sts[0].MPI_TAG == 40 + peer, "status %d %d",
              sts[0].MPI_SOURCE, sts[0].MPI_TAG);
        MPI_Get_count(&sts[0], MPI_INT, &count);
        CHECK(count == 3 && in[2] == peer + 2, "count %d", count);
        MPI_Sendrecv(out, 1, MPI_INT, peer, 1, in, 1, MPI_INT, peer, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Irecv(in, 3, MPI_INT, peer, 2, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(out, 3, MPI_INT, peer, 2, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    }
}

/* A user error handler gets the standard's handle and error class. */
static MPI_Comm handler_comm = MPI_COMM_NULL;
static int handler_class = -1;
static void on_error(MPI_Comm *comm, int *code, ...) {
    handler_comm = *comm;
    MPI_Error_class(*code, &handler_class);
}

static void user_handler(void) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(on_error, &eh);
    MPI_Comm_set_errhandler(dup, eh);
    int buf = 0;
    int rc = MPI_Send(&buf, 1, MPI_INT, 0, -7, dup);
    CHECK(rc != MPI_SUCCESS && handler_comm == dup && handler_class == MPI_ERR_TAG,
          "handler got comm %p (dup %p), class %d", (void *)handler_comm, (void *)dup, handler_class);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&dup);
}

static void errors(void) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "get_errhandler %p", (void *)eh);
    MPI_Errhandler_free(&eh);
    int buf = 0;
    CHECK_CLASS(MPI_Send(&buf, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Send(&buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Send(&buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Send(&buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(MPI_ERR_TRUNCATE, text, &len);
    CHECK(len > 0 && strstr(text, "ERR_TRUNCATE") != NULL, "MPI_ERR_TRUNCATE's string: %s", text);
    int provided = -1;
    MPI_Query_thread(&provided);
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
              provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE,
          "thread level %d", provided);
    int tag_ub_flag = 0, *tag_ub = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &tag_ub_flag);
    CHECK(tag_ub_flag && *tag_ub >= 32767, "MPI_TAG_UB");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void collectives(int rank, int size) {
    int v = rank + 1, sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size + 1) / 2, "allreduce %d", sum);
    v = rank + 1;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(v == size, "in-place allreduce %d", v);
    MPI_Win win;
    int mem = 0;
    MPI_Win_create(&mem, sizeof mem, sizeof mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int *flavor = NULL, *model = NULL, flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "flavor %d", flag ? *flavor : -1);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    CHECK(flag && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE), "model");
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Win_free(&win);
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free sets MPI_WIN_NULL");
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE || provided == MPI_THREAD_SERIALIZED ||
              provided == MPI_THREAD_FUNNELED || provided == MPI_THREAD_SINGLE,
          "provided %d", provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    type_sizes();
    versions();
    handles();
    statuses(rank, size);
    errors();
    user_handler();
    collectives(rank, size);
    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errs);
    MPI_Finalize();
    return 0;
}
