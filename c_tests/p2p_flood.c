/* A 10,000-message flood: every rank but 0 sends its share of 10,000
 * messages of varying sizes (some above the eager limit) to rank 0 while
 * rank 0 is not receiving, so they pile up as unexpected messages; rank 0
 * then receives them all with MPI_ANY_SOURCE and checks each sender's
 * order and every payload. Then many outstanding requests at once. */
#include "mpitest.h"
#include <unistd.h>

#define TOTAL 10000

static int msg_len(int i) { return (i % 97 == 0) ? 9000 : (i % 7) * 13 + 1; }

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    if (size < 2)
        mt_skip(rank, "flooding a receiver needs at least 2 processes");
    int per_sender = TOTAL / (size - 1);
    int buf[9000];
    if (rank != 0) {
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * per_sender);
        int **bufs = malloc(sizeof(int *) * per_sender);
        for (int i = 0; i < per_sender; i++) {
            int n = msg_len(i);
            bufs[i] = malloc(sizeof(int) * n);
            for (int k = 0; k < n; k++) bufs[i][k] = rank * 100000 + i + k;
            MPI_Isend(bufs[i], n, MPI_INT, 0, i % 5, MPI_COMM_WORLD, &reqs[i]);
        }
        MPI_Waitall(per_sender, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < per_sender; i++) free(bufs[i]);
        free(bufs);
        free(reqs);
    } else {
        usleep(300000); /* let the flood arrive unexpected */
        int *next = calloc(size, sizeof(int));
        for (int m = 0; m < per_sender * (size - 1); m++) {
            MPI_Status st;
            MPI_Recv(buf, 9000, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            int src = st.MPI_SOURCE, i = next[src]++, count;
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(count == msg_len(i) && st.MPI_TAG == i % 5, "from %d msg %d: count %d tag %d", src, i, count,
                  st.MPI_TAG);
            int bad = -1;
            for (int k = 0; k < count; k++)
                if (buf[k] != src * 100000 + i + k) { bad = k; break; }
            CHECK(bad < 0, "from %d msg %d: payload wrong at %d", src, i, bad);
            if (mt_errors > 10) break;
        }
        free(next);
    }
    /* Many outstanding requests: 2,000 receives posted before the sends. */
    int n = 2000, right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *in = malloc(sizeof(int) * n), *out = malloc(sizeof(int) * n);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * n);
    for (int i = 0; i < n; i++) MPI_Irecv(&in[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &reqs[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = n - 1; i >= 0; i--) {
        out[i] = rank * 7 + i;
        MPI_Isend(&out[i], 1, MPI_INT, right, i, MPI_COMM_WORLD, &reqs[n + i]);
    }
    MPI_Waitall(2 * n, reqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < n; i++) CHECK(in[i] == left * 7 + i, "outstanding %d: %d", i, in[i]);
    free(in);
    free(out);
    free(reqs);
    MPI_Finalize();
    mt_report(rank, mt_errors);
    return mt_errors ? 1 : 0;
}
