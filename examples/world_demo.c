/* oxmpi demo: a world-model program. Every rank reports where it runs,
 * then the ranks pass a token around the ring and exchange 1 MiB with
 * their neighbours, verifying every byte; rank 0 prints a summary. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int rank, size, len;
    char host[MPI_MAX_PROCESSOR_NAME], version[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    MPI_Get_library_version(version, &len);
    if (rank == 0) printf("%s\n", version);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d of %d on %s\n", rank, size, host);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);

    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int token = 0;
    if (rank == 0) {
        token = 1;
        MPI_Send(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token++;
        MPI_Send(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD);
    }

    size_t n = 1 << 20;
    unsigned char *out = malloc(n), *in = malloc(n);
    for (size_t i = 0; i < n; i++) out[i] = (unsigned char)(i + rank);
    double t0 = MPI_Wtime();
    MPI_Sendrecv(out, (int)n, MPI_BYTE, right, 1, in, (int)n, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double t1 = MPI_Wtime();
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        if (in[i] != (unsigned char)(i + left)) { ok = 0; break; }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("token went around %d ranks (value %d); 1 MiB exchange %s in %.3f ms\n", size, token,
               ok ? "verified" : "CORRUPT", (t1 - t0) * 1e3);
    free(out);
    free(in);
    MPI_Finalize();
    return ok && (rank != 0 || token == size) ? 0 : 1;
}
