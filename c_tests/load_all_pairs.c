/* Many ranks on few cores (the test list runs 64 on the 2 of a CI machine):
 * an all-to-all, every pair by point-to-point at once (each rank with 2n
 * requests outstanding), then 1000 barriers; everything verified, nothing
 * may stall. */
#include "mpitest.h"

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
    for (int b = 0; b < 1000; b++) MPI_Barrier(MPI_COMM_WORLD);
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    free(out);
    free(in);
    free(r);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors != 0;
}
