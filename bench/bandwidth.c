/* bandwidth.c: streaming point-to-point bandwidth between two ranks,
 * following the osu_bw method (sizes 8 B to 4 MiB): per iteration rank 0 posts a window of 64
 * MPI_Isend of the same buffer, rank 1 posts 64 MPI_Irecv, both MPI_Waitall,
 * then rank 1 sends a 4-byte ack that rank 0 receives.  Warm-up iterations
 * first, then timed ones; bandwidth = size * 64 * iterations / elapsed,
 * in MB/s (1 MB = 10^6 bytes), as seen by rank 0.
 *
 * As in pingpong.c, the warm-up and timed iteration counts are lowered
 * when one untimed probe iteration shows the timed loop would take more
 * than about BUDGET seconds; rank 0 decides and tells rank 1.
 *
 * Output (rank 0, stdout): a comment line, then one "size MB/s" line per
 * size.  Written for oxmpi's bench/run.sh; not derived from OSU code. */
#include <mpi.h>
#include "clock.h"
#include "pair.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define BUDGET (0.5 * budget_scale())

static const int sizes[] = {8, 64, 512, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20};

static void iterations(int rank, char *buf, int size, long n)
{
    MPI_Request req[WINDOW];
    MPI_Status st[WINDOW];
    char ack[4] = {0};
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(buf, size, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(WINDOW, req, st);
            MPI_Recv(ack, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int w = 0; w < WINDOW; w++)
                MPI_Irecv(buf, size, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(WINDOW, req, st);
            MPI_Send(ack, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    int rank = pair_init(&argc, &argv, "bandwidth");
    int maxsize = sizes[sizeof sizes / sizeof sizes[0] - 1];
    char *buf = malloc(maxsize);
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 3);
    memset(buf, 'a' + rank, maxsize);

    if (rank == 0) printf("# bandwidth: size(bytes) MB/s (window %d)\n", WINDOW);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int size = sizes[s];
        long warm, iters;
        if (size <= 8192) { warm = 100; iters = 1000; }
        else              { warm = 5;  iters = 50; }

        /* Probe: one iteration estimates the cost of one, so that rank 0
         * can bound the warm-up and the timed loop. */
        long plan[2];
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        iterations(rank, buf, size, 1);
        double per = MPI_Wtime() - t0;
        if (rank == 0) {
            if (per > 0 && per * (double)iters > BUDGET) {
                iters = (long)(BUDGET / per);
                if (iters < 3) iters = 3;
            }
            if (per > 0 && per * (double)warm > BUDGET / 4) {
                warm = (long)(BUDGET / 4 / per);
                if (warm < 1) warm = 1;
            }
            plan[0] = warm;
            plan[1] = iters;
            MPI_Send(plan, 2, MPI_LONG, 1, 2, MPI_COMM_WORLD);
        } else {
            MPI_Recv(plan, 2, MPI_LONG, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            warm = plan[0];
            iters = plan[1];
        }
        iterations(rank, buf, size, warm);

        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        iterations(rank, buf, size, iters);
        double t = MPI_Wtime() - t0;
        if (rank == 0) {
            double bytes = (double)size * WINDOW * (double)iters;
            printf("%d %.6g\n", size, bytes / t / 1e6);
            fflush(stdout);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
