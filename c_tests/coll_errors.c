/* Bad arguments to collectives give the right error class on every
 * member (with MPI_ERRORS_RETURN), and the communicator works normally
 * afterwards: MPI_ERR_COMM, MPI_ERR_ROOT, MPI_ERR_COUNT, MPI_ERR_TYPE,
 * MPI_ERR_OP, MPI_ERR_BUFFER (NULL data, MPI_IN_PLACE where it is not
 * allowed, aliased buffers), MPI_ERR_ARG (NULL request and arrays). */
#include "mpitest.h"

static int rank, size;

int main(int argc, char **argv) {
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm w = MPI_COMM_WORLD;
    int a[4] = {1, 2, 3, 4}, b[4], *big = malloc(sizeof(int) * 4 * size), *counts = malloc(sizeof(int) * size);
    int *displs = malloc(sizeof(int) * size);
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    MPI_Request req;

    /* MPI_ERR_COMM */
    CHECK_CLASS(MPI_Bcast(a, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Gather(a, 1, MPI_INT, big, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Alltoall(a, 1, MPI_INT, big, 1, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Ibarrier(MPI_COMM_NULL, &req), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Iallreduce(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL, &req), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Bcast(a, 1, MPI_INT, 0, (MPI_Comm)0x84000123), MPI_ERR_COMM);

    /* MPI_ERR_ROOT */
    CHECK_CLASS(MPI_Bcast(a, 1, MPI_INT, -1, w), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Bcast(a, 1, MPI_INT, size, w), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, size, w), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Gather(a, 1, MPI_INT, big, 1, MPI_INT, -3, w), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Gatherv(a, 1, MPI_INT, big, counts, displs, MPI_INT, size + 5, w), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Scatter(big, 1, MPI_INT, a, 1, MPI_INT, size, w), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Scatterv(big, counts, displs, MPI_INT, a, 1, MPI_INT, -1, w), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Ibcast(a, 1, MPI_INT, size, w, &req), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Ireduce(a, b, 1, MPI_INT, MPI_SUM, -1, w, &req), MPI_ERR_ROOT);

    /* MPI_ERR_COUNT */
    CHECK_CLASS(MPI_Bcast(a, -1, MPI_INT, 0, w), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Allreduce(a, b, -2, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Reduce_scatter_block(a, b, -1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Allgather(a, -1, MPI_INT, big, 1, MPI_INT, w), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Alltoall(a, 1, MPI_INT, big, -1, MPI_INT, w), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Iscan(a, b, -1, MPI_INT, MPI_SUM, w, &req), MPI_ERR_COUNT);
    counts[size - 1] = -1;
    CHECK_CLASS(MPI_Reduce_scatter(big, b, counts, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Allgatherv(a, 1, MPI_INT, big, counts, displs, MPI_INT, w), MPI_ERR_COUNT);
    counts[size - 1] = 1;

    /* MPI_ERR_TYPE */
    MPI_Datatype uncommitted;
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
    CHECK_CLASS(MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, w), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Bcast(a, 1, uncommitted, 0, w), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Allreduce(a, b, 1, uncommitted, MPI_SUM, w), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Allgather(a, 1, MPI_INT, big, 1, MPI_DATATYPE_NULL, w), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Ialltoall(a, 1, uncommitted, big, 2, MPI_INT, w, &req), MPI_ERR_TYPE);
    MPI_Type_free(&uncommitted);

    /* MPI_ERR_OP */
    CHECK_CLASS(MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce(a, b, 1, MPI_DOUBLE, MPI_BAND, 0, w), MPI_ERR_OP);
    CHECK_CLASS(MPI_Scan(a, b, 1, MPI_INT, MPI_MAXLOC, w), MPI_ERR_OP);
    CHECK_CLASS(MPI_Exscan(a, b, 1, MPI_C_BOOL, MPI_SUM, w), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce_scatter_block(a, b, 1, MPI_INT, MPI_REPLACE, w), MPI_ERR_OP);
    CHECK_CLASS(MPI_Iallreduce(a, b, 1, MPI_C_FLOAT_COMPLEX, MPI_LXOR, w, &req), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce_local(a, b, 1, MPI_INT, MPI_NO_OP), MPI_ERR_OP);

    /* MPI_ERR_BUFFER */
    CHECK_CLASS(MPI_Allreduce(a, NULL, 4, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Bcast(NULL, 2, MPI_INT, 0, w), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Allreduce(a, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Allgather(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Allreduce(a, a, 4, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Alltoall(big, 1, MPI_INT, big, 1, MPI_INT, w), MPI_ERR_BUFFER);
    /* The send buffer is this rank's own block of the receive buffer (at
     * every rank, so all of them return). */
    CHECK_CLASS(MPI_Allgather(&big[rank], 1, MPI_INT, big, 1, MPI_INT, w), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Iallgather(&big[rank], 1, MPI_INT, big, 1, MPI_INT, w, &req), MPI_ERR_BUFFER);
    {
        int *ones = malloc(sizeof(int) * (size_t)size), *reversed = malloc(sizeof(int) * (size_t)size);
        for (int i = 0; i < size; i++) ones[i] = 1, reversed[i] = size - 1 - i;
        CHECK_CLASS(MPI_Allgatherv(&big[size - 1 - rank], 1, MPI_INT, big, ones, reversed, MPI_INT, w),
                    MPI_ERR_BUFFER);
        free(ones);
        free(reversed);
    }
    CHECK_CLASS(MPI_Reduce_local(a, a, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    {
        /* A root's send and receive buffers that are one buffer (only the
         * root knows: on a communicator of its own). */
        MPI_Comm me;
        MPI_Comm_dup(MPI_COMM_SELF, &me);
        MPI_Comm_set_errhandler(me, MPI_ERRORS_RETURN);
        CHECK_CLASS(MPI_Gather(a, 1, MPI_INT, a, 1, MPI_INT, 0, me), MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Scatter(a, 1, MPI_INT, a, 1, MPI_INT, 0, me), MPI_ERR_BUFFER);
        int one = 1, zero = 0;
        CHECK_CLASS(MPI_Gatherv(a, 1, MPI_INT, a, &one, &zero, MPI_INT, 0, me), MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Scatterv(a, &one, &zero, MPI_INT, a, 1, MPI_INT, 0, me), MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, a, 1, MPI_INT, 0, me), MPI_SUCCESS);
        MPI_Comm_free(&me);
    }
    CHECK_CLASS(MPI_Reduce_local(MPI_IN_PLACE, b, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    /* a zero count needs no buffer */
    CHECK(MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, w) == MPI_SUCCESS, "zero-count allreduce on NULL");

    /* MPI_ERR_ARG */
    CHECK_CLASS(MPI_Ibcast(a, 1, MPI_INT, 0, w, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Ibarrier(w, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Allgatherv(a, 1, MPI_INT, big, NULL, displs, MPI_INT, w), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Alltoallv(big, counts, NULL, MPI_INT, b, counts, displs, MPI_INT, w), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Reduce_scatter(big, b, NULL, MPI_INT, MPI_SUM, w), MPI_ERR_ARG);

    /* the failed calls took no collective sequence numbers: these match */
    int v = rank, sum = -1;
    CHECK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, w) == MPI_SUCCESS && sum == size * (size - 1) / 2,
          "allreduce after the errors = %d", sum);
    MPI_Request r;
    CHECK(MPI_Ibcast(&v, 1, MPI_INT, size - 1, w, &r) == MPI_SUCCESS, "ibcast after the errors");
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(v == size - 1, "ibcast after the errors = %d", v);

    /* the error string says what was wrong */
    char msg[MPI_MAX_ERROR_STRING];
    int len, rc = MPI_Bcast(a, 1, MPI_INT, size + 7, w);
    MPI_Error_string(rc, msg, &len);
    CHECK(strstr(msg, "root") != NULL, "error string for a bad root: %s", msg);

    free(big);
    free(counts);
    free(displs);
    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, w);
    if (rank == 0) {
        char tried[240];
        snprintf(tried, sizeof tried,
                 "bad collective arguments on %d process(es): invalid communicator, root, count, op, "
                 "uncommitted datatype, NULL or aliased buffers, misplaced MPI_IN_PLACE, NULL request",
                 size);
        mt_reliability_row("bad input", tried, "-",
                           "%d wrong error classes or failures afterwards (the communicator still works)", errs);
    }
    mt_report(rank, errs);
    MPI_Finalize();
    return 0;
}
