/* Collectives whose members disagree on the amount of data (erroneous
 * programs, detectable when a member receives more than it expects, or,
 * in a broadcast's tree, less): under
 * MPI_ERRORS_RETURN no member crashes or hangs, each returns MPI_SUCCESS
 * or MPI_ERR_TRUNCATE, at least one member notices (the root of an
 * MPI_Gather that gets more from another rank always does; elsewhere who
 * notices depends on the algorithm: a member that received too much
 * forwards only what fits), and the communicator works normally
 * afterwards. Before, a member that noticed stopped at once and the
 * members waiting for what it would forward hung. */
#include "mpitest.h"

static int rank, size, noticed_total;

/* Checks one call's result: `must` says this member has to notice; in
 * any case at least one member must. */
static void judge(const char *what, int rc, int must) {
    int cls = rc == MPI_SUCCESS ? MPI_SUCCESS : mt_class(rc);
    CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "%s: class %d", what, cls);
    if (must) CHECK(cls == MPI_ERR_TRUNCATE, "%s: not noticed (class %d)", what, cls);
    int noticed = cls == MPI_ERR_TRUNCATE, all = 0;
    MPI_Allreduce(&noticed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    noticed_total += all;
    CHECK(all > 0, "%s: no member noticed", what);
    /* The communicator still works: a barrier and a correct reduction. */
    int one = 1, sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS && sum == size,
          "%s: the allreduce afterwards gave %d", what, sum);
}

int main(int argc, char **argv) {
    mt_init(&argc, &argv, &rank, &size);
    if (size < 2) mt_skip(rank, "needs 2 processes");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *buf = calloc(65536, sizeof(int)), *out = calloc(65536 * (size_t)size, sizeof(int));
    /* Short, medium and long messages (different algorithms: the long
     * broadcast scatters, then gathers around a ring, on 8 or more). */
    static const int lengths[] = {4, 1024, 32768};
    for (int l = 0; l < 3; l++) {
        int n = lengths[l];
        int big = 2 * n;
        judge("MPI_Bcast, the root sends more", MPI_Bcast(buf, rank == 0 ? big : n, MPI_INT, 0, MPI_COMM_WORLD), 0);
        /* Through the broadcast tree (below 64 KiB), a member that gets
         * less than it expects notices, and forwards an empty message so
         * that every member below it notices too. */
        int tree = (size_t)n * sizeof(int) < 64 * 1024 || size < 8;
        judge("MPI_Bcast, the root sends less", MPI_Bcast(buf, rank == 0 ? n / 2 : n, MPI_INT, 0, MPI_COMM_WORLD),
              tree && rank != 0);
        MPI_Request r;
        int rc = MPI_Ibcast(buf, rank == 0 ? n : big, MPI_INT, 0, MPI_COMM_WORLD, &r);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        judge("MPI_Ibcast, the others expect more", rc, tree && rank != 0);
        judge("MPI_Bcast, the root sends doubles, the others expect ints",
              MPI_Bcast(buf, n, rank == 0 ? MPI_DOUBLE : MPI_INT, 0, MPI_COMM_WORLD), 0);
        judge("MPI_Gather, rank 1 sends more",
              MPI_Gather(buf, rank == 1 ? big : n, MPI_INT, out, n, MPI_INT, 0, MPI_COMM_WORLD), rank == 0);
        judge("MPI_Reduce, rank 1 sends more",
              MPI_Reduce(buf, out, rank == 1 ? big : n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), 0);
        judge("MPI_Allreduce, rank 1 sends more",
              MPI_Allreduce(buf, out, rank == 1 ? big : n, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0);
        /* All-to-alls (on a node board's stage when the blocks agree). */
        int *a2a_send = calloc((size_t)big * size, sizeof(int)), *a2a_recv = calloc((size_t)big * size, sizeof(int));
        judge("MPI_Alltoall, rank 1 expects less",
              MPI_Alltoall(a2a_send, n, MPI_INT, a2a_recv, rank == 1 ? n / 2 : n, MPI_INT, MPI_COMM_WORLD),
              rank == 1);
        judge("MPI_Alltoall, rank 1 sends more",
              MPI_Alltoall(a2a_send, rank == 1 ? big : n, MPI_INT, a2a_recv, n, MPI_INT, MPI_COMM_WORLD), 0);
        /* Rank 1 sends itself more than it receives from itself; the
         * others must still get its blocks. */
        int *counts = malloc(size * sizeof(int)), *rcounts = malloc(size * sizeof(int)),
            *displs = malloc(size * sizeof(int));
        for (int r = 0; r < size; r++) {
            counts[r] = rcounts[r] = n;
            displs[r] = r * big;
        }
        if (rank == 1) counts[1] = big;
        judge("MPI_Alltoallv, rank 1 sends itself more",
              MPI_Alltoallv(a2a_send, counts, displs, MPI_INT, a2a_recv, rcounts, displs, MPI_INT, MPI_COMM_WORLD),
              rank == 1);
        free(counts);
        free(rcounts);
        free(displs);
        free(a2a_send);
        free(a2a_recv);
    }
    /* The same bytes in datatypes of different sizes (ints here, triples
     * of ints at rank 1), large enough to be cut in pieces: the members
     * must not cut them, and count rounds, differently. The size is where
     * 4-byte and 12-byte elements need different numbers of pieces of a
     * 2 MiB bank's 1 / (p + 1) (oxmpi's node stage); whatever the result,
     * every member returns and the communicator works afterwards. */
    {
        size_t part = (size_t)(2 << 20) / (size + 1) / 64 * 64;
        size_t bytes = 4 * part / 12 * 12;
        int ints = (int)(bytes / 4);
        int *x = calloc(ints, sizeof(int)), *y = calloc(ints, sizeof(int));
        MPI_Datatype triple;
        MPI_Type_contiguous(3, MPI_INT, &triple);
        MPI_Type_commit(&triple);
        int rc = rank == 1 ? MPI_Allreduce(x, y, ints / 3, triple, MPI_BAND, MPI_COMM_WORLD)
                           : MPI_Allreduce(x, y, ints, MPI_INT, MPI_BAND, MPI_COMM_WORLD);
        int cls = rc == MPI_SUCCESS ? MPI_SUCCESS : mt_class(rc);
        CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE || cls == MPI_ERR_OP,
              "MPI_Allreduce of ints and int triples: class %d", cls);
        int one = 1, sum = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS && sum == size,
              "the allreduce after ints and int triples gave %d", sum);
        MPI_Type_free(&triple);
        free(x);
        free(y);
    }
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        char tried[200];
        snprintf(tried, sizeof tried,
                 "collectives whose %d members disagree on counts or types (bcast, gather, reduce, allreduce, alltoall(v); "
                 "short and long)",
                 size);
        mt_reliability_row("bad input", tried, "-",
                           "%d MPI_ERR_TRUNCATE returned where a member received more than it expected, %d "
                           "other errors; the communicator worked afterwards",
                           noticed_total, errors);
    }
    free(buf);
    free(out);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors != 0;
}
