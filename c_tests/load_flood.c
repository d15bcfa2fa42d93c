/* 1,000,000 small messages from one rank to another that starts receiving
 * only a second later: all arrive in order, and memory stays bounded (a
 * blocking send waits for room once the transport is full; each rank
 * reports its peak resident memory, which must stay under 256 MiB). */
#include "mpitest.h"
#include <unistd.h>

#define N 1000000

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    if (size < 2) mt_skip(rank, "needs 2 processes");
    if (rank == 1) {
        for (long i = 0; i < N; i++) MPI_Send(&i, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD);
    } else if (rank == 0) {
        sleep(1);
        long v = -1, bad = 0;
        for (long i = 0; i < N; i++) {
            MPI_Recv(&v, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad += v != i;
        }
        CHECK(bad == 0, "%ld messages out of order", bad);
    }
    long mib = mt_peak_rss_mib();
    if (rank < 2)
        mt_reliability_row("load",
                           rank == 0 ? "10^6 messages of 8 bytes to a receiver that starts 1 s late: the receiver"
                                     : "10^6 messages of 8 bytes to a receiver that starts 1 s late: the sender",
                           "-", "%s; peak resident memory %ld MiB",
                           rank == 0 ? (mt_errors ? "some out of order" : "all arrived, in order") : "all sent",
                           mib);
    CHECK(mib < 256, "peak resident memory %ld MiB", mib);
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors != 0;
}
