/* A process keeps at most 65,536 communicators alive (MPICH's limit is
 * about as many context ids). Duplicating MPI_COMM_WORLD until it fails:
 * the failure comes at the same call on every rank, with MPI_ERR_OTHER
 * (and MPI_COMM_NULL from MPI_Comm_dup), after 65,536 communicators (the predefined ones do
 * not count); the failed call leaves nothing behind, so after freeing one
 * a dup succeeds again, and with `nonblocking` MPI_Comm_idup fails alike
 * (in its request). Then everything is freed and the communicators made
 * afterwards work (a collective on one). */
#include "mpitest.h"

#define LIMIT 65536

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    int nonblocking = argc > 1 && strcmp(argv[1], "nonblocking") == 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm *comms = malloc(sizeof(MPI_Comm) * (LIMIT + 2));
    int made = 0, rc = MPI_SUCCESS;
    while (made < LIMIT + 2) {
        comms[made] = MPI_COMM_WORLD;
        if (nonblocking) {
            MPI_Request req;
            rc = MPI_Comm_idup(MPI_COMM_WORLD, &comms[made], &req);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Comm_dup(MPI_COMM_WORLD, &comms[made]);
        }
        if (rc != MPI_SUCCESS)
            break;
        made++;
    }
    CHECK(made == LIMIT, "%d communicators made before a failure, expected %d", made, LIMIT);
    CHECK(mt_class(rc) == MPI_ERR_OTHER, "the failing dup gave class %d", mt_class(rc));
    if (!nonblocking) /* (an idup's handle is defined only when it succeeds) */
        CHECK(comms[made] == MPI_COMM_NULL, "the failing dup gave a handle other than MPI_COMM_NULL");
    int lowest = made;
    MPI_Allreduce(&made, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CHECK(lowest == made, "rank %d made %d, another %d", rank, made, lowest);
    /* One freed: one more fits. */
    MPI_Comm_free(&comms[made - 1]);
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[made - 1]) == MPI_SUCCESS, "a dup after a free");
    for (int i = 0; i < made; i++)
        MPI_Comm_free(&comms[i]);
    free(comms);
    MPI_Comm c;
    int sum = 0, one = 1;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c) == MPI_SUCCESS, "a dup once all are freed");
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(sum == size, "allreduce on the new communicator gave %d", sum);
    MPI_Comm_free(&c);
    int errors;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return errors != 0;
}
