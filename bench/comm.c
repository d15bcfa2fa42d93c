/* comm.c: how fast a library makes communicators, for oxmpi's
 * bench/run.sh; each rank times its calls, rank 0 prints the maximum over
 * the ranks (MPI_Reduce MAX), in microseconds per call.
 *
 *   built as is (comm_dup): MPI_Init, then MPI_Comm_dup of MPI_COMM_WORLD
 *                 N times (argument, default 1000), all alive at once, then
 *                 freed (untimed); prints "dup <us per call>" and
 *                 "dup_total_ms <ms for N>".
 *   with -DUSE_SESSIONS (comm_create): the sessions model: MPI_Session_init,
 *                 a group from "mpi://WORLD", one communicator made from it
 *                 untimed, then N times (default 100)
 *                 MPI_Comm_create_from_group and MPI_Comm_free (only the
 *                 create timed); prints "create <us per call>".
 *
 * Errors are returned and reported on stderr (exit status 1). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "comm: %s failed (code %d)\n", what, rc);
        exit(1);
    }
}

static void report(MPI_Comm comm, const char *key, double us)
{
    int rank;
    double max = 0;
    check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    check(MPI_Reduce(&us, &max, 1, MPI_DOUBLE, MPI_MAX, 0, comm), "MPI_Reduce");
    if (rank == 0) printf("%s %.3f\n", key, max);
}

int main(int argc, char **argv)
{
#ifndef USE_SESSIONS
    long n = argc >= 2 ? atol(argv[1]) : 1000;
    if (n < 1) n = 1;
    MPI_Comm *c = malloc(sizeof *c * (size_t)n);
    if (!c) return 1;
    check(MPI_Init(&argc, &argv), "MPI_Init");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    double t0 = MPI_Wtime();
    for (long i = 0; i < n; i++)
        check(MPI_Comm_dup(MPI_COMM_WORLD, &c[i]), "MPI_Comm_dup");
    double t = MPI_Wtime() - t0;
    for (long i = 0; i < n; i++)
        check(MPI_Comm_free(&c[i]), "MPI_Comm_free");
    report(MPI_COMM_WORLD, "dup", t * 1e6 / (double)n);
    report(MPI_COMM_WORLD, "dup_total_ms", t * 1e3);
    free(c);
    check(MPI_Finalize(), "MPI_Finalize");
#else
    long n = argc >= 2 ? atol(argv[1]) : 100;
    if (n < 1) n = 1;
    MPI_Session s = MPI_SESSION_NULL;
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm c = MPI_COMM_NULL, first = MPI_COMM_NULL;
    check(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s), "MPI_Session_init");
    check(MPI_Group_from_session_pset(s, "mpi://WORLD", &g), "MPI_Group_from_session_pset");
    /* one untimed, kept for the barrier and the report */
    check(MPI_Comm_create_from_group(g, "oxmpi.bench.comm.first", MPI_INFO_NULL,
                                     MPI_ERRORS_RETURN, &first), "MPI_Comm_create_from_group");
    check(MPI_Barrier(first), "MPI_Barrier");
    double t = 0;
    for (long i = 0; i < n; i++) {
        double t0 = MPI_Wtime();
        check(MPI_Comm_create_from_group(g, "oxmpi.bench.comm", MPI_INFO_NULL,
                                         MPI_ERRORS_RETURN, &c), "MPI_Comm_create_from_group");
        t += MPI_Wtime() - t0;
        check(MPI_Comm_free(&c), "MPI_Comm_free");
    }
    report(first, "create", t * 1e6 / (double)n);
    check(MPI_Comm_free(&first), "MPI_Comm_free");
    check(MPI_Group_free(&g), "MPI_Group_free");
    check(MPI_Session_finalize(&s), "MPI_Session_finalize");
#endif
    return 0;
}
