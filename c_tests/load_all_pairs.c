/* Many ranks on few cores (the test list runs 64 on the 2 of a CI machine):
 * an all-to-all, every pair by point-to-point at once (each rank with 2n
 * requests outstanding), then 1000 barriers; everything verified, nothing
 * may stall. */
#include "mpitest.h"
#include <unistd.h>

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    int *out = malloc(sizeof(int) * size), *in = malloc(sizeof(int) * size);
    MPI_Request *r = malloc(sizeof(MPI_Request) * 2 * size);
    for (int i = 0; i < size; i++) out[i] = rank * 1000 + i;
    MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) CHECK(in[i] == i * 1000 + rank, "alltoall: from %d got %d", i, in[i]);
    for (int i = 0; i < size; i++) {
        in[i] = -1;
        MPI_Irecv(&in[i], 1, MPI_INT, i, 7, MPI_COMM_WORLD, &r[i]);
        MPI_Isend(&out[i], 1, MPI_INT, i, 7, MPI_COMM_WORLD, &r[size + i]);
    }
    MPI_Waitall(2 * size, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < size; i++) CHECK(in[i] == i * 1000 + rank, "pairs: from %d got %d", i, in[i]);
    double t0 = MPI_Wtime();
    for (int b = 0; b < 1000; b++) MPI_Barrier(MPI_COMM_WORLD);
    double barriers = MPI_Wtime() - t0;
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    long rss = mt_peak_rss_mib(), max_rss = 0;
    MPI_Reduce(&rss, &max_rss, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        char tried[160];
        snprintf(tried, sizeof tried,
                 "%d ranks on %ld cores: an all-to-all, every pair at once by point-to-point, 1000 barriers", size,
                 sysconf(_SC_NPROCESSORS_ONLN));
        mt_reliability_row("load", tried, "-",
                           "%s; the 1000 barriers took %.2f s; peak resident memory of the largest rank %ld MiB",
                           errors ? "wrong values" : "all values right, no stall", barriers, max_rss);
    }
    free(out);
    free(in);
    free(r);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors != 0;
}
