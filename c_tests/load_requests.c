/* 100,000 nonblocking receives outstanding on one rank before the first
 * message is sent, then 100,000 nonblocking sends from another: all
 * complete, every value where it belongs; each rank reports its peak
 * resident memory. */
#include "mpitest.h"

#define N 100000

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    if (size < 2) mt_skip(rank, "needs 2 processes");
    int *vals = malloc(sizeof(int) * N);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * N);
    if (rank == 0) {
        for (int i = 0; i < N; i++) {
            vals[i] = -1;
            MPI_Irecv(&vals[i], 1, MPI_INT, 1, i % 100, MPI_COMM_WORLD, &reqs[i]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
        int bad = 0;
        for (int i = 0; i < N; i++) bad += vals[i] != i;
        CHECK(bad == 0, "%d values wrong", bad);
    } else if (rank == 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < N; i++) {
            vals[i] = i;
            MPI_Isend(&vals[i], 1, MPI_INT, 0, i % 100, MPI_COMM_WORLD, &reqs[i]);
        }
        MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank < 2)
        mt_reliability_row("load", rank == 0 ? "100,000 nonblocking receives outstanding on one rank"
                                             : "100,000 nonblocking sends outstanding on one rank",
                           "-", "all completed, values checked; peak resident memory %ld MiB", mt_peak_rss_mib());
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    free(vals);
    free(reqs);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors != 0;
}
