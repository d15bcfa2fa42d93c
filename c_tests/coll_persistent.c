/* Persistent collectives (MPI 4 MPI_x_init, started by MPI_Start and
 * MPI_Startall): every one of the 17 made once and started three times,
 * with new input between starts, results checked at each round; several
 * started together by Startall and completed in any order; interleaved
 * with blocking collectives on the same communicator; started in a
 * different order at each member (MPI fixes the matching at the init
 * calls, not at the starts); then the rules:
 * a request inactive after completion and restartable, Request_free of an
 * inactive request, MPI_Start of an active one is MPI_ERR_REQUEST,
 * MPI_Cancel is MPI_ERR_REQUEST (as in MPICH), and arguments are checked
 * at the init call. */
#include "mpitest.h"

#define ROUNDS 100
#define N 4 /* ints per block */

static int value(int round, int rank, int i) { return 1000 * round + 10 * rank + i; }

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    /* Errors of calls on requests go to MPI_COMM_WORLD's handler. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int root = size - 1;

    int *sbuf = calloc((size_t)(N * size), sizeof(int));
    int *rbuf = calloc((size_t)(N * size), sizeof(int));
    int *counts = calloc((size_t)size, sizeof(int));
    int *displs = calloc((size_t)size, sizeof(int));
    MPI_Datatype *types = calloc((size_t)size, sizeof(MPI_Datatype));
    int *bdispls = calloc((size_t)size, sizeof(int));
    for (int r = 0; r < size; r++) {
        counts[r] = N;
        displs[r] = N * r;
        bdispls[r] = (int)(N * r * sizeof(int));
        types[r] = MPI_INT;
    }
    int scalar_in = 0, scalar_out = 0, bval[N];

    enum { BARRIER, BCAST, GATHER, GATHERV, SCATTER, SCATTERV, ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV,
           ALLTOALLW, REDUCE, ALLREDUCE, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, SCAN, EXSCAN, NCOLL };
    const char *names[NCOLL] = {"Barrier",   "Bcast",     "Gather",         "Gatherv",
                                "Scatter",   "Scatterv",  "Allgather",      "Allgatherv",
                                "Alltoall",  "Alltoallv", "Alltoallw",      "Reduce",
                                "Allreduce", "Reduce_scatter", "Reduce_scatter_block", "Scan",
                                "Exscan"};
    for (int c = 0; c < NCOLL; c++) {
        MPI_Request req = MPI_REQUEST_NULL;
        int rc = MPI_ERR_OTHER;
        switch (c) {
        case BARRIER: rc = MPI_Barrier_init(comm, MPI_INFO_NULL, &req); break;
        case BCAST: rc = MPI_Bcast_init(bval, N, MPI_INT, root, comm, MPI_INFO_NULL, &req); break;
        case GATHER: rc = MPI_Gather_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, root, comm, MPI_INFO_NULL, &req); break;
        case GATHERV:
            rc = MPI_Gatherv_init(sbuf, N, MPI_INT, rbuf, counts, displs, MPI_INT, root, comm, MPI_INFO_NULL, &req);
            break;
        case SCATTER: rc = MPI_Scatter_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, root, comm, MPI_INFO_NULL, &req); break;
        case SCATTERV:
            rc = MPI_Scatterv_init(sbuf, counts, displs, MPI_INT, rbuf, N, MPI_INT, root, comm, MPI_INFO_NULL, &req);
            break;
        case ALLGATHER: rc = MPI_Allgather_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, comm, MPI_INFO_NULL, &req); break;
        case ALLGATHERV:
            rc = MPI_Allgatherv_init(sbuf, N, MPI_INT, rbuf, counts, displs, MPI_INT, comm, MPI_INFO_NULL, &req);
            break;
        case ALLTOALL: rc = MPI_Alltoall_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, comm, MPI_INFO_NULL, &req); break;
        case ALLTOALLV:
            rc = MPI_Alltoallv_init(sbuf, counts, displs, MPI_INT, rbuf, counts, displs, MPI_INT, comm, MPI_INFO_NULL,
                                    &req);
            break;
        case ALLTOALLW:
            rc = MPI_Alltoallw_init(sbuf, counts, bdispls, types, rbuf, counts, bdispls, types, comm, MPI_INFO_NULL,
                                    &req);
            break;
        case REDUCE: rc = MPI_Reduce_init(sbuf, rbuf, N, MPI_INT, MPI_SUM, root, comm, MPI_INFO_NULL, &req); break;
        case ALLREDUCE: rc = MPI_Allreduce_init(sbuf, rbuf, N, MPI_INT, MPI_MAX, comm, MPI_INFO_NULL, &req); break;
        case REDUCE_SCATTER:
            rc = MPI_Reduce_scatter_init(sbuf, rbuf, counts, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req);
            break;
        case REDUCE_SCATTER_BLOCK:
            rc = MPI_Reduce_scatter_block_init(sbuf, rbuf, N, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req);
            break;
        case SCAN: rc = MPI_Scan_init(&scalar_in, &scalar_out, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req); break;
        case EXSCAN:
            rc = MPI_Exscan_init(&scalar_in, &scalar_out, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req);
            break;
        }
        CHECK(rc == MPI_SUCCESS && req != MPI_REQUEST_NULL, "MPI_%s_init (rc %d)", names[c], rc);
        if (rc != MPI_SUCCESS) continue;

        for (int round = 0; round < ROUNDS; round++) {
            /* New input for this round; the output poisoned. */
            for (int i = 0; i < N * size; i++) {
                sbuf[i] = value(round, rank, i);
                rbuf[i] = -1;
            }
            for (int i = 0; i < N; i++) bval[i] = rank == root ? value(round, root, i) : -1;
            scalar_in = round + rank + 1;
            scalar_out = -7;
            /* A blocking collective between starts takes its own place in
             * the sequence. */
            int token = rank, sum = 0;
            MPI_Allreduce(&token, &sum, 1, MPI_INT, MPI_SUM, comm);
            CHECK(sum == size * (size - 1) / 2, "blocking allreduce between starts: %d", sum);

            CHECK(MPI_Start(&req) == MPI_SUCCESS, "MPI_Start of %s", names[c]);
            MPI_Status st;
            CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS, "MPI_Wait of %s", names[c]);
            CHECK(req != MPI_REQUEST_NULL, "%s: a persistent request stays allocated after completion", names[c]);

            int bad = 0, first_bad = -1, got = 0, want = 0;
#define EXPECT(cond, g, w)                                                                                   \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            if (!bad) { got = (g); want = (w); }                                                             \
            bad++;                                                                                           \
        }                                                                                                    \
    } while (0)
            switch (c) {
            case BARRIER: break;
            case BCAST:
                for (int i = 0; i < N; i++) EXPECT(bval[i] == value(round, root, i), bval[i], value(round, root, i));
                break;
            case GATHER:
            case GATHERV:
                if (rank == root)
                    for (int r = 0; r < size; r++)
                        for (int i = 0; i < N; i++)
                            EXPECT(rbuf[N * r + i] == value(round, r, i), rbuf[N * r + i], value(round, r, i));
                break;
            case SCATTER:
            case SCATTERV:
                for (int i = 0; i < N; i++)
                    EXPECT(rbuf[i] == value(round, root, N * rank + i), rbuf[i], value(round, root, N * rank + i));
                break;
            case ALLGATHER:
            case ALLGATHERV:
                for (int r = 0; r < size; r++)
                    for (int i = 0; i < N; i++)
                        EXPECT(rbuf[N * r + i] == value(round, r, i), rbuf[N * r + i], value(round, r, i));
                break;
            case ALLTOALL:
            case ALLTOALLV:
            case ALLTOALLW:
                for (int r = 0; r < size; r++)
                    for (int i = 0; i < N; i++)
                        EXPECT(rbuf[N * r + i] == value(round, r, N * rank + i), rbuf[N * r + i],
                               value(round, r, N * rank + i));
                break;
            case REDUCE:
                if (rank == root)
                    for (int i = 0; i < N; i++) {
                        int w = 0;
                        for (int r = 0; r < size; r++) w += value(round, r, i);
                        EXPECT(rbuf[i] == w, rbuf[i], w);
                    }
                break;
            case ALLREDUCE:
                for (int i = 0; i < N; i++) EXPECT(rbuf[i] == value(round, size - 1, i), rbuf[i], value(round, size - 1, i));
                break;
            case REDUCE_SCATTER:
            case REDUCE_SCATTER_BLOCK:
                for (int i = 0; i < N; i++) {
                    int w = 0;
                    for (int r = 0; r < size; r++) w += value(round, r, N * rank + i);
                    EXPECT(rbuf[i] == w, rbuf[i], w);
                }
                break;
            case SCAN: {
                int w = 0;
                for (int r = 0; r <= rank; r++) w += round + r + 1;
                EXPECT(scalar_out == w, scalar_out, w);
                break;
            }
            case EXSCAN:
                if (rank > 0) {
                    int w = 0;
                    for (int r = 0; r < rank; r++) w += round + r + 1;
                    EXPECT(scalar_out == w, scalar_out, w);
                }
                break;
            }
            CHECK(bad == 0, "%s round %d: %d wrong values (first: got %d, expected %d)", names[c], round, bad, got,
                  want);
            (void)first_bad;
        }
        CHECK(MPI_Request_free(&req) == MPI_SUCCESS && req == MPI_REQUEST_NULL, "Request_free of %s", names[c]);
    }

    /* Several at once with Startall, completed in reverse order. */
    {
        int a = rank + 1, amax = 0, b[N], g = rank, *gathered = calloc((size_t)size, sizeof(int));
        MPI_Request reqs[3];
        MPI_Allreduce_init(&a, &amax, 1, MPI_INT, MPI_MAX, comm, MPI_INFO_NULL, &reqs[0]);
        MPI_Bcast_init(b, N, MPI_INT, 0, comm, MPI_INFO_NULL, &reqs[1]);
        MPI_Allgather_init(&g, 1, MPI_INT, gathered, 1, MPI_INT, comm, MPI_INFO_NULL, &reqs[2]);
        for (int round = 0; round < ROUNDS; round++) {
            a = rank + 1 + round;
            g = rank * 3 + round;
            for (int i = 0; i < N; i++) b[i] = rank == 0 ? round * 100 + i : -1;
            CHECK(MPI_Startall(3, reqs) == MPI_SUCCESS, "Startall");
            for (int k = 2; k >= 0; k--) MPI_Wait(&reqs[k], MPI_STATUS_IGNORE);
            CHECK(amax == size + round, "round %d: allreduce max %d, expected %d", round, amax, size + round);
            for (int i = 0; i < N; i++) CHECK(b[i] == round * 100 + i, "round %d: bcast[%d] = %d", round, i, b[i]);
            for (int r = 0; r < size; r++)
                CHECK(gathered[r] == r * 3 + round, "round %d: allgather[%d] = %d", round, r, gathered[r]);
        }

        /* Starts in a different order at each member, one by one and by
         * Startall with the array rotated by the rank. */
        for (int round = 0; round < ROUNDS; round++) {
            a = rank + 10 * round;
            g = rank + round;
            for (int i = 0; i < N; i++) b[i] = rank == 0 ? round * 7 + i : -1;
            MPI_Request rotated[3];
            for (int k = 0; k < 3; k++) rotated[k] = reqs[(k + rank + round) % 3];
            if (round == 1) {
                for (int k = 2; k >= 0; k--) MPI_Start(&rotated[k]);
            } else {
                CHECK(MPI_Startall(3, rotated) == MPI_SUCCESS, "Startall rotated");
            }
            MPI_Waitall(3, rotated, MPI_STATUSES_IGNORE);
            CHECK(amax == size - 1 + 10 * round, "any order, round %d: allreduce max %d", round, amax);
            for (int i = 0; i < N; i++)
                CHECK(b[i] == round * 7 + i, "any order, round %d: bcast[%d] = %d", round, i, b[i]);
            for (int r = 0; r < size; r++)
                CHECK(gathered[r] == r + round, "any order, round %d: allgather[%d] = %d", round, r, gathered[r]);
        }

        /* The rules, on an inactive request and an active one. */
        CHECK_CLASS(MPI_Cancel(&reqs[0]), MPI_ERR_REQUEST);
        MPI_Start(&reqs[0]);
        CHECK_CLASS(MPI_Start(&reqs[0]), MPI_ERR_REQUEST);
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        int flag = 0;
        MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE);
        CHECK(flag, "Test of an inactive persistent request is true at once");
        for (int k = 0; k < 3; k++) MPI_Request_free(&reqs[k]);
        free(gathered);
    }

    /* Arguments are checked at the init call. */
    {
        MPI_Request req = MPI_REQUEST_NULL;
        CHECK_CLASS(MPI_Bcast_init(bval, -1, MPI_INT, 0, comm, MPI_INFO_NULL, &req), MPI_ERR_COUNT);
        CHECK_CLASS(MPI_Bcast_init(bval, N, MPI_INT, size, comm, MPI_INFO_NULL, &req), MPI_ERR_ROOT);
        CHECK_CLASS(MPI_Allreduce_init(sbuf, rbuf, N, MPI_INT, MPI_OP_NULL, comm, MPI_INFO_NULL, &req), MPI_ERR_OP);
        CHECK(req == MPI_REQUEST_NULL, "a failed init makes no request");
    }

    /* On MPI_COMM_SELF too. */
    {
        int x = 5, y = 0;
        MPI_Request req;
        MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF, MPI_INFO_NULL, &req);
        for (int round = 0; round < ROUNDS; round++) {
            x = round + 5;
            MPI_Start(&req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            CHECK(y == round + 5, "self allreduce round %d: %d", round, y);
        }
        MPI_Request_free(&req);
    }

    free(sbuf);
    free(rbuf);
    free(counts);
    free(displs);
    free(bdispls);
    free(types);
    MPI_Comm_free(&comm);
    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errs);
    MPI_Finalize();
    return 0;
}
