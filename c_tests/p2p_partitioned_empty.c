/* Partitioned requests whose partitions hold no data: a receive partition
 * has arrived only once the sender marked its partition ready (not at
 * MPI_Start), round after round; on one rank to oneself and around a ring.
 * (mpi4py's test_p2p_buf_part checks this with empty buffers.) */
#include "mpitest.h"

static void rounds(MPI_Comm comm, int dest, int source, int parts) {
    int dummy_s = 0, dummy_r = 0;
    MPI_Request sreq, rreq;
    MPI_Psend_init(&dummy_s, parts, 0, MPI_INT, dest, 7, comm, MPI_INFO_NULL, &sreq);
    MPI_Precv_init(&dummy_r, parts, 0, MPI_INT, source, 7, comm, MPI_INFO_NULL, &rreq);
    for (int round = 0; round < 3; round++) {
        int flag;
        MPI_Barrier(comm);
        MPI_Start(&rreq);
        for (int i = 0; i < parts; i++) {
            MPI_Parrived(rreq, i, &flag);
            CHECK(!flag, "round %d: partition %d of %d arrived before the send started", round, i, parts);
        }
        /* Nobody has marked anything ready before everyone checked. */
        MPI_Barrier(comm);
        MPI_Start(&sreq);
        for (int i = 0; i < parts; i++) {
            if (dest == source && dest != MPI_PROC_NULL) {
                /* To oneself: the partitions after i are not ready yet. */
                for (int j = i; j < parts; j++) {
                    MPI_Parrived(rreq, j, &flag);
                    CHECK(!flag, "round %d: partition %d of %d arrived before Pready(%d)", round, j, parts, j);
                }
            }
            MPI_Pready(i, sreq);
        }
        for (int i = 0; i < parts; i++) {
            do {
                MPI_Parrived(rreq, i, &flag);
            } while (!flag);
        }
        MPI_Wait(&rreq, MPI_STATUS_IGNORE);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&rreq);
    MPI_Request_free(&sreq);
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    for (int parts = 1; parts <= 3; parts++) {
        rounds(MPI_COMM_SELF, 0, 0, parts);
        rounds(MPI_COMM_WORLD, (rank + 1) % size, (rank + size - 1) % size, parts);
    }
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors ? 1 : 0;
}
