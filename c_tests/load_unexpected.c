/* Flow control of unexpected messages. Rank 1 starts 200,000 nonblocking
 * sends of 1 KiB (200 MiB in all) with tag 1, then a blocking send with
 * tag 2; rank 0 first receives the tag 2 message, which it may only get
 * by reading past all the others (MPI's progress rule: a correct program,
 * it must not deadlock), and only then receives the 200,000 in order.
 * Meanwhile rank 0 is inside MPI the whole time, so nothing but flow
 * control keeps it from copying all 200 MiB into its unexpected queue:
 * its peak resident memory must stay under 128 MiB (the default limit,
 * OXMPI_UNEXPECTED_LIMIT, is 64 MiB for the whole job). Every payload is
 * checked, and the order: message i is the first LEN - i % 251 bytes of
 * the one send buffer, so each count says which message came. */
#include "mpitest.h"

#define N 200000
#define LEN 1024

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    if (size < 2) mt_skip(rank, "needs 2 processes");
    int *buf = malloc(LEN);
    if (rank == 1) {
        /* One buffer for all sends (a send only reads it). */
        for (int i = 0; i < LEN / (int)sizeof(int); i++) buf[i] = i * 7 + 3;
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * N);
        for (int i = 0; i < N; i++) MPI_Isend(buf, LEN - i % 251, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &reqs[i]);
        int marker = 12345;
        MPI_Send(&marker, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
        free(reqs);
        mt_reliability_row("load", "200,000 sends of 1 KiB posted before the receiver takes any: the sender", "-",
                           "all completed; peak resident memory %ld MiB", mt_peak_rss_mib());
    } else if (rank == 0) {
        int marker = 0;
        MPI_Recv(&marker, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(marker == 12345, "tag 2 message: %d", marker);
        long during = mt_peak_rss_mib();
        CHECK(during < 128, "peak resident memory %ld MiB while 200 MiB wait to be received", during);
        long bad = 0;
        for (int i = 0; i < N; i++) {
            memset(buf, 0, LEN);
            MPI_Status st;
            MPI_Recv(buf, LEN, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &st);
            int count = -1;
            MPI_Get_count(&st, MPI_BYTE, &count);
            for (int k = 0; k < (LEN - i % 251) / (int)sizeof(int); k++) bad += buf[k] != k * 7 + 3;
            bad += count != LEN - i % 251;
        }
        CHECK(bad == 0, "%ld bad values or counts", bad);
        const char *limit = getenv("OXMPI_UNEXPECTED_LIMIT");
        char tried[200];
        snprintf(tried, sizeof tried,
                 "200,000 sends of 1 KiB posted before the receiver takes any: the receiver (%d ranks, "
                 "OXMPI_UNEXPECTED_LIMIT=%s)",
                 size, limit ? limit : "64M, the default");
        mt_reliability_row("load", tried, "-",
                           "peak resident memory %ld MiB with 200 MiB sent and unreceived (flow control); "
                           "then received in order, %ld bad values or counts",
                           during, bad);
    }
    free(buf);
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors != 0;
}
