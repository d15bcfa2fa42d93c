/* reinit.c: cost of one re-initialization cycle with MPI Sessions.
 *
 * One cycle: MPI_Session_init, MPI_Group_from_session_pset("mpi://WORLD"),
 * MPI_Comm_create_from_group, one message round (every rank sends 8 bytes
 * to rank+1 and receives 8 bytes from rank-1, modulo size), then
 * MPI_Comm_free, MPI_Group_free, MPI_Session_finalize.  The loop runs
 * CYCLES cycles (argv[1], default 20) back to back; with 1, only first_ms
 * is printed.
 *
 * Rank 0 prints (stdout) the time of the first cycle, which includes the
 * first initialization, and the mean and median of the following cycles in
 * milliseconds:
 *     first_ms X
 *     cycle_ms Y        (mean of cycles 2..CYCLES)
 *     median_ms Z       (median of cycles 2..CYCLES)
 * Clock: CLOCK_MONOTONIC (MPI_Wtime is not relied on between sessions).
 * Any MPI error is reported on stderr and the program exits with status 1.
 * Run it with MPIR_CVAR_FINALIZE_ATEXIT=1 and without. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"

static void check(int rc, const char *what, int cycle)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
        msg[len] = '\0';
        fprintf(stderr, "reinit: cycle %d: %s failed (code %d): %s\n",
                cycle, what, rc, msg);
        exit(1);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Returns this process's rank in the cycle's communicator. */
static int cycle(int c)
{
    MPI_Session session = MPI_SESSION_NULL;
    MPI_Group group = MPI_GROUP_NULL;
    MPI_Comm comm = MPI_COMM_NULL;
    int rank, size;
    check(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session),
          "MPI_Session_init", c);
    check(MPI_Group_from_session_pset(session, "mpi://WORLD", &group),
          "MPI_Group_from_session_pset", c);
    check(MPI_Comm_create_from_group(group, "oxmpi.bench.reinit",
                                     MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm),
          "MPI_Comm_create_from_group", c);
    check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank", c);
    check(MPI_Comm_size(comm, &size), "MPI_Comm_size", c);

    char out[8], in[8];
    memset(out, 0, sizeof out);
    memcpy(out, &c, sizeof c);
    MPI_Request req[2];
    MPI_Status st[2];
    check(MPI_Irecv(in, 8, MPI_BYTE, (rank + size - 1) % size, 7, comm, &req[0]),
          "MPI_Irecv", c);
    check(MPI_Isend(out, 8, MPI_BYTE, (rank + 1) % size, 7, comm, &req[1]),
          "MPI_Isend", c);
    check(MPI_Waitall(2, req, st), "MPI_Waitall", c);
    int got;
    memcpy(&got, in, sizeof got);
    if (got != c) {
        fprintf(stderr, "reinit: cycle %d: rank %d received %d, expected %d\n",
                c, rank, got, c);
        exit(1);
    }

    check(MPI_Comm_free(&comm), "MPI_Comm_free", c);
    check(MPI_Group_free(&group), "MPI_Group_free", c);
    check(MPI_Session_finalize(&session), "MPI_Session_finalize", c);
    return rank;
}

int main(int argc, char **argv)
{
    int cycles = argc > 1 ? atoi(argv[1]) : 20;
    if (cycles < 1) cycles = 1;
    double *t = malloc(sizeof(double) * (size_t)cycles);
    if (!t) return 1;
    int rank = -1;
    for (int c = 0; c < cycles; c++) {
        double t0 = now();
        rank = cycle(c);
        t[c] = now() - t0;
    }
    if (rank == 0 && cycles == 1) {
        printf("first_ms %.3f\n", t[0] * 1e3);
    } else if (rank == 0) {
        double sum = 0;
        for (int c = 1; c < cycles; c++) sum += t[c];
        qsort(t + 1, (size_t)(cycles - 1), sizeof(double), cmp_double);
        int n = cycles - 1;
        double med = n % 2 ? t[1 + n / 2] : (t[n / 2] + t[1 + n / 2]) / 2;
        printf("first_ms %.3f\n", t[0] * 1e3);
        printf("cycle_ms %.3f\n", sum / n * 1e3);
        printf("median_ms %.3f\n", med * 1e3);
    }
    free(t);
    return 0;
}
