/*
 * Rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7); the others sleep 30 s. The
 * launcher must end the job with code 7 (c_tests/pmi2_launch.sh under
 * PMI-2, c_tests/pmix.sh under Slurm's and Open MPI's PMIx).
 */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1)
        MPI_Abort(MPI_COMM_WORLD, 7);
    sleep(30);
    MPI_Finalize();
    return 0;
}
