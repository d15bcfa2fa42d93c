/* Run by proc_failed.sh under `mpiexec -disable-auto-cleanup -n 4`.
 * Rank 3 sends rank 2 one small message, then ends with _exit(3) without
 * finalizing. The others wait on it in several ways.
 *
 * argv[1] == "return" (MPI_ERRORS_RETURN on MPI_COMM_WORLD): every wait on
 * rank 3 returns MPIX_ERR_PROC_FAILED instead of hanging:
 * - rank 0: MPI_Recv from 3, MPI_Irecv + MPI_Wait from 3 (posted after the
 *   failure is known), MPI_Irecv from MPI_ANY_SOURCE, MPI_Probe of 3;
 * - rank 1: a 1 MiB MPI_Send (rendezvous) and a small MPI_Ssend to 3;
 * - rank 2: first receives rank 3's message (sent before it failed), then
 *   MPI_Mprobe of 3;
 * - ranks 0-2: MPI_Barrier on MPI_COMM_WORLD fails too.
 * Then the survivors exchange messages around a ring of the three of them
 * and gather their error counts at rank 0 by point-to-point, which prints
 * "No Errors".
 *
 * argv[1] == "fatal" (the default handler): rank 0's MPI_Recv from 3 ends
 * the job with a message naming MPIX_ERR_PROC_FAILED. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int errors = 0;

static void expect_failed(int rc, const char *what) {
    int cls = -1;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (cls != MPIX_ERR_PROC_FAILED) {
        errors++;
        fprintf(stderr, "%s: class %d, expected MPIX_ERR_PROC_FAILED (%d)\n", what, cls,
                MPIX_ERR_PROC_FAILED);
    }
}

int main(int argc, char **argv) {
    int rank, size, v = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int fatal = argc > 1 && strcmp(argv[1], "fatal") == 0;
    if (size != 4) {
        if (rank == 0) printf("needs 4 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!fatal) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 3) {
        int last = 33;
        MPI_Send(&last, 1, MPI_INT, 2, 9, MPI_COMM_WORLD);
        usleep(100 * 1000);
        _exit(3);
    }
    if (fatal) {
        if (rank == 0) MPI_Recv(&v, 1, MPI_INT, 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* Only the fatal error ends ranks 1 and 2. */
        MPI_Recv(&v, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank %d: the fatal error did not end the job\n", rank);
        return 1;
    }
    MPI_Request req;
    MPI_Status st;
    MPI_Message msg;
    if (rank == 0) {
        expect_failed(MPI_Recv(&v, 1, MPI_INT, 3, 0, MPI_COMM_WORLD, &st), "MPI_Recv from 3");
        MPI_Irecv(&v, 1, MPI_INT, 3, 0, MPI_COMM_WORLD, &req);
        expect_failed(MPI_Wait(&req, &st), "MPI_Irecv + MPI_Wait from 3");
        MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &req);
        expect_failed(MPI_Wait(&req, &st), "MPI_Irecv + MPI_Wait from MPI_ANY_SOURCE");
        expect_failed(MPI_Probe(3, 0, MPI_COMM_WORLD, &st), "MPI_Probe of 3");
    } else if (rank == 1) {
        size_t n = 1 << 20;
        char *big = calloc(n, 1);
        expect_failed(MPI_Send(big, (int)n, MPI_BYTE, 3, 0, MPI_COMM_WORLD), "1 MiB MPI_Send to 3");
        free(big);
        expect_failed(MPI_Ssend(&v, 1, MPI_INT, 3, 0, MPI_COMM_WORLD), "MPI_Ssend to 3");
    } else if (rank == 2) {
        int rc = MPI_Recv(&v, 1, MPI_INT, 3, 9, MPI_COMM_WORLD, &st);
        if (rc != MPI_SUCCESS || v != 33) {
            errors++;
            fprintf(stderr, "rank 2: the message rank 3 sent before it failed: rc %d, value %d\n", rc, v);
        }
        expect_failed(MPI_Mprobe(3, 0, MPI_COMM_WORLD, &msg, &st), "MPI_Mprobe of 3");
    }
    expect_failed(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier with rank 3 gone");
    /* ULFM: acknowledging the failure; revoke/shrink/agree are refused
     * deliberately (MPI_ERR_UNSUPPORTED_OPERATION). */
    MPI_Group acked;
    int acked_size = -1, world_rank = -1, zero = 0, cls = -1, flag = 1;
    MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked);
    MPI_Group_size(acked, &acked_size);
    if (acked_size != 0) {
        errors++;
        fprintf(stderr, "rank %d: %d failures acknowledged before MPIX_Comm_failure_ack\n", rank, acked_size);
    }
    MPIX_Comm_failure_ack(MPI_COMM_WORLD);
    MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked);
    MPI_Group_size(acked, &acked_size);
    MPI_Group world_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    if (acked_size == 1) MPI_Group_translate_ranks(acked, 1, &zero, world_group, &world_rank);
    if (acked_size != 1 || world_rank != 3) {
        errors++;
        fprintf(stderr, "rank %d: acknowledged %d failures (first: world rank %d), expected rank 3\n", rank,
                acked_size, world_rank);
    }
    if (acked_size > 0) MPI_Group_free(&acked);
    MPI_Group_free(&world_group);
    MPI_Error_class(MPIX_Comm_agree(MPI_COMM_WORLD, &flag), &cls);
    if (cls != MPI_ERR_UNSUPPORTED_OPERATION) {
        errors++;
        fprintf(stderr, "rank %d: MPIX_Comm_agree gave class %d\n", rank, cls);
    }
    /* The survivors still talk: a ring of 0, 1, 2, then error counts to 0. */
    int right = (rank + 1) % 3, left = (rank + 2) % 3, got = -1, mine = rank * 10;
    int rc = MPI_Sendrecv(&mine, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
    if (rc != MPI_SUCCESS || got != left * 10) {
        errors++;
        fprintf(stderr, "rank %d: ring among survivors: rc %d, got %d\n", rank, rc, got);
    }
    if (rank == 0) {
        for (int r = 1; r < 3; r++) {
            int e = 1;
            MPI_Recv(&e, 1, MPI_INT, r, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errors += e;
        }
    } else {
        MPI_Send(&errors, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    if (rank == 0) printf(errors ? "Found %d errors\n" : "No Errors\n", errors);
    return 0;
}
