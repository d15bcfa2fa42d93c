/* MPI-IO: a collective strided write and read (issue 19). Each of the
 * ranks writes every P-th block of 4 KiB of one file (P = the number of
 * ranks), MiB megabytes in all (argument 2; default 256), with
 * MPI_File_write_at_all through a view whose filetype is one block resized
 * to P blocks, then reads it back with MPI_File_read_at_all. Prints
 * "write_mbs X" and "read_mbs Y": the total bytes over the slowest rank's
 * time, MB/s, best of three rounds. The file (argument 1) is deleted. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 4096

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: io_strided FILE [MiB]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long total = (argc > 2 ? atol(argv[2]) : 256) << 20;
    long mine = total / size / BLOCK * BLOCK;
    char *buf = malloc(mine);
    memset(buf, 'a' + rank, mine);
    MPI_Datatype block, filetype;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)BLOCK * size, &filetype);
    MPI_Type_commit(&filetype);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
    double best_w = 1e30, best_r = 1e30;
    for (int round = 0; round < 3; round++) {
        double t[2], slowest[2];
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_File_write_at_all(fh, 0, buf, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE);
        t[0] = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_File_read_at_all(fh, 0, buf, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE);
        t[1] = MPI_Wtime() - t0;
        MPI_Allreduce(t, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        best_w = slowest[0] < best_w ? slowest[0] : best_w;
        best_r = slowest[1] < best_r ? slowest[1] : best_r;
    }
    for (long i = 0; i < mine; i++)
        if (buf[i] != 'a' + rank) {
            fprintf(stderr, "rank %d: byte %ld read back wrong\n", rank, i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    MPI_File_close(&fh);
    MPI_Type_free(&block);
    MPI_Type_free(&filetype);
    if (rank == 0) {
        MPI_File_delete(argv[1], MPI_INFO_NULL);
        printf("write_mbs %.1f\nread_mbs %.1f\n", total / best_w / 1e6, total / best_r / 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
