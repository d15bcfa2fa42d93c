/*
 * An MPI hello world built with MPICH's mpicc: run under oxmpi's mpiexec it
 * checks that libmpich's PMI-1 client works with oxmpi's PMI server.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("hello from rank %d of %d\n", rank, size);
    MPI_Finalize();
    return 0;
}
