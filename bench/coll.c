/* coll.c: blocking collectives on MPI_COMM_WORLD, the osu collective
 * method: per operation, an untimed probe of a few calls (rank 0 turns it
 * into a count that fits about BUDGET seconds and broadcasts it), warm-up
 * calls, a barrier, then the timed loop; each rank's time per call, and the
 * maximum over the ranks (MPI_Reduce MAX to rank 0), in microseconds.
 *
 *   barrier             MPI_Barrier
 *   bcast_8, bcast_1M   MPI_Bcast of 8 B, 1 MiB from rank 0
 *   allreduce_N         MPI_Allreduce MPI_SUM of N bytes of doubles
 *                       (8 B, 1 KiB, 64 KiB, 1 MiB)
 *   alltoall_1K         MPI_Alltoall, 1 KiB to every rank
 *
 * Output (rank 0, stdout): a comment line, then "name us" per operation.
 * Written for oxmpi's bench/run.sh; not derived from OSU code. */
#include <mpi.h>
#include "clock.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUDGET (0.2 * budget_scale()) /* seconds of timed loop per operation, at most (roughly) */
#define PROBE 3
#define MAX_ITERS 10000

enum kind { BARRIER, BCAST, ALLREDUCE, ALLTOALL };
static const struct op {
    const char *name;
    enum kind kind;
    int bytes;
} ops[] = {
    {"barrier", BARRIER, 0},          {"bcast_8", BCAST, 8},
    {"bcast_1M", BCAST, 1 << 20},     {"allreduce_8", ALLREDUCE, 8},
    {"allreduce_1K", ALLREDUCE, 1024}, {"allreduce_64K", ALLREDUCE, 65536},
    {"allreduce_1M", ALLREDUCE, 1 << 20}, {"alltoall_1K", ALLTOALL, 1024},
};

static char *sbuf, *rbuf;

static void calls(const struct op *op, long n)
{
    for (long i = 0; i < n; i++) {
        switch (op->kind) {
        case BARRIER:
            MPI_Barrier(MPI_COMM_WORLD);
            break;
        case BCAST:
            MPI_Bcast(sbuf, op->bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
            break;
        case ALLREDUCE:
            MPI_Allreduce(sbuf, rbuf, op->bytes / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            break;
        case ALLTOALL:
            MPI_Alltoall(sbuf, op->bytes, MPI_CHAR, rbuf, op->bytes, MPI_CHAR, MPI_COMM_WORLD);
            break;
        }
    }
}

int main(int argc, char **argv)
{
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    size_t len = (size_t)1 << 20;
    if ((size_t)nranks * 1024 > len) len = (size_t)nranks * 1024;
    sbuf = malloc(len);
    rbuf = malloc(len);
    if (!sbuf || !rbuf) MPI_Abort(MPI_COMM_WORLD, 3);
    memset(sbuf, 0, len); /* zero doubles: sums stay finite */
    memset(rbuf, 0, len);

    if (rank == 0) printf("# coll: %d ranks, us per call, max over ranks\n", nranks);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        const struct op *op = &ops[k];
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        calls(op, PROBE);
        double per = (MPI_Wtime() - t0) / PROBE;
        long n = MAX_ITERS;
        if (per > 0 && per * (double)n > BUDGET) n = (long)(BUDGET / per);
        if (n < 5) n = 5;
        MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        calls(op, n / 10 + 1);

        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        calls(op, n);
        double us = (MPI_Wtime() - t0) * 1e6 / (double)n, max = 0;
        MPI_Reduce(&us, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%s %.3f\n", op->name, max);
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
