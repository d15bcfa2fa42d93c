/* pingpong.c: one-way point-to-point latency between two ranks, following
 * the osu_latency method: for each message size, rank 0 and rank 1 do some
 * warm-up round trips (MPI_Send / MPI_Recv), then N timed round trips;
 * latency = elapsed / (2 N), in microseconds.
 *
 * N (and the warm-up count) start from per-size defaults and are lowered,
 * if needed, so that the timed loop of one size takes about BUDGET seconds
 * at most, estimated from PROBE untimed round trips; this keeps the whole
 * run short on a slow or busy machine.  Rank 0 decides and tells rank 1.
 *
 * Output (rank 0, stdout): a comment line, then one "size latency_us" line
 * per size.  Written for oxmpi's bench/run.sh; not derived from OSU code. */
#include <mpi.h>
#include "clock.h"
#include "pair.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUDGET (0.3 * budget_scale()) /* seconds of timed loop per size, at most (roughly) */
#define PROBE 20   /* round trips used to estimate the cost of one */

static const int sizes[] = {0, 1, 8, 64, 512, 4096, 16384, 65536,
                            1 << 20, 4 << 20};

static void round_trips(int rank, char *buf, int size, long n)
{
    int peer = 1 - rank;
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(buf, size, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, size, MPI_CHAR, peer, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, size, MPI_CHAR, peer, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(buf, size, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    int rank = pair_init(&argc, &argv, "pingpong");
    int maxsize = sizes[sizeof sizes / sizeof sizes[0] - 1];
    char *buf = malloc(maxsize > 0 ? maxsize : 1);
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 3);
    memset(buf, 'a' + rank, maxsize);

    if (rank == 0) printf("# pingpong: size(bytes) one-way-latency(us)\n");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int size = sizes[s];
        long warm, iters;
        if (size <= 4096)        { warm = 2000; iters = 50000; }
        else if (size <= 65536)  { warm = 200;  iters = 5000; }
        else                     { warm = 10;   iters = 500; }

        /* Probe: a few round trips estimate the cost of one, so that
         * rank 0 can bound the warm-up and the timed loop. */
        long plan[2];
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        round_trips(rank, buf, size, PROBE);
        double per = (MPI_Wtime() - t0) / PROBE;
        if (rank == 0) {
            if (per > 0 && per * (double)iters > BUDGET) {
                iters = (long)(BUDGET / per);
                if (iters < 10) iters = 10;
            }
            if (per > 0 && per * (double)warm > BUDGET / 4) {
                warm = (long)(BUDGET / 4 / per);
                if (warm < 2) warm = 2;
            }
            plan[0] = warm;
            plan[1] = iters;
            MPI_Send(plan, 2, MPI_LONG, 1, 2, MPI_COMM_WORLD);
        } else {
            MPI_Recv(plan, 2, MPI_LONG, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            warm = plan[0];
            iters = plan[1];
        }
        round_trips(rank, buf, size, warm);

        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        round_trips(rank, buf, size, iters);
        double t = MPI_Wtime() - t0;
        if (rank == 0) {
            printf("%d %.3f\n", size, t * 1e6 / (2.0 * (double)iters));
            fflush(stdout);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
