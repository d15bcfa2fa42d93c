/* bibw.c: bidirectional point-to-point bandwidth between two ranks,
 * following the osu_bibw method: per iteration both ranks post a window of
 * 64 MPI_Irecv, then a window of 64 MPI_Isend of the same buffer to the
 * other, and MPI_Waitall on all 128; warm-up iterations, then timed ones;
 * bandwidth = 2 * size * 64 * iterations / elapsed, in MB/s (1 MB = 10^6
 * bytes), as seen by rank 0.
 *
 * As in bandwidth.c, the counts are lowered when one untimed probe
 * iteration shows the timed loop would take more than about BUDGET
 * seconds; rank 0 decides and tells rank 1.
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

static void iterations(int rank, char *sbuf, char *rbuf, int size, long n)
{
    MPI_Request req[2 * WINDOW];
    static MPI_Status st[2 * WINDOW];
    int peer = 1 - rank;
    for (long i = 0; i < n; i++) {
        for (int w = 0; w < WINDOW; w++)
            MPI_Irecv(rbuf, size, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &req[w]);
        for (int w = 0; w < WINDOW; w++)
            MPI_Isend(sbuf, size, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &req[WINDOW + w]);
        MPI_Waitall(2 * WINDOW, req, st);
    }
}

int main(int argc, char **argv)
{
    int rank = pair_init(&argc, &argv, "bibw");
    int maxsize = sizes[sizeof sizes / sizeof sizes[0] - 1];
    char *sbuf = malloc(maxsize), *rbuf = malloc(maxsize);
    if (!sbuf || !rbuf) MPI_Abort(MPI_COMM_WORLD, 3);
    memset(sbuf, 'a' + rank, maxsize);
    memset(rbuf, 0, maxsize);

    if (rank == 0) printf("# bibw: size(bytes) MB/s both directions (window %d)\n", WINDOW);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int size = sizes[s];
        long plan[2];
        if (size <= 8192) { plan[0] = 100; plan[1] = 1000; }
        else              { plan[0] = 5;   plan[1] = 50; }

        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        iterations(rank, sbuf, rbuf, size, 1);
        double per = MPI_Wtime() - t0;
        if (rank == 0) {
            if (per > 0 && per * (double)plan[1] > BUDGET) {
                plan[1] = (long)(BUDGET / per);
                if (plan[1] < 3) plan[1] = 3;
            }
            if (per > 0 && per * (double)plan[0] > BUDGET / 4) {
                plan[0] = (long)(BUDGET / 4 / per);
                if (plan[0] < 1) plan[0] = 1;
            }
        }
        MPI_Bcast(plan, 2, MPI_LONG, 0, MPI_COMM_WORLD);
        iterations(rank, sbuf, rbuf, size, plan[0]);

        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        iterations(rank, sbuf, rbuf, size, plan[1]);
        double t = MPI_Wtime() - t0;
        if (rank == 0) {
            double bytes = 2.0 * (double)size * WINDOW * (double)plan[1];
            printf("%d %.6g\n", size, bytes / t / 1e6);
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
