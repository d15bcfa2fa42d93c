/* msgrate.c: small-message rate between two ranks, the osu_mbw_mr method
 * with one pair: per iteration rank 0 posts a window of 64 MPI_Isend of 8
 * bytes, rank 1 a window of 64 MPI_Irecv, both MPI_Waitall, then rank 1
 * sends a 4-byte ack that rank 0 receives.  Warm-up iterations, then timed
 * ones for about BUDGET seconds (the count from an untimed probe);
 * rate = 64 * iterations / elapsed, in million messages per second, as
 * seen by rank 0.  (bandwidth.c's 8-byte row is the same loop over a
 * shorter time, reported as MB/s.)
 *
 * Output (rank 0, stdout): a comment line, then "mmsgs <rate>".
 * Written for oxmpi's bench/run.sh; not derived from OSU code. */
#include <mpi.h>
#include "clock.h"
#include "pair.h"
#include <stdio.h>

#define WINDOW 64
#define SIZE 8
#define BUDGET (1.0 * budget_scale())
#define PROBE 100

static void iterations(int rank, long n)
{
    static char buf[WINDOW][SIZE];
    MPI_Request req[WINDOW];
    static MPI_Status st[WINDOW];
    char ack[4] = {0};
    for (long i = 0; i < n; i++) {
        for (int w = 0; w < WINDOW; w++) {
            if (rank == 0)
                MPI_Isend(buf[w], SIZE, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[w]);
            else
                MPI_Irecv(buf[w], SIZE, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[w]);
        }
        MPI_Waitall(WINDOW, req, st);
        if (rank == 0)
            MPI_Recv(ack, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(ack, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int rank = pair_init(&argc, &argv, "msgrate");
    iterations(rank, PROBE); /* warm-up and probe */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    iterations(rank, PROBE);
    long n = (long)(BUDGET / ((MPI_Wtime() - t0) / PROBE));
    if (n < 10) n = 10;
    MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    iterations(rank, n);
    double t = MPI_Wtime() - t0;
    if (rank == 0) {
        printf("# msgrate: %d-byte messages, window %d, million messages/s\n", SIZE, WINDOW);
        printf("mmsgs %.4f\n", (double)WINDOW * (double)n / t / 1e6);
    }
    MPI_Finalize();
    return 0;
}
