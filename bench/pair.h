/* pair.h: the start of the two-rank benchmark programs of oxmpi's bench/:
 * MPI_Init, then this process's rank; any other number of ranks than two
 * aborts the job (code 2) with a message naming the program. */
#ifndef OXMPI_BENCH_PAIR_H
#define OXMPI_BENCH_PAIR_H
#include <mpi.h>
#include <stdio.h>

static inline int pair_init(int *argc, char ***argv, const char *program)
{
    int rank, nranks;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 2) {
        if (rank == 0) fprintf(stderr, "%s: needs exactly 2 ranks, got %d\n", program, nranks);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return rank;
}
#endif
