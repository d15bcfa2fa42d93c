/* Nonblocking sends that leave at once: oxmpi hands every small standard
 * (or ready) MPI_Isend whose message went straight into the transport one
 * shared, pre-completed request (as MPICH's builtin requests). Through the
 * C ABI, such requests must behave as any completed send request: Wait,
 * Test, Waitall (with the same handle several times), Waitany, Testsome,
 * Request_get_status (which leaves the handle), Request_free, and Cancel
 * (no effect on a send that left; one still queued may be cancelled, and
 * is sent again), each clearing
 * the handle; and every message arrives once, in order. Ranks pair up; a
 * third of the messages go to MPI_PROC_NULL and a large one through the
 * general path, between the small ones. */
#include "mpitest.h"

#define ROUNDS 50
#define WINDOW 24
#define LARGE (256 * 1024)

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int peer = mt_pair_peer(rank, size);
    int *large = malloc(LARGE * sizeof(int));
    int *large_in = malloc(LARGE * sizeof(int));
    for (int i = 0; i < LARGE; i++) large[i] = i ^ rank;

    if (peer != MPI_PROC_NULL) {
        int sender = rank < peer;
        for (int round = 0; round < ROUNDS; round++) {
            int vals[WINDOW], got[WINDOW];
            MPI_Request reqs[WINDOW];
            MPI_Status sts[WINDOW];
            if (sender) {
                /* Ready sends need their receives posted: wait for the go. */
                MPI_Recv(NULL, 0, MPI_INT, peer, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int i = 0; i < WINDOW; i++) {
                    vals[i] = round * 1000 + i;
                    int rc = (i % 2) ? MPI_Irsend(&vals[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &reqs[i])
                                     : MPI_Isend(&vals[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &reqs[i]);
                    CHECK(rc == MPI_SUCCESS, "round %d: send %d failed", round, i);
                    CHECK(reqs[i] != MPI_REQUEST_NULL, "round %d: send %d has a null request", round, i);
                }
                /* Complete them in every way the round number picks. */
                switch (round % 6) {
                case 0:
                    CHECK(MPI_Waitall(WINDOW, reqs, sts) == MPI_SUCCESS, "Waitall");
                    break;
                case 1:
                    for (int i = 0; i < WINDOW; i++) {
                        int flag = 0;
                        while (!flag) MPI_Test(&reqs[i], &flag, &sts[i]);
                    }
                    break;
                case 2:
                    for (int i = 0; i < WINDOW; i++) {
                        int flag = 0;
                        MPI_Status st;
                        MPI_Request_get_status(reqs[i], &flag, &st);
                        if (flag) CHECK(reqs[i] != MPI_REQUEST_NULL, "Request_get_status cleared the handle");
                        MPI_Request_free(&reqs[i]);
                        CHECK(reqs[i] == MPI_REQUEST_NULL, "Request_free left the handle");
                    }
                    break;
                case 3:
                    for (int i = 0; i < WINDOW; i++) {
                        int cancelled = 1;
                        MPI_Status st;
                        MPI_Cancel(&reqs[i]);
                        MPI_Wait(&reqs[i], &st);
                        MPI_Test_cancelled(&st, &cancelled);
                        /* A send still queued in this process may be
                         * cancelled; one that left (every pre-completed
                         * one) may not. A cancelled message goes again. */
                        if (cancelled) MPI_Send(&vals[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD);
                    }
                    break;
                case 4:
                    for (int left = WINDOW; left > 0; left--) {
                        int index = -1;
                        MPI_Waitany(WINDOW, reqs, &index, MPI_STATUS_IGNORE);
                        CHECK(index >= 0 && index < WINDOW, "Waitany index %d", index);
                    }
                    break;
                case 5: {
                    int left = WINDOW;
                    while (left > 0) {
                        int outcount = 0, indices[WINDOW];
                        MPI_Testsome(WINDOW, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
                        CHECK(outcount != MPI_UNDEFINED, "Testsome found no active request with %d left", left);
                        if (outcount == MPI_UNDEFINED) break;
                        left -= outcount;
                    }
                    break;
                }
                }
                for (int i = 0; i < WINDOW; i++)
                    CHECK(reqs[i] == MPI_REQUEST_NULL, "round %d: request %d not cleared", round, i);
                /* The same handle several times in one Waitall. */
                MPI_Request twice[3];
                MPI_Isend(&vals[0], 1, MPI_INT, peer, 100, MPI_COMM_WORLD, &twice[0]);
                MPI_Isend(&vals[1], 1, MPI_INT, peer, 101, MPI_COMM_WORLD, &twice[1]);
                MPI_Isend(&vals[2], 1, MPI_INT, MPI_PROC_NULL, 102, MPI_COMM_WORLD, &twice[2]);
                CHECK(MPI_Waitall(3, twice, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "Waitall of three");
                /* A large message between small ones takes the general path. */
                MPI_Request big;
                MPI_Isend(large, LARGE, MPI_INT, peer, 200, MPI_COMM_WORLD, &big);
                MPI_Wait(&big, MPI_STATUS_IGNORE);
            } else {
                for (int i = 0; i < WINDOW; i++) MPI_Irecv(&got[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &reqs[i]);
                MPI_Send(NULL, 0, MPI_INT, peer, 999, MPI_COMM_WORLD);
                MPI_Waitall(WINDOW, reqs, sts);
                for (int i = 0; i < WINDOW; i++)
                    CHECK(got[i] == round * 1000 + i, "round %d: message %d is %d", round, i, got[i]);
                int a = -1, b = -1;
                MPI_Recv(&a, 1, MPI_INT, peer, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Recv(&b, 1, MPI_INT, peer, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                CHECK(a == round * 1000 && b == round * 1000 + 1, "round %d: %d %d after Waitall of three", round, a,
                      b);
                MPI_Recv(large_in, LARGE, MPI_INT, peer, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                int bad = 0;
                for (int i = 0; i < LARGE; i++) bad += large_in[i] != (i ^ peer);
                CHECK(bad == 0, "round %d: %d wrong ints in the large message", round, bad);
            }
        }
        /* Nothing left over: a probe finds no message. */
        int flag = 1;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Iprobe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "a message is left over");
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(large);
    free(large_in);
    int errors = 0;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return 0;
}
